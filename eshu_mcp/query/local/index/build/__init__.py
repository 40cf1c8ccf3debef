"""
Building and keeping the index: runs, the builder child, the service, watching, the lock
and progress.
"""
