"""
Index figures and hand-checked call-graph answers, per language, on real repositories.

For each language a small public repository (fetched beforehand at the commit named below,
its files under ``--repos/<name>``) is indexed from scratch. Reported per language: its files
and entities, its call sites resolved to one definition (single), to several (ambiguous), to
nothing in the repository (unresolved: no definition), or outside it (a builtin, a library),
and the checked answers: each "who calls X" / "what does Y call" answer compared with the set
read off the source by hand (right: equal; partly: overlapping; wrong: otherwise).

Usage: ``python scripts/bench_languages.py --repos /tmp/langs-repos [--only kotlin,lua] [--json]
[--show NAME ...]`` (``--show`` prints the index's answers for the named functions, to check
new expectations against the source).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from attrs import frozen

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.store.database import open_reader


@frozen
class Check:
    """One answer read off the source: ``callers`` of a function, or its ``callees``."""

    kind: str
    function: str  # qualified name, with ``@path-suffix`` when the name is not unique
    expected: frozenset[str]


@frozen
class Case:
    language: str
    repository: str  # owner/name on GitHub
    commit: str
    checks: tuple[Check, ...]


def callers(function: str, *names: str) -> Check:
    return Check("callers", function, frozenset(names))


def callees(function: str, *names: str) -> Check:
    return Check("callees", function, frozenset(names))


CASES = (
    Case(
        "kotlin",
        "JakeWharton/timber",
        "d226eb0391d6d32547dad7b2c77da84010d61aac",
        (
            callers(
                "Tree.prepareLog",
                *("Tree.v", "Tree.d", "Tree.i", "Tree.w", "Tree.e", "Tree.wtf", "Tree.log"),
            ),
            callers(
                "WrongTimberUsageDetector.isSubclassOf",
                "WrongTimberUsageDetector.checkFormatArguments",
                "WrongTimberUsageDetector.checkMethodArguments",
                "WrongTimberUsageDetector.checkExceptionLogging",
                "WrongTimberUsageDetector.isPropertyOnSubclassOf",
            ),
            callers(
                "WrongTimberUsageDetector.checkElement",
                "WrongTimberUsageDetector.checkConditionalUsage",
                "WrongTimberUsageDetector.checkMethodArguments",
            ),
            callers(
                "WrongTimberUsageDetector.getType",
                "WrongTimberUsageDetector.checkFormatArguments",
                "WrongTimberUsageDetector.checkElement",
            ),
            callers(
                "WrongTimberUsageDetector.checkMethodArguments",
                "WrongTimberUsageDetector.visitMethodCall",
            ),
            callees(
                "Tree.prepareLog",
                *("Tree.isLoggable", "Tree.getStackTraceString", "Tree.formatMessage", "Tree.log"),
            ),
            callees(
                "WrongTimberUsageDetector.checkElement",
                "WrongTimberUsageDetector.getType",
                "WrongTimberUsageDetector.quickFixIssueBinary",
                "WrongTimberUsageDetector.checkConditionalUsage",
            ),
            callees("WrongTimberUsageDetector.getType", "WrongTimberUsageDetector.getTypeClass"),
            callees(
                "WrongTimberUsageDetector.checkMethodArguments",
                "WrongTimberUsageDetector.checkElement",
                "WrongTimberUsageDetector.isSubclassOf",
                "WrongTimberUsageDetector.quickFixIssueThrowable",
            ),
            callees(
                "WrongTimberUsageDetector.checkFormatArguments",
                "WrongTimberUsageDetector.isSubclassOf",
                "WrongTimberUsageDetector.getFormatArgumentCount",
                "WrongTimberUsageDetector.getStringArgumentTypes",
                "WrongTimberUsageDetector.getType",
            ),
        ),
    ),
)

CASES += (
    Case(
        "lua",
        "rxi/lume",
        "98847e7812cf28d3d64b289b03fad71dc704547d",
        (
            callers("iteratee", "map", "all", "any", "filter", "reject", "match", "count"),
            callers(
                "getiter",
                *("remove", "clear", "each", "map", "all", "any", "reduce", "filter"),
                *("reject", "merge", "concat", "find", "match", "count", "keys"),
            ),
            callers("iscallable", "iteratee", "fn", "combine"),
            callers("isarray", "getiter", "remove", "count"),
            callers("fn", "once", "lume.fn"),  # ``tests["lume.fn"] = function() ...``
            callees("iteratee", "iscallable"),
            callees("getiter", "isarray"),
            callees("split", "array", "patternescape"),
            callees("fn", "iscallable", "concat"),
            callees("clear", "getiter"),
        ),
    ),
    Case(
        "swift",
        "SwiftyJSON/SwiftyJSON",
        "8805b547079d605f61f9c7964296384ff6fe853e",
        (
            callers("JSON.merge", "JSON.merge", "JSON.merged"),
            callers("JSON._rawString", "JSON._rawString", "JSON.rawString"),
            callers(
                "JSON.rawData",
                *("JSON._rawString", "NestedJSONTests.testTopLevelNestedJSON"),
                *("NestedJSONTests.testDeeplyNestedJSON", "RawTests.testRawData"),
                *("RawTests.testInvalidJSONForRawData", "RawTests.testArray"),
                *("RawTests.testDictionary", "RawTests.testNestedJSON"),
            ),
            # the playground's top-level call has no caller entity
            callers("JSON.exists", "BaseTests.testExistance", "Processor.requireField"),
            # the setter of the computed property JSON.object calls it too: not an entity
            callers("unwrap", "unwrap", "JSON.object"),
            callees("JSON._rawString", "JSON", "JSON._rawString", "JSON.rawData"),
            callees("JSON.merge", "JSON", "JSON.merge"),
            callees("JSON.rawString", "JSON._rawString"),
            callees("JSON.merged", "JSON.merge"),
            callees("unwrap", "unwrap"),
        ),
    ),
    Case(
        "scala",
        "scopt/scopt",
        "75cd14c9e1f517e9d1beb8de9e3427e40630f1cb",
        (  # ORunner.runParser's nested functions
            callers("handleError", "handleShortOptions", "ORunner.runParser"),
            callers("handleOccurrence", "handleShortOptions", "ORunner.runParser"),
            callers("pushChildren", "handleArgument", "handleFallback"),
            callers("displayToErr", "showUsageAsError", "showTryHelp"),
            callers("handleFallback", "ORunner.runParser"),  # handleFallback[Any](...)
            callees(
                "handleShortOptions",
                *("OptionDef.shortOptTokens", "handleOccurrence", "handleArgument"),
                *("handleShortOptions", "handleError"),
            ),
            callees("handleError", "reportError", "reportWarning"),
            callees("handleArgument", "OptionDef.applyArgument", "pushChildren"),
            callees("showTryHelp", "displayToErr", "oxford"),
            # description.split(NL).map(...): an array's map, not OParser's or Read's
            callees("spaceToDesc"),
        ),
    ),
    Case(
        "elixir",
        "sasa1977/con_cache",
        "6cb17c945d0c12964df85531e9f30a5964c7c01f",
        (
            callers(
                "Operations.valid_ets_type?",
                *("Operations.dirty_update", "Operations.dirty_update_existing"),
                *("Operations.get_or_store", "Operations.dirty_get_or_store"),
                *("Operations.fetch_or_store", "Operations.dirty_fetch_or_store"),
            ),
            callers(
                "Operations.emit",
                *("Operations.fetch", "Operations.get_or_store", "Operations.dirty_get_or_store"),
                *("Operations.fetch_or_store", "Operations.dirty_fetch_or_store"),
            ),
            callers(
                "Operations.fetch",
                *("ConCache.get", "Operations.dirty_update", "Operations.get_or_store"),
                *("Operations.dirty_get_or_store", "Operations.fetch_or_store"),
                *("Operations.dirty_fetch_or_store", "Operations.with_existing"),
            ),
            callers(
                "Operations.dirty_put",
                *("ConCache.dirty_put", "Operations.put", "Operations.dirty_get_or_store"),
                "Operations.dirty_fetch_or_store",
            ),
            callers(
                "Lock.exec",
                *("Operations.isolated", "LockTest.exec_lock", "LockTest.test timeout"),
                *("LockTest.test monitor", "LockTest.test monitor 2"),
            ),
            callees(
                "Operations.fetch",
                *("Operations.emit", "Operations.telemetry_hit", "Operations.telemetry_miss"),
                "Operations.read_touch",
            ),
            callees(
                "Operations.get_or_store",
                *("Operations.valid_ets_type?", "Operations.fetch", "Operations.emit"),
                *("Operations.isolated_get_or_store", "Operations.telemetry_hit"),
                "Operations.raise_ets_type",
            ),
            callees("Operations.isolated", "Lock.exec", "Operations.lock_pid"),
            callees("Operations.perform_put", "Operations.set_ttl", "Operations.invoke_callback"),
            callees("Operations.dirty_put", "Operations.perform_put"),
        ),
    ),
    Case(
        "shell",
        "bats-core/bats-core",
        "d22e41faad59f5fd942a88c992b4913a27a460c4",
        (  # lib/bats-core/*.bash
            callers("bats_frame_lineno", "bats_print_stack_trace", "bats_print_failed_command"),
            callers(
                "bats_semaphore_get_free_slot_count",
                *("bats_semaphore_acquire_while_locked", "bats_semaphore_acquire_slot"),
            ),
            # bats_perform_test is in libexec/bats-core/bats-exec-test (read by its #! line)
            callers(
                "bats_quote_code",
                *("bats_print_stack_trace", "bats_print_failed_command", "bats_perform_test"),
            ),
            callers("bats_internal_load", "bats_load_safe", "bats_load_library_safe"),
            callers(
                "bats_normalize_windows_dir_path",
                *("bats_debug_trap", "bats_add_debug_exclude_path"),
            ),
            callees(
                "bats_print_failed_command",
                *("bats_frame_filename", "bats_frame_lineno", "bats_extract_line"),
                *("bats_strip_string", "bats_quote_code"),
            ),
            callees("bats_emit_trace", "bats_emit_trace_context", "bats_emit_trace_command"),
            callees("bats_load_library_safe", "find_in_bats_lib_path", "bats_internal_load"),
            callees(
                "bats_semaphore_run",
                *("bats_semaphore_acquire_slot", "bats_semaphore_release_wrapper"),
            ),
            callees(
                "bats_debug_trap",
                *("bats_normalize_windows_dir_path", "bats_capture_stack_trace"),
                "bats_emit_trace",
            ),
        ),
    ),
    Case(
        "haskell",
        "haskell/parsec",
        "b87122c1c74b8240e65044a8f600f0427d4dd9c3",
        (  # Text.Parsec.Combinator; Token.hs's parsers are makeTokenParser's where-bindings
            callers(
                "between",
                *("parens", "braces", "angles", "brackets", "charLiteral", "stringLiteral"),
            ),
            callers("notFollowedBy", "eof", "reservedOp", "reserved"),
            callers("sepBy1", "sepBy", "commaSep1", "semiSep1"),
            callers("option", "optionMaybe", "decimalFloat", "fractExponent"),
            callers("skipMany1", "simpleSpace", "inCommentMulti", "inCommentSingle"),
            callees("sepBy", "sepBy1"),
            callees("endBy1", "many1"),
            callees("notFollowedBy", "try", "unexpected"),
            callees("optionMaybe", "option"),
            callees("eof", "notFollowedBy"),
        ),
    ),
)

CASES += (
    Case(
        "ruby",
        "mperham/connection_pool",
        "78bc41e2a9fffbdd7242736233aeedfb64953dd8",
        (
            callers(
                "TimedStack.try_fetch_connection",
                "TimedStack.pop",
                "TimedStack.shutdown_connections",
            ),
            callers(
                "TimedStack.current_time",
                *("TimedStack.pop", "TimedStack.idle_connections?", "TimedStack.store_connection"),
            ),
            callers(
                "TimedStack.connection_stored?",
                *("TimedStack.try_fetch_connection", "TimedStack.idle_connections?"),
            ),
            callers("TimedStack.reserve_idle_connection", "TimedStack.reap"),
            callers("TimedStack.decrement_created", "ConnectionPool.checkin"),
            callees(  # ``#{length}`` and ``count = idle``: calls without parentheses
                "TimedStack.pop",
                *("TimedStack.current_time", "TimedStack.try_fetch_connection"),
                *("TimedStack.try_create", "TimedStack.length"),
            ),
            callees("TimedStack.reap", "TimedStack.idle", "TimedStack.reserve_idle_connection"),
            # @available.shutdown: @available is a TimedStack (assigned in initialize); the
            # index does not type instance variables and takes the same file's shutdown
            callees("ConnectionPool.shutdown@connection_pool.rb", "TimedStack.shutdown"),
            callees("Wrapper.pool_available", "ConnectionPool.available"),
            callees("ConnectionPool.checkin", "TimedStack.decrement_created", "TimedStack.push"),
        ),
    ),
)

CASES += (
    Case(
        "rust",
        "rust-lang/log",
        "037d7a58f6ad184abb3afc4db81d37c43a5696ec",
        (  # src/lib.rs; its tests are in an inline ``mod tests`` with ``use super::...``
            callers(
                "Level.from_usize",
                *("Level.from_str", "Level.iter", "Level.increment_severity"),
                *("Level.decrement_severity", "LevelFilter.to_level"),
            ),
            callers(
                "LevelFilter.from_usize",
                *("LevelFilter.from_str", "Level.to_level_filter", "LevelFilter.iter"),
                *("LevelFilter.increment_severity", "LevelFilter.decrement_severity"),
            ),
            callers("set_logger_inner", "set_boxed_logger", "set_logger"),
            # assert_eq!(*expected, input.as_str()): a call inside a macro's arguments; in
            # test_level_filter_as_str ``input`` is a LevelFilter (an untyped loop variable)
            callers("Level.as_str", "Level.fmt", "tests.test_level_as_str"),
            callers("Level.increment_severity", "tests.test_level_up"),
            callees("Level.iter", "Level.from_usize"),
            callees("Level.fmt", "Level.as_str"),
            callees("LevelFilter.to_level", "Level.from_usize"),
            callees("LevelFilter.increment_severity", "LevelFilter.from_usize"),
            callees(  # builder chains: each call's result type is the next receiver's
                "tests.test_record_builder",
                *("MetadataBuilder.new", "MetadataBuilder.target", "MetadataBuilder.build"),
                *("RecordBuilder.new", "RecordBuilder.args", "RecordBuilder.metadata"),
                *("RecordBuilder.module_path", "RecordBuilder.file", "RecordBuilder.line"),
                *("RecordBuilder.build", "Record.metadata", "Metadata.target"),
                *("Record.module_path", "Record.file", "Record.line"),
            ),
        ),
    ),
)

CASES += (
    Case(  # a second repository, its checks read off the source before the index's answers
        "rust",
        "BurntSushi/walkdir",
        "6fd031c82ba5a4204b4ce6eae73dacb00dc072ec",
        (  # src/lib.rs; sort_by's callers also in src/tests/recursive.rs and walkdir-list
            callers("IntoIter.skippable", "IntoIter.handle_entry", "IntoIter.get_deferred_dir"),
            callers("IntoIter.handle_entry", "IntoIter.next"),
            callers("Error.from_io", "IntoIter.push", "IntoIter.check_loop", "DirList.next"),
            callers(
                "WalkDir.sort_by",
                *("WalkDir.sort_by_key", "WalkDir.sort_by_file_name", "Args.walkdir"),
                *("sort_by", "sort_max_open"),  # tests; entries.sort_by is a Vec's
            ),
            callers("DirEntry.from_path", "IntoIter.next", "IntoIter.follow"),
            # self.stack_path.push(..), self.stack_list.push(..): a Vec's, not IntoIter.push
            callees(
                "IntoIter.push",
                *("DirList.close", "DirEntry.path", "Error.from_path", "Ancestor.new"),
                "Error.from_io",
            ),
            callees(
                "IntoIter.follow",
                *("DirEntry.from_path", "DirEntry.path", "DirEntry.is_dir", "IntoIter.check_loop"),
            ),
            callees("IntoIter.check_loop", "Error.from_io", "Ancestor.is_same", "Error.from_loop"),
            callees("IntoIter.pop"),  # Vec::pop, Option::expect, cmp::min
            callees(
                "IntoIter.is_same_file_system", "device_num", "DirEntry.path", "Error.from_entry"
            ),
        ),
    ),
)

CASES += (
    Case(
        "perl",
        "libwww-perl/URI",
        "e5edc02fc363e5e42a7731e866d99559c736ee1f",
        (  # lib/URI.pm and lib/URI/_query.pm
            callers("URI._no_scheme_ok", "URI._init", "URI._scheme"),
            callers(
                "_query._is_array",
                *("_query.query_form", "_query.query_keywords", "_query.query_param"),
                *("_query.query_param_append", "_query.query_form_hash"),
            ),
            # _server's _uric_escape calls it as $class->SUPER::_uric_escape
            callers("URI._uric_escape", "URI._init", "_server._uric_escape"),
            callers("URI._scheme", "URI.scheme", "URI.canonical"),
            # irc's options calls it as shift->query_form(@_): an untyped invocant
            callers(
                "_query.query_form",
                *("_query.query_param", "_query.query_param_append"),
                *("_query.query_param_delete", "_query.query_form_hash"),
                *("irc.options", "mailto.query_form"),
            ),
            callees("URI.new", "URI.scheme", "URI.implementor", "URI._init"),
            callees("URI._init", "URI._uric_escape", "URI._no_scheme_ok"),
            callees("URI.canonical", "URI._scheme", "URI.clone"),
            callees("URI.eq", "URI.new", "URI.canonical", "URI.as_string"),
            callees("_query.query_form", "_query.query", "_query._is_array"),
        ),
    ),
)

CASES += (
    Case(
        "go",
        "google/uuid",
        "2d3c2a9cc518326daf99a383f07c4d3c44317e4d",
        (
            callers("setNodeInterface", "SetNodeInterface", "NodeID", "NewUUID", "generateV6"),
            callers("xtob", "Parse", "ParseBytes", "Validate"),
            callers("encodeHex", "UUID.MarshalText", "UUID.String", "UUID.URN"),
            callers("makeV7", "NewV7", "NewV7FromReader"),
            callers("getTime", "GetTime", "NewV6WithTime", "TestGetTime"),
            callees("NewUUID", "GetTime", "setNodeInterface"),
            callees("NewV7", "NewRandom", "makeV7"),
            callees("setClockSequence", "randomBits"),
            # Must(NewRandom()).String(): the String of the type Must's signature returns
            callees("NewString", "Must", "NewRandom", "UUID.String"),
            # panic(err.Error()): the error interface's Error, not the repository's
            callees("randomBits"),
        ),
    ),
)

CASES += (
    Case(
        "python",
        "pallets/itsdangerous",
        "672971d66a2ef9f85151e53283113f33d642dabd",
        (
            callers(
                "base64_decode",
                "Signer.verify_signature",
                "URLSafeSerializerMixin.load_payload",
                "TimestampSigner.unsign",
                "test_base64",
                "test_base64_bad",
            ),
            callers("_make_keys_list", "Signer.__init__", "Serializer.__init__"),
            callers("int_to_bytes", "TimestampSigner.sign", "test_int_bytes"),
            # self.is_text_serializer (an attribute of the same name) is no call
            callers("is_text_serializer", "Serializer.__init__", "Serializer.load_payload"),
            callers(
                "Signer.derive_key",
                "Signer.get_signature",
                "Signer.verify_signature",
                "TestSigner.test_invalid_key_derivation",
            ),
            # raising BadData(...) constructs it: the class and the __init__ that runs
            callees("base64_decode", "want_bytes", "BadData", "BadData.__init__"),
            callees("Signer.sign", "want_bytes", "Signer.get_signature"),
            callees(
                "TimestampSigner.sign",
                *("want_bytes", "base64_encode", "int_to_bytes"),
                *("TimestampSigner.get_timestamp", "Signer.get_signature"),
            ),
            callees(
                "Signer.unsign",
                *("want_bytes", "BadSignature", "BadSignature.__init__", "Signer.verify_signature"),
            ),
            callees("int_to_bytes"),  # _int_to_bytes is struct.Struct(">Q").pack
        ),
    ),
)

CASES += (
    Case(
        "c",
        "DaveGamble/cJSON",
        "a29814f285cc531c00223743ad3c55cd38c0dc56",
        (
            # the tests #include "../cJSON.c", so its static functions are theirs to call
            callers(
                "parse_string",
                *("parse_value", "parse_object", "assert_parse_string", "assert_not_parse_string"),
            ),
            callers(
                "cJSON_strdup",
                *("add_item_to_object", "cJSON_CreateRaw", "cJSON_CreateString"),
                *("cJSON_Duplicate_rec", "cJSON_SetValuestring", "replace_item_in_object"),
                "cjson_add_item_to_object_should_not_use_after_free_when_string_is_aliased",
            ),
            callers(
                "print_value",
                *("assert_print_value", "cJSON_PrintBuffered", "cJSON_PrintPreallocated"),
                *("print", "print_array", "print_object"),
            ),
            callers(
                "buffer_skip_whitespace",
                *("cJSON_ParseWithLengthOpts", "parse_array", "parse_object"),
            ),
            callers(
                "cJSON_New_Item",
                *("cJSON_CreateArray", "cJSON_CreateArrayReference", "cJSON_CreateBool"),
                "cJSON_CreateFalse",
                *("cJSON_CreateNull", "cJSON_CreateNumber", "cJSON_CreateObject"),
                *("cJSON_CreateObjectReference", "cJSON_CreateRaw", "cJSON_CreateString"),
                *("cJSON_CreateStringReference", "cJSON_CreateTrue", "cJSON_Duplicate_rec"),
                *("cJSON_ParseWithLengthOpts", "create_reference", "parse_array"),
                "parse_object",
            ),
            callees("cJSON_Delete", "cJSON_Delete"),  # global_hooks.deallocate: a pointer
            callees("print_string", "print_string_ptr"),
            callees("cJSON_Parse", "cJSON_ParseWithOpts"),
            callees("cJSON_CreateString", "cJSON_New_Item", "cJSON_strdup", "cJSON_Delete"),
            callees("cJSON_DeleteItemFromObject", "cJSON_Delete", "cJSON_DetachItemFromObject"),
        ),
    ),
)

CASES += (
    Case(
        "php",
        "vlucas/phpdotenv",
        "416df702837983f8d5ff48c9c3fee4f5f57b980b",
        (
            callers(
                "Regex.pregAndWrap",
                *("Regex.matches", "Regex.occurrences", "Regex.replaceCallback", "Regex.split"),
            ),
            callers("Str.utf8", "Reader.readFromFile"),  # from a closure inside it
            callers("Lines.looksLikeMultilineStart", "Lines.multilineProcess"),
            callers("Resolver.resolveVariable", "Resolver.resolve"),
            callers("Reader.readFromFile", "Reader.read"),
            callees("Reader.read", "Reader.readFromFile"),  # isDefined/get: PhpOption's
            callees(
                "Dotenv.createImmutable",
                *("RepositoryBuilder.createWithDefaultAdapters", "RepositoryBuilder.immutable"),
                *("RepositoryBuilder.make", "Dotenv.create"),
            ),
            callees("Lines.process", "Lines.multilineProcess", "Lines.isCommentOrWhitespace"),
            callees("Str.len"),  # mb_strlen: PHP's
            callees(
                "Resolver.resolve",
                *("Str.substr", "Resolver.resolveVariable", "Value.getVars", "Value.getChars"),
            ),
        ),
    ),
)

CASES += (
    Case(
        "typescript",
        "sindresorhus/ky",
        "3419113b48e034fdcf8fa6bd3be3da7b3d0d758f",
        (
            callers("withProgress", "streamResponse", "streamRequest"),
            callers("mergeHeaderContainers", "deepMergeInternal"),
            callers("normalizeHeaderObject", "mergeHeaderContainers"),
            callers("getCapture", "parseDate"),
            callers(
                "isErrorType",
                *("isHTTPError", "isNetworkError", "isTimeoutError", "isForceRetryError"),
            ),
            callees("streamResponse", "withProgress"),  # new Response(...): the platform's
            callees(
                "mergeHeaderContainers", "isPlainObject", "normalizeHeaderObject", "mergeHeaders"
            ),
            callees(
                "isKyError",
                *("isHTTPError", "isNetworkError", "isTimeoutError", "isForceRetryError"),
            ),
            # Date.now, Math.max: builtins (a test's stub ``Date.now = () => now`` is linked)
            callees("calculateRetryTimingDelay", "parseDate"),
            callees("mergeHeaders"),  # result.set/delete: methods of the platform's Headers
        ),
    ),
)

CASES += (
    Case(
        "javascript",
        "tj/commander.js",
        "ba6d13ddb4243e5913367734f8c159089ffe7834",
        (
            callers("editDistance", "suggestSimilar"),
            callers("suggestSimilar", "Command.unknownOption", "Command.unknownCommand"),
            callers("camelcase", "Option.attributeName"),
            # ``option.attributeName()`` on untyped parameters, mostly inside arrow callbacks.
            # First read off a truncated grep (its first 10 hits: six callers); the source has
            # 19 call sites in 12 functions, two of them arrow functions held in ``const``s of
            # ``_conflictingOption``, corrected by reading each site.
            callers(
                "Option.attributeName",
                *("Command.addOption", "Command._prepareForParse", "Command.opts"),
                *("Command._checkForMissingMandatoryOptions", "Command._parseOptionsEnv"),
                *("Command._checkForConflictingLocalOptions", "Command._parseOptionsImplied"),
                *("DualOptions.constructor", "DualOptions.valueFromOption", "Command.version"),
                *("findBestOptionFromValue", "getErrorMessage"),
            ),
            callers("Help.groupItems", "Help.formatHelp"),
            callees("suggestSimilar", "editDistance"),  # Array.from, Math.max: builtins
            callees("Option.attributeName", "Option.name", "camelcase"),
            # ``helper.padWidth(...)``: the ``helper`` parameter is a Help (JSDoc only)
            callees(
                "Help.padWidth",
                *("Help.longestOptionTermLength", "Help.longestGlobalOptionTermLength"),
                *("Help.longestSubcommandTermLength", "Help.longestArgumentTermLength"),
            ),
            callees(
                "Help.longestOptionTermLength",
                *("Help.visibleOptions", "Help.displayWidth", "Help.styleOptionTerm"),
                "Help.optionTerm",
            ),
            # ``let command = this``; command.createHelp().visibleOptions(command): a Help's
            callees(
                "Command.unknownOption",
                *("Command.createHelp", "Help.visibleOptions", "suggestSimilar", "Command.error"),
            ),
        ),
    ),
)

CASES += (
    Case(
        "tsx",
        "pacocoursey/cmdk",
        "d6fde235386414196bf80d9b9fa91e2cf89a72ea",
        (
            # functions nested in the ``Command`` component (``React.forwardRef((props) => ...)``)
            callers(
                "getValidItems",
                *("sort", "selectFirstItem", "updateSelectedToIndex", "updateSelectedByItem"),
                "last",  # const last = () => ...
            ),
            # Command: inside an object literal's arrow and the onKeyDown arrow of its JSX
            callers(
                "getSelectedItem",
                *("Command", "scrollSelectedIntoView", "updateSelectedByItem"),
                "updateSelectedByGroup",
            ),
            callers("updateSelectedByItem", "updateSelectedByGroup", "next", "prev"),
            # <CopyIcon/>, imported from 'components/icons' (vercel.tsx has a CopyIcon of its own)
            callers("CopyIcon@website/components/icons/index.tsx", "InstallButton", "Code"),
            # <Item value=...> in raycast.tsx (framer.tsx, vercel.tsx and cmdk define Items too)
            callers("Item@website/components/cmdk/raycast.tsx", "RaycastCMDK"),
            # store.setState: an arrow in an object literal, no function of the index
            callees(
                "updateSelectedByGroup",
                *("getSelectedItem", "findNextSibling", "findPreviousSibling"),
                "updateSelectedByItem",
            ),
            callees("filterItems", "score"),
            callees("next", "last", "updateSelectedByGroup", "updateSelectedByItem"),
            # <CopiedIcon/>, <CopyIcon/>; setCopied: a useState setter; setTimeout: a builtin
            callees("InstallButton", "CopiedIcon", "CopyIcon"),
            callees("GitHubButton", "GitHubIcon"),
        ),
    ),
)

CASES += (
    Case(
        "java",
        "square/javapoet",
        "b9017a9503b76e11b4ad4c1a9f050e2d29112cb0",
        (
            # ``import static ...Util.requireExactlyOneOf``: a statically imported method
            callers("Util.requireExactlyOneOf", "Builder.build"),  # TypeSpec.Builder's
            callers(
                "Util.characterLiteralWithoutSingleQuotes",
                *("Builder.addMemberForValue", "Util.stringLiteralWithDoubleQuotes"),
                "UtilTest.characterLiteral",
            ),
            callers(
                "Util.stringLiteralWithDoubleQuotes", "CodeWriter.emit", "UtilTest.stringLiteral"
            ),
            callers("Util.immutableMultimap", "AnnotationSpec.AnnotationSpec"),
            callers("Util.union", "TypeSpec.emit"),
            # entry.getValue().isEmpty(): a JDK List's, on a call result of no declared type
            callees("Util.immutableMultimap", "Util.immutableList"),
            callees("Util.requireExactlyOneOf", "Util.checkArgument"),
            callees(
                "Util.stringLiteralWithDoubleQuotes", "Util.characterLiteralWithoutSingleQuotes"
            ),
            callees("Util.union"),  # LinkedHashSet's addAll
            callees("Util.checkArgument"),  # String.format, IllegalArgumentException
        ),
    ),
    Case(
        "java",
        "apache/commons-cli",
        "0a68ae0e826bb08eb59bda9bae7ec5d84008b62a",
        (
            callers("DefaultParser.isShortOption", "DefaultParser.isOption"),
            callers(
                "DefaultParser.getLongPrefix",
                *("DefaultParser.handleShortAndLongOption", "DefaultParser.isLongOption"),
            ),
            callers(
                "DefaultParser.handleLongOptionWithoutEqual",
                *("DefaultParser.handleLongOption", "DefaultParser.handleShortAndLongOption"),
            ),
            callers(  # also DefaultParser.indexOfEqual(...) from the old parsers
                "DefaultParser.indexOfEqual",
                *("DefaultParser.handleLongOption", "DefaultParser.handleLongOptionWithEqual"),
                *("DefaultParser.handleShortAndLongOption", "DefaultParser.isLongOption"),
                *("DefaultParser.isShortOption", "GnuParser.flatten", "PosixParser.flatten"),
            ),
            # the package's Util, not help/Util (another class named Util)
            callers(
                "Util.stripLeadingHyphens@cli/Util.java",
                *("UtilTest.testStripLeadingHyphens", "CommandLine.resolveOption"),
                *("DefaultParser.getLongPrefix", "DefaultParser.handleShortAndLongOption"),
                *("GnuParser.flatten", "Options.getMatchingOptions", "Options.getOption"),
                *("Options.hasLongOption", "Options.hasOption", "Options.hasShortOption"),
            ),
            # token.startsWith/length/substring, optName.isEmpty: String's
            callees(
                "DefaultParser.isShortOption",
                "DefaultParser.indexOfEqual",
                "Options.hasShortOption",
            ),
            callees(
                "DefaultParser.handleLongOption",
                "DefaultParser.indexOfEqual",
                *(
                    "DefaultParser.handleLongOptionWithoutEqual",
                    "DefaultParser.handleLongOptionWithEqual",
                ),
            ),
            callees("DefaultParser.isJavaProperty", "Options.getOption", "Option.getArgs"),
            callees(  # cmd: a CommandLine field (CommandLine.Builder has an addOption too)
                "DefaultParser.handleOption",
                *("DefaultParser.checkRequiredArgs", "DefaultParser.updateRequiredOptions"),
                *("Option.clone", "CommandLine.addOption", "Option.hasArg"),
            ),
            callees(  # expectedOpts.remove: a JDK List's
                "DefaultParser.updateRequiredOptions",
                *("Option.isRequired", "Option.getKey", "Options.getOptionGroup"),
                *("OptionGroup.isRequired", "OptionGroup.setSelected"),
            ),
        ),
    ),
)

CASES += (
    Case(
        "cpp",
        "jarro2783/cxxopts",
        "a3a21b31ef2894b5a802f041f40d51059469a259",
        (
            # parser_tool defines each function twice (with and without <regex>): both count
            callers("SplitInteger", "integer_parser"),
            callers("IsTrueText", "parse_value"),
            callers("IsFalseText", "parse_value"),
            callers(
                "valid_option_later_char",
                *("valid_option_first_char", "split_option_names", "ParseArgument"),
            ),
            callers("ParseArgument", "OptionParser.parse"),
            callees("valid_option_first_char", "valid_option_later_char"),
            callees("valid_option_later_char"),  # std::isalnum
            # text.c_str() on a std::string links to catch.hpp's StringRef.c_str (by name)
            callees("IsTrueText"),  # result.empty(): std::smatch's, not the free empty()
            callees("IsFalseText"),
            callees("SplitInteger", "throw_or_mimic"),  # text.empty(): std::string's
        ),
    ),
)

CASES += (
    Case(  # a second repository, its checks read off the source before the index's answers
        "cpp",
        "leethomason/tinyxml2",
        "3dcad8e3c38e7091ae3771bf63020027f91715ce",
        (  # tinyxml2.cpp, tinyxml2.h (inline methods), xmltest.cpp (main)
            callers("XMLAttribute.SetName", "XMLElement.FindOrCreateAttribute"),
            callers(
                "XMLElement.CreateAttribute",
                *("XMLElement.FindOrCreateAttribute", "XMLElement.ParseAttributes"),
            ),
            callers(  # ~XMLNode and InsertChildPreamble call it through a field (_parent)
                "XMLNode.Unlink",
                *("XMLNode.~XMLNode", "XMLNode.DeleteChild", "XMLNode.InsertChildPreamble"),
            ),
            callers(
                "XMLUtil.ToInt",
                *("XMLUtil.ToBool", "XMLAttribute.QueryIntValue", "XMLElement.QueryIntText"),
            ),
            callers(
                "XMLElement.FindAttribute",
                *("XMLElement.Attribute", "XMLElement.QueryIntAttribute"),
                *("XMLElement.QueryUnsignedAttribute", "XMLElement.QueryInt64Attribute"),
                *("XMLElement.QueryUnsigned64Attribute", "XMLElement.QueryBoolAttribute"),
                *("XMLElement.QueryDoubleAttribute", "XMLElement.QueryFloatAttribute"),
                *("XMLElement.QueryStringAttribute", "main"),
            ),
            # a->Name(): an XMLAttribute's, not XMLElement's inline Name()
            callees("XMLElement.FindAttribute", "XMLUtil.StringEqual", "XMLAttribute.Name"),
            callees(
                "XMLElement.Attribute",
                *("XMLElement.FindAttribute", "XMLUtil.StringEqual", "XMLAttribute.Value"),
            ),
            callees(
                "XMLElement.FindOrCreateAttribute",
                *("XMLUtil.StringEqual", "XMLAttribute.Name", "XMLElement.CreateAttribute"),
                "XMLAttribute.SetName",
            ),
            callees(  # Value(): XMLNode's, inherited; SetAttribute: its 2-argument overloads
                "XMLElement.ShallowClone",
                *("XMLDocument.NewElement", "XMLNode.Value", "XMLElement.FirstAttribute"),
                *("XMLAttribute.Next", "XMLElement.SetAttribute", "XMLAttribute.Name"),
                "XMLAttribute.Value",
            ),
            callees("XMLNode.DeleteChild", "XMLNode.Unlink", "XMLNode.DeleteNode"),
        ),
    ),
)

CASES += (
    Case(
        "c_sharp",
        "jbogard/MediatR",
        "8a64581e2570e7410c5f44835d9ea112beccbe6b",
        (
            # extension methods on System.Type, called inside LINQ lambdas
            callers(
                "ServiceRegistrar.IsOpenGeneric",
                "ServiceRegistrar.AddMediatRClasses",
                "ServiceRegistrar.ConnectImplementationsToTypesClosing",
                "ServiceRegistrar.AddConcretionsThatCouldBeClosed",
            ),
            callers(
                "ServiceRegistrar.CanBeCastTo",
                "ServiceRegistrar.ConnectImplementationsToTypesClosing",
                "ServiceRegistrar.CouldCloseTo",
            ),
            callers(
                "ServiceRegistrar.FindInterfacesThatClosesCore",
                "ServiceRegistrar.FindInterfacesThatClose",
                "ServiceRegistrar.FindInterfacesThatClosesCore",  # recursion
            ),
            callers(
                "ServiceRegistrar.IsMatchingWithInterface",
                "ServiceRegistrar.ConnectImplementationsToTypesClosing",
                "ServiceRegistrar.IsMatchingWithInterface",
            ),
            callers(
                "ServiceRegistrar.GetConcreteRequestTypes",
                "ServiceRegistrar.AddAllConcretionsThatClose",
            ),
            callees(
                "ServiceRegistrar.AddMediatRClassesWithTimeout",
                "ServiceRegistrar.AddMediatRClasses",
            ),
            callees(
                "ServiceRegistrar.AddConcretionsThatCouldBeClosed",
                *("ServiceRegistrar.IsOpenGeneric", "ServiceRegistrar.CouldCloseTo"),
            ),  # services.TryAddTransient: Microsoft.Extensions.DependencyInjection's
            callees("ServiceRegistrar.CouldCloseTo", "ServiceRegistrar.CanBeCastTo"),
            callees(
                "ServiceRegistrar.FindInterfacesThatClose",
                "ServiceRegistrar.FindInterfacesThatClosesCore",
            ),
            callees("ServiceRegistrar.CanBeCastTo"),  # IsAssignableFrom: System.Type's
        ),
    ),
    Case(
        "dart",
        "dart-lang/path",
        "7e3d5d87220133ad9cc99f82e85a826011a62859",
        (
            callers("Context._needsNormalization", "Context.canonicalize", "Context.normalize"),
            callers("_validateArgList", "Context.absolute", "Context.join"),
            callers(
                "Context._parse",
                *("Context.basename", "Context.basenameWithoutExtension", "Context.dirname"),
                *("Context.extension", "Context.joinAll", "Context.split", "Context.hash"),
                *("Context.canonicalize", "Context.normalize", "Context.relative"),
                "Context.withoutExtension",
            ),
            # lib/path.dart's joinAll and the tests' main (context.joinAll in test closures)
            callers("Context.joinAll", "Context.join", "joinAll", "main"),
            # parsed.normalize() and the cascades _parse(from)..normalize()
            callers(
                "ParsedPath.normalize",
                *("Context.canonicalize", "Context.normalize", "Context.relative", "Context.hash"),
            ),
            callees("Context.join", "_validateArgList", "Context.joinAll"),
            callees(
                "Context.normalize",
                *("Context._needsNormalization", "Context._parse", "ParsedPath.normalize"),
                "ParsedPath.toString",
            ),
            callees(
                "Context.canonicalize",
                *("Context.absolute", "Context._needsNormalization", "Context._parse"),
                *("ParsedPath.normalize", "ParsedPath.toString"),
            ),
            callees(
                "Context.hash",
                *("Context.absolute", "Context._hashFast", "Context._parse"),
                *("ParsedPath.normalize", "ParsedPath.toString"),
            ),
            callees("Context.split", "Context._parse"),  # where/toList/insert: dart:core's
        ),
    ),
)

CALL_EDGES = (
    "SELECT DISTINCT {other}.qualified_name FROM edges e"
    " JOIN entities {other} ON {other}.entity_id = e.{other_end}"
    " WHERE e.type = 'CALLS' AND e.{this_end} = ?"
)


def _function(conn, language: str, function: str):
    name, _, path = function.partition("@")
    rows = conn.execute(
        "SELECT entity_id, relative_path FROM entities WHERE language = ? AND qualified_name = ?"
        " AND entity_type = 'Function'",
        (language, name),
    ).fetchall()
    rows = [row for row in rows if row[1].endswith(path)] if path else rows
    return [row[0] for row in rows]


def answer(conn, language: str, check: Check) -> set[str]:
    """The index's answer: qualified names of the callers or callees of every definition
    the check names."""
    if check.kind == "callers":
        sql = CALL_EDGES.format(other="s", other_end="source_id", this_end="target_id")
    else:
        sql = CALL_EDGES.format(other="t", other_end="target_id", this_end="source_id")
    found: set[str] = set()
    for entity in _function(conn, language, check.function):
        found.update(row[0] for row in conn.execute(sql, (entity,)))
    return found


def grade(expected: frozenset[str], found: set[str]) -> str:
    if found == expected:
        return "right"
    return "partly" if found & expected else "wrong"


def figures(conn, language: str) -> dict:
    """Files, entities and call sites of one language, by how each call resolved."""
    files = conn.execute("SELECT COUNT(*) FROM files WHERE language = ?", (language,)).fetchone()
    entities = conn.execute(
        "SELECT COUNT(*) FROM entities WHERE language = ?", (language,)
    ).fetchone()
    reasons = dict(
        conn.execute(
            "SELECT COALESCE(CASE WHEN u.reason LIKE 'ambiguous%' THEN 'ambiguous'"
            " ELSE u.reason END, 'single'), COUNT(*) FROM call_sites c"
            " JOIN files f ON f.file_id = c.file_id"
            " LEFT JOIN unresolved_calls u ON u.call_id = c.call_id"
            " WHERE f.language = ? GROUP BY 1",
            (language,),
        ).fetchall()
    )
    ambiguous_edges = conn.execute(
        "SELECT COUNT(*) FROM (SELECT c.call_id FROM call_sites c"
        " JOIN files f ON f.file_id = c.file_id JOIN edges e ON e.type = 'CALLS'"
        " AND e.source_id = c.caller_entity_id AND e.line_number = c.line_number"
        " AND e.resolution_method = 'ambiguous' WHERE f.language = ?"
        " AND c.call_id NOT IN (SELECT call_id FROM unresolved_calls)"
        " GROUP BY c.call_id)",
        (language,),
    ).fetchone()[0]
    single = reasons.pop("single", 0) - ambiguous_edges
    return {
        "files": files[0],
        "entities": entities[0],
        "call_sites": single + ambiguous_edges + sum(reasons.values()),
        "single": single,
        "ambiguous": ambiguous_edges + reasons.pop("ambiguous", 0),
        "unresolved": reasons.pop("no_definition", 0),
        "outside": sum(reasons.values()),
    }


def run(case: Case, repos: Path, show: list[str]) -> dict:
    repository = repos / case.repository.split("/", 1)[1].lower()
    with tempfile.TemporaryDirectory(prefix="eshu-bench-languages-") as tmp:
        db = Path(tmp) / "index.sqlite"
        if not index_repositories(db, [repository], workers=1).ok:
            raise SystemExit(f"indexing {repository} failed")
        conn = open_reader(db)
        try:
            result = {"language": case.language, "repository": case.repository}
            result.update(figures(conn, case.language))
            graded = []
            for check in case.checks:
                found = answer(conn, case.language, check)
                graded.append((check, found, grade(check.expected, found)))
            for name in show:
                for kind in ("callers", "callees"):
                    found = answer(conn, case.language, Check(kind, name, frozenset()))
                    print(f"  {kind} of {name}: {sorted(found)}")
        finally:
            conn.close()
    for level in ("right", "partly", "wrong"):
        result[level] = sum(1 for *_, got in graded if got == level)
    result["misses"] = [
        {
            "check": f"{check.kind} {check.function}",
            "missing": sorted(check.expected - found),
            "extra": sorted(found - check.expected),
        }
        for check, found, got in graded
        if got != "right"
    ]
    return result


COLUMNS = [
    "language",
    "files",
    "entities",
    "call_sites",
    "single",
    "ambiguous",
    "unresolved",
    "outside",
    "right",
    "partly",
    "wrong",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--only", default="")
    parser.add_argument("--show", nargs="*", default=[])
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    wanted = set(filter(None, options.only.split(",")))
    results = [
        run(case, options.repos, options.show)
        for case in CASES
        if not wanted or case.language in wanted
    ]
    if options.json:
        print(json.dumps(results, indent=2))
        return
    print(" ".join(f"{column:>10}" for column in COLUMNS), " repository")
    for result in results:  # a language may have several repositories
        print(" ".join(f"{result[column]!s:>10}" for column in COLUMNS), "", result["repository"])
        for miss in result["misses"]:
            print(f"    {miss}")


if __name__ == "__main__":
    main()
