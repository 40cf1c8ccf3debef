"""The seam between the MCP layers and whatever answers ``/api/v0``."""

from zope.interface import Attribute, Interface


class IQueryBackend(Interface):
    """A query API implementation: the embedded index or the upstream proxy."""

    name = Attribute("Short backend name shown to operators: 'local' or 'upstream'.")

    resource = Attribute(
        "The IResource answering the API. It is mounted at /api/v0/, so its children"
        " are the path segments below /api/v0 (for example b'code', b'repositories')."
    )

    def ready() -> bool:
        """Whether the backend can answer queries now (drives /readyz)."""

    def answers(method: str, path_template: str) -> bool:
        """
        Whether the backend answers this route for real or from a static catalog.

        ``path_template`` is the contract's template, for example
        ``/api/v0/repositories/{repo_id}/stats``. Routes answered only with an
        empty "collector not configured" page, or with 501, return False.
        """
