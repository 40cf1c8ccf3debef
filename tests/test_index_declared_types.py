"""Rust and C++ type expressions reduced to the type whose methods a value calls, and Rust
signatures' declared results, as the extractors record them and the resolver reads them."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.declared_types import (
    chain_steps,
    cpp_type,
    element,
    outside_cpp,
    positions,
    rust_result,
    rust_type,
)


class RustTypeTests(SynchronousTestCase):
    def test_borrows_lifetimes_and_smart_pointers_reduce_to_the_type(self) -> None:
        self.assertEqual(rust_type("&mut RecordBuilder<'a>"), "RecordBuilder")
        self.assertEqual(rust_type("&'a dyn log::Log"), "Log")
        self.assertEqual(rust_type("Box<Level>"), "Level")

    def test_collections_and_iterators_are_their_elements(self) -> None:
        self.assertEqual(rust_type("&[Level]"), "[Level]")
        self.assertEqual(rust_type("Vec<Level>"), "[Level]")
        self.assertEqual(rust_type("[Level; 6]"), "[Level]")
        self.assertEqual(rust_type("impl Iterator<Item = Self>"), "[Self]")
        self.assertIsNone(rust_type("impl Fn(u8) -> u8"))

    def test_options_and_results_are_their_content_marked(self) -> None:
        self.assertEqual(rust_type("Option<&mut DirList>"), "DirList?")
        self.assertEqual(rust_type("io::Result<Ancestor>"), "Ancestor?")
        self.assertEqual(rust_type("Option<Result<DirEntry>>"), "DirEntry??")

    def test_a_signatures_declared_result_is_read_after_its_parameters(self) -> None:
        signature = "pub fn args(&mut self, args: fmt::Arguments<'a>) -> &mut RecordBuilder<'a>"
        self.assertEqual(rust_result(signature), "RecordBuilder")
        self.assertEqual(rust_result("fn f<T>(x: T) -> Vec<T> where T: Clone"), "[T]")
        self.assertIsNone(rust_result("fn log(&self, record: &Record)"))

    def test_a_chain_is_its_start_and_its_steps(self) -> None:
        self.assertEqual(chain_steps("Builder.new().args()"), ("Builder", ["new()", "args()"]))
        self.assertEqual(chain_steps("Level.iter()[]"), ("Level", ["iter()", "[]"]))
        self.assertEqual(chain_steps("[Level].iter()"), ("[Level]", ["iter()"]))
        self.assertEqual(chain_steps("Self.stack.last()"), ("Self", ["stack", "last()"]))
        self.assertIsNone(chain_steps("Builder.args(1)"))

    def test_elements_and_tuple_positions(self) -> None:
        self.assertEqual(element("[(Filter,)]"), "(Filter,)")
        self.assertEqual(element("Level.iter()"), "Level.iter()[]")
        self.assertEqual(positions("(Filter,)"), ["Filter", ""])
        self.assertEqual(positions("Filter"), [])


class CppTypeTests(SynchronousTestCase):
    def test_qualifiers_references_and_template_arguments_are_left_out(self) -> None:
        self.assertEqual(cpp_type("const std::string &"), "std::string")
        self.assertEqual(cpp_type("std::basic_regex<char>"), "std::basic_regex")
        self.assertEqual(cpp_type("ns::Parser<T>*"), "Parser")
        self.assertIsNone(cpp_type("auto"))

    def test_a_smart_pointer_is_the_class_it_holds(self) -> None:
        self.assertEqual(cpp_type("std::shared_ptr<const Value>"), "Value")
        self.assertEqual(cpp_type("std::unique_ptr<std::string>"), "std::string")

    def test_only_the_standard_librarys_types_are_outside(self) -> None:
        self.assertTrue(outside_cpp("std::smatch"))
        self.assertFalse(outside_cpp("StringRef"))
