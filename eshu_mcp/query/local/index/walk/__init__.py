"""
Walking work trees: which files get indexed, ignore rules, and forgetting repositories.
"""
