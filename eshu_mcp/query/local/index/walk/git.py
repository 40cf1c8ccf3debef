"""
Running git on a repository we do not trust: git is read as data, never executed with the
repository's configuration.

A repository's ``.git/config`` (and any file it includes) can name programs git runs on
its own: ``core.fsmonitor`` on every index read, hooks (``post-index-change`` when a read
refreshes the index), ``filter.<driver>.clean`` when ``git status`` compares a changed
file, remote helpers and ``ext::`` URLs when a partial clone fetches a missing object.
:func:`run_git` is the one place the index runs git, and every call:

* overrides, in command-line scope (which wins over every config file), the settings that
  name a program or a hook directory, plus every filter and diff driver the repository's
  configuration defines (for ``status``, the one read that compares file contents);
* allows no transport (``GIT_ALLOW_PROTOCOL`` names none; ``GIT_NO_LAZY_FETCH=1``), so no
  remote helper, ssh or ``ext::`` command starts, and no pager, prompt or editor either;
* takes no optional lock (``GIT_OPTIONAL_LOCKS=0``: a read never rewrites the index);
* drops inherited variables that point git at another repository or program
  (``GIT_DIR``, ``GIT_EXTERNAL_DIFF``, ``GIT_SSH_COMMAND``...).

The operator's own global and system configuration is still read (``safe.directory``
lives there), but the overrides above win over it too.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_TIMEOUT = 60

SAFE_SETTINGS = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.untrackedCache", "false"),
    ("core.quotepath", "off"),
    ("core.pager", "cat"),
    ("core.askPass", ""),
    ("core.sshCommand", ""),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("protocol.allow", "never"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)
"""Settings every call overrides: each names a program, or makes a read start one."""

_DROPPED_ENV = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_NAMESPACE",
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_EXTERNAL_DIFF",
        "GIT_DIFF_OPTS",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "GIT_EDITOR",
        "GIT_SEQUENCE_EDITOR",
        "GIT_PROXY_COMMAND",
        "GIT_EXEC_PATH",
        "GIT_TRACE",
        "GIT_TRACE2",
        "GIT_TRACE2_EVENT",
        "GIT_TRACE2_PERF",
    }
)
_SET_ENV = {
    "GIT_ALLOW_PROTOCOL": "eshu-allows-no-transport",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
}
_DRIVER_PROGRAMS = {
    "filter": ("clean", "smudge", "process"),
    "diff": ("textconv", "command"),
    "merge": ("driver",),
}
"""Config families whose ``<family>.<driver>.<key>`` names a program, per family."""


def git_environment(extra: tuple[tuple[str, str], ...] = ()) -> dict[str, str]:
    """
    The environment of every git call: the daemon's minus redirections, plus the overrides.

    The settings go in as ``GIT_CONFIG_KEY_<n>``/``GIT_CONFIG_VALUE_<n>`` (command-line
    scope, like ``-c``) so a driver name holding ``=`` cannot smuggle in a value.
    """
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in _DROPPED_ENV
        and not name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }
    env.update(_SET_ENV)
    settings = (*SAFE_SETTINGS, *extra)
    env["GIT_CONFIG_COUNT"] = str(len(settings))
    for number, (key, value) in enumerate(settings):
        env[f"GIT_CONFIG_KEY_{number}"] = key
        env[f"GIT_CONFIG_VALUE_{number}"] = value
    return env


def git_command(root: Path, args: tuple[str, ...]) -> list[str]:
    """The argv of one git call in ``root``."""
    return ["git", "--no-pager", "-C", str(root), *args]


def run_git(
    root: Path, *args: str, neutralise_drivers: bool = False
) -> subprocess.CompletedProcess:
    """
    Run ``git args`` in ``root`` with the repository's programs disabled (see the module).

    ``neutralise_drivers``: also disable every filter/diff/merge driver the configuration
    defines (one more ``git config`` read): needed for reads that compare file contents,
    ``git status`` first among them. Raises ``OSError`` or ``subprocess.TimeoutExpired``.
    """
    extra = driver_overrides(root) if neutralise_drivers else ()
    return subprocess.run(
        git_command(root, args),
        capture_output=True,
        timeout=GIT_TIMEOUT,
        check=False,
        stdin=subprocess.DEVNULL,
        env=git_environment(extra),
    )


def driver_overrides(root: Path) -> tuple[tuple[str, str], ...]:
    """Settings emptying every program of every driver the configuration names."""
    done = subprocess.run(
        git_command(root, ("config", "-z", "--get-regexp", r"^(filter|diff|merge)\.")),
        capture_output=True,
        timeout=GIT_TIMEOUT,
        check=False,
        stdin=subprocess.DEVNULL,
        env=git_environment(),
    )
    drivers: set[tuple[str, str]] = set()
    for entry in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        key = entry.split("\n", 1)[0]
        family, _, rest = key.partition(".")
        driver = rest.rpartition(".")[0]
        if family.lower() in _DRIVER_PROGRAMS and driver:
            drivers.add((family.lower(), driver))
    settings: list[tuple[str, str]] = []
    for family, driver in sorted(drivers):
        settings.extend((f"{family}.{driver}.{key}", "") for key in _DRIVER_PROGRAMS[family])
        if family == "filter":
            settings.append((f"filter.{driver}.required", "false"))
    return tuple(settings)


MAX_GIT_ENTRIES_CHECKED = 100_000
"""Entries of ``.git`` and its ``refs/`` looked at for links out, at most (a bounded cost)."""


def git_dir_link_out(root: Path) -> str | None:
    """
    The first file git reads as data (``HEAD``, ``packed-refs``, ``config``, ``index``, a
    ref...) that is a symbolic link out of ``root/.git``, as a repository-relative path; None
    when there is none (or ``.git`` is no directory of its own).

    Git follows such a link and echoes what it found in its errors (``unexpected line in
    .git/packed-refs: <the outside file's first line>``), so a repository holding one is
    read without git: as a plain directory.
    """
    dot_git = root / ".git"
    if dot_git.is_symlink() or not dot_git.is_dir():
        return None
    real = os.path.realpath(dot_git)
    checked = 0
    for directory, names in _git_dir_entries(dot_git):
        for name in names:
            checked += 1
            if checked > MAX_GIT_ENTRIES_CHECKED:
                return None
            path = os.path.join(directory, name)
            if os.path.islink(path):
                target = os.path.realpath(path)
                if os.path.commonpath([real, target]) != real:
                    return os.path.relpath(path, root)
    return None


def _git_dir_entries(dot_git: Path):
    """``(directory, entry names)`` of ``.git`` itself and every directory under its refs."""
    try:
        yield str(dot_git), os.listdir(dot_git)
    except OSError:
        return
    for directory, dirnames, filenames in os.walk(dot_git / "refs"):
        yield directory, [*dirnames, *filenames]
