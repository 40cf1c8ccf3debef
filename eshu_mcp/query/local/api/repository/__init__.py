"""
Repositories: the catalog, files, stats, exports and repository stories.
"""
