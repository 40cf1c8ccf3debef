"""
Parsing: one file's bytes into rows, the language registry, extractors and collectors.
"""
