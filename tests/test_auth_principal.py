"""Principals and their session-binding keys."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.auth.principal import SHARED_PRINCIPAL, Principal, principal_key


class PrincipalKeyTests(SynchronousTestCase):
    def test_shared_principal_key_is_shared(self) -> None:
        self.assertEqual(SHARED_PRINCIPAL.key, "shared")
        self.assertEqual(principal_key(Principal(mode="shared", tenant_id="t")), "shared")

    def test_scoped_principal_key_joins_mode_tenant_workspace_subject(self) -> None:
        principal = Principal(
            mode="scoped", tenant_id="tenant-a", workspace_id="ws-a", subject_id_hash="sub-a"
        )
        self.assertEqual(principal_key(principal), "scoped|tenant-a|ws-a|sub-a")

    def test_no_principal_has_empty_key(self) -> None:
        self.assertEqual(principal_key(None), "")

    def test_scoped_tokens_without_subject_share_a_key(self) -> None:
        first = Principal(mode="scoped", tenant_id="t", workspace_id="w")
        second = Principal(mode="scoped", tenant_id="t", workspace_id="w", all_scopes=True)
        self.assertEqual(first.key, "scoped|t|w|")
        self.assertEqual(first.key, second.key)


class NormalizationTests(SynchronousTestCase):
    def test_empty_mode_defaults_to_scoped_and_ids_are_trimmed(self) -> None:
        principal = Principal(mode=" ", tenant_id=" t ", workspace_id="w\n", subject_id_hash=" s")
        self.assertEqual(principal.mode, "scoped")
        self.assertEqual(principal.key, "scoped|t|w|s")

    def test_grant_lists_are_trimmed_deduplicated_and_cleaned(self) -> None:
        principal = Principal(
            mode="scoped",
            allowed_repository_ids=[" repo://a ", "repo://a", "", "repo://b"],
            allowed_scope_ids=("s", " s", "  "),
        )
        self.assertEqual(principal.allowed_repository_ids, ("repo://a", "repo://b"))
        self.assertEqual(principal.allowed_scope_ids, ("s",))

    def test_equal_grants_give_equal_principals(self) -> None:
        self.assertEqual(
            Principal(mode="", tenant_id="t ", allowed_repository_ids=["a", "a"]),
            Principal(mode="scoped", tenant_id="t", allowed_repository_ids=("a",)),
        )


class GrantTests(SynchronousTestCase):
    def test_empty_grants_authorize_nothing(self) -> None:
        principal = Principal(mode="scoped", tenant_id="t", workspace_id="w")
        self.assertFalse(principal.may_read_repository("repo://a"))
        self.assertFalse(principal.may_read_scope("scope-a"))

    def test_listed_repository_is_readable_and_others_are_not(self) -> None:
        principal = Principal(mode="scoped", allowed_repository_ids=["repo://a"])
        self.assertTrue(principal.may_read_repository("repo://a"))
        self.assertFalse(principal.may_read_repository("repo://b"))

    def test_all_scopes_reads_everything(self) -> None:
        self.assertTrue(SHARED_PRINCIPAL.may_read_repository("repo://any"))
        self.assertTrue(SHARED_PRINCIPAL.may_read_scope("any"))
