"""
The text pieces every summary is built from: Go ``%v`` rendering, lenient field readers
and UTF-8-safe clamps.

The readers treat a missing or mistyped value as zero, as the Go reference's do, so no
row shape can make a summary raise. The clamps bound a whole summary to 4 KiB, its
headline to 600 bytes, any other line to 240 and any one embedded field to 120, never
splitting a UTF-8 character.
"""

import math
from typing import Any

__all__ = [
    "COMPLETED",
    "SEPARATOR",
    "clamp_field",
    "clamp_headline",
    "clamp_line",
    "field_int",
    "field_length",
    "field_map",
    "field_rows",
    "field_strings",
    "field_text",
    "field_true",
    "first_int",
    "first_text",
    "go_trim",
    "go_value_text",
    "plural",
    "plural_of",
    "with_more",
]

MAX_SUMMARY_BYTES = 4096
MAX_HEADLINE_BYTES = 600
MAX_LINE_BYTES = 240
MAX_FIELD_BYTES = 120

COMPLETED = "Eshu query completed."
SEPARATOR = " \u2014 "

# The characters Go's strings.TrimSpace removes (unicode.IsSpace); str.strip()
# would also remove U+001C..U+001F, which Go keeps.
_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

_INT64_MIN = -(2**63)


# Go value rendering ---------------------------------------------------------


def _go_float_text(number: float) -> str:
    """Go's ``%v`` for a float64: shortest digits, exponent form below 1e-4 and from 1e+06."""
    if number == 0:
        return "-0" if math.copysign(1.0, number) < 0 else "0"
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "+Inf" if number > 0 else "-Inf"
    shortest = repr(number)
    digits = shortest.partition("e")[0].lstrip("-").replace(".", "").strip("0")
    scientific = f"{number:.{max(len(digits), 1) - 1}e}"
    mantissa, _, exponent = scientific.partition("e")
    power = int(exponent)
    if power < -4 or power >= 6:
        return f"{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"
    return shortest[:-2] if shortest.endswith(".0") else shortest


def go_value_text(value: Any) -> str:
    """Render a decoded JSON value as Go's ``%v`` does (``1e+06``, ``<nil>``, ``map[a:1]``)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        try:
            return _go_float_text(float(value))
        except OverflowError:
            return str(value)
    if isinstance(value, float):
        return _go_float_text(value)
    if isinstance(value, dict):
        pairs = (f"{key}:{go_value_text(value[key])}" for key in sorted(value))
        return "map[" + " ".join(pairs) + "]"
    if isinstance(value, list | tuple):
        return "[" + " ".join(go_value_text(item) for item in value) + "]"
    return str(value)


# Lenient field readers (a missing or mistyped value reads as zero) ----------


def field_map(container: Any, key: str) -> dict | None:
    """An object field, or None."""
    if isinstance(container, dict):
        value = container.get(key)
        if isinstance(value, dict):
            return value
    return None


def field_text(container: Any, key: str) -> str:
    """A string field; other present values are rendered with ``%v``."""
    if not isinstance(container, dict):
        return ""
    value = container.get(key)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return go_value_text(value)


def field_int(container: Any, key: str) -> int:
    """An integer field, truncated toward zero as Go's ``int(float64)``."""
    if not isinstance(container, dict):
        return 0
    value = container.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if isinstance(value, float) and not -(2.0**63) <= value < 2.0**63:
        return _INT64_MIN
    return int(value)


def first_text(container: Any, *keys: str) -> str:
    """The first of ``keys`` holding a non-blank string or a number, rendered; else ``""``."""
    if not isinstance(container, dict):
        return ""
    for key in keys:
        value = container.get(key)
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, str):
            if value.strip():
                return value.strip()
        elif isinstance(value, int | float):
            return go_value_text(value)
    return ""


def first_int(container: Any, *keys: str) -> int | None:
    """The first of ``keys`` holding a whole number (bools excluded), or None."""
    if not isinstance(container, dict):
        return None
    for key in keys:
        value = container.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer() and abs(value) < 2.0**63:
            return int(value)
    return None


def plural_of(noun: str) -> str:
    """The regular English plural: ``capability`` -> ``capabilities``, ``match`` -> ``matches``."""
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def plural(count: int, noun: str, nouns: str = "") -> str:
    """``1 caller``, ``3 callers`` (``nouns`` for irregular plurals)."""
    return f"{count} {noun if count == 1 else (nouns or plural_of(noun))}"


def field_true(container: Any, key: str) -> bool:
    """A boolean field that is exactly ``true``."""
    return isinstance(container, dict) and container.get(key) is True


def _field_list(container: Any, key: str) -> list:
    value = container.get(key) if isinstance(container, dict) else None
    return value if isinstance(value, list) else []


def field_length(container: Any, key: str) -> int:
    """The length of a list field."""
    return len(_field_list(container, key))


def field_strings(container: Any, key: str) -> list[str]:
    """The string elements of a list field; other elements are skipped."""
    return [item for item in _field_list(container, key) if isinstance(item, str)]


def field_rows(container: Any, key: str) -> list[dict]:
    """The object elements of a list field."""
    return [item for item in _field_list(container, key) if isinstance(item, dict)]


# Clamps ---------------------------------------------------------------------


def go_trim(text: str) -> str:
    """Go's ``strings.TrimSpace``."""
    return text.strip(_GO_SPACE)


def _clamp(text: str, limit: int) -> str:
    """Cut ``text`` to ``limit`` UTF-8 bytes, ending in ``...``, never inside a character."""
    encoded = text.encode("utf-8", "replace")
    if len(encoded) <= limit:
        return text
    return encoded[: limit - 3].decode("utf-8", "ignore") + "..."


def clamp_headline(text: str) -> str:
    """A summary's first line (or a whole one-line summary), cut to 600 bytes."""
    return _clamp(text, MAX_HEADLINE_BYTES)


def clamp_line(text: str) -> str:
    """One line of a summary (a row, a source line): tabs kept, cut to 240 bytes."""
    return _clamp(text.replace("\r", "").replace("\n", " ").rstrip(), MAX_LINE_BYTES)


def clamp_field(text: str) -> str:
    """One embedded field on one line, trimmed and cut to 120 bytes."""
    return _clamp(go_trim(text.replace("\n", " ")), MAX_FIELD_BYTES)


def with_more(text: str, items: list[str]) -> str:
    """Append `` — <first item>`` and `` (+N more)`` for a non-empty list."""
    if not items:
        return text
    text += SEPARATOR + clamp_field(items[0])
    if len(items) > 1:
        text += f" (+{len(items) - 1} more)"
    return text
