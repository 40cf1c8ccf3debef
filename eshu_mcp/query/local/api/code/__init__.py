"""
Finding code: symbol and code search, qualified names, near misses, topics, semantic
search, text scans, and the request fields every ``/code/*`` route shares.
"""
