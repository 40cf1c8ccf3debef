"""Rust and C++ method calls resolve by their receiver's declared type (a parameter, a local,
a loop variable, a builder chain's results), and a standard-library type's methods are
never the repository's, however the names collide."""

from .test_index_receivers import IndexedSourcesCase

RUST = """
pub struct Level;
pub struct Filter;
pub struct Record;
pub struct Builder;

impl Level {
    pub fn iter() -> impl Iterator<Item = Self> { todo!() }
    pub fn as_str(&self) -> &'static str { "level" }
    pub fn to_owned(&self) -> Level { Level }
}

impl Filter {
    pub fn as_str(&self) -> &'static str { "filter" }
    pub fn level(&self) -> Level { Self::make() }
    fn make() -> Level { Level }
}

impl Builder {
    pub fn new() -> Builder { Builder }
    pub fn args(&mut self, n: u8) -> &mut Builder { self }
    pub fn line(&mut self, n: u8) -> &mut Self { self }
    pub fn build(&self) -> Record { Record }
}

impl Record {
    pub fn line(&self) -> u8 { 1 }
}

fn looped() {
    for level in Level::iter() {
        level.as_str();
    }
}

fn pairs() {
    let tests = &[(Filter, "OFF"), (Filter, "ERROR")];
    for (input, expected) in tests {
        assert_eq!(*expected, input.as_str());
    }
}

fn slices(levels: &[Filter]) {
    for one in levels.iter() {
        one.as_str();
    }
}

fn chained() {
    let record = Builder::new().args(1).line(2).build();
    assert_eq!(record.line(), 1);
}

fn text(name: &String) {
    name.to_owned();
}

fn through(filter: &Filter) {
    filter.level().as_str();
}

impl Level {
    pub fn parse(text: &str) -> Result<Level, String> { Ok(Level) }
    pub fn is_some(&self) -> bool { false }
}

fn options(levels: Vec<Level>, meta: Option<Filter>) -> Result<(), String> {
    let parsed = Level::parse("x")?;
    parsed.as_str();
    if let Some(last) = levels.last() {
        last.as_str();
    }
    meta.unwrap().as_str();
    meta.is_some();
    Ok(())
}

mod util;

pub struct Walker {
    stack: Vec<Filter>,
    current: Level,
}

impl Walker {
    pub fn push(&mut self, filter: Filter) {
        self.stack.push(filter);
        self.current.as_str();
        self.stack[0].as_str();
        util::device();
    }
}
"""

UTIL = """
pub fn device() -> u64 { 0 }
"""

CPP = """
#include <string>
#include <memory>
#include <regex>

class StringRef {
public:
    const char* c_str() const { return nullptr; }
    bool empty() const { return true; }
};

class Node {
public:
    const char* Value() const { return ""; }
};

class Parser : public Node {
public:
    bool parse(int n) { return Value() != nullptr; }
};

class Reader {
public:
    bool parse(int n) { return n < 0; }
};

bool plain(const std::string &text) {
    const char *data = text.c_str();
    std::smatch result;
    return !result.empty();
}

bool local() {
    Parser parser;
    auto reader = Reader();
    return parser.parse(1) && reader.parse(2);
}

bool held(std::shared_ptr<Reader> reader) {
    return reader->parse(3);
}

bool own(const StringRef &ref) {
    return ref.empty();
}

class Holder {
public:
    bool check();
private:
    std::string m_text;
    StringRef m_ref;
};

bool Holder::check() {
    m_text.c_str();
    return this->m_ref.empty();
}
"""


class CalleesCase(IndexedSourcesCase):
    def callees(self, caller: str) -> set[str]:
        return {
            row[0]
            for row in self.conn.execute(
                "SELECT t.qualified_name FROM edges e JOIN entities s ON s.entity_id ="
                " e.source_id JOIN entities t ON t.entity_id = e.target_id"
                " WHERE e.type = 'CALLS' AND s.qualified_name = ?",
                (caller,),
            )
        }


class RustDeclaredReceiverTests(CalleesCase):
    SOURCES = {"src/lib.rs": RUST, "src/util.rs": UTIL}

    def test_a_loop_over_an_associated_iterator_yields_its_declared_items(self) -> None:
        self.assertEqual(self.callees("looped"), {"Level.iter", "Level.as_str"})

    def test_a_loop_over_an_array_of_tuples_types_each_position(self) -> None:
        self.assertEqual(self.callees("pairs"), {"Filter.as_str"})

    def test_a_loop_over_a_typed_slice_types_its_elements(self) -> None:
        self.assertEqual(self.callees("slices"), {"Filter.as_str"})

    def test_each_call_of_a_builder_chain_runs_on_what_the_last_returned(self) -> None:
        self.assertEqual(
            self.callees("chained"),
            {"Builder.new", "Builder.args", "Builder.line", "Builder.build", "Record.line"},
        )

    def test_a_method_of_a_type_outside_the_repository_is_not_a_repository_method(
        self,
    ) -> None:
        self.assertEqual(self.callees("text"), set())

    def test_a_fields_declared_type_and_a_declared_modules_functions_are_followed(
        self,
    ) -> None:  # self.stack.push: a Vec's, never Walker.push itself
        self.assertEqual(self.callees("Walker.push"), {"Level.as_str", "Filter.as_str", "device"})

    def test_options_and_results_give_their_content_to_question_marks_lets_and_unwraps(
        self,
    ) -> None:  # meta.is_some(): an Option's own method, never a repository one
        self.assertEqual(self.callees("options"), {"Level.parse", "Level.as_str", "Filter.as_str"})

    def test_a_result_type_and_self_associated_functions_resolve_to_the_declared_type(
        self,
    ) -> None:
        self.assertEqual(self.callees("through"), {"Filter.level", "Level.as_str"})
        self.assertEqual(self.callees("Filter.level"), {"Filter.make"})


class CppDeclaredReceiverTests(CalleesCase):
    SOURCES = {"src/parse.cpp": CPP}

    def test_a_standard_library_types_methods_never_link_by_name(self) -> None:
        self.assertEqual(self.callees("plain"), set())
        self.assertEqual(self.callees("own"), {"StringRef.empty"})

    def test_a_data_members_declared_class_types_calls_on_it(self) -> None:
        self.assertEqual(self.callees("Holder.check"), {"StringRef.empty"})

    def test_a_bare_call_in_a_method_runs_the_base_classs_method(self) -> None:
        self.assertEqual(self.callees("Parser.parse"), {"Node.Value"})

    def test_a_declared_or_built_local_calls_its_own_classs_method(self) -> None:
        self.assertEqual(self.callees("local"), {"Parser.parse", "Reader", "Reader.parse"})
        self.assertEqual(self.callees("held"), {"Reader.parse"})
