"""
Packages, versions and dependencies from the repositories' own manifests and lockfiles.
"""
