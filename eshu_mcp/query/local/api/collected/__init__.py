"""
Answers from the local collectors' facts: ownership, packages, IaC, infrastructure,
workloads, runtime and documentation.
"""
