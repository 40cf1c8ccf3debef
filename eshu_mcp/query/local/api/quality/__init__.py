"""
Code quality: complexity, call-graph metrics, secrets and structural inventories.
"""
