"""
The SQLite store: schema, per-file writer, generations, codes and upgrades.
"""
