"""
Dead code: the candidate scan, the root policy and the routes that answer from it.
"""
