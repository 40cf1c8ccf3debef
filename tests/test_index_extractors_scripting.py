"""Tests for eshu_mcp.query.local.index.parse.extractors.scripting: Lua and shell."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.rows import parse_file

LUA = b"""local util = require("shop.util")
require "shop.log"
local M = {}
function M.price(cart)
  if cart.ok and cart.n > 0 then return util.total(cart) end
  return helper(cart)
end
function M:add(item) self:save(item); M.price(item) end
local function helper(x) for i = 1, 3 do print(i) end return x end
local f = function(y) return y end
function M.map(t, fn) local g = function(v) return fn(v) end return M.price(fn(t)) end
local tests = {}
tests["price is free"] = function() local helper = M.price; assert(helper({}) == 0) end
return M
"""

SHELL = b"""#!/bin/bash
source ./lib.sh
. "$HOME/x.sh"
build() { if [ -f x ] && [ -d y ]; then compile "$1"; fi; }
function deploy {
  build a
  for f in *; do upload "$f"; done
}
deploy
"""


class LuaTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.parsed = parse_file("lua/shop/cart.lua", LUA)
        self.entities = {e["qualified_name"]: e for e in self.parsed.entities}

    def test_table_functions_belong_to_their_table_and_locals_are_local(self) -> None:
        self.assertEqual(
            sorted(self.entities),
            ["M.add", "f", "g", "helper", "map", "price", "price is free"],
        )
        self.assertEqual(self.entities["price is free"]["metadata"]["table"], "tests")
        self.assertEqual(self.entities["price"]["metadata"]["table"], "M")
        self.assertEqual(self.entities["helper"]["metadata"]["visibility"], "local")
        self.assertNotIn("visibility", self.entities["price"]["metadata"])

    def test_require_is_an_import_not_a_call(self) -> None:
        self.assertEqual(
            [row[:3] for row in self.parsed.imports],
            [("shop.util", None, "util"), ("shop.log", "*", None)],
        )
        calls = {(c[2], c[3]) for c in self.parsed.calls}
        self.assertEqual(
            calls,
            {
                ("util.total", "util"),
                ("helper", None),
                ("self.save", "self"),
                ("M.price", None),  # the file's own table: its function, called plainly
                ("print", None),
                ("assert", None),  # and not helper(): a local there, not the function
            },
        )

    def test_a_call_of_a_parameter_is_no_call_of_a_definition(self) -> None:
        mapped = list(self.entities).index("map")
        inner = mapped + 1  # g, a closure that sees map's parameters
        self.assertEqual(
            sorted(c[2] for c in self.parsed.calls if c[0] in (mapped, inner)), ["M.price"]
        )

    def test_a_call_of_a_local_is_no_call_of_a_definition(self) -> None:
        test = list(self.entities).index("price is free")
        self.assertEqual([c[2] for c in self.parsed.calls if c[0] == test], ["assert"])

    def test_complexity(self) -> None:
        self.assertEqual(self.entities["price"]["cyclomatic_complexity"], 3)
        self.assertEqual(self.entities["helper"]["cyclomatic_complexity"], 2)


class ShellTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.parsed = parse_file("scripts/deploy.sh", SHELL)

    def test_functions_commands_and_sourced_files(self) -> None:
        self.assertEqual(
            [(e["entity_name"], e["start_line"]) for e in self.parsed.entities],
            [("build", 4), ("deploy", 5)],
        )
        calls = [(c[0], c[1]) for c in self.parsed.calls]
        self.assertEqual(calls, [(0, "compile"), (1, "build"), (1, "upload"), (None, "deploy")])
        # a path only known at run time is no import
        self.assertEqual([row[:2] for row in self.parsed.imports], [("./lib.sh", "*")])

    def test_complexity_counts_conditions_loops_and_short_circuits(self) -> None:
        build, deploy = self.parsed.entities
        self.assertEqual(build["cyclomatic_complexity"], 3)
        self.assertEqual(deploy["cyclomatic_complexity"], 2)
