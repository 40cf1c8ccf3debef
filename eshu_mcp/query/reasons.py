"""
Phrases of truth reasons that summaries look for: a backend that writes one of these in an
answer's ``truth.reason`` gets it said in the answer's text (see ``dispatch.summaries``).
"""

NO_LOCAL_EVIDENCE = "found no files it reads"
"""A local collector's reason when the repository holds none of the files it reads."""

PAST_THE_END = "past the end of the file"
"""A line read's reason when its range starts after the file's last line."""
