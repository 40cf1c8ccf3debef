"""
Finding code: search, symbols, entities, qualified names, topics, semantic search and
citations, and the request fields every ``/code/*`` route shares.
"""
