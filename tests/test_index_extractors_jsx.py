"""Tests for eshu_mcp.query.local.index.parse.extractors.jsx: JSX uses and wrapped components."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.rows import parse_file

SOURCE = b"""import { LineItem } from './LineItem';
export const Panel = forwardRef(function Panel(props, ref) { return <div ref={ref} />; });
export const Row = React.memo((props: {a: number}) => <span>{format(props.a)}</span>);
const plain = compute(1);
export function Cart() {
  return <ul><LineItem n={1} /><Panel /><Icons.Star size={2}></Icons.Star></ul>;
}
"""


class JsxTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.parsed = parse_file("src/Cart.tsx", SOURCE)

    def test_forward_ref_and_memo_wrappers_define_their_components(self) -> None:
        entities = {e["entity_name"]: e for e in self.parsed.entities}
        self.assertEqual(sorted(entities), ["Cart", "Panel", "Row"])  # not plain
        self.assertEqual(entities["Panel"]["metadata"]["wrapper"], "forwardRef")
        self.assertEqual(entities["Row"]["metadata"]["args"], ["props: {a: number}"])
        self.assertTrue(entities["Row"]["metadata"]["exported"])

    def test_a_component_element_is_a_call_of_the_component_and_html_is_not(self) -> None:
        cart = [e["entity_name"] for e in self.parsed.entities].index("Cart")
        used = [(c[2], c[3]) for c in self.parsed.calls if c[0] == cart]
        self.assertEqual(used, [("LineItem", None), ("Panel", None), ("Icons.Star", "Icons")])

    def test_calls_inside_a_wrapped_component_are_its_own(self) -> None:
        row = [e["entity_name"] for e in self.parsed.entities].index("Row")
        # the wrapper call is part of the component's declaration
        calls = [c[1] for c in self.parsed.calls if c[0] == row and not c[5].startswith("property")]
        self.assertEqual(calls, ["memo", "format"])

    def test_plain_javascript_reads_jsx_too(self) -> None:
        parsed = parse_file("src/a.jsx", b"const A = memo(() => <B x={1} />);\n")
        self.assertEqual([e["entity_name"] for e in parsed.entities], ["A"])
        self.assertEqual([c[1] for c in parsed.calls], ["memo", "B"])
