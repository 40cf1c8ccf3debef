"""
JSON encoding with the byte-level rules of Go's ``encoding/json``.

Eshu's reference server is written in Go; clients, budgets and the replay tooling
compare bytes, so every JSON document this daemon emits goes through here: compact
separators, raw UTF-8, ``<``/``>``/``&`` escaped as ``\\u003c``-style sequences unless
asked otherwise, U+2028/U+2029 always escaped, and floats written the way Go writes
them (``1`` for ``1.0``, ``1e-7``, ``1e+21``).

Key order is the caller's: objects that Go encodes from structs keep their field
order, and :func:`go_map` gives the sorted-key form Go uses for ``map[string]any``.
"""

import json
import math
import re
import secrets
from typing import Any

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)

_LINE_SEPARATORS = re.compile("[\u2028\u2029\ud800-\udfff]")
_HTML = re.compile("[<>&]")
_HTML_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


def go_float(number: float) -> str:
    """Format a float as Go's encoding/json does."""
    if not math.isfinite(number):
        raise ValueError(f"unsupported float value: {number!r}")
    magnitude = abs(number)
    if number == 0:
        # Go keeps the sign of negative zero.
        return "-0" if math.copysign(1.0, number) < 0 else "0"
    if magnitude < 1e-6 or magnitude >= 1e21:
        mantissa, _, exponent = f"{number!r}".partition("e")
        if not exponent:
            mantissa, _, exponent = f"{number:e}".partition("e")
            mantissa = repr(float(mantissa))
        sign = "-" if exponent.startswith("-") else "+"
        digits = exponent.lstrip("+-").lstrip("0") or "0"
        if sign == "+":
            digits = digits.rjust(2, "0")
        return f"{mantissa}e{sign}{digits}"
    # Shortest round-trip digits, written positionally: beyond 2**53 Go prints
    # 1152921504606847000 for 2**60, not the exact binary value.
    text = repr(number)
    if "e" in text:
        return _positional(text)
    return text[:-2] if text.endswith(".0") else text


def _positional(text: str) -> str:
    """Turn Python's shortest scientific repr into the positional form Go prefers."""
    mantissa, exponent = text.split("e")
    negative = mantissa.startswith("-")
    digits_part = mantissa.lstrip("-")
    whole, _, fraction = digits_part.partition(".")
    digits = whole + fraction
    point = len(whole) + int(exponent)
    if point <= 0:
        body = "0." + "0" * (-point) + digits
    elif point >= len(digits):
        body = digits + "0" * (point - len(digits))
    else:
        body = digits[:point] + "." + digits[point:]
    return ("-" if negative else "") + body


def _prepare(value: Any, floats: list[str]) -> Any:
    """Replace floats whose Python text differs from Go's by placeholders."""
    if isinstance(value, float):
        text = go_float(value)
        if text == repr(value):
            return value
        floats.append(text)
        return _PLACEHOLDER % (len(floats) - 1)
    if isinstance(value, dict):
        changed = None
        for key, item in value.items():
            new = _prepare(item, floats)
            if new is not item:
                if changed is None:
                    changed = dict(value)
                changed[key] = new
        return value if changed is None else changed
    if isinstance(value, list | tuple):
        changed = None
        for index, item in enumerate(value):
            new = _prepare(item, floats)
            if new is not item:
                if changed is None:
                    changed = list(value)
                changed[index] = new
        return value if changed is None else changed
    return value


# The nonce keeps a client string from ever being mistaken for a placeholder.
_NONCE = secrets.token_hex(8)
_PLACEHOLDER = "\x00" + _NONCE + ":%d\x00"
_PLACEHOLDER_TOKEN = re.compile(r'"\\u0000' + _NONCE + r':(\d+)\\u0000"')


def _fix_separator(match: re.Match) -> str:
    char = match.group(0)
    if char in "\u2028\u2029":
        return f"\\u{ord(char):04x}"
    return "\ufffd"


# Python writes a float differently from Go only when its repr ends in ".0" or has an
# exponent ("1e-07", "1.5e+16"). Encoded text with no such number token needs no float
# rewriting (a string that merely looks like one only costs the slow path).
_PYTHON_ONLY_FLOAT = re.compile(r"-?\d+(?:\.0|(?:\.\d+)?e[+-]\d+)")
_NUMBER_CHARS = frozenset("0123456789.-+e")


def _holds_python_float(text: str) -> bool:
    """Whether ``text`` has a number token Python writes differently from Go."""
    for needle in (".0", "e-", "e+"):
        at = text.find(needle)
        while at != -1:
            start = end = at
            while start > 0 and text[start - 1] in _NUMBER_CHARS:
                start -= 1
            while end < len(text) and text[end] in _NUMBER_CHARS:
                end += 1
            if (
                (start == 0 or text[start - 1] in ":,[")
                and (end == len(text) or text[end] in ",]}")
                and _PYTHON_ONLY_FLOAT.fullmatch(text, start, end)
            ):
                return True
            at = text.find(needle, end)
    return False


class Encoded(dict):
    """
    A JSON object whose :func:`dumps` text is already known (it was measured against a
    budget), so a document holding it near its top splices that text in instead of
    encoding the object again: a tool answer is encoded once, not once to measure it
    and again inside the JSON-RPC reply. Treat it as immutable.
    """

    __slots__ = ("text",)

    def __init__(self, value: dict, text: str) -> None:
        super().__init__(value)
        self.text = text


def encoded(value: Any, text: str) -> Any:
    """``value`` carrying its :func:`dumps` text ``text`` when it is an object, else as is."""
    return Encoded(value, text) if type(value) is dict else value


# Where :func:`dumps` looks for Encoded values: the document, its values and theirs
# (a JSON-RPC reply -> its result -> the result's structured content).
_SPLICE_DEPTH = 2
_SPLICE = "\x00" + _NONCE + ":s%d\x00"
_SPLICE_TOKEN = re.compile(r'"\\u0000' + _NONCE + r':s(\d+)\\u0000"')


def _with_splices(value: dict, texts: list[str], depth: int) -> dict:
    """``value`` with the Encoded objects near its top replaced by placeholders."""
    changed = None
    for key, item in value.items():
        kind = type(item)
        if kind is Encoded:
            texts.append(item.text)
            new = _SPLICE % (len(texts) - 1)
        elif kind is dict and depth:
            new = _with_splices(item, texts, depth - 1)
        else:
            continue
        if new is not item:
            if changed is None:
                changed = dict(value)
            changed[key] = new
    return value if changed is None else changed


def dumps(value: Any, *, escape_html: bool = True, splice: bool = True) -> str:
    """
    Serialize ``value`` compactly, the way Go's ``json.Marshal`` would. ``splice=False``
    skips looking for :class:`Encoded` objects (a value known to hold none).
    """
    if escape_html and splice:
        if type(value) is Encoded:
            return value.text
        if type(value) is dict:
            texts: list[str] = []
            value = _with_splices(value, texts, _SPLICE_DEPTH)
            if texts:
                text = _dumps(value, escape_html=True)
                return _SPLICE_TOKEN.sub(lambda m: texts[int(m.group(1))], text)
    return _dumps(value, escape_html=escape_html)


def _dumps(value: Any, *, escape_html: bool) -> str:
    try:
        text = _ENCODER.encode(value)
    except ValueError:
        text = None  # a non-finite float: go_float names it below
    if text is None or _holds_python_float(text):
        # Rare: walk the value and write its floats Go's way (one pass, not per value).
        floats: list[str] = []
        text = _ENCODER.encode(_prepare(value, floats))
        if floats:
            text = _PLACEHOLDER_TOKEN.sub(lambda m: floats[int(m.group(1))], text)
    if not text.isascii() and _LINE_SEPARATORS.search(text) is not None:
        text = _LINE_SEPARATORS.sub(_fix_separator, text)
    if escape_html and ("<" in text or ">" in text or "&" in text):
        text = _HTML.sub(lambda m: _HTML_ESCAPES[m.group(0)], text)
    return text


def dumpb(value: Any, *, escape_html: bool = True) -> bytes:
    """Like :func:`dumps`, encoded as UTF-8 bytes."""
    return dumps(value, escape_html=escape_html).encode("utf-8")


def go_map(value: Any) -> Any:
    """Return ``value`` with every object's keys sorted, as Go re-encodes ``any`` values."""
    if isinstance(value, dict):
        return {key: go_map(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [go_map(item) for item in value]
    return value


_QUOTE_SHORT = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    '"': '\\"',
    "\\": "\\\\",
}


def go_quote(text: str) -> str:
    """Quote ``text`` as Go's ``%q`` (``strconv.Quote``) does, for messages that name a tool."""
    out = ['"']
    for char in text:
        short = _QUOTE_SHORT.get(char)
        if short is not None:
            out.append(short)
        elif char.isprintable():
            out.append(char)
        else:
            point = ord(char)
            if point < 0x80:
                out.append(f"\\x{point:02x}")
            elif 0xD800 <= point <= 0xDFFF:
                out.append("\\ufffd")
            elif point < 0x10000:
                out.append(f"\\u{point:04x}")
            else:
                out.append(f"\\U{point:08x}")
    out.append('"')
    return "".join(out)
