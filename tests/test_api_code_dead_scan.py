"""Dead code on a real indexed repository: what is excluded, paging, and honest truncation."""

from __future__ import annotations

from pathlib import Path

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.inprocess import InProcessDispatcher
from eshu_mcp.query.local.api.deadcode import cache, routes, scan
from eshu_mcp.query.local.api.deadcode.interfaces import (
    header_decorators,
    implemented,
    written_bases,
)
from eshu_mcp.query.local.api.platform.resource import LocalQueryResource
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.store.database import open_reader
from tests.indexed import index_files
from tests.test_api_code_common import call
from tests.test_api_resource import InlinePool, ThreadReactor

from .test_index_indexer import git

SERVICE = """\
import abc
from typing import Protocol, overload
from xml.sax import handler

from zope.interface import Interface, implementer


def forgotten_helper():
    return 1


def on_result(result):
    return result


def start(d):
    d.addCallback(on_result)


HOOKS = {"late": lambda: 0}


class IGreeter(Interface):
    def greet_someone(name):
        "Say hello."


class ILoudGreeter(IGreeter):
    def shout_at(name):
        "Say it loudly."


@implementer(ILoudGreeter)
class Greeter:
    def greet_someone(self, name):
        return name

    def shout_at(self, name):
        return name

    def stale_greeting_cache(self):
        return None


class Base:
    def render_page(self):
        return ""


class Child(Base):
    def render_page(self):
        return "child"

    def __repr__(self):
        return "Child"


class Sized(Protocol):
    def measured_size(self) -> int: ...


class Store(abc.ABC):
    def flush_everything(self):
        return None


class Worker:
    @abc.abstractmethod
    def run_job_once(self):
        raise NotImplementedError

    @overload
    def pick_one(self, x: int) -> int: ...

    def pick_one(self, x):
        return x


class Dispatcher:
    def handle(self, command):
        return getattr(self, "cmd_" + command)()

    def cmd_QUIT(self):
        return None


class Connection:
    state = "OPEN"
    feed = make_state_dispatcher("dataArrived")

    def _dataArrived_OPEN(self, data):
        return data

    def _dataArrived_PAUSED(self, data):
        return None

    def _dataArrived_CLOSED(self, data):
        return None


class Stored:
    def upgradeToVersion2(self):
        return None

    def upgradToVersion3(self):
        return None


def upgrade(thing, version):
    return getattr(thing, "upgradeToVersion%s" % version)()


def handler_named(name):
    return globals()["_%s_Handler" % name]()


class _quit_Handler:
    pass


class SaxHandler(handler.ContentHandler):
    def startDocument(self):
        return None

    def _private_helper(self):
        return None

    def __mangled_helper(self):
        return None


class QuietHandler(SaxHandler):
    def endDocument(self):
        return None


class Failed(ValueError):
    def describe_failure(self):
        return None


class Pair:
    def zap_one(self):
        return 1

    def zap_two(self):
        return 2


class Untyped:
    def reached_by_name_only(self):
        return None


class Channel:
    def writeHeaders(self, code):
        return code

    def _unsent(self):
        return None


def serve(request_factory):
    return request_factory(Channel())


def use(thing):
    return getattr(thing, "reached_by_name_only")()
"""

PAGED = "".join(f"def unused_number_{i:02d}():\n    return {i}\n\n\n" for i in range(23))


def indexed_files(case: SynchronousTestCase, files: dict[str, str]) -> tuple[Path, Path]:
    """A git repository of ``files`` (path -> text), indexed; (repository, index path).
    The dead-code scan cache is emptied before and after the test."""
    repo, db = index_files(case, files)
    cache.forget()
    case.addCleanup(cache.forget)
    return repo, db


class DeadCodeScanTests(SynchronousTestCase):
    def setUp(self) -> None:
        files = {"app/service.py": SERVICE, "app/paged.py": PAGED}
        self.repo, self.db = indexed_files(self, files)
        self.conn = open_reader(self.db)
        self.addCleanup(self.conn.close)

    def dead(self, **body) -> dict:
        return call(self.conn, "/code/dead-code", {"limit": 500, **body}).data

    def suppressed(self) -> dict[str, list[str]]:
        """Suppression reasons by name (of every definition with that name)."""
        data = call(self.conn, "/code/dead-code/investigate", {"limit": 500}).data
        reasons: dict[str, list[str]] = {}
        for row in data["candidate_buckets"]["suppressed"]:
            reasons.setdefault(row["name"], []).extend(row["suppression_reasons"])
        return reasons

    def test_only_unreferenced_definitions_are_reported(self) -> None:
        names = {row["name"] for row in self.dead()["results"]}
        self.assertIn("forgotten_helper", names)
        self.assertIn("zap_two", names)  # two methods are no family; "zap" is written nowhere
        self.assertIn("upgradToVersion3", names)  # a misspelt stem is written nowhere
        self.assertIn("__mangled_helper", names)  # name-mangled: no outside base calls it
        self.assertIn("describe_failure", names)  # exception bases have no such methods

        self.assertIn("stale_greeting_cache", names)
        for used in [
            "on_result",  # passed as a callback: a REFERENCES edge
            "greet_someone",  # zope interface member, and its implementation
            "shout_at",  # declared by an interface extending an interface
            "render_page",  # overrides a base method
            "__repr__",
            "measured_size",  # typing.Protocol member
            "flush_everything",  # ABC member
            "run_job_once",  # abstract method
            "cmd_QUIT",  # dispatched by a computed name ("cmd_" + command)
            "upgradeToVersion2",  # "upgradeToVersion%s" % version
            "_dataArrived_CLOSED",  # dispatched by state: make_state_dispatcher("dataArrived")
            "reached_by_name_only",  # named in a string: getattr dispatch
        ]:
            self.assertNotIn(used, names)

    def test_any_method_of_a_class_with_an_outside_base_is_ambiguous(self) -> None:
        rows = {row["name"]: row for row in self.dead()["results"]}
        reasons = ["python.may_override_outside_base:handler.ContentHandler"]
        # its own methods, protected ones too, and those of a class deriving from it here
        for name in ("startDocument", "_private_helper", "endDocument"):
            self.assertEqual(rows[name]["classification"], "ambiguous", name)
            self.assertEqual(rows[name]["ambiguity_reasons"], reasons, name)
        self.assertEqual(rows["__mangled_helper"]["classification"], "unused")

    def test_a_public_method_of_a_class_constructed_here_may_be_called_outside(self) -> None:
        rows = {row["name"]: row for row in self.dead()["results"]}
        # Channel() is handed to outside code, which may call writeHeaders on it
        self.assertEqual(rows["writeHeaders"]["classification"], "ambiguous")
        self.assertEqual(
            rows["writeHeaders"]["ambiguity_reasons"], ["python.instance_may_be_used_outside"]
        )
        self.assertEqual(rows["_unsent"]["classification"], "unused")
        self.assertEqual(rows["zap_two"]["classification"], "unused")  # Pair is never built
        self.assertEqual(rows["describe_failure"]["classification"], "unused")

    def test_stubs_and_roles_say_why_they_are_kept(self) -> None:
        reasons = {name: " ".join(why) for name, why in self.suppressed().items()}
        for name, reason in [
            ("shout_at", "python.interface_member"),
            ("shout_at", "python.interface_implementation"),
            ("greet_someone", "python.interface_implementation"),
            ("pick_one", "python.overload_stub"),
            ("measured_size", "python.protocol_member"),
            ("flush_everything", "python.abstract_class_member"),
            ("run_job_once", "python.abstract_method"),
            ("render_page", "python.method_override"),
            ("cmd_QUIT", "python.prefix_dispatch"),
            # A family of three or more whose stem alone is written: a state dispatcher.
            ("_dataArrived_PAUSED", "python.prefix_dispatch"),
            # "_%s_Handler" % name: a template with literal text on both sides
            ("_quit_Handler", "python.template_dispatch"),
            ("reached_by_name_only", "name_used_elsewhere"),
        ]:
            self.assertIn(reason, reasons[name], name)

    def test_paging_returns_every_row_once(self) -> None:
        everything = self.dead()
        self.assertFalse(everything["truncated"])
        self.assertIsNone(everything["next_offset"])
        expected = [row["entity_id"] for row in everything["results"]]
        self.assertEqual(len(expected), everything["active_candidates"])
        self.assertGreater(len(expected), 20)
        seen: list[str] = []
        offset = 0
        for _ in range(20):
            page = self.dead(limit=7, offset=offset)
            seen += [row["entity_id"] for row in page["results"]]
            self.assertEqual(page["truncated"], page["next_offset"] is not None)
            if page["next_offset"] is None:
                break
            self.assertEqual(page["next_offset"], offset + 7)
            offset = page["next_offset"]
        self.assertEqual(seen, expected)

    def test_a_new_generation_is_scanned_again(self) -> None:
        self.assertNotIn("freshly_abandoned", {row["name"] for row in self.dead()["results"]})
        with (self.repo / "app" / "paged.py").open("a") as handle:
            handle.write("\n\ndef freshly_abandoned():\n    return 0\n")
        git(self.repo, "add", "-A")
        git(self.repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "+")
        self.assertTrue(index_repositories(self.db, [self.repo], workers=1).ok)
        self.assertIn("freshly_abandoned", {row["name"] for row in self.dead()["results"]})

    def test_a_scan_cut_short_says_so(self) -> None:
        self.patch(scan, "SCAN_ROW_CAP", 5)
        data = self.dead()
        self.assertTrue(data["candidate_scan_truncated"])
        self.assertTrue(data["truncated"])
        self.assertEqual(data["candidate_scan_rows"], 5)
        self.assertLess(data["candidate_scan_files"], data["scope_files"])

    def test_the_whole_repository_is_read(self) -> None:
        data = self.dead(limit=1)
        self.assertFalse(data["candidate_scan_truncated"])
        self.assertEqual(data["candidate_scan_files"], 2)
        self.assertEqual(data["candidate_scan_files"], data["scope_files"])
        self.assertTrue(data["truncated"])
        self.assertEqual(data["next_offset"], 1)

    def test_a_page_over_the_response_budget_is_cut_short_and_resumes(self) -> None:
        expected = [row["entity_id"] for row in self.dead()["results"]]
        self.patch(routes, "PAGE_BYTES", 1500)
        seen: list[str] = []
        offset = 0
        for _ in range(len(expected) + 1):
            page = self.dead(limit=500, offset=offset)
            self.assertLess(len(page["results"]), len(expected))
            seen += [row["entity_id"] for row in page["results"]]
            if page["next_offset"] is None:
                break
            self.assertTrue(page["truncated"])
            offset = page["next_offset"]
        self.assertEqual(seen, expected)

    def test_the_tool_pages_by_offset_even_when_answers_are_cut_by_size(self) -> None:
        expected = [row["entity_id"] for row in self.dead()["results"]]
        resource = LocalQueryResource(
            str(self.db), reactor=ThreadReactor(), threadpool=InlinePool()
        )
        answers = InProcessDispatcher(resource, Clock(), answer_page=2048)
        seen: list[str] = []
        offset = 0
        for _ in range(len(expected) + 1):
            call = answers.call("find_dead_code", {"limit": 100, "offset": offset})
            data = self.successResultOf(call)["structuredContent"]["data"]
            seen += [row["entity_id"] for row in data["results"]]
            if data.get("next_offset") is None:
                break
            offset = data["next_offset"]
        self.assertEqual(seen, expected)


class ClassHeaderTests(SynchronousTestCase):
    """Bases and interface declarations read from a class header as the index stores it."""

    def test_bases_drop_subscripts_and_keep_keywords(self) -> None:
        self.assertEqual(
            written_bases("class Box(typing.Protocol[T], Generic[T, U], metaclass=abc.ABCMeta)"),
            ["typing.Protocol", "Generic", "metaclass=abc.ABCMeta"],
        )
        self.assertEqual(written_bases("class Plain"), [])

    def test_implementer_names_from_decorated_headers(self) -> None:
        header = "@implementer(interfaces.IReactorTCP, IFoo) @other(x) class Reactor(Base)"
        self.assertEqual(implemented(header_decorators(header)), ["IReactorTCP", "IFoo"])
        self.assertEqual(implemented(header_decorators("class Reactor(Base)")), [])


LIBRARY = {
    "lib/__init__.py": "from lib._impl import Engine\n",
    "lib/_impl.py": (
        "class Engine:\n"
        "    def start_engine(self):\n"
        "        return 1\n\n"
        "    def _spin_engine(self):\n"
        "        return 2\n"
    ),
    "lib/shapes.py": (
        '__all__ = ["Circle"]\n\n\n'
        "class Circle:\n"
        "    def radius_squared(self):\n"
        "        return 1\n\n\n"
        "class Square:\n"
        "    def side_length(self):\n"
        "        return 1\n\n\n"
        "def shape_helper():\n"
        "    return 0\n"
    ),
    "lib/widgets.py": (
        "class _WidgetBase:\n"
        "    def resize_widget(self):\n"
        "        return 1\n\n\n"
        "class Button(_WidgetBase):\n"
        "    pass\n\n\n"
        "def make_widget():\n"
        "    return 1\n\n\n"
        "def _hidden_widget():\n"
        "    return 1\n"
    ),
    "tools/run.py": "def build_everything():\n    return 1\n",
}


class PublicApiTests(SynchronousTestCase):
    """Public names of a package's modules may be used outside the repository."""

    def setUp(self) -> None:
        _, db = indexed_files(self, LIBRARY)
        self.conn = open_reader(db)
        self.addCleanup(self.conn.close)

    def verdicts(self) -> dict[str, tuple[str, list[str]]]:
        data = call(self.conn, "/code/dead-code", {"limit": 500}).data
        return {
            row["name"]: (row["classification"], row.get("ambiguity_reasons", []))
            for row in data["results"]
        }

    def test_public_names_are_ambiguous_and_private_ones_unused(self) -> None:
        data = call(self.conn, "/code/dead-code", {"limit": 500}).data
        self.assertEqual(data["active_by_classification"], {"ambiguous": 5, "unused": 6})
        verdicts = self.verdicts()
        public = {
            "start_engine": "lib.Engine",  # re-exported by the package's __init__
            "radius_squared": "lib.shapes.Circle",  # its class is in __all__
            "Button": "lib.widgets.Button",
            "resize_widget": "lib.widgets.Button",  # inherited by a public class
            "make_widget": "lib.widgets.make_widget",
        }
        for name, reached_as in public.items():
            self.assertEqual(
                verdicts[name], ("ambiguous", [f"python.public_api:{reached_as}"]), name
            )
        for name in [
            "_spin_engine",  # private name
            "Square",  # left out of __all__
            "side_length",
            "shape_helper",
            "_hidden_widget",
            "build_everything",  # tools/ is no package: nobody imports it
        ]:
            self.assertEqual(verdicts[name], ("unused", []), name)


BAG = """\
import { Transform } from "stream";

export class Bag {
  constructor() {
    this.items = [];
  }

  [Symbol.iterator]() {
    return this.items[Symbol.iterator]();
  }

  get size() {
    return this.items.length;
  }

  set label(value) {
    this.name = value;
  }

  forgotten() {
    return 1;
  }
}

export class Pipe extends Transform {
  _transform(chunk, encoding, done) {
    done(null, chunk);
  }

  #neverCalled() {
    return 2;
  }
}
"""


class JavaScriptDeadCodeTests(SynchronousTestCase):
    """What JavaScript's runtime calls by itself is no dead code."""

    def setUp(self) -> None:
        _, db = indexed_files(self, {"lib/bag.js": BAG})
        self.conn = open_reader(db)
        self.addCleanup(self.conn.close)

    def test_protocol_methods_and_accessors_are_roots_and_outside_overrides_ambiguous(self):
        data = call(self.conn, "/code/dead-code/investigate", {"limit": 500}).data
        suppressed = {
            row["name"]: row["suppression_reasons"]
            for row in data["candidate_buckets"]["suppressed"]
        }
        self.assertEqual(
            suppressed["[Symbol.iterator]"], ["modeled_root:javascript.symbol_protocol_method"]
        )
        self.assertEqual(suppressed["size"], ["modeled_root:javascript.accessor"])
        self.assertEqual(suppressed["label"], ["modeled_root:javascript.accessor"])
        reported = {
            row["name"]: (row["classification"], row.get("ambiguity_reasons"))
            for row in call(self.conn, "/code/dead-code", {"limit": 500}).data["results"]
        }
        self.assertEqual(
            reported["_transform"],
            ("ambiguous", ["javascript.may_override_outside_base:Transform"]),
        )
        self.assertEqual(reported["forgotten"][0], "unused")
        self.assertEqual(reported["#neverCalled"][0], "unused")


SHELF = """\
package com.acme;

public class Shelf {
    /** Nothing here calls it, but a library's users may. */
    @Deprecated // kept for callers
    public int count() {
        return 0;
    }

    private int forgotten() {
        return 1;
    }
}
"""


class JavaDeadCodeTests(SynchronousTestCase):
    def test_a_public_method_is_public_api_and_a_private_one_unused(self):
        _, db = indexed_files(self, {"src/com/acme/Shelf.java": SHELF})
        conn = open_reader(db)
        self.addCleanup(conn.close)
        rows = call(conn, "/code/dead-code", {"limit": 500}).data["results"]
        verdicts = {
            row["name"]: (row["classification"], row.get("ambiguity_reasons")) for row in rows
        }
        self.assertEqual(verdicts["count"], ("ambiguous", ["java.public_api"]))
        self.assertEqual(verdicts["forgotten"][0], "unused")


LANGUAGE_FILES = {
    "src/main/kotlin/acme/Shelf.kt": """package acme

fun main() {
    println("shelves")
}

class Shelf {
    fun sparePlank(): Int = 1
    private fun lostPlank(): Int = 2
    internal fun innerPlank(): Int = 3
    protected fun guardedPlank(): Int = 4
}
""",
    "Sources/Acme/Crate.swift": """public class Crate {
    public func liftCrate() -> Int { return 0 }
    open func tiltCrate() -> Int { return 1 }
    func settleCrate() -> Int { return 2 }
    private func dropCrate() -> Int { return 3 }
    @objc func tapCrate() -> Int { return 4 }
}
""",
    "lib/acme/tray.rb": """module Acme
  class Tray
    def carry_tray
      1
    end

    private

    def tip_tray
      2
    end
  end
end
""",
    "script/tool.rb": """def stray_tool
  3
end
""",
    "src/Bin.php": """<?php
class Bin {
    public function emptyBin() { return 0; }
    function tipBin() { return 1; }
    private function lostBin() { return 2; }
}
""",
    "lib/acme/pile.ex": """defmodule Acme.Heap do
  def stack_heap(x), do: x
  defp drop_heap(x), do: x
end
""",
    "app/models/order.rb": """class Order < ActiveRecord::Base
  def settle_order
    1
  end
end
""",
    "src/Acme/Shapes.hs": """module Acme.Shapes (area) where

area :: Int -> Int
area side = scale side

scale :: Int -> Int
scale 0 = 0
scale side = side * side

forgottenShape :: Int -> Int
forgottenShape 0 = 1
forgottenShape n = n
""",
    "src/Acme/Open.hs": """module Acme.Open where

openShape :: Int -> Int
openShape n = n
""",
    "src/util.lua": """local M = {}
function M.pack_util(x) return x end
local function drop_util(x) return x end
return M
""",
}


class RegistryDeadCodeTests(SynchronousTestCase):
    """Each language's dead-code roots and public-API rule come from the registry."""

    def setUp(self) -> None:
        _, db = indexed_files(self, LANGUAGE_FILES)
        self.conn = open_reader(db)
        self.addCleanup(self.conn.close)
        data = call(self.conn, "/code/dead-code/investigate", {"limit": 500}).data
        self.verdicts = {
            row["name"]: (bucket, row.get("suppression_reasons") or row.get("ambiguity_reasons"))
            for bucket, rows in data["candidate_buckets"].items()
            for row in rows
        }
        self.maturity = data["analysis"]["dead_code_language_maturity"]

    def test_a_public_definition_is_ambiguous_by_its_languages_rule(self) -> None:
        for name, language in [
            ("sparePlank", "kotlin"),  # Kotlin's default visibility is public
            ("liftCrate", "swift"),
            ("tiltCrate", "swift"),  # open
            ("carry_tray", "ruby"),  # above ``private``, in lib/
            ("emptyBin", "php"),
            ("tipBin", "php"),  # a PHP method without a modifier is public
            ("stack_heap", "elixir"),  # def, not defp
            ("pack_util", "lua"),
            ("openShape", "haskell"),  # a module without an export list exports it
        ]:
            self.assertEqual(self.verdicts[name], ("ambiguous", [f"{language}.public_api"]), name)

    def test_a_hidden_definition_nothing_reaches_is_cleanup_ready(self) -> None:
        for name in [
            "lostPlank",  # private
            "innerPlank",  # internal: the module's own
            "guardedPlank",  # protected, as Java's rule
            "settleCrate",  # Swift's default visibility is internal
            "dropCrate",
            "tip_tray",  # below ``private``
            "stray_tool",  # not in lib/: a script, no library API
            "lostBin",
            "drop_heap",  # defp
            "drop_util",  # local
            "forgottenShape",  # its signature and second equation are its own lines
        ]:
            self.assertEqual(self.verdicts[name], ("cleanup_ready", None), name)

    def test_a_method_of_a_class_with_an_outside_base_may_override_it(self) -> None:
        self.assertEqual(
            self.verdicts["settle_order"],
            ("ambiguous", ["ruby.may_override_outside_base:Base"]),
        )

    def test_a_haskell_function_called_from_another_is_live(self) -> None:
        self.assertNotIn("scale", self.verdicts)  # area calls it: live, in no bucket

    def test_entrypoints_and_runtime_attributes_are_roots(self) -> None:
        self.assertEqual(self.verdicts["main"][0], "suppressed")
        self.assertIn("modeled_root:kotlin.main_method", self.verdicts["main"][1])
        self.assertEqual(
            self.verdicts["tapCrate"], ("suppressed", ["modeled_root:swift.framework_annotation"])
        )

    def test_every_parsed_language_has_a_maturity(self) -> None:
        self.assertEqual(self.maturity["lua"], "derived")
        self.assertEqual(self.maturity["kotlin"], "derived")
