"""Go, TypeScript/JavaScript, Java and C# method calls resolve by their receiver's declared or
constructed type, or say they cannot (ambiguous), never by file or directory proximity."""

from eshu_mcp.query.local.index.build import generation_write
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.resolve.bindings import go_package_name
from eshu_mcp.query.local.index.store.database import open_reader

from .test_index_receivers import EditedRepositoryCase, IndexedSourcesCase

SOURCES = {
    "go.mod": "module example.com/m\n\ngo 1.21\n",
    "store/store.go": """
        package store

        type DB struct{}

        func Open() *DB { return &DB{} }

        func (d *DB) Close() {}
        """,
    "server/dispatch.go": """
        package server

        type Dispatcher struct{}

        func (d *Dispatcher) serveOne() {}

        func (d *Dispatcher) Handler() func() {
            d.serveOne()
            return d.serveOne
        }

        func (d *Dispatcher) Bare() func() {
            return d.serveOne
        }
        """,
    "server/server.go": """
        package server

        import "example.com/m/store"

        func (s *Server) Start() {
            s.listen()
            c := &Client{}
            c.Close()
            var q Queue
            q.Close()
            store.Open()
        }

        func (s *Server) listen() {}

        func (s *Server) Close() {}

        type Client struct{}

        func (c *Client) Close() {}

        type Queue struct{}

        func (q *Queue) Close() {}

        type Admin struct {
            Server
        }

        func (a *Admin) Boot(db *store.DB) {
            a.Start()
            db.Close()
        }

        func stop(items []*Client) {
            for _, it := range items {
                it.Close()
            }
        }

        func (p *Pool) Drain(s *Server) {
            p.conn.Close()
            s.pool.conn.Close()
        }

        func boot() {
            db, err := store.Open()
            _ = err
            db.Close()
            s := newServer()
            s.listen()
        }

        func newServer() *Server { return &Server{} }
        """,
    "server/pool.go": """
        package server

        import "example.com/m/store"

        type Pool struct {
            conn *store.DB
        }

        type Server struct {
            pool Pool
        }
        """,
    "ts/db.ts": "export class Db {\n  query() {}\n  close() {}\n}\n",
    "ts/app.ts": """export class App {
  fetch = (request: Request) => {
    return this.dispatch(request)
  }
  dispatch(request: Request) {
    return fetch(request)
  }
}

export function serve(app: App) {
  return app.fetch(new Request("/"))
}

export function relay(app: App) {
  return serve.call(null, app)
}
""",
    "ts/barrel/impl.ts": "export function realWork() {}\n\nexport class Widget {}\n",
    "ts/barrel/index.ts": "export { realWork as work } from './impl'\nexport * from './impl'\n",
    "ts/uses_barrel.ts": (
        "import { work, Widget } from './barrel'\n"
        "\n"
        "export class Fancy extends Widget {}\n"
        "\n"
        "export function go() {\n"
        "  return work()\n"
        "}\n"
    ),
    "tsx/tsconfig.json": '{"compilerOptions": {"baseUrl": "."}}\n',
    "tsx/kit/a_private.tsx": "function Glyph() {\n  return <i />\n}\n",
    "tsx/kit/b_icons.tsx": "export function Glyph() {\n  return <b />\n}\n",
    "tsx/kit/index.ts": "export * from './a_private'\nexport * from './b_icons'\n",
    "tsx/page.tsx": (
        "import { Glyph } from 'kit'\n\nexport function Page() {\n  return <Glyph />\n}\n"
    ),
    "ts/mock_one.ts": "export function fetch() {}\n",
    "ts/mock_two.ts": "export function fetch() {}\n",
    "ts/cache.ts": "export class Cache {\n  get() {}\n  close() {}\n}\n",
    "ts/base.ts": "export class Base {\n  log() {}\n  close() {}\n}\n",
    "ts/util.ts": 'import { Db } from "./db";\n\nexport function helper() {}\n\n'
    "export function makeDb(): Db {\n  return new Db();\n}\n",
    "ts/open.ts": """
        import * as util from "./util";
        import { makeDb } from "./util";

        export function open() {
          const db = util.makeDb();
          db.query();
          const d2 = makeDb();
          d2.close();
          console.log(d2);
        }
        """,
    "ts/service.ts": """
        import { Db } from "./db";
        import { Cache } from "./cache";
        import { Base } from "./base";
        import * as util from "./util";

        export class Service extends Base {
          protected db: Db;
          cache = new Cache();

          run(other: Db | null, label: string) {
            this.db.query();
            this.cache.get();
            other.close();
            this.log();
            util.helper();
            label.trim();
          }

          close() {}
        }

        export function untyped(thing) {
          thing.close();
        }
        """,
    "ts/child.ts": """
        import { Service } from "./service";
        import { Db } from "./db";

        export class Child extends Service {
          tick(peer: Service) {
            this.db.query();
            peer.cache.get();
          }
        }

        export class Holder {
          constructor(private readonly store: Db) {}
          flush() {
            this.store.close();
          }
        }
        """,
    "ts/shapes.ts": """
        interface Shape {
          area(): number;
        }
        class Square implements Shape {
          area() { return 1; }
        }
        class Circle implements Shape {
          area() { return 2; }
        }
        function total(s: Shape, q: Square) {
          const a = s.area();
          return a + q.area();
        }
        """,
    "js/app.js": """
        class Queue {
          push() {}
        }

        class Stack {
          push() {}
        }

        function fill(target) {
          const q = new Queue();
          q.push();
          target.push();
        }
        """,
    "js/alias.js": """
        class Deque {
          put() {}

          drain() {
            let node = this;
            node.put();
            const later = () => {
              const me = this;
              me.put();
            };
            return function () {
              const other = this;
              other.put();
            };
          }
        }

        class Heap {
          put() {}
        }

        function Ring() {}

        Ring.prototype.put = function () {};

        Ring.prototype.turn = function () {
          var self = this;
          self.put();
        };
        """,
    "js/layer.js": """
        function Layer(path) {
          this.path = path;
        }

        Layer.prototype.match = function match(path) {
          return this.decode(path);
        };

        Layer.prototype.decode = function (value) {
          return value;
        };

        var proto = module.exports = function (options) {
          return options;
        };

        proto.handle = function handle(req) {
          var layer = new Layer(req);
          layer.match(req);
          return this.route(req);
        };

        proto.route = function route(path) {
          return path;
        };

        exports.helper = function () {};

        proto.set =
        proto.header = function header(field) {
          return field;
        };
        """,
    "java/com/acme/Printer.java": """
        package com.acme;

        public class Printer {
            public void print(String text) {}
            public void print(String text, int copies) {}
            public void print(int number) {}
            public void log(String... parts) {}

            public void run() {
                print("a", 2);
                print(3);
                this.log("a", "b", "c");
            }
        }
        """,
    "java/com/acme/PrinterUser.java": """
        package com.acme;

        public class PrinterUser {
            public void use(Printer printer) {
                printer.print("x", 1);
                printer.print("y");
            }
        }
        """,
    "java/com/acme/Store.java": "package com.acme;\n\npublic class Store {\n"
    "    public void save() {}\n}\n",
    "java/com/acme/Cache.java": "package com.acme;\n\npublic class Cache {\n"
    "    public void save() {}\n}\n",
    "java/com/acme/Shop.java": """
        package com.acme;

        public class Shop {
            private Store store;
            private Cache cache = new Cache();

            void run(Store param, String name) {
                store.save();
                this.cache.save();
                param.save();
                Cache local = new Cache();
                local.save();
                name.length();
                find().save();
                java.util.List<Store> stores = null; stores.get(0).save();
            }

            Shop find() {
                return this;
            }

            void save() {}
        }
        """,
    "java/com/acme/Outlet.java": """
        package com.acme;

        public class Outlet extends Shop {
            void open(Shop other) {
                store.save();
                other.cache.save();
                find();
                System.out.println("open");
            }
        }
        """,
    "java/com/acme/Sink.java": """
        package com.acme;

        interface Sink {
            void drain();
        }

        class Tub implements Sink {
            public void drain() {}
        }

        class HotTub extends Tub {
            public void drain() {}
        }

        class Pipe implements Sink {
            public void drain() {}
        }

        class Plumber {
            void fix(Sink sink, Tub tub, Pipe pipe) {
                sink.drain();
                tub.drain();
                pipe.drain();
            }
        }
        """,
    "cs/Shop.cs": """
        namespace Acme {
            public class Ledger {
                public void Post() {}
            }

            public class Journal {
                public void Post() {}
            }

            public class Shop {
                private Ledger ledger;
                public Journal Journal { get; set; }

                void Run(Ledger given) {
                    ledger.Post();
                    Journal.Post();
                    given.Post();
                    var fresh = new Journal();
                    fresh.Post();
                    Find().Post();
                }

                Shop Find() {
                    return this;
                }

                void Post() {}
            }
        }
        """,
}


class TypedReceiverTests(IndexedSourcesCase):
    SOURCES = SOURCES

    def calls_at(self, path: str, line: int) -> list[tuple]:
        """(target path, target qualified name, method, confidence) of a call line's edges."""
        return sorted(
            tuple(row)
            for row in self.conn.execute(
                "SELECT t.relative_path, t.qualified_name, e.resolution_method, e.confidence"
                " FROM edges e JOIN entities t ON t.entity_id = e.target_id"
                " WHERE e.type = 'CALLS' AND e.evidence_file_id ="
                " (SELECT file_id FROM files WHERE relative_path = ?) AND e.line_number = ?",
                (path, line),
            ).fetchall()
        )

    def unresolved_at(self, path: str, line: int) -> list[str]:
        return [
            reason
            for (reason,) in self.conn.execute(
                "SELECT u.reason FROM unresolved_calls u JOIN call_rows c USING (call_id)"
                " JOIN files f ON f.file_id = c.file_id"
                " WHERE f.relative_path = ? AND c.line_number = ?",
                (path, line),
            )
        ]

    def one(self, path: str, line: int) -> tuple[str, str, str]:
        edges = self.calls_at(path, line)
        self.assertEqual(len(edges), 1, edges)
        return edges[0][:3]

    # ------------------------------------------------------------------ Go

    def test_go_receiver_and_declared_locals_resolve_through_the_method_set(self) -> None:
        go = "server/server.go"
        self.assertEqual(self.one(go, 6), (go, "Server.listen", "type_inferred"))  # s.listen()
        self.assertEqual(self.one(go, 8), (go, "Client.Close", "type_inferred"))  # &Client{}
        self.assertEqual(self.one(go, 10), (go, "Queue.Close", "type_inferred"))  # var q Queue

    def test_go_package_qualified_calls_and_embedded_structs(self) -> None:
        go = "server/server.go"
        self.assertEqual(self.one(go, 11), ("store/store.go", "Open", "import_binding"))
        self.assertEqual(self.one(go, 31), (go, "Server.Start", "type_inferred"))  # promoted
        self.assertEqual(self.one(go, 32), ("store/store.go", "DB.Close", "type_inferred"))

    def test_go_struct_fields_type_calls_through_them_across_files(self) -> None:
        go, db = "server/server.go", ("store/store.go", "DB.Close", "type_inferred")
        self.assertEqual(self.one(go, 42), db)  # p.conn.Close(), conn declared in pool.go
        self.assertEqual(self.one(go, 43), db)  # s.pool.conn.Close()

    def test_go_locals_from_calls_take_the_declared_result_type(self) -> None:
        go = "server/server.go"
        self.assertEqual(self.one(go, 49), ("store/store.go", "DB.Close", "type_inferred"))
        self.assertEqual(self.one(go, 51), (go, "Server.listen", "type_inferred"))

    def test_go_untyped_receiver_is_ambiguous_not_the_same_file_method(self) -> None:
        edges = self.calls_at("server/server.go", 37)  # it.Close() in a range loop
        self.assertEqual(
            [q for _, q, _, _ in edges], ["Client.Close", "Queue.Close", "Server.Close", "DB.Close"]
        )
        # four candidates here, and Close is as likely a standard library type's (os.File)
        self.assertEqual({(m, c) for *_, m, c in edges}, {("ambiguous", 0.15)})

    # ------------------------------------------------------------------ TypeScript

    def test_typescript_fields_parameters_and_this_through_extends(self) -> None:
        ts = "ts/service.ts"
        self.assertEqual(self.one(ts, 11), ("ts/db.ts", "Db.query", "type_inferred"))
        self.assertEqual(self.one(ts, 12), ("ts/cache.ts", "Cache.get", "type_inferred"))
        self.assertEqual(self.one(ts, 13), ("ts/db.ts", "Db.close", "type_inferred"))
        self.assertEqual(self.one(ts, 14), ("ts/base.ts", "Base.log", "type_inferred"))
        self.assertEqual(self.one(ts, 15), ("ts/util.ts", "helper", "import_binding"))
        self.assertEqual(self.unresolved_at(ts, 16), ["external"])  # string.trim()

    def test_typescript_fields_of_a_base_class_and_of_a_typed_parameter(self) -> None:
        self.assertEqual(self.one("ts/child.ts", 6), ("ts/db.ts", "Db.query", "type_inferred"))
        self.assertEqual(self.one("ts/child.ts", 7), ("ts/cache.ts", "Cache.get", "type_inferred"))

    def test_typescript_constructor_parameter_properties_type_this_fields(self) -> None:
        self.assertEqual(self.one("ts/child.ts", 14), ("ts/db.ts", "Db.close", "type_inferred"))

    def test_typescript_locals_from_calls_take_the_declared_return_type(self) -> None:
        self.assertEqual(self.one("ts/open.ts", 6), ("ts/db.ts", "Db.query", "type_inferred"))
        self.assertEqual(self.one("ts/open.ts", 8), ("ts/db.ts", "Db.close", "type_inferred"))

    def test_a_script_global_receiver_is_external_not_a_method_named_alike(self) -> None:
        self.assertEqual(self.calls_at("ts/open.ts", 9), [])  # console.log; Base.log exists
        self.assertEqual(self.unresolved_at("ts/open.ts", 9), ["external"])

    def test_typescript_interface_typed_receiver_reaches_the_implementations(self) -> None:
        edges = self.calls_at("ts/shapes.ts", 11)
        self.assertEqual(
            [(q, m) for _, q, m, _ in edges],
            [("Circle.area", "ambiguous"), ("Square.area", "ambiguous")],
        )
        self.assertEqual(
            self.one("ts/shapes.ts", 12), ("ts/shapes.ts", "Square.area", "type_inferred")
        )

    def test_a_class_field_holding_a_function_is_a_method(self) -> None:
        rows = self.conn.execute(
            "SELECT entity_name, class_context FROM entity_rows r JOIN files f USING (file_id)"
            " WHERE f.relative_path = 'ts/app.ts' ORDER BY start_line"
        ).fetchall()
        self.assertEqual(
            [tuple(row) for row in rows],
            [
                ("App", None),
                ("fetch", "App"),
                ("dispatch", "App"),
                ("serve", None),
                ("relay", None),
            ],
        )
        self.assertEqual(self.one("ts/app.ts", 3), ("ts/app.ts", "App.dispatch", "same_file"))
        self.assertEqual(self.one("ts/app.ts", 11), ("ts/app.ts", "App.fetch", "type_inferred"))

    def test_fn_call_and_fn_apply_call_fn(self) -> None:
        self.assertEqual(self.one("ts/app.ts", 15), ("ts/app.ts", "serve", "same_file"))

    def test_a_method_value_on_a_receiver_the_calls_type_is_a_reference(self) -> None:
        rows = self.conn.execute(
            "SELECT s.entity_name, t.qualified_name, e.resolution_method FROM edges e"
            " JOIN entities s ON s.entity_id = e.source_id"
            " JOIN entities t ON t.entity_id = e.target_id"
            " WHERE e.type = 'REFERENCES' AND t.relative_path = 'server/dispatch.go'"
            " ORDER BY s.entity_name"
        ).fetchall()
        self.assertEqual(
            [tuple(row) for row in rows],
            [
                ("Bare", "Dispatcher.serveOne", "type_inferred"),  # the method's own receiver
                ("Handler", "Dispatcher.serveOne", "type_inferred"),  # typed by d.serveOne()
            ],
        )

    def test_export_star_hands_on_the_exported_definition_not_a_private_namesake(self) -> None:
        # 'kit' is a path from the folder of tsx/tsconfig.json (its baseUrl); the barrel's
        # first star file has a Glyph of its own that it does not export
        self.assertEqual(
            self.one("tsx/page.tsx", 4), ("tsx/kit/b_icons.tsx", "Glyph", "import_binding")
        )

    def test_imports_through_a_barrel_reach_the_definition_it_hands_on(self) -> None:
        self.assertEqual(
            self.one("ts/uses_barrel.ts", 6), ("ts/barrel/impl.ts", "realWork", "import_binding")
        )
        (base,) = self.conn.execute(
            "SELECT t.relative_path || ':' || t.entity_name FROM edges e"
            " JOIN entities s ON s.entity_id = e.source_id"
            " JOIN entities t ON t.entity_id = e.target_id"
            " WHERE e.type = 'INHERITS' AND s.entity_name = 'Fancy'"
        ).fetchone()
        self.assertEqual(base, "ts/barrel/impl.ts:Widget")
        imports = self.conn.execute(
            "SELECT imported_name, alias, import_type FROM imports i JOIN files f USING (file_id)"
            " WHERE f.relative_path = 'ts/barrel/index.ts' ORDER BY line_number, imported_name"
        ).fetchall()
        self.assertEqual(
            [tuple(row) for row in imports],
            [("realWork", "work", "reexport"), ("*", None, "reexport")],
        )

    def test_a_bare_builtin_call_is_the_builtin_whatever_other_modules_define(self) -> None:
        self.assertEqual(self.calls_at("ts/app.ts", 6), [])  # two other files define fetch
        self.assertEqual(self.unresolved_at("ts/app.ts", 6), ["builtin"])

    def test_typescript_untyped_receiver_is_ambiguous_not_the_same_file_method(self) -> None:
        edges = self.calls_at("ts/service.ts", 23)
        self.assertEqual(
            [(p, q) for p, q, _, _ in edges],
            [
                ("ts/base.ts", "Base.close"),
                ("ts/cache.ts", "Cache.close"),
                ("ts/db.ts", "Db.close"),
                ("ts/service.ts", "Service.close"),
            ],
        )
        self.assertEqual({(m, c) for *_, m, c in edges}, {("ambiguous", 0.19)})

    def test_javascript_constructed_local_is_typed_and_a_parameter_is_ambiguous(self) -> None:
        js = "js/app.js"
        self.assertEqual(self.one(js, 11), (js, "Queue.push", "type_inferred"))
        edges = self.calls_at(js, 12)
        self.assertEqual([q for _, q, _, _ in edges], ["Queue.push", "Stack.push"])
        # two candidates, and push is as likely Array.prototype.push
        self.assertEqual({(m, c) for *_, m, c in edges}, {("ambiguous", 0.25)})

    def test_javascript_local_bound_to_this_is_typed_by_its_class(self) -> None:
        js = "js/alias.js"
        self.assertEqual(self.one(js, 6), (js, "Deque.put", "type_inferred"))  # let node = this
        self.assertEqual(self.one(js, 9), (js, "Deque.put", "type_inferred"))  # in an arrow
        # a function expression has a ``this`` of its own: its alias stays untyped
        edges = self.calls_at(js, 13)
        self.assertEqual([q for _, q, _, _ in edges], ["Deque.put", "Heap.put", "Ring.put"])
        self.assertEqual(self.one(js, 28)[:2], (js, "Ring.put"))  # var self = this

    def test_javascript_functions_stored_on_prototypes_and_objects_are_methods(self) -> None:
        js = "js/layer.js"
        rows = self.conn.execute(
            "SELECT entity_name, class_context, metadata FROM entity_rows r"
            " JOIN files f USING (file_id) WHERE f.relative_path = ? ORDER BY start_line",
            (js,),
        ).fetchall()
        self.assertEqual(
            [(name, owner) for name, owner, _ in rows],
            [
                ("Layer", None),
                ("match", "Layer"),
                ("decode", "Layer"),
                ("proto", None),  # module.exports = function: named by its variable
                ("handle", "proto"),
                ("route", "proto"),
                ("helper", None),
                ("set", "proto"),  # a chain of assignments: every name is the function
                ("header", "proto"),
            ],
        )
        # reachable through their object: never reported dead
        self.assertTrue(all("javascript.property_function" in m for *_, m in rows[1:3]))
        self.assertIn('"exported": true', rows[-3][2])
        self.assertEqual(self.one(js, 6), (js, "Layer.decode", "same_file"))  # this.decode
        self.assertEqual(self.one(js, 19), (js, "Layer.match", "type_inferred"))  # new Layer
        self.assertEqual(self.one(js, 20), (js, "proto.route", "same_file"))  # this.route

    # ------------------------------------------------------------------ Java and C#

    def test_java_declared_types_dispatch_to_overrides_and_implementations(self) -> None:
        sink = "java/com/acme/Sink.java"
        names = lambda line: [(q, m) for _, q, m, _ in self.calls_at(sink, line)]  # noqa: E731
        # an interface's declaration never runs: its implementations (and their overrides)
        self.assertEqual(
            names(21),
            [
                ("HotTub.drain", "ambiguous"),
                ("Pipe.drain", "ambiguous"),
                ("Tub.drain", "ambiguous"),
            ],
        )
        self.assertEqual(names(22), [("HotTub.drain", "ambiguous"), ("Tub.drain", "ambiguous")])
        self.assertEqual(names(23), [("Pipe.drain", "type_inferred")])  # nothing overrides it

    def overloads_at(self, path: str, line: int) -> list[tuple]:
        """(target line, method) of a call line's edges to Printer's methods."""
        return sorted(
            tuple(row)
            for row in self.conn.execute(
                "SELECT t.start_line, e.resolution_method FROM edges e"
                " JOIN entities t ON t.entity_id = e.target_id"
                " WHERE e.type = 'CALLS' AND t.class_context = 'Printer' AND e.evidence_file_id ="
                " (SELECT file_id FROM files WHERE relative_path = ?) AND e.line_number = ?",
                (path, line),
            )
        )

    def test_java_overloads_are_told_apart_by_the_number_of_arguments(self) -> None:
        printer, user = "java/com/acme/Printer.java", "java/com/acme/PrinterUser.java"
        self.assertEqual(self.overloads_at(printer, 10), [(5, "same_file")])  # (text, copies)
        self.assertEqual(self.overloads_at(user, 5), [(5, "type_inferred")])
        self.assertEqual(self.overloads_at(printer, 12), [(7, "same_file")])  # varargs
        # one argument: print(String) or print(int), as the argument's type decides
        both = [(4, "ambiguous"), (6, "ambiguous")]
        self.assertEqual(self.overloads_at(printer, 11), both)
        self.assertEqual(self.overloads_at(user, 6), both)

    def test_java_fields_parameters_and_locals_name_the_class(self) -> None:
        java = "java/com/acme/Shop.java"
        store, cache = "java/com/acme/Store.java", "java/com/acme/Cache.java"
        self.assertEqual(self.one(java, 8), (store, "Store.save", "type_inferred"))  # field
        self.assertEqual(self.one(java, 9), (cache, "Cache.save", "type_inferred"))  # this.field
        self.assertEqual(self.one(java, 10), (store, "Store.save", "type_inferred"))  # parameter
        self.assertEqual(self.one(java, 12), (cache, "Cache.save", "type_inferred"))  # local
        self.assertEqual(self.unresolved_at(java, 13), ["external"])  # String.length()

    def test_java_fields_of_the_base_class_and_of_a_typed_parameter(self) -> None:
        outlet = "java/com/acme/Outlet.java"
        store, cache = "java/com/acme/Store.java", "java/com/acme/Cache.java"
        self.assertEqual(self.one(outlet, 5), (store, "Store.save", "type_inferred"))
        self.assertEqual(self.one(outlet, 6), (cache, "Cache.save", "type_inferred"))
        shop = "java/com/acme/Shop.java"
        self.assertEqual(self.one(outlet, 7), (shop, "Shop.find", "type_inferred"))  # inherited
        self.assertEqual(self.unresolved_at(outlet, 8), ["external"])  # System.out.println

    def test_java_call_result_is_typed_by_the_declared_result(self) -> None:
        java = "java/com/acme/Shop.java"  # find().save(): find is declared to return a Shop
        self.assertEqual(
            [(q, m) for _, q, m, _ in self.calls_at(java, 14)],
            [("Shop.find", "same_file"), ("Shop.save", "type_inferred")],
        )

    def test_java_untyped_receiver_is_ambiguous_not_the_same_file_method(self) -> None:
        # stores.get(0): a List<Store>'s element, of no declared type here
        edges = self.calls_at("java/com/acme/Shop.java", 15)
        self.assertEqual(
            [q for _, q, _, _ in edges if q.endswith("save")],
            ["Cache.save", "Shop.save", "Store.save"],
        )
        self.assertEqual(
            {(m, c) for _, q, m, c in edges if q.endswith("save")}, {("ambiguous", 0.25)}
        )

    def test_csharp_fields_properties_parameters_and_locals_name_the_class(self) -> None:
        cs = "cs/Shop.cs"
        self.assertEqual(self.one(cs, 15), (cs, "Ledger.Post", "type_inferred"))  # field
        self.assertEqual(self.one(cs, 16), (cs, "Journal.Post", "type_inferred"))  # property
        self.assertEqual(self.one(cs, 17), (cs, "Ledger.Post", "type_inferred"))  # parameter
        self.assertEqual(self.one(cs, 19), (cs, "Journal.Post", "type_inferred"))  # var = new
        edges = [e for e in self.calls_at(cs, 20) if e[1].endswith("Post")]  # Find().Post()
        self.assertEqual([q for _, q, _, _ in edges], ["Journal.Post", "Ledger.Post", "Shop.Post"])
        self.assertEqual({m for _, _, m, _ in edges}, {"ambiguous"})


class GoTypesAcrossGenerationsTests(EditedRepositoryCase):
    """A Go field or result type stated in one file and used in another is re-read when only
    that file changes."""

    def setUp(self) -> None:
        files = {
            "go.mod": "module example.com/m\n",
            "clocks.go": "package main\n\ntype Clock struct{}\n\nfunc (c *Clock) Tick() {}\n\n"
            "type Other struct{}\n\nfunc (o *Other) Tick() {}\n\n"
            "func makeClock() *Clock { return &Clock{} }\n",
            "holder.go": "package main\n\ntype Holder struct {\n\tclock *Clock\n}\n",
            "user.go": "package main\n\nfunc (h *Holder) Run() {\n\th.clock.Tick()\n}\n\n"
            "func later() {\n\tc := makeClock()\n\tc.Tick()\n}\n",
        }
        self.make_repository(files)

    def ticks(self) -> dict[str, str]:
        return self.callers_of("Tick")

    def test_a_changed_field_or_result_type_retargets_calls_elsewhere(self) -> None:
        self.patch(generation_write, "INCREMENTAL_RESOLVE_FRACTION", 1.0)  # re-resolve by file
        self.assertEqual(self.ticks(), {"Run": "Clock.Tick", "later": "Clock.Tick"})
        clocks = self.repo / "clocks.go"
        clocks.write_text(clocks.read_text().replace("makeClock() *Clock", "makeClock() *Other"))
        self.commit()
        self.assertEqual(self.ticks(), {"Run": "Clock.Tick", "later": "Other.Tick"})
        holder = self.repo / "holder.go"
        holder.write_text(holder.read_text().replace("*Clock", "*Other"))
        self.commit()
        self.assertEqual(self.ticks(), {"Run": "Other.Tick", "later": "Other.Tick"})


class BarrelsAcrossGenerationsTests(EditedRepositoryCase):
    """A call through a barrel follows its definition when only the defining file changes."""

    def setUp(self) -> None:
        files = {
            "impl.ts": "export function realWork() {}\n",
            "index.ts": "export { realWork as work } from './impl'\n",
            "use.ts": "import { work } from './index'\n\nexport function go() {\n  work()\n}\n",
        }
        self.make_repository(files)

    def test_a_moved_definition_is_followed_through_the_barrel(self) -> None:
        self.patch(generation_write, "INCREMENTAL_RESOLVE_FRACTION", 1.0)  # re-resolve by file
        self.assertEqual(self.callers_of("realWork"), {"go": "realWork"})
        impl = self.repo / "impl.ts"
        impl.write_text("// moved down\n\n" + impl.read_text())  # a new entity id
        self.commit()
        self.assertEqual(self.callers_of("realWork"), {"go": "realWork"})
        conn = open_reader(self.db)
        self.addCleanup(conn.close)
        (line,) = conn.execute(
            "SELECT t.start_line FROM edges e JOIN entities t ON t.entity_id = e.target_id"
            " WHERE e.type = 'CALLS' AND t.entity_name = 'realWork'"
        ).fetchone()
        self.assertEqual(line, 3)


class GoStandardLibraryMethodNamesTests(EditedRepositoryCase):
    """A Go method named like one of net/http's or context's (``r.Context().Value(k)``) on a
    receiver of unknown type is not the one repository method of that name."""

    def setUp(self) -> None:
        files = {
            "go.mod": "module example.com/m\n",
            "tree.go": "package m\n\ntype endpoints map[int]string\n\n"
            "func (s endpoints) Value(k int) string { return s[k] }\n",
            "mux.go": 'package m\n\nimport "net/http"\n\n'
            "func route(r *http.Request) {\n\t_ = r.Context().Value(1)\n}\n\n"
            "func lookup(s endpoints) string {\n\treturn s.Value(1)\n}\n",
        }
        self.make_repository(files)

    def test_context_value_is_not_linked_to_the_repository_method_for_sure(self) -> None:
        self.assertTrue(index_repositories(self.db, [self.repo], workers=1).ok)
        conn = open_reader(self.db)
        self.addCleanup(conn.close)
        rows = conn.execute(
            "SELECT s.entity_name, e.resolution_method FROM edges e"
            " JOIN entities s ON s.entity_id = e.source_id"
            " JOIN entities t ON t.entity_id = e.target_id"
            " WHERE e.type = 'CALLS' AND t.entity_name = 'Value'"
        ).fetchall()
        methods = dict(rows)
        self.assertEqual(methods["lookup"], "type_inferred")  # s is declared endpoints
        self.assertEqual(methods.get("route", "ambiguous"), "ambiguous")  # maybe context's


class GoMajorVersionImportsTests(EditedRepositoryCase):
    """``import "example.com/lib/v2"`` binds the package's name (``lib``), not ``v2``: a
    package-qualified call reaches the package's function, not a method named alike."""

    def setUp(self) -> None:
        files = {
            "go.mod": "module example.com/lib/v2\n",
            "lib.go": "package lib\n\nfunc Param(key string) string { return key }\n",
            "ctx.go": "package lib\n\ntype Ctx struct{}\n\n"
            "func (c *Ctx) Param(key string) string { return key }\n",
        }
        self.make_repository(files)
        (self.repo / "app").mkdir()
        (self.repo / "app" / "main.go").write_text(
            'package main\n\nimport "example.com/lib/v2"\n\n'
            'func handle() string {\n\treturn lib.Param("id")\n}\n'
        )
        self.commit()

    def test_a_versioned_import_path_binds_the_package_name(self) -> None:
        self.assertEqual(go_package_name("github.com/go-chi/chi/v5"), "chi")
        self.assertEqual(go_package_name("gopkg.in/yaml.v3"), "yaml")
        self.assertEqual(go_package_name("example.com/v1"), "v1")  # v1 is no suffix
        self.assertEqual(self.callers_of("Param"), {"handle": "Param"})  # not Ctx.Param
