"""
``POST /code/relationships/story``: one target's bounded relationship story.
"""
