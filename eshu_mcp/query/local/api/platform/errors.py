"""
Error answers of the embedded API, in the three shapes Eshu puts on the wire
(local-backend.md §1.3): plain ``{"error", "detail"}``, the contract envelope, and a
route-specific plain body (semantic search, ambiguity).
"""

from __future__ import annotations

from typing import Any

from eshu_mcp.query.local.api.platform import truth as _truth

# Go's net/http StatusText for the statuses the API emits.
STATUS_TEXT = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Request Entity Too Large",
    422: "Unprocessable Entity",
    500: "Internal Server Error",
    501: "Not Implemented",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def status_text(status: int) -> str:
    """The HTTP reason phrase Go writes in plain error bodies."""
    return STATUS_TEXT.get(status, "Error")


class ApiError(Exception):
    """
    An error answer.

    Without ``code`` it is Eshu's plain ``{"error", "detail"}`` body whatever the Accept
    header says. With ``code`` it is a contract error: the envelope ``{"data": null,
    "truth", "error": {code, message, capability?, profiles?, details?}}`` when the
    envelope is accepted, else the plain body (or ``plain`` when given, for the
    semantic-search and ambiguity shapes whose plain form differs).
    """

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        code: str | None = None,
        capability: str = "",
        details: dict | None = None,
        truth: dict | None = None,
        profiles: dict | None = None,
        plain: dict | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.code = code
        self.capability = capability
        self.details = details
        self.truth = truth
        self.profiles = profiles
        self.plain = plain

    def plain_body(self) -> dict[str, Any]:
        """The body sent when the envelope is not accepted (or the error is plain)."""
        if self.plain is not None:
            return self.plain
        return {"error": status_text(self.status), "detail": self.detail}

    def envelope_body(self) -> dict[str, Any]:
        """The canonical envelope for a contract error."""
        error: dict[str, Any] = {"code": self.code, "message": self.detail}
        if self.capability:
            error["capability"] = self.capability
        if self.profiles:
            error["profiles"] = self.profiles
        if self.details:
            error["details"] = self.details
        return {"data": None, "truth": self.truth, "error": error}

    def body(self, envelope: bool) -> dict[str, Any]:
        """The wire body for a request that did or did not accept the envelope."""
        if self.code is not None and envelope:
            return self.envelope_body()
        return self.plain_body()


def unsupported(message: str, capability: str, *, required: str = "local_authoritative"):
    """Eshu's 501 ``unsupported_capability`` contract error."""
    return ApiError(
        501,
        message,
        code="unsupported_capability",
        capability=capability,
        profiles={"current": _truth.PROFILE, "required": required},
    )
