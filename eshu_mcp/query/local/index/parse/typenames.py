"""
Python type expressions as the resolver uses them: an annotation as written, reduced to the
one dotted class name it promises (``Optional[defer.Deferred[int]]`` -> ``defer.Deferred``),
and the return annotation read back from a stored signature. A call result is written
``callee()`` (``defer.maybeDeferred()``): its type is the callee's class or return type.
"""

from __future__ import annotations

import re

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_CHAIN = re.compile(
    r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\(\)(?:\.[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\(\))*"
)
_OPTIONAL_WRAPPERS = frozenset({"Optional", "typing.Optional", "Final", "typing.Final"})
_UNIONS = frozenset({"Union", "typing.Union"})
_NOT_A_CLASS = frozenset(
    {"None", "Any", "typing.Any", "object", "Type", "type", "typing.Type", "Callable"}
)


def annotation_type(annotation: str | None) -> str | None:
    """The single dotted class name an annotation promises, or None when it promises none."""
    if not annotation:
        return None
    text = annotation.strip()
    if len(text) > 1 and text[0] in "'\"" and text[-1] == text[0]:
        text = text[1:-1].strip()
    members = [m.strip() for m in split_top(text, "|")] if "|" in text else ()
    if len(members) > 1:
        kept = [m for m in members if m != "None"]
        return annotation_type(kept[0]) if len(kept) == 1 else None
    head, _, rest = text.partition("[")
    head = head.strip()
    if rest:
        inner = rest[: rest.rfind("]")] if "]" in rest else rest
        if head in _OPTIONAL_WRAPPERS:
            return annotation_type(inner)
        if head in _UNIONS:
            kept = [m for m in split_top(inner, ",") if m.strip() != "None"]
            return annotation_type(kept[0]) if len(kept) == 1 else None
    match = _DOTTED.fullmatch(head)
    if match is None or head in _NOT_A_CLASS or head.startswith("typing."):
        return None
    return head


def split_top(text: str, separator: str, opening: str = "[(", closing: str = "])") -> list[str]:
    """``text`` split at each ``separator`` outside brackets (Python's by default; a ``>``
    closing a bracket is never the end of a ``->`` arrow)."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in opening:
            depth += 1
        elif char in closing and not (char == ">" and text[index - 1 : index] == "-"):
            depth -= 1
        elif char == separator and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def returned_type(signature: str | None) -> str | None:
    """The class a Python function's stored signature says it returns."""
    if not signature or "->" not in signature:
        return None
    _, arrow, annotation = signature.rpartition(") ->")
    return annotation_type(annotation) if arrow else None


def is_dotted(text: str) -> bool:
    """Whether ``text`` is a plain dotted name (``a.b.c``)."""
    return _DOTTED.fullmatch(text) is not None


def call_chain(receiver: str) -> str | None:
    """A receiver that is a call chain, without its arguments (``defer.succeed(x).addCallback(f)``
    -> ``defer.succeed().addCallback()``): its type is the last callee's return type."""
    if not receiver.endswith(")"):
        return None
    kept: list[str] = []
    depth = 0
    for char in receiver:
        if char == "(":
            if depth == 0:
                kept.append(char)
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0:
                kept.append(char)
        elif depth == 0 and not char.isspace() and char != "\\":
            kept.append(char)
    chain = "".join(kept)
    return chain if depth == 0 and _CHAIN.fullmatch(chain) else None


_CHAIN_STEP = re.compile(r"[A-Za-z_$][\w$]*(?:\((?:_|->)?\))?")
_CHAIN_MARKS = re.compile(r"[\"'()]|->|::")
_TYPE_WORDS = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*|\?")


def generic_type(type_text: str) -> str:
    """A Java declared type as the resolver reads it: its simple name, with the simple names
    its type arguments mention (``Map.Entry<K, List<V>>`` -> ``Entry<K,List,V>^Map``; a
    diamond ``ArrayList<>`` -> ``ArrayList<?>``: arguments not written, so not known), and
    ``^`` and the class it is nested in when written so (``CodeBlock.Builder`` ->
    ``Builder^CodeBlock``)."""
    head, bracket, rest = type_text.partition("<")
    *outer, name = head.strip().split(".")
    qualifier = f"^{outer[-1]}" if outer and outer[-1][:1].isupper() else ""
    if not bracket:
        return name + qualifier
    args: list[str] = []
    for word in _TYPE_WORDS.findall(rest):
        simple = word.rsplit(".", 1)[-1]
        if simple not in ("extends", "super") and simple not in args:
            args.append(simple)
    return f"{name}<{','.join(args) or '?'}>{qualifier}"


def argument_free_chain(chain: str) -> str | None:
    """A chain of member reads and calls with each call's arguments left out (Java:
    ``getValue().append(x)`` -> ``getValue().append(_)``, ``_`` marking that it passes some),
    string and character literals skipped whole; a call passing a lambda or a method
    reference keeps ``->`` instead (``map(->)``: its result type follows the function
    passed). None for anything else."""
    kept: list[str] = []
    depth = 0
    functional = passed = False
    position, length = 0, len(chain)
    while position <= length:  # from one bracket, quote or arrow to the next
        mark = _CHAIN_MARKS.search(chain, position)
        stop = length if mark is None else mark.start()
        if depth == 0:
            kept.append(chain[position:stop])
        elif not passed and not chain[position:stop].isspace() and stop > position:
            passed = True
        if mark is None:
            break
        token = mark.group()
        position = mark.end()
        if token in "\"'":  # a literal, whole: to its closing quote, escapes skipped
            close = position
            while True:
                close = chain.find(token, close)
                if close < 0:
                    return None
                backslashes = close - len(chain[position:close].rstrip("\\")) - position
                if backslashes % 2 == 0:
                    break
                close += 1
            passed = passed or depth > 0
            position = close + 1
        elif token == "(":
            if depth == 0:
                kept.append(token)
                functional = passed = False
            depth += 1
        elif token == ")":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0:
                kept.append("->)" if functional else "_)" if passed else ")")
        elif depth:  # -> or :: inside a call's arguments: a function passed
            functional = passed = True
        else:
            return None
    if depth:
        return None
    stripped = "".join("".join(kept).split())
    steps = stripped.split(".")
    return stripped if all(_CHAIN_STEP.fullmatch(step) for step in steps) else None
