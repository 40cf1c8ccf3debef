"""
Runtime call truth for scripts/bench_callgraph.py: which definition really runs at a call site.

Run as a child process (``python callgraph_trace.py OUT.json SECONDS MODULE...``) it installs
a ``sys.setprofile`` hook, runs the given Twisted test modules with trial, and writes every
observed (call-site file, line) -> callee triple whose call site lies in the twisted package.
A callee is ``["py", file, first_line, name]`` for a Python function (``first_line`` is
``co_firstlineno``: the first decorator's line for a decorated function), ``["new", module,
qualname, name]`` for the class of the instance whose ``__init__`` ran (besides the
``__init__`` itself), or ``["c", "", 0, name]`` for a builtin.
A call that reaches its callee through a decorator wrapper (a nested ``*args, **kwargs``
function) is also recorded against the wrapper's own call site, flagged ``via_wrapper``.

A SIGALRM after SECONDS stops the run and still writes what was seen, so the run is bounded.
The parent (:func:`load_trace`) caches the result per Twisted version and module list.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

TRACE_FORMAT = 2
CO_VARARGS, CO_VARKEYWORDS = 0x04, 0x08


def _record(package_dir: str, seen: set, via: set):
    """The profile hook: fills ``seen`` (direct calls) and ``via`` (through a wrapper)."""
    prefix = package_dir.rstrip(os.sep) + os.sep
    wrapper_flags = CO_VARARGS | CO_VARKEYWORDS

    def callees(frame):
        code = frame.f_code
        found = [("py", code.co_filename, code.co_firstlineno, code.co_name)]
        if code.co_name == "__init__":
            self = frame.f_locals.get("self")
            if self is not None:
                cls = type(self)
                found.append(("new", cls.__module__, cls.__qualname__, cls.__name__))
        return found

    def hook(frame, event, arg):
        if event == "call":
            back = frame.f_back
            if back is None:
                return
            site_file = back.f_code.co_filename
            if site_file.startswith(prefix):
                for callee in callees(frame):
                    seen.add((site_file, back.f_lineno, callee))
            bcode = back.f_code
            if bcode.co_flags & wrapper_flags == wrapper_flags and "<locals>" in bcode.co_qualname:
                outer = back.f_back
                if outer is not None and outer.f_code.co_filename.startswith(prefix):
                    for callee in callees(frame):
                        via.add((outer.f_code.co_filename, outer.f_lineno, callee))
        elif event == "c_call" and frame.f_code.co_filename.startswith(prefix):
            name = getattr(arg, "__name__", "")
            seen.add((frame.f_code.co_filename, frame.f_lineno, ("c", "", 0, name)))

    return hook


def child_main(out: str, seconds: float, modules: list[str]) -> None:
    """Run trial on ``modules`` under the hook; write the trace even when time runs out."""
    from twisted.scripts import trial

    import twisted

    package_dir = os.path.dirname(twisted.__file__)
    seen: set = set()
    via: set = set()
    state = {"timed_out": False}

    def dump(*_):
        sys.setprofile(None)
        rows = [[f, line, list(callee), False] for f, line, callee in seen]
        rows += [[f, line, list(callee), True] for f, line, callee in via]
        payload = {
            "format": TRACE_FORMAT,
            "twisted_version": twisted.__version__,
            "package_dir": package_dir,
            "modules": modules,
            "timed_out": state["timed_out"],
            "calls": rows,
        }
        Path(out).write_text(json.dumps(payload))

    def alarm(*_):
        sys.setprofile(None)
        state["timed_out"] = True
        dump()
        os._exit(0)

    signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    sys.argv = ["trial", "--reporter=text", *modules]
    sys.setprofile(_record(package_dir, seen, via))
    try:
        trial.run()
    except SystemExit:
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        dump()


def trace_key(twisted_version: str, modules: list[str], seconds: float) -> str:
    digest = hashlib.sha256(json.dumps([TRACE_FORMAT, modules, seconds]).encode()).hexdigest()
    return f"trace-{twisted_version}-py{sys.version_info[0]}{sys.version_info[1]}-{digest[:12]}"


def load_trace(
    cache_dir: Path, twisted_version: str, modules: list[str], seconds: float, log=print
) -> dict:
    """The cached trace for this Twisted version and module list, running the tests if needed."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / (trace_key(twisted_version, modules, seconds) + ".json")
    if path.exists():
        log(f"runtime trace: cached {path}")
        return json.loads(path.read_text())
    log(f"runtime trace: running {len(modules)} test modules (at most {seconds:.0f} s) ...")
    partial = path.with_suffix(f".{os.getpid()}.partial")
    command = [sys.executable, __file__, str(partial), str(seconds), *modules]
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    with open(cache_dir / "trial.log", "wb") as output:
        subprocess.run(
            command,
            cwd=cache_dir,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            timeout=seconds + 120,
            check=False,
        )
    if not partial.exists():
        raise RuntimeError(f"the traced test run wrote nothing: see {cache_dir / 'trial.log'}")
    trace = json.loads(partial.read_text())
    partial.replace(path)
    return trace


if __name__ == "__main__":
    child_main(sys.argv[1], float(sys.argv[2]), sys.argv[3:])
