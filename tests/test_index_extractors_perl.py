"""Tests for eshu_mcp.query.local.index.parse.extractors.perl: Perl extraction."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.rows import parse_file

SOURCE = b"""package Shop::Cart;
use strict;
use parent 'Shop::Base';
use Shop::Money qw(format_money);
require Carp;
sub new {
    my ($class, %args) = @_;
    my $self = bless {}, $class;
    $self->init(%args);
    return $self;
}
sub total {
    my $self = shift;
    my $t = 0;
    for my $i (@{$self->{items}}) { $t += price($i) if $i && $i->ok; }
    Shop::Money::round($t);
    return format_money($t);
}
package Shop::Other;
sub price { return $_[0]{p} }
sub _init { my $self = shift->SUPER::_init(@_); $self }
1;
"""


class PerlTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.parsed = parse_file("lib/Shop/Cart.pm", SOURCE)
        self.entities = {e["qualified_name"]: e for e in self.parsed.entities}

    def test_subs_belong_to_the_package_declared_before_them(self) -> None:
        self.assertEqual((self.parsed.language, self.parsed.parse_status), ("perl", "parsed"))
        self.assertEqual(
            sorted(self.entities),
            ["Cart", "Cart.new", "Cart.total", "Other", "Other._init", "Other.price"],
        )
        self.assertEqual(self.entities["Cart"]["metadata"]["package"], "Shop::Cart")

    def test_use_parent_is_a_base_and_use_lists_are_imports(self) -> None:
        cart = list(self.entities).index("Cart")
        self.assertEqual(self.parsed.bases, [(cart, "Base", "extends")])
        self.assertEqual(
            [row[:4] for row in self.parsed.imports],
            [("Shop::Money", "format_money", None, "use"), ("Carp", None, None, "require")],
        )

    def test_calls_on_self_packages_and_bare_names(self) -> None:
        calls = {(c[2], c[3]) for c in self.parsed.calls}
        self.assertLessEqual(
            {
                ("self->init", "self"),
                ("price", None),
                ("Shop::Money::round", "Money"),
                ("format_money", None),
                ("super->_init", "super"),  # the parent package's _init
            },
            calls,
        )

    def test_complexity_counts_loops_postfix_conditions_and_short_circuits(self) -> None:
        self.assertEqual(self.entities["Cart.total"]["cyclomatic_complexity"], 4)
