"""
The embedding model's word list, decoded from its Parquet file once per model file and kept
in the user's cache folder (``$XDG_CACHE_HOME/eshu-mcp``, else ``~/.cache/eshu-mcp``).

Decoding the Snappy pages in Python costs ~0.1 CPU-s per process that loads the model; the
kept copy reads in a few milliseconds. The copy names the model file it came from (path,
size, modification time) and the number of words, and carries a digest of its words: a
copy of another file, a cut or damaged one, or one that cannot be read or written is
ignored, and the words are decoded from the model again. Writes are atomic (a temporary
file renamed over the old one), so builds running side by side never read half a copy.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path

from eshu_mcp.query.local.index.store.parquet import parquet_strings

CACHE_FOLDER = "eshu-mcp"
CACHE_NAME = "embedding-words.txt"
FORMAT = b"eshu-mcp embedding words 1"
"""The first line of a kept copy (a new layout gets a new number)."""


def model_words(source: Path, limit: int) -> list[str]:
    """The first ``limit`` words of the Parquet word list ``source``, kept once decoded."""
    key = _key(source, limit)
    place = cache_path()
    if key is not None and place is not None:
        words = _read(place, key)
        if words is not None:
            return words
    words = parquet_strings(source.read_bytes(), limit)
    if key is not None and place is not None:
        _write(place, key, words)
    return words


def cache_path() -> Path | None:
    """Where the copy is kept, or None when the user has no cache folder to name."""
    configured = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(configured):  # a relative one is invalid (XDG base directories)
        return Path(configured) / CACHE_FOLDER / CACHE_NAME
    try:
        return Path.home() / ".cache" / CACHE_FOLDER / CACHE_NAME
    except (RuntimeError, KeyError, OSError):  # no home directory to speak of
        return None


def _key(source: Path, limit: int) -> bytes | None:
    """What a copy must have been made from: the model file as it is now, and ``limit``."""
    try:
        status = source.stat()
        where = os.fsencode(source.resolve())
    except (OSError, RuntimeError):
        return None
    named = b"\0".join((where, b"%d" % status.st_size, b"%d" % status.st_mtime_ns, b"%d" % limit))
    return hashlib.sha256(named).hexdigest().encode()


def _digest(body: bytes) -> bytes:
    return hashlib.blake2b(body, digest_size=32).hexdigest().encode()


def _read(place: Path, key: bytes) -> list[str] | None:
    """The kept words, or None when there is no sound copy made from the same file."""
    try:
        data = place.read_bytes()
    except OSError:
        return None
    head = data.split(b"\n", 4)
    if len(head) != 5 or head[0] != FORMAT or head[1] != key:
        return None
    count, digest, body = head[2], head[3], head[4]
    if not count.isdigit() or _digest(body) != digest:
        return None
    try:
        words = body.decode("utf-8").split("\n") if body else []
    except UnicodeDecodeError:
        return None
    return words if len(words) == int(count) else None


def _write(place: Path, key: bytes, words: list[str]) -> None:
    """Keep ``words`` for the next process (silently not, when the folder is not writable)."""
    text = "\n".join(words)
    if text.count("\n") != len(words) - 1:
        return  # a word holds a line break: the copy would not read back the same
    body = text.encode("utf-8")
    data = b"\n".join((FORMAT, key, b"%d" % len(words), _digest(body), body))
    temporary = None
    try:
        place.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=place.parent, prefix=".words-")
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, place)
        temporary = None
    except OSError:
        pass
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
