"""
A question in plain words as search words: identifiers split like the index's names, stop
words dropped, adjacent words joined ("time out" also finds ``timeout``), compounds split,
a small programming thesaurus and phrase list added, and each of the question's own words
with its expansions kept together as one concept (so coverage counts what was asked, not
how many synonyms matched).
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata

from attrs import define, field

from eshu_mcp.query.local.index.store.search import split_words

SIDE_WORDS = frozenset(
    (
        "test",
        "tests",
        "testing",
        "unittest",
        "example",
        "examples",
        "demo",
        "sample",
        "changelog",
        "news",
        "release",
        "generated",
        "fixture",
        "fixtures",
        "benchmark",
    )
)
MAX_WORDS = 24
STOP_WORDS = frozenset(
    " ".join(
        (
            "a all an and another any are as at be been by can code could do does done each",
            "every everything find for from function functions get gets give has have how i",
            "if in into is it its let lets many may me method methods might must my of on one",
            "or other our over part piece place same show so some something that the their",
            "them then there these this those thing things to up use used uses using via want",
            "was we what when where which while who why will with would you your",
        )
    ).split()
)
"""Question words that say nothing about what the code does."""
THESAURUS: dict[str, tuple[str, ...]] = {
    "authentication": ("auth", "login", "credential"),
    "authenticate": ("auth", "login", "credential"),
    "credentials": ("auth", "password", "credential"),
    "password": ("passwd", "credential"),
    "login": ("auth", "logon"),
    "cancel": ("abort", "stop"),
    "abort": ("cancel",),
    "stop": ("cancel", "halt", "shutdown"),
    "timeout": ("deadline", "expire"),
    "deadline": ("timeout",),
    "delay": ("later", "wait", "sleep"),
    "later": ("delay", "schedule"),
    "schedule": ("later", "delay"),
    "retry": ("again", "backoff", "reconnect"),
    "reconnect": ("retry",),
    "wait": ("delay", "sleep"),
    "encrypt": ("cipher", "crypto", "tls", "ssl"),
    "certificate": ("cert", "tls", "ssl", "x509"),
    "compress": ("zip", "gzip", "deflate"),
    "decompress": ("unzip", "gzip", "inflate"),
    "parse": ("parser", "decode", "read"),
    "serialize": ("encode", "dump", "marshal"),
    "deserialize": ("decode", "load", "unmarshal"),
    "config": ("configuration", "settings", "options"),
    "configuration": ("config", "settings", "options"),
    "settings": ("config", "options"),
    "error": ("exception", "failure", "err"),
    "errors": ("exception", "failure", "err"),
    "failure": ("error", "exception", "fail"),
    "log": ("logger", "logging"),
    "logging": ("log", "logger"),
    "remove": ("delete", "drop"),
    "delete": ("remove", "drop"),
    "create": ("make", "new", "build"),
    "start": ("begin", "run", "launch", "spawn"),
    "print": ("output", "write", "display"),
    "prints": ("output", "write", "display"),
    "output": ("print", "write", "stdout"),
    "asynchronous": ("async", "deferred", "future", "promise"),
    "async": ("asynchronous", "deferred", "future", "promise"),
    "several": ("multiple", "list", "many"),
    "spawn": ("start", "process"),
    "mandatory": ("required", "require"),
    "required": ("mandatory", "require"),
    "idle": ("timeout", "inactive"),
    "big": ("size", "max", "limit"),
    "large": ("size", "max", "limit"),
    "message": ("msg",),
    "directory": ("dir", "folder"),
    "folder": ("dir", "directory"),
    "connection": ("conn", "connect"),
    "connect": ("connection", "dial"),
    "request": ("req",),
    "response": ("resp", "reply"),
    "reply": ("response", "answer"),
    "send": ("write", "transmit"),
    "receive": ("read", "recv"),
    "random": ("rand",),
    "number": ("num", "count"),
    "string": ("str", "text"),
    "text": ("string", "str"),
    "temporary": ("temp", "tmp"),
    "environment": ("env",),
    "argument": ("arg", "args"),
    "arguments": ("arg", "args"),
    "command": ("cmd",),
    "initialize": ("init", "setup"),
    "address": ("addr",),
    "buffer": ("buf",),
    "length": ("len", "size"),
    "size": ("length", "len"),
    "database": ("db", "sql"),
    "quote": ("escape",),
    "escape": ("quote",),
    "hash": ("digest", "checksum"),
    "checksum": ("hash", "digest"),
    "wrap": ("wrapping", "fold"),
    "terminal": ("tty", "console"),
    "thread": ("threads", "threadpool"),
}
"""Plain words and the words code often uses for them instead (both ways where it helps)."""
PHRASES: dict[str, tuple[str, ...]] = {
    "give up": ("cancel", "timeout", "abort"),
    "too long": ("timeout",),
    "time out": ("timeout",),
    "takes too long": ("timeout",),
    "try again": ("retry",),
    "shut down": ("shutdown", "stop"),
    "clean up": ("cleanup", "close"),
    "look up": ("lookup", "resolve"),
    "set up": ("setup",),
    "log in": ("login", "auth"),
    "sign in": ("login", "auth"),
    "in the background": ("thread", "async"),
    "at the same time": ("concurrent", "parallel"),
    "one after another": ("sequential", "serial"),
    "from the network": ("receive", "read"),
    "over the network": ("send", "transport"),
    "host name": ("hostname",),
    "file name": ("filename",),
    "user name": ("username",),
    "word wrap": ("wrap",),
    "cannot be used together": ("exclusive", "mutually", "conflict"),
    "mutually exclusive": ("exclusive", "mutually", "conflict"),
    "too big": ("size", "max", "limit"),
}
"""Phrases and the words code uses for them."""
_WORDS = re.compile(r"[^\W_]+")
_TOKENS = re.compile(r"[^\W\d]\w*|[0-9]+")


@define
class QueryWords:
    """
    The words of a question: its own (``asked``; a known phrase stands for the words code
    uses for it), what they were expanded to (``extra``: joined pairs, synonyms), and its
    concepts (each asked word or phrase with its expansions) for measuring coverage.
    """

    asked: list[str]
    extra: list[str]
    wants_side: bool
    concepts: list[frozenset[str]] = field(factory=list)
    weights: list[float] = field(factory=list)  # per concept: its rarity (inverse frequency)

    @property
    def all(self) -> list[str]:
        """Every word searched, the question's own first."""
        return [*self.asked, *self.extra]

    def coverage(self, matched: list[str]) -> float:
        """
        The share of the question's concepts that some of the ``matched`` words carry, each
        concept weighted by how rare it is in the index (``weights``; equal when unknown).
        """
        if not self.concepts:
            return 0.0
        found = set(matched)
        weights = self.weights or [1.0] * len(self.concepts)
        held = sum(w for concept, w in zip(self.concepts, weights, strict=True) if concept & found)
        return held / (sum(weights) or 1.0)


def query_words(question: str, explicit: list[str] | None = None) -> QueryWords:
    """Words of a question: identifiers split, stop words dropped, pairs joined, synonyms."""
    raw = [word.lower() for word in _TOKENS.findall(question)]
    spaced = " " + " ".join(raw) + " "
    phrases = [phrase for phrase in PHRASES if f" {phrase} " in spaced]
    in_phrases = {word for phrase in phrases for word in phrase.split()}
    concepts: dict[str, set[str]] = {}  # a concept's first word -> its words
    for term in explicit or []:
        for word in split_words(term):
            concepts.setdefault(word, {word})
    kept: list[str] = []
    for token in _TOKENS.findall(question):
        for word in split_words(token) or [token.lower()]:
            if word in STOP_WORDS or word in in_phrases or (len(word) < 2 and not word.isdigit()):
                continue
            kept.append(word)
            concepts.setdefault(word, {word})
    for phrase in phrases:
        meaning = PHRASES[phrase]
        if not any(word in concepts for word in meaning):
            concepts[meaning[0]] = set(meaning)
    asked = [word for words in concepts.values() for word in sorted(words, key=list(words).index)]
    asked = list(dict.fromkeys([*concepts, *asked]))
    extra: dict[str, None] = {}
    for first, second in itertools.pairwise(kept):
        joined = first + second
        extra.setdefault(joined, None)
        concepts[first].add(joined)
        concepts[second].add(joined)
    for word in kept:
        for synonym in (*THESAURUS.get(word, ()), *_decompounded(word)):
            extra.setdefault(synonym, None)
            concepts[word].add(synonym)
    wants_side = any(word in SIDE_WORDS for word in raw)
    asked_words = asked[:MAX_WORDS]
    extra_words = [word for word in extra if word not in asked][: MAX_WORDS - len(asked_words)]
    return QueryWords(
        asked_words, extra_words, wants_side, [frozenset(c) for c in concepts.values()]
    )


PREFIX_FROM = 4
"""A question's own words this long also match longer words (date: datetime, updated)."""


COMPOUND_PREFIXES = ("sub", "multi", "super")


def _decompounded(word: str) -> tuple[str, ...]:
    """``subcommand``: command; code often spells the parts apart (``SubCommand``)."""
    for prefix in COMPOUND_PREFIXES:
        rest = word[len(prefix) :]
        if word.startswith(prefix) and len(rest) >= 4:
            return (rest,)
    return ()


def fts_terms(words: QueryWords) -> list[str]:
    """
    The FTS5 terms of the words (each quoted: never FTS syntax); the question's own words
    of PREFIX_FROM letters or more as prefixes.
    """
    terms = [
        f'"{word}"*' if len(word) >= PREFIX_FROM and not word.isdigit() else f'"{word}"'
        for word in words.asked
    ]
    return terms + [f'"{word}"' for word in words.extra]


def fts_query(words: QueryWords) -> str:
    """An FTS5 expression matching any of the words (``fts_terms``)."""
    return " OR ".join(fts_terms(words))


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A rough stem for telling which words matched (the index itself uses Porter)."""
    if not word.isascii():  # the index folds accents: café matches cafe
        decomposed = unicodedata.normalize("NFKD", word)
        word = "".join(c for c in decomposed if not unicodedata.combining(c))
    for suffix in ("ations", "ation", "ings", "ing", "ers", "er", "ies", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
                word = word[:-1]  # wrapp(ing) -> wrap
            break
    return word[:-1] if len(word) > 4 and word[-1] == "e" else word
