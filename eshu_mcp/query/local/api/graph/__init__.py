"""
The code graph: relationships, call chains, change impact and relationship stories.
"""
