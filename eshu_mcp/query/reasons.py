"""
Phrases of truth reasons that summaries look for: a backend that writes one of these in an
answer's ``truth.reason`` gets it said in the answer's text (see ``dispatch.summaries``).
"""

NO_LOCAL_EVIDENCE = "found no files it reads"
"""A local collector's reason when the repository holds none of the files it reads."""

PAST_THE_END = "past the end of the file"
"""A line read's reason when its range starts after the file's last line."""

EMPTY_RANGE = "the range holds no line"
"""A line read's reason when its start_line comes after its end_line."""

NO_TEXT_KEPT = "the index keeps no text for it"
"""A file read's reason when the file is binary or too large to keep as text."""

NOT_SEARCHED = "not searched"
"""A text search's reason when files in scope had no text to search (too large)."""

NOT_MEASURED = "complexity is not measured for"
"""A complexity answer's reason when functions in scope have no measured complexity."""
