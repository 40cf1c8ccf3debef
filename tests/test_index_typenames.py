"""Java receivers and declared types as the resolver reads them: a call chain without its
arguments, a declared type with the names its type arguments mention."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.typenames import argument_free_chain, generic_type


class ArgumentFreeChainTests(SynchronousTestCase):
    def test_calls_keep_whether_they_pass_arguments(self) -> None:
        self.assertEqual(argument_free_chain("getValue()"), "getValue()")
        self.assertEqual(argument_free_chain("append(a).append( )"), "append(_).append()")
        self.assertEqual(argument_free_chain("f(g(x)).field.h()"), "f(_).field.h()")

    def test_literals_are_skipped_whole_brackets_and_escapes_included(self) -> None:
        self.assertEqual(argument_free_chain('append("(\\"").b()'), "append(_).b()")
        self.assertEqual(argument_free_chain("append(')').b()"), "append(_).b()")
        self.assertEqual(argument_free_chain('a("x\\\\").b()'), "a(_).b()")
        self.assertIsNone(argument_free_chain('append("unclosed)'))

    def test_a_function_passed_is_marked(self) -> None:
        self.assertEqual(argument_free_chain("map(x -> x.f()).first()"), "map(->).first()")
        self.assertEqual(argument_free_chain("map(Foo::bar)"), "map(->)")

    def test_anything_but_a_chain_is_none(self) -> None:
        self.assertIsNone(argument_free_chain("items[0].get()"))
        self.assertIsNone(argument_free_chain("a(b"))
        self.assertIsNone(argument_free_chain("Foo::bar"))


class GenericTypeTests(SynchronousTestCase):
    def test_the_simple_name_and_the_argument_names(self) -> None:
        self.assertEqual(generic_type("java.lang.String"), "String")
        self.assertEqual(generic_type("Map.Entry<K, List<V>>"), "Entry<K,List,V>^Map")
        self.assertEqual(generic_type("List<com.acme.Block>"), "List<Block>")

    def test_a_nested_class_keeps_the_class_it_is_written_in(self) -> None:
        self.assertEqual(generic_type("CodeBlock.Builder"), "Builder^CodeBlock")
        self.assertEqual(generic_type("com.acme.Page.Builder"), "Builder^Page")

    def test_unwritten_or_wildcard_arguments_are_not_known(self) -> None:
        self.assertEqual(generic_type("ArrayList<>"), "ArrayList<?>")
        self.assertEqual(generic_type("List<? extends Block>"), "List<?,Block>")
