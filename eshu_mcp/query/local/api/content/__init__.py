"""
File and entity content: reads and line ranges, entity context and name resolution,
evidence citations, and text search.
"""
