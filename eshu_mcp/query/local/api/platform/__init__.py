"""
The embedded API's platform: the route framework and Resource, request fields, errors,
truth and freshness, status, static catalogs, and the routes with no local evidence.
"""
