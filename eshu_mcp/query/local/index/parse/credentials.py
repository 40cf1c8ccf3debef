"""
Credential files: indexed for their facts and secret candidates only, never kept as text.

A file is a credential file by its name (``.env*``, private keys and certificates bundles,
``.netrc``, ``.git-credentials``...) or by a bounded look at its first bytes: a private key
block in a file no extractor parses, or, in a JSON, YAML, INI, TOML or properties file, a
key named like a password, secret or token holding a literal value (not ``${VAR}``, not a
template, not a type name), or, there and in ``requirements*.txt`` and ``Pipfile``, a URL
whose userinfo sets a literal password (``git+https://oauth2:<token>@gitlab...``).
Ordinary source files are never withheld: their literals are secret candidates
(:mod:`.secrets`), redacted.

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
_SNIFFED_MANIFESTS = ("requirements", "constraints")
"""Plain-text manifests (``requirements*.txt``, ``requirements/*.txt``, and ``Pipfile``) whose
index URLs may carry a password."""
_URL_PASSWORD = re.compile(r"[a-z][a-z0-9+.\-]*://[^\s/@:\"'<>]*:([^\s/@\"'<>]+)@")
"""A URL with ``user:password@`` (``https://oauth2:glpat-...@gitlab.example.com/...``)."""
PRIVATE_KEY = re.compile(rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")
_SECRET_STEMS = ("passw", "secret", "token", "key")
"""What a credential key ends in, found with ``str.find`` (a regex scan costs ten times more)."""
_KEY_OWNER = re.compile(r"(?:api|private|access)[_\-]?\Z")
_AFTER_SECRET_WORD = re.compile(
    # the key's closing quote, a separator, then the value: "quoted", 'quoted' or bare
    r"[\"']?[ \t]*[:=][ \t]*(?:\"([^\"\n]*)\"|'([^'\n]*)'|([^\s#,;\"']*))"
)
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")
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

    ``head``: the file's bytes (only the first :data:`SNIFF_BYTES` are looked at);
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
    if head.find(b"PRIVATE KEY", 0, SNIFF_BYTES) >= 0 and PRIVATE_KEY.search(head, 0, SNIFF_BYTES):
        return "it holds a private key"
    manifest = name == "pipfile" or (
        name.endswith(".txt")
        and (name.startswith(_SNIFFED_MANIFESTS) or "/requirements/" in "/" + relative_path.lower())
    )
    if name.endswith(_SNIFFED_SUFFIXES) or manifest:
        text = head[:SNIFF_BYTES].decode("utf-8", "replace")
        key = None if manifest else literal_secret_key(text)
        if key is not None:
            return f"it sets {key!r} to a literal value"
        if "://" in text and url_password(text):
            return "it holds a URL with a literal password"
    return None


def url_password(text: str) -> bool:
    """Whether ``text`` holds a URL whose userinfo sets a literal password (not ``${VAR}``)."""
    lowered = text.lower()
    return any(_is_literal("", match.group(1)) for match in _URL_PASSWORD.finditer(lowered))


def literal_secret_key(text: str) -> str | None:
    """The first password/secret/token key holding a literal value in ``text``, or None."""
    lowered = text.lower()
    for stem in _SECRET_STEMS:
        position = lowered.find(stem)
        while position >= 0:
            end = _secret_word_end(lowered, stem, position)
            match = _AFTER_SECRET_WORD.match(lowered, end) if end else None
            if match is not None:
                begin = position
                while begin > 0 and lowered[begin - 1] in _KEY_CHARS:
                    begin -= 1
                value = next((group for group in match.groups() if group is not None), "")
                if _is_literal(lowered[begin:end], value.strip()):
                    return lowered[begin:end]
            position = lowered.find(stem, position + len(stem))
    return None


def _secret_word_end(lowered: str, stem: str, position: int) -> int:
    """Where the credential word found at ``position`` ends (0: not one)."""
    if stem == "passw":
        for word in ("password", "passwd"):
            if lowered.startswith(word, position):
                return position + len(word)
        return 0
    if stem == "key" and not _KEY_OWNER.search(lowered, max(0, position - 8), position):
        return 0  # only api_key, private_key, access_key (and their spellings)
    return position + len(stem)


def _is_literal(key: str, value: str) -> bool:
    lowered = value.lower()
    if lowered in _NOT_LITERAL or value.startswith(_REFERENCE_STARTS) or len(value) < 3:
        return False
    if any(ch.isspace() for ch in value):  # prose ("Enter your password"), not a credential
        return False
    return lowered.replace("-", "_") != key.lower().replace("-", "_")
