"""
Credential files: indexed for their facts and secret candidates only, never kept as text.

A file is a credential file by its name (``.env*``, private keys and certificates bundles,
``.netrc``, ``.git-credentials``...) or by a bounded look at its first bytes: a private key
block in a file no extractor parses, or, in a JSON, YAML, INI, TOML or properties file, a
key named like a password, secret or token holding a literal value (not ``${VAR}``, not a
template, not a type name). Ordinary source files are never withheld: their literals are
secret candidates (:mod:`.secrets`), redacted.

The cost per file is a name test; only configuration-like files also get a regular
expression over their first :data:`SNIFF_BYTES`.

An operator on a trusted single-user setup serves them anyway with
``--serve-credential-files``, which reaches the indexer (and its forked parser workers) as
the environment variable :data:`SERVE_ENV`.
"""

from __future__ import annotations

import os
import re

SERVE_ENV = "ESHU_MCP_SERVE_CREDENTIAL_FILES"
"""Set to ``1``: credential files are kept as text like any other file."""
SNIFF_BYTES = 64 * 1024

_KEY_NAMES = frozenset(
    {
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "id_ecdsa_sk",
        "id_ed25519_sk",
        ".netrc",
        "_netrc",
        ".pgpass",
        ".htpasswd",
        ".git-credentials",
        ".pypirc",
        ".npmrc",
        ".dockercfg",
        "credentials",
        "credentials.json",
        "secrets.json",
        "secrets.yaml",
        "secrets.yml",
    }
)
_KEY_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".kdbx")
_SNIFFED_SUFFIXES = (
    ".json",
    ".yaml",
    ".yml",
    ".ini",
    ".cfg",
    ".conf",
    ".properties",
    ".toml",
)
PRIVATE_KEY = re.compile(rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")
_SECRET_KEY = (
    r"[A-Za-z0-9_.\-]*"
    r"(?:password|passwd|secret|token|api[_\-]?key|private[_\-]?key|access[_\-]?key)"
)
# "key": "value" anywhere (JSON, also minified), and key: value / key = value on a line
_QUOTED_PAIR = re.compile(rf"(?i)\"({_SECRET_KEY})\"\s*:\s*\"([^\"\\\n]*)\"")
_LINE_PAIR = re.compile(
    rf"(?im)^[ \t]*-?[ \t]*[\"']?({_SECRET_KEY})[\"']?[ \t]*[:=][ \t]*"
    r"(?:\"([^\"\n]*)\"|'([^'\n]*)'|([^\s#,;]*))"
)
_HINTS = ("pass", "secret", "token", "key")
_NOT_LITERAL = frozenset(
    {
        "",
        "null",
        "none",
        "nil",
        "true",
        "false",
        "~",
        "string",
        "str",
        "integer",
        "int",
        "boolean",
        "bool",
        "object",
        "array",
        "number",
        "required",
        "optional",
        "secret",
        "password",
        "token",
    }
)
_REFERENCE_STARTS = ("$", "{{", "{%", "%(", "<", "#{", "@", "!", "&", "*", "|", ">")


def serving_credential_files() -> bool:
    """Whether the operator asked to keep credential files as text (trusted setups)."""
    return os.environ.get(SERVE_ENV) == "1"


def credential_reason(relative_path: str, head: bytes, is_source: bool) -> str | None:
    """
    Why this file is a credential file (a phrase for the refusal), or None.

    ``head``: the file's first bytes (at least :data:`SNIFF_BYTES` when it is longer);
    ``is_source``: an extractor parses the file's language (its literals stay searchable).
    """
    name = relative_path.rsplit("/", 1)[-1].lower()
    if name in (".env", ".envrc") or name.startswith(".env.") or name.endswith(".env"):
        return "an environment file (.env*) holds credentials in clear"
    key_named = name in _KEY_NAMES or (
        name.startswith(("id_rsa", "id_dsa", "id_ecdsa", "id_ed25519")) and not is_source
    )
    if key_named and not name.endswith(".pub"):
        return "a credentials file by its name"
    if name.endswith(_KEY_SUFFIXES):
        return "a private key or certificate store by its name"
    if is_source:
        return None
    window = head[:SNIFF_BYTES]
    if b"PRIVATE KEY" in window and PRIVATE_KEY.search(window):
        return "it holds a private key"
    if name.endswith(_SNIFFED_SUFFIXES):
        key = literal_secret_key(window.decode("utf-8", "replace"))
        if key is not None:
            return f"it sets {key!r} to a literal value"
    return None


def literal_secret_key(text: str) -> str | None:
    """The first password/secret/token key holding a literal value in ``text``, or None."""
    lowered = text.lower()
    if not any(hint in lowered for hint in _HINTS):
        return None
    for pattern in (_QUOTED_PAIR, _LINE_PAIR):
        for match in pattern.finditer(text):
            key = match.group(1)
            value = next((group for group in match.groups()[1:] if group is not None), "")
            if _is_literal(key, value.strip()):
                return key
    return None


def _is_literal(key: str, value: str) -> bool:
    lowered = value.lower()
    if lowered in _NOT_LITERAL or value.startswith(_REFERENCE_STARTS) or len(value) < 3:
        return False
    if any(ch.isspace() for ch in value):  # prose ("Enter your password"), not a credential
        return False
    return lowered.replace("-", "_") != key.lower().replace("-", "_")
