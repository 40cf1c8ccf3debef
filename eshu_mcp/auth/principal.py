"""
The authenticated caller of a transport or ``/api/v0`` request.

A :class:`Principal` is what a bearer credential resolves to.  Its :attr:`Principal.key`
binds legacy SSE sessions to their opener: every shared-key holder is one principal, a
scoped or OIDC caller is identified by mode, tenant, workspace and subject hash.
"""

from collections.abc import Iterable

from attrs import field, frozen

SHARED = "shared"
SCOPED = "scoped"

SHARED_TOKEN_SUBJECT = "shared_token"


def _clean_ids(values: Iterable[str]) -> tuple[str, ...]:
    """Trim, drop empties and dedupe, keeping first-seen order."""
    seen: dict[str, None] = {}
    for value in values:
        text = str(value).strip()
        if text:
            seen.setdefault(text, None)
    return tuple(seen)


def _strip(value: str) -> str:
    return str(value).strip()


def _mode(value: str) -> str:
    return str(value).strip() or SCOPED


@frozen
class Principal:
    """A resolved credential: who is calling and which repositories and scopes it may read.

    Values are normalized on construction (ids trimmed, an empty mode becomes ``scoped``,
    grant lists trimmed and deduplicated), so equal callers compare equal.
    """

    mode: str = field(converter=_mode)
    tenant_id: str = field(default="", converter=_strip)
    workspace_id: str = field(default="", converter=_strip)
    subject_class: str = field(default="", converter=_strip)
    subject_id_hash: str = field(default="", converter=_strip)
    all_scopes: bool = field(default=False, converter=bool)
    allowed_repository_ids: tuple[str, ...] = field(default=(), converter=_clean_ids)
    allowed_scope_ids: tuple[str, ...] = field(default=(), converter=_clean_ids)

    @property
    def key(self) -> str:
        """The session-binding key: ``shared`` or ``<mode>|<tenant>|<workspace>|<subject>``."""
        if self.mode == SHARED:
            return SHARED
        return "|".join((self.mode, self.tenant_id, self.workspace_id, self.subject_id_hash))

    def may_read_repository(self, repository_id: str) -> bool:
        """Whether this caller's grants cover ``repository_id`` (empty grants cover nothing)."""
        return self.all_scopes or repository_id in self.allowed_repository_ids

    def may_read_scope(self, scope_id: str) -> bool:
        """Whether this caller's grants cover ``scope_id`` (empty grants cover nothing)."""
        return self.all_scopes or scope_id in self.allowed_scope_ids


SHARED_PRINCIPAL = Principal(mode=SHARED, subject_class=SHARED_TOKEN_SUBJECT, all_scopes=True)
"""The one principal every holder of the shared ``ESHU_API_KEY`` becomes."""


def principal_key(principal: Principal | None) -> str:
    """The session-binding key of ``principal``; ``""`` (binding not enforced) for none."""
    if principal is None:
        return ""
    return principal.key
