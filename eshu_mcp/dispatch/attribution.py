"""
Whose tool call the dispatcher is working on, so its log events reach that session only.

The dispatcher runs each step of a call (checking arguments, classifying the answer) on
the reactor thread inside :func:`attributed`; a log observer reads :func:`calling` while
the event is published, in the same step.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar

_CALLER: ContextVar[object | None] = ContextVar("eshu_mcp_caller", default=None)

T = TypeVar("T")


def calling() -> object | None:
    """The session whose call is being worked on now, or None."""
    return _CALLER.get()


def attributed(caller: object | None, step: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``step`` with its log events attributed to ``caller``."""
    token = _CALLER.set(caller)
    try:
        return step(*args, **kwargs)
    finally:
        _CALLER.reset(token)
