"""
Import dependencies, importers and import cycles.
"""
