"""
The language registry: every language the index knows, declared once.

An entry says which paths are the language (extensions and file names), which extractor reads
it (a module of :mod:`.extractors`, imported the first time a file of the language is
extracted, so a repository pays only for the grammars it has), which pinned grammar wheel that
extractor loads, the language's builtin callables, and how its imports name repository files.
Modules outside the extractors ask the registry (:func:`entry`, :func:`keys_with`) instead of
naming languages. A language whose grammar's tags query (or one of its own) is enough for
definitions and calls is one module of :mod:`.entries` and a wheel pin: no code.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

from attrs import frozen


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


@frozen
class LanguageEntry:
    """One language's declaration."""

    key: str
    extensions: tuple[str, ...] = ()
    filenames: tuple[str, ...] = ()
    extractor: str | None = None
    """``module:ATTRIBUTE`` of its :class:`.core.LanguageSpec` under ``parse.extractors``, or
    ``tags``: the generic extractor reads :attr:`tags`; None for a language counted as text
    only."""
    wheel: str | None = None
    """The grammar distribution its extractor loads (pinned in setup.py)."""
    grammar: str | None = None
    """``module:function`` returning the wheel's grammar, for ``tags`` (default: the wheel's
    name with ``_`` for ``-``, ``language``)."""
    tags: str = ""
    """A query in tree-sitter's tags conventions (``@definition.class`` ... with ``@name``,
    ``@reference.call`` ...; see :mod:`.extractors.tags` for what each capture becomes),
    compiled the first time a file of the language is extracted."""
    shipped_tags: bool = False
    """Whether the grammar wheel's own ``queries/tags.scm`` is read too, before :attr:`tags`."""
    builtins: frozenset[str] = frozenset()
    """Callables every program of the language has: an unresolved bare call to one is builtin."""
    library_globals: frozenset[str] = frozenset()
    """Names every program of the language sees that hold its standard library (Lua's
    ``math``, Elixir's ``Enum``; ``:`` for any Erlang module): a call on one the repository
    does not define runs outside."""
    commands: bool = False
    """Whether a call the repository does not define runs a program outside it (shell)."""
    imports: str | None = None
    """How an import names a repository file (see :mod:`..resolve.modules`): ``python``,
    ``script`` (JS/TS specifiers), ``go``, ``qualified`` (``a.b.C`` -> ``a/b/C.<ext>``),
    ``include`` (a path from the file or any folder), ``rust``, ``require`` (a path from the
    file, extension optional), ``php``, ``dotted_path`` (``a.b`` -> ``a/b.<ext>``)."""
    module_paths: tuple[tuple[str, str], ...] = ()
    """Rewrites (pattern, replacement) of an import's module into a repository path, applied
    in turn before it is looked up (a package's own name standing for its ``lib/``)."""
    whole_file_imports: bool = False
    """Whether an import brings every name of the file it names into scope (C includes, Ruby
    requires, shell ``source``) rather than the names it lists."""
    overloading: bool = False
    """Whether one class may declare several methods of one name (resolution by arity)."""
    implicit_this: bool = False
    """Whether a method calls its class's other methods without naming the instance."""
    dispatched: bool = False
    """Whether a call on a declared base type may run an override (virtual dispatch), and so
    (with ``implicit_this``) a bare call in a method may run a base class's method."""
    size_limited: bool = False
    """Whether Eshu skips parsing files of the language over 1 MiB (content is kept)."""
    receivers: str | None = None
    """The family whose methods a call on a receiver may run, for a language whose method calls
    resolve by the receiver's type (declared, constructed or a field's); None: by name only."""
    declared_receivers: str | None = None
    """For a language whose method calls otherwise resolve by name: a receiver's declared type
    decides which method a call runs (a method's declared result types the next call of a
    chain). ``strict``: a type the repository does not define is outside it (Rust: its
    generics are known); ``library``: only the standard library's types are (C++, whose
    template parameters and aliases are no entities of the index)."""
    capitalised_types: bool = False
    """Whether a capitalised receiver the repository does not define is a library type
    (``System.out.println()``): the call runs outside the repository."""
    extension_receiver: str | None = None
    """A pattern whose group 1 is the type a function's signature extends (C# ``this T x``,
    Kotlin ``fun T.f()``): a call on a value of that type can run it."""
    static_imports: bool = False
    """Whether an import can bring a class's static methods in by name (Java's ``import
    static a.b.C.m`` and ``a.b.C.*``): a bare call of one runs that class's method."""
    declared_results: bool = False
    """Whether a method's signature states its result type before its name (Java): a call on
    a call's result (``a.b().c()``) is typed by it, and a result of a type from outside the
    repository is no repository class."""
    method_sets: bool = False
    """Whether a type implements an interface by having its methods, without naming it (Go)."""
    interpreters: tuple[str, ...] = ()
    """Programs named on a ``#!`` line that run the language: a script without an extension
    is a file of the language whose interpreter its first line names."""
    family: str | None = None
    """Languages that call each other's definitions directly share a family (JVM, C, the
    scripts of the web); a name guessed across families is no call. None: the key alone."""
    bare_values: bool = False
    """Whether an assignment's value may stand unquoted (shell ``TOKEN=abc``): the secret scan
    then reads such files as configuration, not as program source."""
    packages: str | None = None
    """The package ecosystem its manifests and lockfiles belong to (``pypi``, ``npm``...):
    the language's name stands for it where a package route takes an ecosystem."""
    program_text: bool = False
    """Whether a language read as text only is still program source (the secret scan then
    counts only a string literal as a keyword's value)."""
    equations: bool = False
    """Whether a top-level function is written as a type signature and equations, each a
    line starting with its name (Haskell): such lines are the function's own, not uses."""
    unmarked_overrides: bool = False
    """Whether a method overrides its base's without saying so (no ``override`` or
    ``@Override``): an unreached method of a class with a base (or mixin) from outside the
    repository may be one the outside code calls, so dead code calls it ambiguous."""
    test_files: str | None = None
    """A pattern of the language's test files (searched in ``/`` + the repository path)
    beyond Eshu's shared rules: RSpec's ``spec/``, Perl's ``*.t``, PHPUnit's ``*Test.php``."""
    dead_code: str | None = None
    """How far dead code is judged (Eshu's maturity): ``derived``, ``derived_candidate_only``
    or ``non_code_iac_evidence``; None: unsupported (every candidate is a root)."""
    exactness_blockers: tuple[str, ...] = ()
    """What the language does that a static call graph cannot see (reported with dead code)."""
    entrypoints: tuple[str, ...] = ()
    """Top-level functions the runtime runs (Go ``main`` and ``init``): dead-code roots."""
    entry_methods: tuple[str, ...] = ()
    """Methods the runtime runs (Java's ``static void main``): dead-code roots."""
    root_annotations: str | None = None
    """A pattern of annotations or attributes that hand a definition to a framework, a test
    runner or the runtime (Spring's ``@Service``, Swift's ``@objc``): dead-code roots."""
    public_api: str | None = None
    """Which definitions code outside the repository may use (a public one nothing in the
    repository reaches is ambiguous, never cleanup-ready): ``modules`` (public names of
    importable modules), ``declared`` (a header carrying one of :attr:`public_words`),
    ``unless_hidden`` (any, unless its header or visibility says one of :attr:`hidden_words`).
    Eshu's own rules make a root instead: ``capitalised`` (Go: a capitalised name outside
    ``cmd/``, ``internal/``, ``vendor/``), ``pub`` (Rust), ``exports`` (JS/TS ``export``).
    None: no public API."""
    public_words: tuple[str, ...] = ()
    """Modifiers that make a definition public (``declared``)."""
    hidden_words: tuple[str, ...] = ()
    """Modifiers or visibilities that keep a definition out of the public API
    (``unless_hidden``)."""
    api_folders: tuple[str, ...] = ()
    """Folders that hold a library's API: when given, only definitions under one are public
    (Ruby's ``lib/``)."""


_C = _words(
    """printf fprintf sprintf snprintf scanf malloc calloc realloc free memcpy memmove
    memset memcmp strlen strcmp strncmp strcpy strncpy strcat strdup exit abort assert
    sizeof puts putchar getchar fopen fclose fread fwrite perror"""
)
_JVM_ROOTS = (
    r"@(Override|Test|Before\w*|After\w*|Bean|Component|Service|Repository|Controller|"
    r"RestController|\w+Mapping|Scheduled|EventListener|PostConstruct|PreDestroy|Inject|"
    r"Autowired|JsonCreator|Parameterized\w*)\b"
)
_HIDDEN = ("private", "protected", "internal", "fileprivate", "local")
_SCRIPT_BLOCKERS = ("dynamic property access", "re-exports through barrels")
_SCRIPT = _words(
    """parseInt parseFloat isNaN isFinite setTimeout setInterval clearTimeout
    clearInterval require fetch Promise Array Object String Number Boolean Symbol Map Set
    WeakMap WeakSet Date Error TypeError RangeError RegExp JSON encodeURIComponent
    decodeURIComponent structuredClone queueMicrotask BigInt"""
)

_SCRIPT_ENTRY: dict = {
    "builtins": _SCRIPT,
    "imports": "script",
    "size_limited": True,
    "family": "ecmascript",
    "receivers": "ecmascript",
    "dispatched": True,
    "public_api": "exports",
    "unmarked_overrides": True,
    "packages": "npm",
}
"""What JavaScript, TypeScript and TSX declare alike."""

LANGUAGES: tuple[LanguageEntry, ...] = (
    LanguageEntry(
        "python",
        (".py", ".pyw"),
        extractor="python:SPEC",
        wheel="tree-sitter-python",
        builtins=_words(
            """abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr
            classmethod compile complex delattr dict dir divmod enumerate eval exec filter
            float format frozenset getattr globals hasattr hash help hex id input int
            isinstance issubclass iter len list locals map max memoryview min next object oct
            open ord pow print property range repr reversed round set setattr slice sorted
            staticmethod str sum super tuple type vars zip __import__"""
        ),
        imports="python",
        interpreters=("python", "python2", "python3", "pypy", "pypy3"),
        dead_code="derived",
        exactness_blockers=(
            "dynamic imports",
            "reflection-like dispatch",
            "getattr/setattr dispatch",
        ),
        entrypoints=("main",),
        public_api="modules",
        unmarked_overrides=True,
        packages="pypi",
    ),
    LanguageEntry(
        "go",
        (".go",),
        extractor="go:SPEC",
        wheel="tree-sitter-go",
        builtins=_words(
            "append cap clear close complex copy delete imag len make max min new panic print"
            " println real recover"
        ),
        imports="go",
        receivers="go",
        method_sets=True,
        dead_code="derived",
        exactness_blockers=("reflection", "interface dispatch through unexported types"),
        entrypoints=("main", "init"),
        public_api="capitalised",
        packages="gomod",
    ),
    LanguageEntry(
        "javascript",
        (".js", ".jsx", ".mjs", ".cjs"),
        extractor="jsx:JAVASCRIPT",
        wheel="tree-sitter-javascript",
        **_SCRIPT_ENTRY,
        interpreters=("node", "nodejs"),
        dead_code="derived",
        exactness_blockers=_SCRIPT_BLOCKERS,
    ),
    LanguageEntry(
        "typescript",
        (".ts", ".cts", ".mts"),
        extractor="ecmascript:TYPESCRIPT",
        wheel="tree-sitter-typescript",
        **_SCRIPT_ENTRY,
        dead_code="derived",
        exactness_blockers=_SCRIPT_BLOCKERS,
    ),
    LanguageEntry(
        "tsx",
        (".tsx",),
        extractor="jsx:TSX",
        wheel="tree-sitter-typescript",
        **_SCRIPT_ENTRY,
        dead_code="derived",
        exactness_blockers=("dynamic property access", "JSX component registries"),
    ),
    LanguageEntry(
        "java",
        (".java",),
        extractor="managed:JAVA",
        wheel="tree-sitter-java",
        builtins=frozenset({"super", "this"}),
        imports="qualified",
        overloading=True,
        implicit_this=True,
        dispatched=True,
        family="jvm",
        receivers="java",
        capitalised_types=True,
        static_imports=True,
        declared_results=True,
        dead_code="derived",
        exactness_blockers=("reflection", "dependency-injection wiring"),
        entry_methods=("main",),
        root_annotations=_JVM_ROOTS,
        public_api="declared",
        public_words=("public",),
        packages="maven",
    ),
    LanguageEntry(
        "c_sharp",
        (".cs", ".csx"),
        extractor="managed:CSHARP",
        wheel="tree-sitter-c-sharp",
        builtins=frozenset({"nameof", "typeof", "sizeof", "base", "this"}),
        overloading=True,
        implicit_this=True,
        dispatched=True,
        receivers="c_sharp",
        capitalised_types=True,
        extension_receiver=r"\(\s*this\s+(?:[\w.]+\.)?(\w+)",
        dead_code="derived",
        exactness_blockers=("reflection", "dependency-injection wiring"),
        entry_methods=("main", "Main"),
        root_annotations=_JVM_ROOTS + r"|\[(Test\w*|Fact|Theory|SetUp|TearDown|Http\w+|Route)\b",
        public_api="declared",
        public_words=("public",),
        test_files=r"\.Tests?/|Tests?\.cs$",
    ),
    LanguageEntry(
        "c",
        (".c",),
        extractor="clang:C",
        wheel="tree-sitter-c",
        builtins=_C,
        imports="include",
        whole_file_imports=True,
        family="c",
        dead_code="derived",
        exactness_blockers=("function pointers",),
        entrypoints=("main",),
    ),
    LanguageEntry(
        "cpp",
        (".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp"),
        extractor="clang:CPP",
        wheel="tree-sitter-cpp",
        builtins=_C | {"make_shared", "make_unique", "move", "forward"},
        imports="include",
        whole_file_imports=True,
        overloading=True,
        implicit_this=True,
        dispatched=True,
        family="c",
        declared_receivers="library",
        dead_code="derived",
        exactness_blockers=("virtual dispatch", "function pointers"),
        entrypoints=("main",),
        test_files=r"_(?:unit)?test\.(?:cc|cpp|cxx)$",
    ),
    LanguageEntry(
        "rust",
        (".rs",),
        extractor="rust:SPEC",
        wheel="tree-sitter-rust",
        builtins=_words(
            """println print eprintln eprint format vec panic assert assert_eq assert_ne
            debug_assert debug_assert_eq write writeln todo unimplemented unreachable matches
            Some Ok Err Box"""
        ),
        imports="rust",
        declared_receivers="strict",
        dead_code="derived",
        exactness_blockers=("macro-generated call sites", "trait objects"),
        entrypoints=("main",),
        public_api="pub",
        packages="cargo",
    ),
    LanguageEntry(
        "ruby",
        (".rb",),
        ("Gemfile", "Rakefile"),
        extractor="ruby:SPEC",
        wheel="tree-sitter-ruby",
        builtins=_words(
            """puts print p pp raise require require_relative attr_accessor attr_reader
            attr_writer include extend private public protected loop lambda proc format
            sprintf gets sleep rand"""
        ),
        imports="require",
        whole_file_imports=True,
        implicit_this=True,
        dispatched=True,
        interpreters=("ruby",),
        dead_code="derived",
        exactness_blockers=("metaprogramming (send, define_method)",),
        public_api="unless_hidden",
        hidden_words=_HIDDEN,
        api_folders=("lib",),
        test_files=r"/spec/|_spec\.rb$|_test\.rb$",
        unmarked_overrides=True,
        packages="rubygems",
    ),
    LanguageEntry(
        "php",
        (".php",),
        extractor="php:SPEC",
        wheel="tree-sitter-php",
        builtins=_words(
            """echo print count isset unset empty strlen array_map array_filter array_keys
            array_values array_merge in_array explode implode sprintf printf var_dump
            json_encode json_decode is_array is_string intval strval trim str_replace"""
        ),
        imports="php",
        whole_file_imports=True,
        implicit_this=True,
        size_limited=True,
        interpreters=("php",),
        dead_code="derived",
        exactness_blockers=("variable functions and magic methods",),
        public_api="unless_hidden",
        hidden_words=_HIDDEN,
        test_files=r"Test\.php$",
        unmarked_overrides=True,
        packages="composer",
    ),
    LanguageEntry(
        "kotlin",
        (".kt", ".kts"),
        extractor="jvm:KOTLIN",
        wheel="tree-sitter-kotlin",
        builtins=_words(
            """println print require requireNotNull check checkNotNull error listOf
            mutableListOf setOf mutableSetOf mapOf mutableMapOf arrayOf emptyList emptyMap
            emptySet lazy run let apply also with repeat TODO to Pair Triple maxOf minOf
            buildList buildString sequenceOf"""
        ),
        imports="qualified",
        family="jvm",
        overloading=True,
        implicit_this=True,
        dispatched=True,
        receivers="java",
        capitalised_types=True,
        extension_receiver=r"\bfun\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?(\w+)(?:<[^>]*>)?\??\.\w+\s*\(",
        dead_code="derived",
        exactness_blockers=("reflection", "dependency-injection wiring"),
        entry_methods=("main",),
        root_annotations=_JVM_ROOTS,
        public_api="unless_hidden",
        hidden_words=_HIDDEN,
        test_files=r"/src/\w*[tT]est\w*/|Test\.kts?$",
        packages="maven",
    ),
    LanguageEntry(
        "scala",
        (".scala", ".sc"),
        extractor="jvm:SCALA",
        wheel="tree-sitter-scala",
        builtins=_words(
            """println print require assert assume Some None Option List Seq Vector Map Set
            Array Nil Left Right Try Success Failure Future identity implicitly"""
        ),
        imports="qualified",
        family="jvm",
        overloading=True,
        implicit_this=True,
        dispatched=True,
        receivers="java",
        capitalised_types=True,
        dead_code="derived",
        exactness_blockers=("implicit conversions", "reflection"),
        entry_methods=("main",),
        root_annotations=_JVM_ROOTS,
        public_api="unless_hidden",
        hidden_words=_HIDDEN,
        test_files=r"/src/\w*[tT]est\w*/|(Spec|Test|Suite)\.scala$",
        packages="maven",
    ),
    LanguageEntry(
        "swift",
        (".swift",),
        extractor="swift:SWIFT",
        wheel="tree-sitter-swift",
        builtins=_words(
            """print debugPrint fatalError precondition preconditionFailure assert
            assertionFailure min max abs zip stride type dump repeatElement Array Dictionary
            Set String Int Double Float Bool Character Optional Result XCTAssert
            XCTAssertEqual XCTAssertNotEqual XCTAssertTrue XCTAssertFalse XCTAssertNil
            XCTAssertNotNil XCTAssertGreaterThan XCTAssertGreaterThanOrEqual XCTAssertLessThan
            XCTAssertLessThanOrEqual XCTAssertThrowsError XCTAssertNoThrow XCTFail XCTUnwrap"""
        ),
        overloading=True,
        implicit_this=True,
        dispatched=True,
        receivers="swift",
        capitalised_types=True,
        dead_code="derived",
        exactness_blockers=("Objective-C selectors", "protocol witnesses"),
        root_annotations=r"@(objc|IBAction|IBOutlet|IBInspectable|main|NSManaged|UIApplicationMain)\b",
        public_api="declared",
        public_words=("public", "open"),
        test_files=r"Tests?\.swift$",
    ),
    LanguageEntry(
        "elixir",
        (".ex", ".exs"),
        extractor="functional:ELIXIR",
        wheel="tree-sitter-elixir",
        builtins=_words(
            """raise is_nil is_atom is_binary is_list is_map is_integer is_function
            is_tuple length hd tl elem put_elem inspect to_string self send spawn spawn_link
            apply throw exit byte_size map_size tuple_size div rem abs max min round trunc
            struct assert refute assert_raise assert_receive assert_received refute_receive
            refute_received test describe setup setup_all doctest catch_error catch_throw
            catch_exit"""
        ),
        imports="elixir",
        library_globals=_words(
            """Enum Map MapSet List Keyword String Integer Float Tuple Kernel IO File Path
            Process GenServer Supervisor Agent Task Registry Logger Application Code Stream
            Regex URI Base DateTime NaiveDateTime Date Time System Access Atom Module
            Function Node Port Range Exception :"""
        ),
        implicit_this=True,
        interpreters=("elixir",),
        dead_code="derived",
        exactness_blockers=("apply/3 and computed module names", "behaviour callbacks"),
        public_api="unless_hidden",
        hidden_words=_HIDDEN,
        test_files=r"_test\.exs$",
    ),
    LanguageEntry(
        "haskell",
        (".hs", ".lhs"),
        extractor="functional:HASKELL",
        wheel="tree-sitter-haskell",
        builtins=_words(
            """map filter foldr foldl foldl' length null head tail fst snd id const flip
            show read print putStrLn putStr return pure fmap mapM mapM_ sequence error
            undefined not otherwise concat concatMap zip zipWith lookup elem maybe either
            fromIntegral toInteger reverse take drop lines unlines words unwords when unless
            Just Nothing Left Right"""
        ),
        imports="dotted_path",
        dead_code="derived",
        exactness_blockers=("type class instances", "Template Haskell"),
        entrypoints=("main",),
        public_api="unless_hidden",
        hidden_words=_HIDDEN,
        test_files=r"Spec\.hs$",
        equations=True,
    ),
    LanguageEntry(
        "lua",
        (".lua",),
        extractor="scripting:LUA",
        wheel="tree-sitter-lua",
        builtins=_words(
            """print require pairs ipairs type tostring tonumber error assert pcall xpcall
            select setmetatable getmetatable rawget rawset rawequal rawlen next unpack
            load loadstring dofile collectgarbage"""
        ),
        imports="dotted_path",
        library_globals=_words("math table string os io coroutine debug utf8 package bit32"),
        interpreters=("lua", "luajit"),
        dead_code="derived",
        exactness_blockers=("computed table keys", "metatables"),
        public_api="unless_hidden",
        hidden_words=_HIDDEN,
        test_files=r"/spec/|_spec\.lua$",
    ),
    LanguageEntry(
        "shell",
        (".sh", ".bash", ".zsh", ".ksh"),
        extractor="scripting:SHELL",
        wheel="tree-sitter-bash",
        builtins=_words(
            """echo printf cd pwd exit return export local readonly declare set unset
            shift test read eval exec trap source wait true false kill getopts type command
            alias ulimit umask"""
        ),
        imports="require",
        whole_file_imports=True,
        bare_values=True,
        commands=True,
        interpreters=("sh", "bash", "zsh", "ksh", "dash"),
        dead_code="derived",
        exactness_blockers=("commands built from strings (eval)",),
    ),
    LanguageEntry(
        "groovy",
        (".groovy", ".gradle"),
        ("Jenkinsfile",),
        dead_code="derived_candidate_only",
        program_text=True,
    ),
    LanguageEntry(
        "perl",
        (".pl", ".pm", ".t"),
        extractor="perl:SPEC",
        wheel="tree-sitter-perl",
        builtins=_words(
            """print printf say push pop shift unshift splice die warn bless ref defined
            scalar keys values each exists delete join split map grep sort reverse sprintf
            open close binmode eval length substr index lc uc lcfirst ucfirst chomp chop
            local wantarray caller sleep time localtime gmtime abs int sqrt exit require
            croak confess carp cluck is ok is_deeply like unlike isa_ok can_ok cmp_ok
            done_testing plan diag note subtest pass fail"""
        ),
        library_globals=_words("POSIX Carp Scalar::Util List::Util Data::Dumper"),
        imports="dotted_path",
        implicit_this=True,
        dispatched=True,
        interpreters=("perl",),
        dead_code="derived",
        exactness_blockers=("symbolic references and AUTOLOAD", "method names in strings"),
        public_api="unless_hidden",
        hidden_words=_HIDDEN,
        api_folders=("lib",),
        test_files=r"\.t$",
        unmarked_overrides=True,
    ),
    LanguageEntry("sql", (".sql",), dead_code="derived"),
    LanguageEntry("hcl", (".tf", ".tfvars", ".hcl"), dead_code="non_code_iac_evidence"),
    LanguageEntry("yaml", (".yaml", ".yml")),
    LanguageEntry("json", (".json",)),
    LanguageEntry("toml", (".toml",)),
    LanguageEntry("markdown", (".md",)),
    LanguageEntry("restructuredtext", (".rst",)),
    LanguageEntry("html", (".html",)),
    LanguageEntry("css", (".css",)),
    LanguageEntry("xml", (".xml",)),
    LanguageEntry("ini", (".ini", ".cfg")),
    LanguageEntry("protobuf", (".proto",)),
    LanguageEntry("dockerfile", filenames=("Dockerfile",)),
    LanguageEntry("make", filenames=("Makefile",)),
    LanguageEntry("gomod", filenames=("go.mod",)),
)


def declared_in_modules() -> tuple[LanguageEntry, ...]:
    """The languages declared one module each in :mod:`.entries`: its ``LANGUAGE``, the
    keyword arguments of its :class:`LanguageEntry` (plain data, so no module imports back)."""
    package = importlib.import_module("eshu_mcp.query.local.index.parse.entries")
    names = sorted(found.name for found in pkgutil.iter_modules(package.__path__))
    return tuple(
        LanguageEntry(**importlib.import_module(f"{package.__name__}.{name}").LANGUAGE)
        for name in names
    )


LANGUAGES += declared_in_modules()

SHARED_EXTENSIONS: dict[str, tuple[str, str, re.Pattern[bytes]]] = {
    ".h": (
        "cpp",
        "c",
        re.compile(
            rb"\b(?:class|namespace|template|typename|virtual|public:|private:|protected:"
            rb"|nullptr|constexpr|noexcept|static_cast|std::)|\w::\w"
        ),
    )
}
"""An extension two languages use: (the language when its head shows one of the markers,
the language otherwise, the markers). A header without a C++ construct is C."""
SNIFF_BYTES = 65536

_BY_KEY = {language.key: language for language in LANGUAGES}
_NOTHING = LanguageEntry("")
_BY_INTERPRETER = {
    program: language.key for language in LANGUAGES for program in language.interpreters
}


def sniffed(language: str | None, suffix: str, head: bytes) -> str | None:
    """The language of a file of a shared extension, read from its first bytes."""
    shared = SHARED_EXTENSIONS.get(suffix)
    if shared is None or language != shared[0]:
        return language
    marked, otherwise, markers = shared
    return marked if markers.search(head[:SNIFF_BYTES]) else otherwise


def interpreted(head: bytes) -> str | None:
    """The language a ``#!`` first line names (``#!/usr/bin/env python3`` -> python)."""
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode("ascii", "replace").split()
    if words and words[0].rsplit("/", 1)[-1] == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1].rstrip("0123456789.")
    return _BY_INTERPRETER.get(program)


def entry(language: str | None) -> LanguageEntry:
    """The declaration of a language key (an empty one for an unknown key or None)."""
    return _BY_KEY.get(language or "", _NOTHING)


def family_of(language: str | None) -> str:
    """The family of a language key (see :attr:`LanguageEntry.family`)."""
    declared = entry(language)
    return declared.family or declared.key


def test_file_pattern(language: str | None) -> re.Pattern[str] | None:
    """The compiled :attr:`LanguageEntry.test_files` of a language key (None: none)."""
    return _TEST_FILES.get(language or "")


_TEST_FILES = {
    language.key: re.compile(language.test_files) for language in LANGUAGES if language.test_files
}


def keys_with(**declared: object) -> frozenset[str]:
    """The keys of every language declaring all the given field values."""
    return frozenset(
        language.key
        for language in LANGUAGES
        if all(getattr(language, field) == value for field, value in declared.items())
    )


def parsed_keys() -> frozenset[str]:
    """The keys of every language an extractor reads."""
    return frozenset(language.key for language in LANGUAGES if language.extractor)


def load_spec(language: str) -> object | None:
    """The language's extractor spec, importing its module (and so its grammar) on first use;
    an extractor named without an attribute builds the spec from the entry (``spec_for``)."""
    declared = entry(language)
    if declared.extractor is None:
        return None
    module, _, attribute = declared.extractor.partition(":")
    loaded = importlib.import_module(f"eshu_mcp.query.local.index.parse.extractors.{module}")
    return getattr(loaded, attribute) if attribute else loaded.spec_for(declared)
