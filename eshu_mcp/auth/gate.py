"""
The startup gate: an HTTP daemon never serves open by accident.

With no credential source configured, a daemon whose every listener is on loopback serves
open and says so with a warning; one that listens anywhere else refuses to start unless
``ESHU_MCP_ALLOW_UNAUTHENTICATED`` is truthy.  stdio is never gated.
"""

from collections.abc import Mapping

from twisted.logger import Logger

from eshu_mcp.auth.apikey import is_truthy
from eshu_mcp.auth.policy import CredentialPolicy

log = Logger()

REFUSAL = (
    "refusing to serve HTTP without authentication on a non-loopback listener: set "
    "ESHU_API_KEY (or ESHU_AUTO_GENERATE_API_KEY=true), ESHU_SCOPED_TOKENS_FILE or "
    "ESHU_AUTH_RESOURCE_URI to require a bearer credential, or set "
    "ESHU_MCP_ALLOW_UNAUTHENTICATED=true to serve every request and SSE session "
    "unauthenticated (for loopback or development use only)"
)
ENFORCED = "headerless reads require authentication (a credential source is configured)"
OPEN = (
    "headerless reads are served open; set ESHU_API_KEY, ESHU_SCOPED_TOKENS_FILE, or "
    "ESHU_AUTH_RESOURCE_URI to require authentication"
)
UNAUTHENTICATED_WARNING = (
    "ESHU_MCP_ALLOW_UNAUTHENTICATED is set: every HTTP request and SSE session is "
    "unauthenticated; use this for loopback or development only"
)


def allow_unauthenticated(environ: Mapping[str, str]) -> bool:
    """Whether ``ESHU_MCP_ALLOW_UNAUTHENTICATED`` is truthy."""
    return is_truthy(environ.get("ESHU_MCP_ALLOW_UNAUTHENTICATED"))


def startup_refusal(
    policy: CredentialPolicy, *, listening_loopback_only: bool, allow_unauthenticated: bool
) -> str | None:
    """The sentence to refuse HTTP startup with, or None when the daemon may start."""
    if policy.enforced or listening_loopback_only or allow_unauthenticated:
        return None
    return REFUSAL


def announce_posture(
    policy: CredentialPolicy, *, listening_loopback_only: bool, allow_unauthenticated: bool
) -> None:
    """Log the enforcement posture once at startup (call after :func:`startup_refusal`)."""
    if policy.enforced:
        log.info(ENFORCED, event_name="auth.enforcement.configured")
        return
    log.warn(OPEN, event_name="auth.enforcement.open")
    if allow_unauthenticated and not listening_loopback_only:
        log.warn(UNAUTHENTICATED_WARNING, event_name="runtime.startup.warning")
