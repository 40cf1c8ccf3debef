"""Python calls resolve by what the code states about their receiver, or say they cannot."""

import shutil
import tempfile
import textwrap
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build import generation_write
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.store.database import open_reader

from .test_index_indexer import git

SOURCES = {
    "pkg/__init__.py": "",
    "pkg/defer.py": """
        from typing import overload

        class Deferred(Awaitable[object]):
            def addCallback(self, f):
                return self

            def pause(self):
                self._run()

            def _run(self):
                pass

        class DeferredList(Deferred[list]):
            def _run(self):
                pass

        @overload
        def maybeDeferred(f: int) -> Deferred[int]: ...
        @overload
        def maybeDeferred(f: str) -> Deferred[str]: ...
        def maybeDeferred(f) -> "Deferred[object]":
            return Deferred()
        """,
    "pkg/fake.py": """
        class FakeDeferred:
            def addCallback(self, f):
                return self

        class Recorder:
            def addCallback(self, f):
                pass

        def untyped(d):
            d.addCallback(1)

        def annotated(d: "Optional[defer.Deferred[int]]"):
            d.addCallback(2)

        from pkg import defer
        from pkg.defer import maybeDeferred

        def returned():
            d = maybeDeferred(3)
            d.addCallback(4)

        class Holder:
            def __init__(self):
                self.d = defer.Deferred()

            def use(self):
                def later():
                    self.d.addCallback(5)
                    self.use()
                return later
        """,
    "pkg/iface.py": """
        from zope.interface import Interface, implementer

        class IClock(Interface):
            def callLater(delay):
                pass

        @implementer(IClock)
        class Clock:
            def callLater(self, delay):
                pass

        class Other:
            def callLater(self, delay):
                pass

        def schedule(clock: IClock):
            clock.callLater(1)
        """,
    "pkg/proto.py": """
        from pkg import defer
        from pkg.base import Base

        class Mine(defer.Deferred):
            pass

        class User(Base):
            def tick(self):
                self.clock.callLater(1)
        """,
    "pkg/base.py": """
        from pkg.iface import IClock

        class Base:
            clock: IClock
        """,
    "pkg/many.py": "class Root:\n    def feed(self):\n        pass\n"
    + "".join(f"class S{n}(Root):\n    def feed(self):\n        pass\n" for n in range(24))
    + "def use(root: Root):\n    root.feed()\n",
    "pkg/pumps.py": "from zope.interface import Interface, implementer\n"
    "class IPump(Interface):\n    def pump():\n        pass\n"
    "@implementer(IPump)\nclass Pumper:\n    def pump(self):\n        pass\n"
    + "".join(f"class P{n}:\n    def pump(self):\n        pass\n" for n in range(9))
    + "def blind(thing):\n    thing.pump()\n",
    "pkg/wires.py": "from zope.interface import Interface, implementer\n"
    "class IWire(Interface):\n    def cut():\n        pass\n"
    "class ISubWire(IWire):\n    def cut():\n        pass\n"
    + "".join(
        f"@implementer(IWire)\nclass W{n}:\n    def cut(self):\n        pass\n" for n in range(10)
    )
    + "class IOne(Interface):\n    def snip():\n        pass\n"
    "class ITwo(Interface):\n    def snip():\n        pass\n"
    + "".join(f"class N{n}:\n    def snip(self):\n        pass\n" for n in range(9))
    + "class Plug:\n    def pull(self):\n        pass\n"
    "class Holder:\n    wire: IWire\n    plug: Plug\n"
    "class Client(Holder):\n    pass\n"
    "class Test:\n    def setUp(self):\n        self.client = Client()\n"
    "    def through_self(self):\n        self.client.wire.cut()\n"
    "def through_local():\n    c = Client()\n    c.wire.cut()\n    c.plug.pull()\n"
    "def blind_cut(thing):\n    thing.cut()\n"
    "def blind_snip(thing):\n    thing.snip()\n",
}


class IndexedSourcesCase(SynchronousTestCase):
    """Tests over one committed repository of ``SOURCES`` (path -> text), indexed once."""

    SOURCES: dict[str, str] = {}

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp(prefix="eshu-receivers-"))
        repo = cls.tmp / "repo"
        for path, body in cls.SOURCES.items():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(textwrap.dedent(body).lstrip())
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "fixture")
        cls.db = cls.tmp / "index.sqlite"
        assert index_repositories(cls.db, [repo], workers=1).ok
        cls.conn = open_reader(cls.db)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.conn.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)


class ReceiverResolutionTests(IndexedSourcesCase):
    SOURCES = SOURCES

    def calls_from(self, path: str, caller: str, name: str) -> list[tuple]:
        """(target path, target qualified name, target line, method, confidence) edges."""
        return sorted(
            tuple(row)
            for row in self.conn.execute(
                "SELECT t.relative_path, t.qualified_name, t.start_line, e.resolution_method,"
                " e.confidence FROM edges e JOIN entities s ON s.entity_id = e.source_id"
                " JOIN entities t ON t.entity_id = e.target_id WHERE e.type = 'CALLS'"
                " AND s.relative_path = ? AND s.entity_name = ? AND t.entity_name = ?",
                (path, caller, name),
            ).fetchall()
        )

    def test_an_untyped_receiver_is_ambiguous_between_every_candidate(self) -> None:
        edges = self.calls_from("pkg/fake.py", "untyped", "addCallback")
        self.assertEqual(
            [(p, q) for p, q, _, _, _ in edges],
            [
                ("pkg/defer.py", "Deferred.addCallback"),
                ("pkg/fake.py", "FakeDeferred.addCallback"),
                ("pkg/fake.py", "Recorder.addCallback"),
            ],
        )
        self.assertEqual({(m, c) for *_, m, c in edges}, {("ambiguous", 0.25)})

    def test_an_annotation_names_the_class_through_the_imports(self) -> None:
        edges = self.calls_from("pkg/fake.py", "annotated", "addCallback")
        self.assertEqual(
            [(p, q, m) for p, q, _, m, _ in edges],
            [("pkg/defer.py", "Deferred.addCallback", "type_inferred")],
        )

    def test_a_return_annotation_types_the_local_and_overload_stubs_lose(self) -> None:
        to_maybe = self.calls_from("pkg/fake.py", "returned", "maybeDeferred")
        implementation = self.conn.execute(
            "SELECT MAX(start_line) FROM entities WHERE entity_name = 'maybeDeferred'"
        ).fetchone()[0]
        self.assertEqual(
            [(q, line) for _, q, line, _, _ in to_maybe], [("maybeDeferred", implementation)]
        )
        on_result = self.calls_from("pkg/fake.py", "returned", "addCallback")
        self.assertEqual([q for _, q, _, _, _ in on_result], ["Deferred.addCallback"])

    def test_a_self_attribute_types_calls_in_nested_functions_of_every_method(self) -> None:
        edges = self.calls_from("pkg/fake.py", "later", "addCallback")
        self.assertEqual([q for _, q, _, _, _ in edges], ["Deferred.addCallback"])
        self.assertEqual(
            [q for _, q, _, _, _ in self.calls_from("pkg/fake.py", "later", "use")], ["Holder.use"]
        )

    def test_a_self_call_overridden_below_is_ambiguous_between_the_overrides(self) -> None:
        edges = self.calls_from("pkg/defer.py", "pause", "_run")
        self.assertEqual(
            [(q, m, c) for _, q, _, m, c in edges],
            [("Deferred._run", "ambiguous", 0.38), ("DeferredList._run", "ambiguous", 0.38)],
        )

    def test_subscripted_and_dotted_bases_resolve_through_imports(self) -> None:
        children = self.conn.execute(
            "SELECT s.entity_name FROM edges e JOIN entities s ON s.entity_id = e.source_id"
            " JOIN entities t ON t.entity_id = e.target_id WHERE e.type = 'INHERITS'"
            " AND t.qualified_name = 'Deferred' ORDER BY 1"
        ).fetchall()
        self.assertEqual([name for (name,) in children], ["DeferredList", "Mine"])

    def test_an_interface_typed_receiver_reaches_the_implementations(self) -> None:
        edges = self.calls_from("pkg/iface.py", "schedule", "callLater")
        self.assertEqual(
            [(q, m) for _, q, _, m, _ in edges], [("Clock.callLater", "type_inferred")]
        )
        implements = self.conn.execute(
            "SELECT s.entity_name, t.entity_name FROM edges e"
            " JOIN entities s ON s.entity_id = e.source_id"
            " JOIN entities t ON t.entity_id = e.target_id WHERE e.type = 'IMPLEMENTS'"
            " AND t.relative_path = 'pkg/iface.py'"
        ).fetchall()
        self.assertEqual([tuple(row) for row in implements], [("Clock", "IClock")])
        overrides = self.conn.execute(
            "SELECT s.qualified_name, t.qualified_name FROM edges e"
            " JOIN entities s ON s.entity_id = e.source_id"
            " JOIN entities t ON t.entity_id = e.target_id WHERE e.type = 'OVERRIDES'"
            " AND t.relative_path = 'pkg/iface.py'"
        ).fetchall()
        self.assertEqual(
            [tuple(row) for row in overrides], [("Clock.callLater", "IClock.callLater")]
        )

    def test_an_attribute_declared_in_a_base_class_types_self_calls(self) -> None:
        edges = self.calls_from("pkg/proto.py", "tick", "callLater")
        self.assertEqual([(p, q) for p, q, *_ in edges], [("pkg/iface.py", "Clock.callLater")])

    def test_an_untyped_call_of_a_name_one_interface_declares_reaches_its_implementers(
        self,
    ) -> None:
        # ten classes define pump(); only one implements the interface that declares it
        edges = self.calls_from("pkg/pumps.py", "blind", "pump")
        self.assertEqual([q for _, q, *_ in edges], ["Pumper.pump"])

    def test_a_call_more_overrides_could_take_names_the_declared_method_only(self) -> None:
        # 25 definitions could run: the declared one is linked, as ambiguous, with 0.75/25
        edges = self.calls_from("pkg/many.py", "use", "feed")
        self.assertEqual([(q, m, c) for _, q, _, m, c in edges], [("Root.feed", "ambiguous", 0.03)])

    def test_an_untyped_call_of_a_name_one_interface_tree_declares_names_its_method(
        self,
    ) -> None:
        # ten implementers are too many to list: the interface's declaration stands for
        # them (not the sub-interface's), as ambiguous with 0.75/10
        edges = self.calls_from("pkg/wires.py", "blind_cut", "cut")
        self.assertEqual([(q, m, c) for _, q, _, m, c in edges], [("IWire.cut", "ambiguous", 0.08)])

    def test_an_untyped_call_of_a_name_unrelated_interfaces_declare_links_nothing(self) -> None:
        self.assertEqual(self.calls_from("pkg/wires.py", "blind_snip", "snip"), [])

    def test_attributes_of_a_typed_value_type_calls_through_the_class_hierarchy(self) -> None:
        # Client inherits ``wire: IWire`` and ``plug: Plug`` from Holder
        for caller in ("through_self", "through_local"):
            edges = self.calls_from("pkg/wires.py", caller, "cut")
            self.assertEqual([(q, m) for _, q, _, m, _ in edges], [("IWire.cut", "ambiguous")])
        edges = self.calls_from("pkg/wires.py", "through_local", "pull")
        self.assertEqual([(q, m) for _, q, _, m, _ in edges], [("Plug.pull", "type_inferred")])


class EditedRepositoryCase(SynchronousTestCase):
    """A small git repository that a test edits, commits and indexes again."""

    def make_repository(self, files: dict[str, str]) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-receivers-gen-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = self.tmp / "repo"
        self.repo.mkdir()
        for path, body in files.items():
            (self.repo / path).write_text(body)
        git(self.repo, "init", "-q", "-b", "main")
        self.commit()
        self.db = self.tmp / "index.sqlite"

    def commit(self) -> None:
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", "change")

    def callers_of(self, callee: str) -> dict[str, str]:
        """Index the repository; caller -> qualified name of the ``callee`` it calls."""
        self.assertTrue(index_repositories(self.db, [self.repo], workers=1).ok)
        conn = open_reader(self.db)
        try:
            rows = conn.execute(
                "SELECT s.entity_name, t.qualified_name FROM edges e"
                " JOIN entities s ON s.entity_id = e.source_id"
                " JOIN entities t ON t.entity_id = e.target_id"
                " WHERE e.type = 'CALLS' AND t.entity_name = ?",
                (callee,),
            ).fetchall()
        finally:
            conn.close()
        return dict(tuple(row) for row in rows)


class ReceiverTypesAcrossGenerationsTests(EditedRepositoryCase):
    """A type stated in one file and used in another is re-read when only that file changes."""

    def setUp(self) -> None:
        files = {
            "clocks.py": "class Clock:\n    def tick(self):\n        pass\n"
            "class Other:\n    def tick(self):\n        pass\n"
            "def make() -> Clock:\n    return Clock()\n",
            "base.py": "from clocks import Clock\nclass Base:\n    clock: Clock\n",
            "user.py": "from base import Base\nfrom clocks import make\n"
            "class User(Base):\n    def run(self):\n        self.clock.tick()\n"
            "def later():\n    c = make()\n    c.tick()\n",
        }
        self.make_repository(files)

    def ticks(self) -> dict[str, str]:
        return self.callers_of("tick")

    def test_a_changed_attribute_or_return_annotation_retargets_calls_elsewhere(self) -> None:
        self.patch(generation_write, "INCREMENTAL_RESOLVE_FRACTION", 1.0)  # re-resolve by file
        self.assertEqual(self.ticks(), {"run": "Clock.tick", "later": "Clock.tick"})
        base = self.repo / "base.py"
        base.write_text(base.read_text().replace("Clock", "Other"))
        clocks = self.repo / "clocks.py"
        clocks.write_text(clocks.read_text().replace("-> Clock", "-> Other"))
        self.commit()
        self.assertEqual(self.ticks(), {"run": "Other.tick", "later": "Other.tick"})


SEMANTICS = {
    "shop/__init__.py": "",
    "shop/orders.py": """
        from dataclasses import dataclass
        from typing import Self

        class Base:
            def __init__(self, name):
                self.name = name

        class Order(Base):
            def __init__(self, name, total):
                super().__init__(name)
                self.total = total

        class Rush(Order):
            pass

        class Guarded:
            def __new__(cls, *args):
                return super().__new__(cls)

        @dataclass
        class Line:
            qty: int

            def __post_init__(self):
                self.check()

            def check(self):
                pass

        class Session:
            def __enter__(self) -> Self:
                return self

            def __exit__(self, *exc):
                return False

            def update(self):
                pass

            def emit(self, event):
                pass

            def burst(self):
                emit = self.emit
                emit(1)

        class Plain:
            def __enter__(self):
                if self is None:
                    return self
                return self

            def __exit__(self, *exc):
                return False

            def tick(self):
                pass

        class Pool:
            def __enter__(self) -> Session:
                return Session()

            def __exit__(self, *exc):
                return False

        class Shaper:
            @classmethod
            def adjust(cls, x):
                return x

            @classmethod
            def many(cls, xs):
                adjust = cls.adjust
                return [adjust(x) for x in xs]

            def crop(self, lines):
                return lines

            def trim(self):
                go = self.crop
                go([1])
                return [go(x) for x in [[2]]]
        """,
    "shop/compat.py": """
        try:
            from threading import RLock
        except ImportError:
            class RLock:
                pass

        class Buffer:
            def getvalue(self):
                return b""

        def make_lock():
            return RLock()

        def read(stream):
            return stream.getvalue()
        """,
    "shop/use.py": """
        from shop.orders import Guarded, Line, Order, Plain, Pool, Rush, Session

        def build():
            Order("a", 1)
            Rush("b", 2)
            Guarded()
            Line(3)

        def managed():
            with Session() as s:
                s.update()
            with Pool() as p:
                p.emit(2)
            with Plain() as q:
                q.tick()

        async def managed_async():
            async with Session() as s:
                s.update()
        """,
}


class ConstructorAndAliasTests(IndexedSourcesCase):
    SOURCES = SEMANTICS

    def targets(self, path: str, caller: str) -> set[tuple[str, str]]:
        """(qualified name, method) of every CALLS edge out of one function."""
        return {
            (q, m)
            for row in self.conn.execute(
                "SELECT t.qualified_name, e.resolution_method FROM edges e"
                " JOIN entities s ON s.entity_id = e.source_id"
                " JOIN entities t ON t.entity_id = e.target_id"
                " WHERE e.type = 'CALLS' AND s.relative_path = ? AND s.entity_name = ?",
                (path, caller),
            )
            for q, m in [row]
        }

    def test_calling_a_class_calls_what_constructs_it_through_the_mro(self) -> None:
        found = {q for q, _ in self.targets("shop/use.py", "build")}
        self.assertEqual(
            found,
            {
                "Order",
                "Order.__init__",
                "Rush",  # no __init__ of its own: Order's runs
                "Guarded",
                "Guarded.__new__",
                "Line",
                "Line.__post_init__",
            },
        )

    def test_super_init_is_a_call_of_the_base_initializer(self) -> None:
        self.assertIn(
            ("Base.__init__", "type_inferred"), self.targets("shop/orders.py", "__init__")
        )

    def test_a_with_target_is_typed_by_what_enter_returns(self) -> None:
        found = self.targets("shop/use.py", "managed")
        self.assertIn(("Session.update", "type_inferred"), found)
        self.assertIn(("Session.emit", "type_inferred"), found)
        self.assertIn(("Plain.tick", "type_inferred"), found)  # __enter__ returns self
        self.assertIn(
            ("Session.update", "type_inferred"), self.targets("shop/use.py", "managed_async")
        )

    def test_an_imported_name_wins_over_its_fallback_definition(self) -> None:
        self.assertEqual(self.targets("shop/compat.py", "make_lock"), set())

    def test_the_one_method_of_a_name_on_an_unknown_receiver_is_only_a_candidate(self) -> None:
        # the stream may be an io.BytesIO: its getvalue is as likely
        self.assertEqual(self.targets("shop/compat.py", "read"), {("Buffer.getvalue", "ambiguous")})

    def test_a_local_bound_to_a_method_calls_that_method(self) -> None:
        self.assertIn(("Session.emit", "type_inferred"), self.targets("shop/orders.py", "burst"))

    def test_a_local_bound_to_a_method_of_cls_or_self_calls_it_in_a_comprehension(self) -> None:
        self.assertIn(("Shaper.adjust", "type_inferred"), self.targets("shop/orders.py", "many"))
        self.assertIn(("Shaper.crop", "type_inferred"), self.targets("shop/orders.py", "trim"))


PROPERTIES = {
    "acct/__init__.py": "",
    "acct/model.py": """
        from functools import cached_property

        class Account:
            def __init__(self, owner):
                self._owner = owner
                self.balance = 0

            @property
            def owner(self) -> str:
                return self._owner

            @owner.setter
            def owner(self, value):
                self._owner = value

            @cached_property
            def report(self):
                return self.owner.upper()

            def rename(self, value):
                self.owner = value
        """,
    "acct/use.py": """
        from acct.model import Account

        def show(account: Account):
            print(account.owner, account.balance)
            account.owner = "b"
            return account.report

        def blind(thing):
            return thing.owner
        """,
    "acct/text.py": """
        from functools import cached_property
        from typing import Self

        class Lines:
            def append(self, item):
                pass

        class Text:
            def append(self, item):
                pass

        class Page:
            @property
            def body(self) -> Text:
                return Text()

            @cached_property
            def rows(self) -> "Lines":
                return Lines()

            @property
            def me(self) -> Self:
                return self

            def append(self, item):
                pass

            def grow(self):
                self.body.append(1)
                self.rows.append(2)
                self.me.append(3)

        class Cover(Page):
            def thicken(self):
                self.body.append(4)
        """,
}


class PropertyUseTests(IndexedSourcesCase):
    SOURCES = PROPERTIES

    def uses(self, caller: str) -> list[tuple]:
        """(line, target, its line, call kind, method) of each CALLS edge out of a function."""
        return sorted(
            tuple(row)
            for row in self.conn.execute(
                "SELECT e.line_number, t.qualified_name, t.start_line, e.call_kind,"
                " e.resolution_method FROM edges e"
                " JOIN entities s ON s.entity_id = e.source_id"
                " JOIN entities t ON t.entity_id = e.target_id"
                " WHERE e.type = 'CALLS' AND s.entity_name = ?",
                (caller,),
            )
        )

    def test_a_read_uses_the_getter_and_an_assignment_the_setter(self) -> None:
        getter, setter = 9, 13  # the lines of the two ``def owner``
        self.assertEqual(
            [(t, line, k, m) for _, t, line, k, m in self.uses("show") if t != "print"],
            [
                ("Account.owner", getter, "property_read", "type_inferred"),
                ("Account.owner", setter, "property_write", "type_inferred"),
                ("Account.report", 17, "property_read", "type_inferred"),
            ],
        )
        self.assertIn(
            ("Account.owner", setter, "property_write", "type_inferred"),
            [(t, line, k, m) for _, t, line, k, m in self.uses("rename")],
        )

    def test_a_plain_attribute_is_no_call_and_nothing_unlinked(self) -> None:
        reasons = self.conn.execute(
            "SELECT COUNT(*) FROM unresolved_calls u JOIN call_sites c ON c.call_id = u.call_id"
            " WHERE c.callee_name IN ('balance', '_owner')"
        ).fetchone()[0]
        self.assertEqual(reasons, 0)
        self.assertNotIn("balance", [t for _, t, *_ in self.uses("show")])

    def test_a_property_return_annotation_types_calls_on_what_it_returns(self) -> None:
        appends = [(t, m) for _, t, _, k, m in self.uses("grow") if k != "property_read"]
        self.assertEqual(
            appends,
            [
                ("Text.append", "type_inferred"),
                ("Lines.append", "type_inferred"),
                ("Page.append", "type_inferred"),  # Self: the class defining the property
            ],
        )
        inherited = [t for _, t, _, k, _ in self.uses("thicken") if k != "property_read"]
        self.assertEqual(inherited, ["Text.append"])

    def test_an_untyped_receiver_may_read_a_plain_attribute_instead(self) -> None:
        self.assertEqual(
            [(t, k, m) for _, t, _, k, m in self.uses("blind")],
            [("Account.owner", "property_read", "ambiguous")],
        )


INFERRED = {
    "net/__init__.py": "",
    "net/proto.py": """
        class Transport:
            def write(self, data):
                pass

        class Other:
            def write(self, data):
                pass

        class Agg:
            def write(self, data):
                pass

        def logged_in():
            agg = Agg()
            agg.write(0)
            return agg

        def direct():
            return Transport()

        def branches(flag):
            if flag:
                return Agg()
            return Other()

        class Item:
            pass

        class Space(Item):
            def trim(self):
                pass

        def last_item() -> Item:
            return Space()

        def narrowed(item: Item):
            if isinstance(item, Space):
                item.trim()
            last = last_item()
            last.trim()

        class Twin:
            def pair(self):
                self.inv = self.__class__()

            def flip(self):
                pass

        def twins():
            twin = Twin()
            twin.inv.flip()

        def rebound(flag):
            agg = Agg()
            if flag:
                agg = Other()
            return agg

        def maybe(flag):
            if not flag:
                return None
            elif flag > 1:
                return
            return Agg()

        def generated():
            yield 1
            return Agg()

        @memoized
        def wrapped_result():
            return Agg()
        """,
    "net/factory.py": """
        from typing import Any, Callable, TypeVar

        from net.proto import Agg, Transport

        class Factory:
            protocol = Transport

            def build(self):
                p = self.protocol()
                p.write(5)
                return p

        class Wrapper:
            def __init__(self, factory: Factory):
                self.factory = factory

            def connect(self):
                self.factory.protocol().write(6)

        def serve():
            proto = Factory().build()
            proto.write(7)

        W = TypeVar("W", bound=Transport)

        class Wrapping:
            protocol = Agg

            def wrap(self) -> W:
                return self.protocol()

        class SubWrapping(Wrapping):
            def wrap(self) -> Any:
                return super().wrap()

        def wrapped():
            Wrapping().wrap().write(8)
            SubWrapping().wrap().write(13)

        class Case:
            klass: type[Agg] | None = None
            maker: Callable[..., W] = Transport

            def setUp(self):
                self.proto = self.klass()
                self.made = self.maker()

            def test_write(self):
                self.proto.write(11)
                self.made.write(12)

        def through_locals(made: Factory):
            factory = Wrapping()
            proto = factory.wrap()
            proto.write(9)
            made.build().write(10)
        """,
    "net/use.py": """
        from net.proto import branches, direct, generated, logged_in, maybe, rebound
        from net.proto import wrapped_result

        def run():
            user = logged_in()
            user.write(1)
            direct().write(2)
            maybe(1).write(14)

        def unsure():
            branches(1).write(3)
            rebound(1).write(4)
            generated().write(15)
            wrapped_result().write(16)
        """,
}


class InferredTypeTests(IndexedSourcesCase):
    SOURCES = INFERRED

    def targets(self, caller: str) -> set[tuple[str, str]]:
        """(qualified name, method) of every CALLS edge out of one function."""
        return {
            tuple(row)
            for row in self.conn.execute(
                "SELECT t.qualified_name, e.resolution_method FROM edges e"
                " JOIN entities s ON s.entity_id = e.source_id"
                " JOIN entities t ON t.entity_id = e.target_id"
                " WHERE e.type = 'CALLS' AND s.entity_name = ? AND t.entity_type = 'Function'",
                (caller,),
            )
        }

    def test_an_unannotated_function_returns_the_class_its_one_return_builds(self) -> None:
        found = self.targets("run")  # maybe() returns an Agg or None
        self.assertIn(("Agg.write", "type_inferred"), found)
        self.assertIn(("Transport.write", "type_inferred"), found)
        self.assertNotIn(("Other.write", "ambiguous"), found)

    def test_a_function_that_may_return_more_than_one_class_promises_none(self) -> None:
        self.assertEqual(
            {q for q, m in self.targets("unsure") if q.endswith(".write")},
            {"Agg.write", "Other.write", "Transport.write"},
        )
        self.assertEqual(
            {m for q, m in self.targets("unsure") if q.endswith(".write")}, {"ambiguous"}
        )

    def test_a_class_attribute_holding_a_class_builds_it_when_called(self) -> None:
        self.assertIn(("Transport.write", "type_inferred"), self.targets("build"))
        self.assertIn(("Transport.write", "type_inferred"), self.targets("connect"))
        self.assertIn(("Transport.write", "type_inferred"), self.targets("serve"))

    def test_a_return_annotation_naming_no_class_gives_way_to_the_one_return(self) -> None:
        # wrap() -> W (a type variable), and SubWrapping's wrap() -> Any returns super()'s
        self.assertEqual(
            {q for q, _ in self.targets("wrapped") if q.endswith(".write")}, {"Agg.write"}
        )

    def test_a_local_of_a_known_class_types_what_its_methods_return(self) -> None:
        found = self.targets("through_locals")
        self.assertIn(("Agg.write", "type_inferred"), found)
        self.assertIn(("Transport.write", "type_inferred"), found)

    def test_an_attribute_annotated_as_holding_a_class_builds_it(self) -> None:
        found = self.targets("test_write")
        self.assertIn(("Agg.write", "type_inferred"), found)
        self.assertIn(("Transport.write", "type_inferred"), found)  # the value, not Callable

    def test_a_method_only_one_subclass_of_the_declared_class_has_is_that_one(self) -> None:
        # item: Item narrowed by isinstance; last_item() -> Item returning a Space
        self.assertEqual(
            self.targets("narrowed"),
            {("Space.trim", "type_inferred")} | {("last_item", "same_file")},
        )

    def test_self_class_called_builds_another_of_the_class(self) -> None:
        self.assertIn(("Twin.flip", "type_inferred"), self.targets("twins"))
