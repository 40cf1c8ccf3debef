"""
Resolving a repository's graph: imports, receivers, calls, references and inheritance.
"""
