"""
Which files of a work tree get indexed, and what git says about the tree.

Git work trees: ``git ls-files`` (tracked + untracked-not-ignored) minus ``.eshuignore``
matches (git's own matcher) minus Eshu's default skip dirs and suffixes. Plain directories:
the same rules through :mod:`.ignore`. Symlinks are followed only when their target resolves
inside the repository root and is a regular file; anything else is not recorded.
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_module
import subprocess
from pathlib import Path

from attrs import evolve, frozen

from eshu_mcp.query.local.index.store.identity import normalize_remote_url
from eshu_mcp.query.local.index.walk.git import git_dir_link_out, run_git
from eshu_mcp.query.local.index.walk.ignore import is_ignored, load_rules

SKIP_DIRS = frozenset(
    [
        ".git",
        ".svn",
        ".hg",
        ".eshu",
        ".terraform",
        ".terragrunt-cache",
        ".tox",
        ".mypy_cache",
        ".pytest_cache",
        ".aws-sam",
        "cdk.out",
        ".serverless",
        "node_modules",
        "bower_components",
        "jspm_packages",
        ".yarn",
        ".next",
        ".nuxt",
        "site-packages",
        "dist-packages",
        "__pypackages__",
        "__pycache__",
        ".venv",
        "venv",
        ".eggs",
        "vendor",
        "wp-admin",
        "wp-includes",
        "bundle",
        "deps",
        "_build",
        "Pods",
        ".build",
        "Carthage",
        ".gradle",
        ".m2",
        ".ivy2",
        ".stack-work",
        ".cabal-sandbox",
        "dist-newstyle",
        ".dart_tool",
        ".pub-cache",
        "blib",
        "local",
        "obj",
        "bin",
        ".ansible",
        "ansible_collections",
        ".jenkins",
        "dist",
        "build",
        "target",
        "out",
        "coverage",
        ".nyc_output",
        "htmlcov",
    ]
)
SKIP_SUFFIXES = tuple(
    [
        ".log",
        ".out",
        ".min.js",
        ".min.mjs",
        ".min.css",
        ".bundle.js",
        ".chunk.js",
        ".min.map",
        ".map",
        ".pnp.cjs",
        ".pnp.loader.mjs",
        ".pyc",
        ".pyo",
        ".class",
        ".dll",
        ".so",
        ".dylib",
        ".exe",
        ".o",
        ".a",
        ".wasm",
    ]
)


class WalkError(Exception):
    """The path cannot be indexed (missing, not a directory, git failure)."""


class UntrustedRepository(WalkError):
    """Git refuses the work tree: it is owned by another user (git's safe.directory check)."""


def _untrusted_message(root: Path, message: str) -> str:
    """Git's 'dubious ownership' refusal as one line with the fix, for the indexing user."""
    quoted = "'"
    marker = "repository at "
    where = str(root)
    if marker in message:  # git names the repository root, not the path it was given
        where = message.split(marker, 1)[1].split("\n", 1)[0].strip().strip(quoted)
    return (
        f"git refuses {where}: it is owned by another user than the one indexing"
        f" (git's 'dubious ownership' check); trust it with"
        f" `git config --global --add safe.directory {where}` as that user, then index again"
    )


@frozen
class WalkedFile:
    """A file kept by the walk, with the stat data used as a change pre-check."""

    relative_path: str
    absolute_path: str
    byte_size: int
    mtime_ns: int


@frozen
class GitRef:
    """A branch or tag."""

    name: str
    kind: str
    commit_sha: str
    is_head: bool


@frozen
class WorkTree:
    """What the indexer needs to know about one repository before reading files."""

    root: Path
    is_git: bool
    remote_url: str | None = None
    head_commit: str | None = None
    head_ref: str | None = None
    default_branch: str | None = None
    dirty: bool = False
    refs: tuple[GitRef, ...] = ()
    # what ``git status`` listed (paths; an untracked directory ends in ``/``), None when
    # it cannot be kept up to date path by path (a rename or copy in it): see recheck_dirty
    dirty_paths: frozenset[str] | None = frozenset()
    git_refused: str | None = None  # why git was not run (a link out of .git), if it was not

    @property
    def identity(self) -> str:
        """The string hashed into the repository id."""
        return self.remote_url or str(self.root)

    @property
    def freshness_hint(self) -> str:
        """HEAD sha (+ '-dirty'), or 'worktree' for plain directories."""
        if not self.is_git or not self.head_commit:
            return "worktree"
        return self.head_commit + ("-dirty" if self.dirty else "")


STATUS_ARGS = ("status", "--porcelain=v1", "-z", "--ignore-submodules=all")


def _git(root: Path, *args: str, check: bool = True) -> str | None:
    try:
        done = run_git(root, *args, neutralise_drivers=args[0] == "status")
    except (OSError, subprocess.TimeoutExpired) as e:
        raise WalkError(f"git {args[0]} failed in {root}: {e}") from e
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        if "dubious ownership" in message:
            raise UntrustedRepository(_untrusted_message(root, message))
        if check:
            raise WalkError(f"git {args[0]} failed in {root}: {message}")
        return None
    return done.stdout.decode("utf-8", "surrogateescape")


def discover(path: str | os.PathLike[str]) -> WorkTree:
    """Resolve a path to its work tree root and read git's facts about it."""
    candidate = Path(path).expanduser()
    if not candidate.exists():
        raise WalkError(f"path {str(candidate)!r} does not exist")
    if not candidate.is_dir():
        raise WalkError(f"path {str(candidate)!r} is not a directory")
    candidate = candidate.resolve()
    top = _git(candidate, "rev-parse", "--show-toplevel", check=False)
    if top is None or Path(top.strip()).resolve() != candidate:
        # Not a git work tree, or a subdirectory of one: index it as a plain directory
        # only when it is not inside a work tree; a subdirectory is indexed via its root.
        if top is None:
            return WorkTree(root=candidate, is_git=False)
        candidate = _own_toplevel(candidate, Path(top.strip()).resolve())
    link_out = git_dir_link_out(candidate)
    if link_out is not None:
        refused = f"{link_out} is a symbolic link out of the repository; read without git"
        return WorkTree(root=candidate, is_git=False, git_refused=refused)
    remote = _git(candidate, "config", "--get", "remote.origin.url", check=False)
    head = _git(candidate, "rev-parse", "--verify", "-q", "HEAD", check=False)
    branch = _git(candidate, "symbolic-ref", "-q", "--short", "HEAD", check=False)
    origin_head = _git(
        candidate, "symbolic-ref", "-q", "--short", "refs/remotes/origin/HEAD", check=False
    )
    status = _git(candidate, *STATUS_ARGS, "--untracked-files=normal")
    listed = _status_paths(status or "")
    refs = _refs(candidate, branch.strip() if branch else None)
    default_branch = None
    if origin_head and origin_head.strip():
        default_branch = origin_head.strip().split("/", 1)[-1]
    elif branch:
        default_branch = branch.strip()
    return WorkTree(
        root=candidate,
        is_git=True,
        remote_url=normalize_remote_url(remote) if remote else None,
        head_commit=head.strip() if head else None,
        head_ref=branch.strip() if branch else None,
        default_branch=default_branch,
        dirty=bool(status),
        refs=refs,
        dirty_paths=listed,
    )


STATUS_PATHS_AT_MOST = 256
"""Changed paths re-read by one path-limited ``git status``; more re-read the whole tree."""


def recheck_dirty(tree: WorkTree, changed: list[str]) -> WorkTree:
    """
    ``tree`` after its files at ``changed`` were edited or deleted: whether it is still
    dirty, asking ``git status`` about those paths alone (an edit undone makes it clean
    again), or about the whole tree when its listing cannot be updated path by path. Dirty
    when git cannot tell.
    """
    if not tree.is_git or not tree.head_commit:
        return tree
    listed = tree.dirty_paths
    if listed is None or len(changed) > STATUS_PATHS_AT_MOST:
        try:
            status = _git(tree.root, *STATUS_ARGS, "--untracked-files=normal")
        except WalkError:
            return evolve(tree, dirty=True, dirty_paths=None)
        listed = _status_paths(status or "")
        return evolve(tree, dirty=bool(status), dirty_paths=listed)
    # an untracked directory listed whole may hold a changed path: ask about all of it again
    asked = set(changed)
    asked.update(entry for entry in listed if entry.endswith("/") and _holds(entry, changed))
    pathspecs = [f":(literal){path}" for path in sorted(asked)]
    try:
        status = _git(tree.root, *STATUS_ARGS, "--untracked-files=normal", "--", *pathspecs)
    except WalkError:
        return evolve(tree, dirty=True, dirty_paths=None)
    found = _status_paths(status or "")
    if found is None:
        return evolve(tree, dirty=True, dirty_paths=None)
    listed = frozenset(entry for entry in listed if entry not in asked) | found
    return evolve(tree, dirty=bool(listed), dirty_paths=listed)


def _holds(directory: str, paths: list[str]) -> bool:
    return any(path.startswith(directory) for path in paths)


def _status_paths(status: str) -> frozenset[str] | None:
    """The paths of ``git status --porcelain=v1 -z`` output; None if it lists a rename or a
    copy (two paths in one entry)."""
    paths = set()
    for entry in status.split("\0"):
        if len(entry) < 4:
            continue
        if "R" in entry[:2] or "C" in entry[:2]:
            return None
        paths.add(entry[3:])
    return frozenset(paths)


def _own_toplevel(candidate: Path, toplevel: Path) -> Path:
    """
    The work tree root git names for ``candidate``, when it is ``candidate`` or an ancestor
    holding the ``.git`` entry; a ``core.worktree`` naming any other directory is refused.
    """
    if candidate.is_relative_to(toplevel) and os.path.lexists(toplevel / ".git"):
        return toplevel
    raise WalkError(
        f"git names {str(toplevel)!r} as the work tree of {str(candidate)!r} (core.worktree"
        " in its configuration): only a directory holding its own .git is indexed"
    )


def _refs(root: Path, head_branch: str | None) -> tuple[GitRef, ...]:
    listing = _git(
        root,
        "for-each-ref",
        "--format=%(refname)%00%(objectname)%00%(*objectname)",
        "refs/heads",
        "refs/tags",
        "refs/remotes",
        check=False,
    )
    refs = []
    for line in (listing or "").splitlines():
        name, sha, peeled = [*line.split("\0"), "", ""][:3]
        if name.startswith("refs/heads/"):
            short, kind = name[len("refs/heads/") :], "branch"
        elif name.startswith("refs/tags/"):
            short, kind = name[len("refs/tags/") :], "tag"
        elif name.startswith("refs/remotes/") and not name.endswith("/HEAD"):
            short, kind = name[len("refs/remotes/") :], "remote_branch"
        else:
            continue
        refs.append(GitRef(short, kind, peeled or sha, kind == "branch" and short == head_branch))
    return tuple(refs)


def worktree_digest(path: str | os.PathLike[str]) -> str:
    """A cheap fingerprint of the tree's state (HEAD + porcelain status, or file mtimes)."""
    root = Path(path).expanduser().resolve()
    digest = hashlib.sha256()
    head = _git(root, "rev-parse", "-q", "--verify", "HEAD", check=False)
    if head is not None or _git(root, "rev-parse", "--git-dir", check=False) is not None:
        digest.update((head or "").encode())
        status = _git(root, *STATUS_ARGS, check=False) or ""
        digest.update(status.encode("utf-8", "surrogateescape"))
        # A file edited twice keeps the same status line: fold in the dirty files' mtimes.
        for entry in status.split("\0"):
            if len(entry) > 3:
                try:
                    stat = (root / entry[3:]).stat()
                except OSError:
                    continue
                digest.update(f"{entry[3:]}:{stat.st_mtime_ns}:{stat.st_size}".encode())
        return digest.hexdigest()
    for walked in walk_files(WorkTree(root=root, is_git=False)):
        digest.update(f"{walked.relative_path}:{walked.mtime_ns}:{walked.byte_size}".encode())
    return digest.hexdigest()


class _SkipRules:
    """
    Eshu's default skip dirs and suffixes, with one exception: a directory that is a Python
    package (has ``__init__.py``) is source, even when named like a tool directory
    (``local``, ``build``, ``bin``...).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._packages: dict[str, bool] = {}

    def is_skipped_dir(self, relative_dir: str) -> bool:
        """Whether a directory is one of Eshu's skip dirs (and not a Python package)."""
        name = relative_dir.rsplit("/", 1)[-1]
        if name not in SKIP_DIRS:
            return False
        if relative_dir not in self._packages:
            self._packages[relative_dir] = (self.root / relative_dir / "__init__.py").is_file()
        return not self._packages[relative_dir]

    def is_skipped(self, relative_path: str) -> bool:
        """Whether a path lies under a skipped directory or has a skipped suffix."""
        parts = relative_path.split("/")
        for depth in range(1, len(parts)):
            if parts[depth - 1] in SKIP_DIRS and self.is_skipped_dir("/".join(parts[:depth])):
                return True
        return parts[-1].lower().endswith(SKIP_SUFFIXES)


class _InsideCheck:
    """Whether a path's directory lies inside the root once symbolic links are resolved."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._directories: dict[str, bool] = {"": True}

    def directory_inside(self, relative_dir: str) -> bool:
        """Whether ``root/relative_dir`` resolves inside the root (cached per directory)."""
        known = self._directories.get(relative_dir)
        if known is None:
            real = Path(os.path.realpath(self.root / relative_dir))
            known = self._directories[relative_dir] = real.is_relative_to(self.root)
        return known


def _stat_inside(root: Path, relative_path: str, inside: _InsideCheck) -> WalkedFile | None:
    """
    The file's stat, when it is a regular file inside the root: a symbolic link (the file
    itself or a directory on its way) resolving outside the root is not recorded. A kept
    link is recorded by its target's path, which is read without following links again.
    """
    if not inside.directory_inside(relative_path.rpartition("/")[0]):
        return None
    absolute = root / relative_path
    try:
        lstat = absolute.lstat()
    except OSError:
        return None  # tracked but deleted from the work tree
    if stat_module.S_ISLNK(lstat.st_mode):
        try:
            target = absolute.resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        if not target.is_relative_to(root) or not target.is_file():
            return None
        stat = target.stat()
        absolute = target
    elif stat_module.S_ISREG(lstat.st_mode):
        stat = lstat
    else:
        return None
    return WalkedFile(relative_path, str(absolute), stat.st_size, stat.st_mtime_ns)


def is_storable_name(relative_path: str) -> bool:
    """Whether a path is valid UTF-8 (the index stores text; other names are skipped)."""
    if relative_path.isascii():
        return True
    try:
        relative_path.encode("utf-8")
    except UnicodeEncodeError:  # surrogate escapes: bytes that are not UTF-8
        return False
    return True


@frozen
class Walk:
    """The files to index, and the names skipped because they are not valid UTF-8."""

    files: list[WalkedFile]
    undecodable: tuple[str, ...] = ()

    def undecodable_example(self) -> str:
        """The first skipped name, printable (its bad bytes as ``\\xNN``)."""
        if not self.undecodable:
            return ""
        raw = self.undecodable[0].encode("utf-8", "surrogateescape")
        return raw.decode("utf-8", "backslashreplace")


def walk(tree: WorkTree, exclude: frozenset[str] = frozenset()) -> Walk:
    """The files to index, sorted by relative path (``exclude``: absolute paths to leave out)."""
    paths = _git_paths(tree.root) if tree.is_git else _plain_paths(tree.root)
    kept = []
    undecodable = []
    rules = _SkipRules(tree.root)
    inside = _InsideCheck(tree.root)
    for relative in sorted(set(paths)):
        if not is_storable_name(relative):
            undecodable.append(relative)
            continue
        if rules.is_skipped(relative):
            continue
        walked = _stat_inside(tree.root, relative, inside)
        if walked is not None and walked.absolute_path not in exclude:
            kept.append(walked)
    return Walk(kept, tuple(undecodable))


def walk_files(tree: WorkTree, exclude: frozenset[str] = frozenset()) -> list[WalkedFile]:
    """The files to index, sorted by relative path (``exclude``: absolute paths to leave out)."""
    return walk(tree, exclude).files


def _git_paths(root: Path) -> list[str]:
    listing = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    candidates = [p for p in (listing or "").split("\0") if p]
    if not any(p == ".eshuignore" or p.endswith("/.eshuignore") for p in candidates):
        return candidates
    ignored_listing = _git(
        root,
        "ls-files",
        "-z",
        "--cached",
        "--others",
        "--ignored",
        "--exclude-per-directory=.eshuignore",
    )
    ignored = {p for p in (ignored_listing or "").split("\0") if p}
    return [p for p in candidates if p not in ignored]


def _plain_paths(root: Path) -> list[str]:
    found = []
    skip = _SkipRules(root)
    rules_by_dir: dict[str, list] = {}
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        relative_dir = os.path.relpath(directory, root)
        relative_dir = "" if relative_dir == "." else relative_dir.replace(os.sep, "/")
        parent = relative_dir.rsplit("/", 1)[0] if "/" in relative_dir else ""
        inherited = rules_by_dir.get(parent, []) if relative_dir else []
        rules = inherited + load_rules(root, relative_dir)
        rules_by_dir[relative_dir] = rules
        prefix = f"{relative_dir}/" if relative_dir else ""
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not skip.is_skipped_dir(prefix + d)
            and not os.path.islink(os.path.join(directory, d))
            and not is_ignored(rules, prefix + d, is_dir=True)
        )
        for name in filenames:
            relative = prefix + name
            if not is_ignored(rules, relative, is_dir=False):
                found.append(relative)
    return found
