"""
Hardcoded-secret candidates (local-backend §3.7), redacted at extraction time.

The raw value never leaves this module: a finding carries the line with the value replaced
by ``[REDACTED]`` and a sha256 of the value, so a user can check a known key.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import PurePosixPath

from attrs import frozen

from eshu_mcp.query.local.index.parse.languages import (
    PARSED_EXTENSIONS,
    TEXT_EXTENSIONS,
    is_test_path,
)
from eshu_mcp.query.local.index.parse.registry import entry, keys_with

_KEYWORDS = (
    r"password|passwd|pwd|api[_-]?key|apikey|token|secret|client[_-]?secret"
    r"|private[_-]?key|authorization"
)
_SHAPED_TOKENS = (
    r"AKIA[0-9A-Z]{16}|sk_live_[A-Za-z0-9]{8,}|xox[baprs]-[A-Za-z0-9-]{10,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
)
CANDIDATE = re.compile(
    rf"(?:(?:{_KEYWORDS})['\"]?\s*[:=]\s*['\"]?[A-Za-z0-9_./+=:@!#$%^-]{{6,}}|{_SHAPED_TOKENS})",
    re.IGNORECASE,
)
_SHAPED_CANDIDATE = re.compile(rf"(?:{_SHAPED_TOKENS})", re.IGNORECASE)
"""What :data:`CANDIDATE` finds in a line without ``:`` or ``=`` (where no keyword is given
a value): its last alternatives, in their order, so the same match, found faster."""
_KINDS = (
    ("aws_access_key", re.compile(r"AKIA", re.IGNORECASE)),
    ("private_key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----", re.IGNORECASE)),
    ("slack_token", re.compile(r"xox", re.IGNORECASE)),
    ("api_token", re.compile(r"(api[_-]?key|apikey|token)['\"]?\s*[:=]", re.IGNORECASE)),
    ("password_literal", re.compile(r"password|passwd|pwd", re.IGNORECASE)),
    (
        "secret_literal",
        re.compile(r"secret|client[_-]?secret|private[_-]?key|authorization", re.IGNORECASE),
    ),
)
SEVERITY = {
    "aws_access_key": "critical",
    "private_key": "critical",
    "slack_token": "high",
    "api_token": "high",
    "password_literal": "medium",
    "secret_literal": "medium",
}
_ASSIGNED_VALUE = re.compile(rf"(?i)({_KEYWORDS})([\"']?\s*[:=]\s*[\"']?)([^\"',;\s]{{6,}})")
_WHOLE_VALUES = (
    re.compile(r"AKIA[0-9A-Z]{16}"),
    re.compile(r"(?i)sk_live_[A-Za-z0-9]{8,}"),
    re.compile(r"xox[baprs]-[A-Za-z0-9-]{10,}"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
)
_CODE_LANGUAGES = keys_with(program_text=True)
CODE_SUFFIXES = frozenset(
    suffix for suffix, language in PARSED_EXTENSIONS.items() if not entry(language).bare_values
) | {suffix for suffix, language in TEXT_EXTENSIONS.items() if language in _CODE_LANGUAGES}
"""Program source, where a keyword's value counts only as a string literal: in code,
``password = password`` and ``token = os.environ["TOKEN"]`` name values, they are none."""
_CODE_LITERAL = re.compile(
    rf"(?i)((?:{_KEYWORDS})\w*['\"]?\s*(?::\s*[\w.\[\]| ]+?\s*)?(?::=|[:=])\s*[bBrRuUfF]{{0,2}}"
    r"(['\"`]))([A-Za-z0-9_./+=:@!#$%^~*-]{6,})\2"
)
"""A keyword given a string literal: ``api_key = "k3y..."``, ``password: str = 'hunter2x'``,
``"token": "abc..."``; the literal closes right after the value, so a keyword inside a
sentence (``"{}'s password: ".format(host)``) is none."""
_SHAPED_KINDS = frozenset({"aws_access_key", "private_key", "slack_token"})
"""Kinds whose value is recognised by its own shape, wherever it appears."""
_FIXTURE_PARTS = ("_test.", "/testdata/", "/fixtures/", "/examples/")
_PLACEHOLDERS = ("example", "dummy", "placeholder", "changeme")
EXCERPT_CAP = 240
_HINTS = (
    "password",
    "passwd",
    "pwd",
    "api",
    "token",
    "secret",
    "authorization",
    "private",
    "akia",
    "sk_live_",
    "xox",
    "-----begin",
)
"""Lowercase words one of which every candidate line contains (a cheap gate before regexes)."""


def _hinted_lines(lowered: str) -> list[int]:
    """Start offsets, ascending, of the lines containing any hint word.

    ``str.find`` per word is several times faster than one alternation regex over the text.
    """
    starts = set()
    for hint in _HINTS:
        at = lowered.find(hint)
        while at >= 0:
            line_start = lowered.rfind("\n", 0, at) + 1
            starts.add(line_start)
            line_end = lowered.find("\n", at)
            if line_end < 0:
                break
            at = lowered.find(hint, line_end)
    return sorted(starts)


@frozen
class SecretFinding:
    """One candidate line, already redacted."""

    line_number: int
    finding_kind: str
    severity: str
    redacted_excerpt: str
    value_hash: str
    suppression_notes: tuple[str, ...]


def redact(line: str, in_code: bool = False) -> tuple[str, list[str]]:
    """Return the line with every secret value replaced, and the values that were replaced
    (``in_code``: the string literals keywords are given, see :data:`_CODE_LITERAL`)."""
    values: list[str] = []
    if in_code:

        def literal(match: re.Match[str]) -> str:
            """Replace a keyword's string literal, keeping the keyword and the quotes."""
            values.append(match.group(3))
            return f"{match.group(1)}[REDACTED]{match.group(2)}"

        line = _CODE_LITERAL.sub(literal, line)

    def keep_prefix(match: re.Match[str]) -> str:
        """Replace the assigned value, keeping the keyword and operator."""
        values.append(match.group(3))
        return f"{match.group(1)}{match.group(2)}[REDACTED]"

    redacted = _ASSIGNED_VALUE.sub(keep_prefix, line)
    for pattern in _WHOLE_VALUES:

        def whole(match: re.Match[str]) -> str:
            """Replace a whole-token secret."""
            values.append(match.group(0))
            return "[REDACTED]"

        redacted = pattern.sub(whole, redacted)
    return redacted, values


def find_secrets(relative_path: str, text: str) -> list[SecretFinding]:
    """Scan file text for secret candidates; one finding per line, first kind wins."""
    lowered = text.lower()
    if len(lowered) != len(text):  # non-ASCII case folding changed offsets
        lowered = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    path_probe = "/" + relative_path.lower()
    path_suppressed = is_test_path(relative_path) or any(
        part in path_probe for part in _FIXTURE_PARTS
    )
    in_code = PurePosixPath(relative_path).suffix.lower() in CODE_SUFFIXES
    findings = []
    line_number = 1
    scanned_to = 0
    for line_start in _hinted_lines(lowered):
        line_end = text.find("\n", line_start)
        line_end = len(text) if line_end < 0 else line_end
        line_number += text.count("\n", scanned_to, line_start)
        scanned_to = line_start
        line = text[line_start:line_end]
        if ":" in line or "=" in line:
            match = CANDIDATE.search(line)
            literal = _CODE_LITERAL.search(line) if in_code else None
        else:  # half the hinted lines (prose, names): no keyword is given a value there
            match = _SHAPED_CANDIDATE.search(line)
            literal = None
        if match is None and literal is None:
            continue
        kind = next((name for name, rule in _KINDS if rule.search(line)), None)
        if kind is None:
            continue
        if in_code and kind not in _SHAPED_KINDS and literal is None:
            continue  # a keyword given a variable or an expression, not a literal
        redacted, values = redact(line, in_code)
        secret = values[0] if values else (match or literal).group(0)
        notes = []
        if path_suppressed:
            notes.append("test_or_fixture_path")
        if any(word in line.lower() for word in _PLACEHOLDERS):
            notes.append("placeholder_literal")
        findings.append(
            SecretFinding(
                line_number,
                kind,
                SEVERITY[kind],
                redacted.strip()[:EXCERPT_CAP],
                hashlib.sha256(secret.encode("utf-8")).hexdigest(),
                tuple(notes),
            )
        )
    return findings


_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^/\s@\"'?#<>]+)@")
_SECRET_QUERY = re.compile(
    # a query parameter whose name is, or has as a ``_``/``-``/``.`` part, a credential word
    r"(?i)([?&;](?:[\w.\-]*?[_.\-])?(?:token|secret|password|passwd|pwd|api[_-]?key|apikey"
    r"|access[_-]?key|signature|sig|auth|authorization|credentials?)(?:[_.\-][\w.\-]*)?=)"
    r"([^&#\s\"'\\]+)"
)
_SSH_SCHEMES = ("ssh://", "git+ssh://", "ssh+git://")


def redact_url_credentials(text: str) -> str:
    """
    ``text`` with the credentials a URL carries replaced by ``[REDACTED]``: its userinfo
    (``https://oauth2:glpat-...@host``, ``https://<token>@github.com``; an ssh user name alone
    is kept) and query values named like secrets (``?token=``, ``&X-Amz-Signature=``).
    """
    if "://" in text:

        def userinfo(match: re.Match[str]) -> str:
            scheme, user = match.group(1), match.group(2)
            if ":" not in user and scheme.lower() in _SSH_SCHEMES:
                return match.group(0)
            return f"{scheme}[REDACTED]@"

        text = _URL_USERINFO.sub(userinfo, text)
    if "=" in text and ("?" in text or "&" in text or ";" in text):
        text = _SECRET_QUERY.sub(r"\1[REDACTED]", text)
    return text
