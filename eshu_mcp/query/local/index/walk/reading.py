"""
Reading a walked file's bytes: bounded, never through a symbolic link, never a FIFO.

The walk records each file by the path it resolved (a kept link by its target inside the
repository), so the read opens it with ``O_NOFOLLOW``: a link swapped in since the walk
is refused, not followed. ``O_NONBLOCK`` and the regular-file check keep a FIFO or device
from stalling a worker. At most ``limit + 1`` bytes are read, whatever the file's size: a
1 GB file costs its first bytes, not 1 GB of memory.
"""

from __future__ import annotations

import os
import stat

CHUNK_BYTES = 1 << 20


def read_bounded(path: str, limit: int) -> tuple[bytes, int] | None:
    """
    ``(the first limit + 1 bytes at most, the file's size)``, or None when the path is not
    a regular file (gone, a link, a FIFO, unreadable). More bytes than ``limit`` came back
    only when the file is larger than ``limit``.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            return None
        wanted = min(status.st_size, limit) + 1
        chunks = []
        while wanted > 0:
            chunk = os.read(fd, min(wanted, CHUNK_BYTES))
            if not chunk:
                break
            chunks.append(chunk)
            wanted -= len(chunk)
        data = b"".join(chunks)
        return data, max(status.st_size, len(data))
    except OSError:
        return None
    finally:
        os.close(fd)
