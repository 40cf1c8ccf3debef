"""
Where the shared bearer key (``ESHU_API_KEY``) comes from.

In order: the environment variable, then an ``ESHU_API_KEY=`` line in ``$ESHU_HOME/.env``
(``~/.eshu/.env`` by default; read under an advisory lock on ``.env.lock`` so a concurrent
writer is never half-read), then, only when ``ESHU_AUTO_GENERATE_API_KEY`` is truthy, a new
random 64-hex-character key written back to that file.  The key itself is never logged.
"""

import fcntl
import os
import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from twisted.logger import Logger

log = Logger()

TRUTHY = frozenset({"1", "true", "t", "yes", "y", "on"})
_KEY_NAME = "ESHU_API_KEY"


def is_truthy(value: str | None) -> bool:
    """Eshu's boolean spelling: 1, true, t, yes, y or on, in any case, trimmed."""
    return (value or "").strip().lower() in TRUTHY


def eshu_home(environ: Mapping[str, str]) -> Path:
    """``$ESHU_HOME`` with a leading ``~`` expanded, or ``~/.eshu``."""
    configured = environ.get("ESHU_HOME", "").strip()
    if configured:
        return Path(os.path.expanduser(configured))
    return Path(os.path.expanduser("~")) / ".eshu"


@contextmanager
def _locked(home: Path, *, exclusive: bool) -> Iterator[None]:
    with open(home / ".env.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1].strip()
    return value


def read_env_file_key(env_file: Path) -> str:
    """The last ``ESHU_API_KEY=`` value in ``env_file`` (``export`` prefix allowed), or ``""``."""
    try:
        text = env_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    key = ""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        name, sep, value = line.partition("=")
        if sep and name.strip() == _KEY_NAME:
            key = _unquote(value)
    return key


def _persisted_key(home: Path) -> str:
    env_file = home / ".env"
    if not env_file.exists():
        return ""
    try:
        with _locked(home, exclusive=False):
            return read_env_file_key(env_file)
    except OSError:
        return read_env_file_key(env_file)


def _generate(home: Path) -> str:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    env_file = home / ".env"
    with _locked(home, exclusive=True):
        existing = read_env_file_key(env_file)
        if existing:
            return existing
        key = secrets.token_hex(32)
        separator = b""
        if env_file.exists():
            existing_bytes = env_file.read_bytes()
            separator = b"\n" if existing_bytes and not existing_bytes.endswith(b"\n") else b""
        fd = os.open(env_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "ab") as handle:
            handle.write(separator + f"{_KEY_NAME}={key}\n".encode("ascii"))
    log.info("generated a shared API key in {env_file}", env_file=str(env_file))
    return key


def resolve_api_key(environ: Mapping[str, str]) -> str:
    """The shared bearer key per the resolution order above, or ``""`` for none."""
    key = environ.get(_KEY_NAME, "").strip()
    if key:
        return key
    home = eshu_home(environ)
    key = _persisted_key(home)
    if key:
        return key
    if is_truthy(environ.get("ESHU_AUTO_GENERATE_API_KEY")):
        return _generate(home)
    return ""
