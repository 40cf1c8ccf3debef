"""Per-language builtin callables: a call to one with no repository definition is 'builtin'."""

from __future__ import annotations

from eshu_mcp.query.local.index.parse.registry import LANGUAGES, entry


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


BUILTINS: dict[str, frozenset[str]] = {
    language.key: language.builtins for language in LANGUAGES if language.builtins
}
"""Each language's builtin callables, as its registry entry declares them."""

PYTHON_EXCEPTION_SUFFIXES = ("Error", "Exception", "Warning")
PYTHON_TYPE_METHODS = _words(
    """append extend insert remove pop clear copy count index reverse sort keys values items
    get setdefault update popitem add discard union intersection difference issubset join
    split rsplit strip lstrip rstrip replace startswith endswith find rfind lower upper
    encode decode format partition rpartition splitlines ljust rjust zfill isdigit hex"""
)
"""Methods of Python's builtin types: an untyped ``x.replace()`` is as likely one of these."""

TYPE_METHODS: dict[str, frozenset[str]] = {
    "ecmascript": _words(
        """map filter reduce forEach find findIndex some every includes indexOf push pop shift
        unshift slice splice concat join sort reverse flat flatMap fill keys values entries
        get set has delete clear add then catch finally toString valueOf split replace
        replaceAll trim startsWith endsWith toLowerCase toUpperCase padStart padEnd match
        test exec charAt charCodeAt substring at bind call apply emit on once off"""
    ),
    "java": _words(
        """get set add put remove contains containsKey isEmpty size clear equals hashCode
        toString length charAt substring trim split stream map filter forEach collect of
        close read write append println print getClass compareTo iterator next hasNext"""
    ),
    "c_sharp": _words(
        """Add Remove Contains ContainsKey Clear ToString Equals GetHashCode GetType ToList
        ToArray Select Where First FirstOrDefault Any All Count Dispose Close Read Write
        WriteLine Append Substring Trim Split Replace StartsWith EndsWith TryGetValue"""
    ),
    "go": _words(
        """Error String Close Read Write Lock Unlock RLock RUnlock Wait Done Add Err Len Get
        Set Load Store Delete Range Seek Flush Sync WriteString Printf Println Value Deadline
        Header WriteHeader Context WithContext Unwrap"""
    ),
}
"""Methods of the standard library's common types, per language family: an untyped
``x.map()`` is as likely one of these as any definition in the repository."""

SCRIPT_GLOBALS = _words(
    """console Math JSON Object Array Promise process window document Reflect Number String
    Date Intl navigator globalThis Buffer Symbol Map Set WeakMap RegExp Error crypto
    performance location history localStorage sessionStorage module exports require"""
)
"""Objects every JavaScript program sees (browser and Node): a call on one, not imported and
not a type of the repository, runs outside it."""


def is_builtin(language: str | None, name: str) -> bool:
    """Whether an unresolved bare call names a language builtin."""
    if language == "python" and name.endswith(PYTHON_EXCEPTION_SUFFIXES):
        return True
    return name in BUILTINS.get(language or "", frozenset())


def runs_outside(language: str | None, receiver: str | None, name: str = "") -> bool:
    """Whether a call nothing in the repository defines runs outside it: any command of a
    shell script, a capitalised name where those are types (``URL(string:)`` constructs a
    library's), a call on a standard library global (``math.floor``) or, in Elixir, on an
    Erlang module (``:ets.insert``)."""
    declared = entry(language)
    if receiver is None:
        return declared.commands or (declared.capitalised_types and name[:1].isupper())
    head = receiver.split(".", 1)[0]
    return head in declared.library_globals or head[:1] in declared.library_globals
