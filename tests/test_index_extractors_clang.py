"""Tests for eshu_mcp.query.local.index.parse.extractors.clang: what runs without a call."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.rows import parse_file

SOURCE = b"""struct A : B {
  virtual ~A() {}
  bool operator==(const A& o) const { return true; }
  void run() override { go(); }
  void plain() {}
};
A::~A() {}
bool A::operator<(const A& o) const { return false; }
"""


class RootKindTests(SynchronousTestCase):
    def test_destructors_operators_and_overrides_are_roots_plain_methods_are_not(self) -> None:
        roots = [
            (e["qualified_name"], e["metadata"].get("dead_code_root_kinds"))
            for e in parse_file("src/a.cpp", SOURCE).entities
            if e["entity_type"] == "Function"
        ]
        self.assertEqual(
            roots,
            [
                ("A.~A", ["cpp.destructor"]),
                ("A.operator==", ["cpp.operator"]),
                ("A.run", ["cpp.override"]),
                ("A.plain", None),
                ("A.~A", ["cpp.destructor"]),
                ("A.operator<", ["cpp.operator"]),
            ],
        )


class QualifiedCallTests(SynchronousTestCase):
    def test_a_call_into_the_files_own_namespace_is_a_function_call(self) -> None:
        source = (
            b"namespace values {\nnamespace parser_tool { inline bool truthy(int t) { return t; } }"
            b"\nbool parse(int t) {\n  return parser_tool::truthy(t) || std::isspace(t)"
            b" || Reader::make(t);\n}\n}\n"
        )
        receivers = {c[1]: c[3] for c in parse_file("include/values.hpp", source).calls}
        self.assertEqual(receivers, {"truthy": None, "isspace": "std", "make": "Reader"})


DECLARED = b"""static Parser shared(1);
bool check(const std::string &text, Parser* parser) {
    text.c_str();
    parser->parse();
    std::smatch result, other;
    result.empty();
    auto made = std::make_unique<Reader>(2);
    made->read();
    for (const Option& option : options) { option.name(); }
    shared.parse();
    return true;
}
"""


class DeclaredTypeTests(SynchronousTestCase):
    def test_parameters_locals_and_range_variables_record_their_declared_class(self) -> None:
        typed = {c[2]: c[4] for c in parse_file("src/check.cpp", DECLARED).calls}
        self.assertEqual(typed["text.c_str"], "std::string")
        self.assertEqual(typed["parser->parse"], "Parser")
        self.assertEqual(typed["result.empty"], "std::smatch")
        self.assertEqual(typed["made->read"], "Reader")
        self.assertEqual(typed["option.name"], "Option")
        self.assertEqual(typed["shared.parse"], "Parser")


EXPORTED = b"""class LIB_API Element : public Node {
public:
    const char* Name() const { return Value(); }
};
"""


class ExportMacroTests(SynchronousTestCase):
    def test_a_classs_export_macro_is_not_its_name(self) -> None:
        parsed = parse_file("src/element.h", EXPORTED)
        names = {(e["entity_type"], e["qualified_name"]) for e in parsed.entities}
        self.assertEqual(names, {("Class", "Element"), ("Function", "Element.Name")})
        self.assertIn("LIB_API", parsed.entities[0]["signature"])  # the source as written

    def test_a_classs_data_members_keep_their_declared_classes(self) -> None:
        source = b"class Box {\n  std::string m_text;\n  Item* m_item, *m_next;\n  int m_n;\n};\n"
        box = parse_file("src/box.h", source).entities[0]
        self.assertEqual(
            box["metadata"]["attribute_types"],
            {"m_text": "std::string", "m_item": "Item", "m_next": "Item"},
        )
