"""
Declared types of Rust and C++ values as the extractors record them and the resolver reads
them back: a type as written, reduced to the one name its methods belong to (``&mut
RecordBuilder<'a>`` -> ``RecordBuilder``; ``const std::string &`` -> ``std::string``).

A Rust collection is ``[T]`` (its element's type: ``Vec<T>``, ``&[T]``, ``impl Iterator<Item =
T>``), an ``Option<T>`` or a ``Result<T, E>`` is ``T?``, a tuple ``(A,B)`` (a position of
unknown type left empty). A call chain's type is
written as a path from a known type: ``RecordBuilder.new().args()`` is what ``args``
returns when called on what ``RecordBuilder::new`` returns, and ``Level.iter()[]`` is an
element of what ``Level::iter`` returns; the resolver follows each method's declared result.
"""

from __future__ import annotations

import re

from eshu_mcp.query.local.index.parse.typenames import split_top

_COLLECTIONS = frozenset(
    {"Vec", "VecDeque", "LinkedList", "HashSet", "BTreeSet", "BinaryHeap", "IntoIter", "Iter"}
)
"""Generic Rust types whose first type argument is what iterating them yields."""
_POINTERS = frozenset({"Box", "Rc", "Arc", "Cow", "RefMut", "Ref", "MutexGuard"})
"""Generic Rust types that call their content's methods (by ``Deref``)."""
_WRAPPERS = frozenset({"Option", "Result"})
"""Rust types whose content ``?``, ``unwrap`` and ``expect`` give: written ``T?``."""
UNWRAPPING = frozenset({"unwrap", "expect", "unwrap_or_default", "unwrap_unchecked"})
"""Methods of an ``Option`` or a ``Result`` that give its content."""
ELEMENT_OPTIONS = frozenset(
    {"first", "last", "first_mut", "last_mut", "get", "get_mut", "pop", "next", "next_back"}
)
"""Methods of a collection (or an iterator over one) that give an ``Option`` of an element."""
_ITERATORS = frozenset({"Iterator", "IntoIterator", "DoubleEndedIterator", "ExactSizeIterator"})
KEEPING = frozenset(
    {"iter", "iter_mut", "into_iter", "drain", "copied", "cloned", "rev", "clone", "to_vec"}
)
"""Methods of a collection whose result yields (or holds) the same elements."""
_BORROW = re.compile(r"^(?:&\s*(?:'\w+\s*)?(?:mut\s+)?|\*\s*(?:const|mut)\s+|mut\s+|dyn\s+)")
_STEP = re.compile(r"\.([A-Za-z_]\w*(?:\(\))?)|\[\]")
_CPP_QUALIFIERS = re.compile(r"\b(?:const|volatile|struct|class|typename|enum|union)\b")
_CPP_WORDS = re.compile(r"const|volatile|struct|class|typename|enum|union")
_CPP_ARGUMENTS = re.compile(r"<[^<>]*>")
_NAME = re.compile(r"[A-Za-z_]\w*")
_CPP_BUILTIN = frozenset(
    {"auto", "void", "decltype", "bool", "char", "short", "int", "long", "float", "double"}
    | {"signed", "unsigned", "wchar_t", "char8_t", "char16_t", "char32_t"}
)
"""Types without methods."""
_CPP_HOLDER = re.compile(r"(?:::)?std\s*::\s*(?:shared_ptr|unique_ptr|weak_ptr)\s*<(.*)>")
"""The standard library's smart pointers: a call through one (``p->m()``) runs the class
it holds."""


def _split_top(text: str, separator: str) -> list[str]:
    """``text`` split at each ``separator`` outside any bracket, a type's ``<...>`` too."""
    return split_top(text, separator, "<([{", ">)]}")


def _generic(text: str) -> tuple[str, list[str]]:
    """``(head, type arguments)`` of ``Head<A, B>`` (lifetimes left out)."""
    head, _, rest = text.partition("<")
    if not rest or not rest.endswith(">"):
        return head.strip(), []
    arguments = [a.strip() for a in _split_top(rest[:-1], ",")]
    return head.strip(), [a for a in arguments if a and not a.startswith("'")]


def rust_type(written: str | None) -> str | None:
    """The type a Rust type expression's methods belong to; ``[T]`` for a collection of
    ``T``; None when it names none (a tuple, a function pointer, ``impl Fn``)."""
    text = (written or "").strip()
    while True:
        stripped = _BORROW.sub("", text, count=1).strip()
        if stripped == text:
            break
        text = stripped
    if text.startswith("[") and text.endswith("]"):
        inner = rust_type(_split_top(text[1:-1], ";")[0])
        return f"[{inner}]" if inner else None
    if text.startswith("impl "):
        head, arguments = _generic(text[5:].split("+", 1)[0].strip())
        if head.rsplit("::", 1)[-1] not in _ITERATORS:
            return None
        items = [a for a in arguments if a.replace(" ", "").startswith("Item=")]
        inner = rust_type(items[0].split("=", 1)[1]) if items else None
        return f"[{inner}]" if inner else None
    head, arguments = _generic(text.split("+", 1)[0].strip())
    name = head.rsplit("::", 1)[-1].strip()
    if name in _COLLECTIONS and arguments:
        inner = rust_type(arguments[0])
        return f"[{inner}]" if inner else None
    if name in _POINTERS and arguments:
        return rust_type(arguments[0])
    if name in _WRAPPERS and arguments:
        inner = rust_type(arguments[0])
        return f"{inner}?" if inner else name
    return name if name.isidentifier() else None


def rust_result(signature: str | None) -> str | None:
    """The type a Rust function's signature declares it returns (see :func:`rust_type`)."""
    if not signature:
        return None
    start = signature.find("(")
    if start < 0:
        return None
    depth = 0
    for index in range(start, len(signature)):
        char = signature[index]
        depth += (char == "(") - (char == ")")
        if depth == 0:
            rest = signature[index + 1 :].strip()
            break
    else:
        return None
    if not rest.startswith("->"):
        return None
    rest = rest[2:]
    for end in (" where", "{"):
        rest = rest.split(end, 1)[0]
    return rust_type(rest)


def with_self(declared: str, owner: str) -> str:
    """``declared`` with ``Self`` standing for ``owner`` (``[Self]`` -> ``[Level]``)."""
    if declared.startswith("[Self]") or declared.startswith("Self"):
        return declared.replace("Self", owner, 1)
    return declared


def called(owner: str, method: str) -> str | None:
    """What calling ``method`` on a value of the type ``owner`` gives when the language's
    own types decide it: a collection's iterator or clone (``[T]``), its element as an
    option (``T?``), an option's content (``T``); "" for any other method of those types;
    None when ``owner`` is a type whose methods the repository declares."""
    if owner[-1:] == "?":
        return owner[:-1] if method in UNWRAPPING else ""
    if owner[:1] == "[" and owner[-1:] == "]":
        if method in KEEPING:
            return owner
        return f"{owner[1:-1]}?" if method in ELEMENT_OPTIONS and len(owner) > 2 else ""
    return None


def element(collection: str | None) -> str | None:
    """What iterating a value of the type ``collection`` yields, when that is declared."""
    if not collection:
        return None
    if collection[:1] == "[" and collection[-1:] == "]":
        return collection[1:-1] or None
    if collection[:1] not in "(" and "[" not in collection.rsplit(")", 1)[-1]:
        return f"{collection}[]"  # resolved later: an element of what the chain returns
    return None


def positions(tuple_type: str | None) -> list[str]:
    """The position types of a tuple type ``(A,B)``; [] for anything else."""
    if not tuple_type or tuple_type[:1] != "(" or tuple_type[-1:] != ")":
        return []
    return [part.strip() for part in _split_top(tuple_type[1:-1], ",")]


def chain_steps(expression: str) -> tuple[str, list[str]] | None:
    """``(start type, steps)`` of a chain ``T.f().g()[]``: each step a method's name and
    ``()`` (its result), a field's name (its declared type) or ``[]`` (an element); None when
    ``expression`` is no chain."""
    cut = len(expression)
    for index, char in enumerate(expression):
        if char in ".[" and index and expression[0] != "[":
            cut = index
            break
    if expression[:1] == "[":  # a collection type leads: its brackets, then the steps
        depth = 0
        for index, char in enumerate(expression):
            depth += (char == "[") - (char == "]")
            if depth == 0:
                cut = index + 1
                break
    start, rest = expression[:cut], expression[cut:]
    steps = []
    position = 0
    while position < len(rest):
        match = _STEP.match(rest, position)
        if match is None:
            return None
        steps.append(match.group(1) or "[]")
        position = match.end()
    return start, steps


def cpp_type(written: str | None) -> str | None:
    """The class a C++ declared type's methods belong to: ``const std::string &`` ->
    ``std::string`` (the standard library's, kept qualified), ``ns::Parser<T>*`` ->
    ``Parser``, ``std::shared_ptr<const Value>`` -> ``Value`` (what ``->`` calls); None for
    ``auto`` and for types without methods."""
    text = (written or "").strip()
    if _CPP_WORDS.search(text) is not None:
        text = _CPP_QUALIFIERS.sub(" ", text).strip()
    text = text.rstrip("&* ")
    if "<" in text:
        held = _CPP_HOLDER.fullmatch(text)
        if held is not None:
            return cpp_type(held.group(1))
        for _ in range(8):  # template arguments left out, innermost first
            stripped = _CPP_ARGUMENTS.sub("", text)
            if stripped == text:
                break
            text = stripped
    if "::" not in text:
        return text if _NAME.fullmatch(text) and text not in _CPP_BUILTIN else None
    parts = [part.strip() for part in text.split("::")]
    parts = [part for part in parts if part]
    if not parts or not all(_NAME.fullmatch(part) for part in parts):
        return None
    if parts[0] == "std" and len(parts) > 1:
        return "std::" + parts[-1]
    name = parts[-1]
    return None if name in _CPP_BUILTIN else name


def outside_cpp(type_name: str) -> bool:
    """Whether a C++ type is the standard library's (its methods are never the repository's)."""
    return type_name.startswith("std::")
