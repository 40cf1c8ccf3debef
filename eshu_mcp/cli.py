"""
The ``eshu-mcp`` command.

* ``eshu-mcp index PATH... [--db FILE]``: build or refresh the embedded index.
* ``eshu-mcp stdio [--repo PATH ...]``: serve one MCP client on stdin/stdout.
* ``eshu-mcp call [options] TOOL [JSON-ARGS]``: run one tool in process, print its result.
* ``eshu-mcp version``.

``twistd -n eshu-mcp ...`` runs the HTTP daemon.
"""

import json
import os
import sys

from twisted.python import usage

from eshu_mcp import __version__

USAGE = """usage: eshu-mcp COMMAND [options]

commands:
  index PATH... [--db FILE] [--status]   build or refresh the embedded index
  index --forget REPO | --prune          remove a repository, or those whose directory is gone
  index --rebuild [PATH...]              replace the index file (even a damaged one)
  stdio [--repo PATH ...] [options]      serve one MCP client on stdin/stdout
  call [options] TOOL [JSON-ARGS]        run one tool in process and print the result
  version                                print the version

The HTTP daemon runs under twistd: twistd -n eshu-mcp --repo PATH
Run 'eshu-mcp COMMAND --help' for a command's options.
"""


class StdioOptions:
    """Lazily built so ``eshu-mcp version`` imports nothing heavy."""

    @staticmethod
    def make():
        from eshu_mcp.tap import QueryOptions

        class Options(QueryOptions):
            synopsis = "[--repo PATH ...] [--db FILE] [options]"
            longdesc = "Serve Eshu's tools to one MCP client over stdin/stdout."

        return Options()


class CallOptions:
    """Options of ``eshu-mcp call``."""

    @staticmethod
    def make():
        from eshu_mcp.tap import QueryOptions

        class Options(QueryOptions):
            synopsis = "[--db FILE] [options] TOOL [JSON-ARGS]"
            longdesc = (
                "Run one tool in process and print its MCP result. Any tool the backend "
                "answers can be called ('available'), unless --toolsets narrows it."
            )

            def postOptions(self):
                super().postOptions()
                self["no-watch"] = True  # one call: the build at start is all it needs
                self["watch"] = False
                if self["toolsets"] is None:
                    self["toolsets"] = "available"

            def parseArgs(self, tool, arguments="{}"):
                self["tool"] = tool
                try:
                    self["arguments"] = json.loads(arguments)
                except ValueError as error:
                    raise usage.UsageError(f"JSON-ARGS is not JSON: {error}") from None
                if not isinstance(self["arguments"], dict):
                    raise usage.UsageError("JSON-ARGS must be a JSON object")

        return Options()


def _parse(options, argv: list[str], command: str):
    try:
        options.parseOptions(argv)
    except usage.UsageError as error:
        print(f"eshu-mcp {command}: {error}", file=sys.stderr)
        print(f"Run 'eshu-mcp {command} --help' for usage.", file=sys.stderr)
        raise SystemExit(2) from None
    return options


def _start_logging(level_name: str = "info") -> None:
    from twisted.logger import (
        FilteringLogObserver,
        LogLevel,
        LogLevelFilterPredicate,
        globalLogBeginner,
        textFileLogObserver,
    )

    predicate = LogLevelFilterPredicate(defaultLogLevel=LogLevel.levelWithName(level_name))
    observer = FilteringLogObserver(textFileLogObserver(sys.stderr), [predicate])
    globalLogBeginner.beginLoggingTo([observer], redirectStandardIO=False)


def _build_stack(options, reactor):
    from attrs import evolve
    from twisted.application.service import MultiService

    from eshu_mcp.service import (
        AnswerCallsAtShutdown,
        LogBridgeService,
        build_backend,
        build_mcp_server,
    )

    parent = MultiService()
    settings = options.backend_settings()
    if options.get("call-home"):
        settings = evolve(settings, home_paths=options["call-home"])
    backend = build_backend(settings, reactor=reactor, parent=parent)
    try:
        server = build_mcp_server(
            backend.resource,
            clock=reactor,
            settings=options.server_settings(),
            backend=backend,
        )
    except ValueError as error:
        raise usage.UsageError(str(error)) from None
    LogBridgeService(server, reactor).setServiceParent(parent)
    AnswerCallsAtShutdown(server).setServiceParent(parent)
    return parent, server


def run_stdio(argv: list[str]) -> int:
    """Serve one client on this process's stdin and stdout until end of input."""
    options = _parse(StdioOptions.make(), argv, "stdio")
    _start_logging()
    from twisted.internet import reactor, stdio
    from twisted.logger import Logger

    from eshu_mcp.transport.stdio import StdioTransport

    try:
        parent, server = _build_stack(options, reactor)
    except usage.UsageError as error:
        print(f"eshu-mcp stdio: {error}", file=sys.stderr)
        return 2
    Logger().info("mcp server started on stdio with {tools} tools", tools=len(server.catalog.tools))
    transport = StdioTransport(server)
    transport.done.addCallback(lambda _: reactor.stop())
    reactor.callWhenRunning(parent.startService)
    reactor.addSystemEventTrigger("before", "shutdown", parent.stopService)
    stdio.StandardIO(transport, reactor=reactor)
    reactor.run()
    return 0


def repositories_here(db_path: str, here: str) -> list[tuple[str, str]]:
    """(name, root) of the indexed repositories that hold the directory ``here``."""
    from eshu_mcp.query.local.index.store.database import IndexUnavailable, open_reader

    try:
        conn = open_reader(db_path)
    except (IndexUnavailable, OSError):
        return []
    try:
        rows = conn.execute("SELECT name, local_path FROM repositories ORDER BY name").fetchall()
    except Exception:
        return []
    finally:
        conn.close()
    real = os.path.realpath(here)
    found = []
    for name, local_path in rows:
        root = os.path.realpath(local_path or "")
        if local_path and (real == root or real.startswith(root.rstrip(os.sep) + os.sep)):
            found.append((name, root))
    return found


def _call_scope(options) -> str | None:
    """
    Which repositories ``eshu-mcp call`` answers un-scoped questions from: the one it runs
    in (when indexed), else every one; returns the sentence saying so on stderr.
    """
    if options["repos"] or options["whole-index"] or options["backend"] != "local":
        return None
    here = repositories_here(options["db"], os.getcwd())
    if not here:
        return "answering from every repository in the index (no indexed repository here)"
    options["call-home"] = tuple(root for _, root in here)
    names = ", ".join(name for name, _ in here)
    return f"answering for the repository here: {names} (--whole-index for every repository)"


def print_or_lose_reader(text: str) -> bool:
    """
    Print ``text`` to stdout; False when the reader went away (``| head``). Standard output
    then points at /dev/null, so the interpreter's last flush cannot fail or block either.
    """
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return False
    return True


def run_call(argv: list[str]) -> int:
    """Run one tool in process and print the MCP tool result as JSON."""
    options = _parse(CallOptions.make(), argv, "call")
    scope = _call_scope(options)
    if scope:
        print(f"eshu-mcp call: {scope}", file=sys.stderr)
    from twisted.internet import defer, task

    from eshu_mcp.encoding import dumps

    exit_code = [0]

    def main(reactor):
        parent, server = _build_stack(options, reactor)
        parent.startService()
        tool = server.catalog.get(options["tool"])
        if tool is None:
            print(f"eshu-mcp call: unknown tool {options['tool']!r}", file=sys.stderr)
            exit_code[0] = 2
            return defer.maybeDeferred(parent.stopService)
        call = server.dispatcher.call(options["tool"], options["arguments"], None)

        def show(result):
            exit_code[0] = 1 if result.get("isError") else 0
            if not print_or_lose_reader(dumps(result, escape_html=False)):
                exit_code[0] = 141  # as a shell reports a writer its reader left (SIGPIPE)

        def stop(passthrough):
            # always: a reader pool left running keeps the process alive after react
            stopping = defer.maybeDeferred(parent.stopService)
            return stopping.addBoth(lambda _: passthrough)

        return call.addCallback(show).addBoth(stop)

    try:
        task.react(lambda reactor: main(reactor))
    except SystemExit as stop:
        if stop.code not in (0, None):
            return int(stop.code)
    return exit_code[0]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``eshu-mcp`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE, end="")
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command in ("version", "--version", "-v"):
        print(f"eshu-mcp-server {__version__}")
        return 0
    if command == "index":
        try:  # Ctrl-C while importing: the same quiet exit as once the command runs
            from eshu_mcp.query.local.index.build.command import main as index_main
        except KeyboardInterrupt:
            print("eshu-mcp index: stopped by SIGINT", file=sys.stderr)
            return 130
        return index_main(rest)
    if command == "stdio":
        return run_stdio(rest)
    if command == "call":
        return run_call(rest)
    print(f"eshu-mcp: unknown command {command!r}\n", file=sys.stderr)
    print(USAGE, end="", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
