"""
File and entity content: reads, line ranges and text search.
"""
