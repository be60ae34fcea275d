"""pytest plugin embedded in dialogfarm: per-test runtime call graph.

Loaded with ``-p dialogfarm_tracer``; configured by environment:
DIALOGFARM_TRACE_ROOT (project root), DIALOGFARM_TRACE_OUT (JSON result),
DIALOGFARM_TRACE_CALLS (0: record outcomes only).

A node is a function or method of the project that is not nested in another
function; nested functions, lambdas, comprehensions and generators belong to
the node that encloses them. Module-level code and class bodies are barriers:
calls made while a project module is being imported are not attributed to
the running test (they are recorded as init nodes). Threads are traced: a
thread's calls are attributed to the node that started the thread.
"""
import ast
import json
import os
import sys
import threading

import pytest

ROOT = os.path.realpath(os.environ.get("DIALOGFARM_TRACE_ROOT", os.getcwd()))
OUT = os.environ.get("DIALOGFARM_TRACE_OUT")
CALLS = os.environ.get("DIALOGFARM_TRACE_CALLS", "1") != "0"
SKIP_DIRS = {"site-packages", "dist-packages", ".venv", "venv", ".tox", "build", "__pycache__", ".git"}
TEST_DIRS = {"test", "tests", "testing"}

_files = {}  # co_filename -> (relpath, is_test) or None
_ranges = {}  # relpath -> [(start, end, qualname)] outermost functions
_nodes = {}
_init_nodes = set()
_tests = {}
_current = {"test": None}
_lock = threading.Lock()


def _classify(filename):
    hit = _files.get(filename, False)
    if hit is not False:
        return hit
    res = None
    if filename.endswith(".py") and not filename.startswith("<"):
        real = os.path.realpath(filename)
        if real.startswith(ROOT + os.sep):
            rel = os.path.relpath(real, ROOT).replace(os.sep, "/")
            parts = rel.split("/")
            if not SKIP_DIRS.intersection(parts[:-1]):
                base = parts[-1]
                is_test = (base.startswith("test_") or base.endswith("_test.py") or base == "conftest.py"
                           or bool(TEST_DIRS.intersection(parts[:-1])))
                res = (rel, is_test)
    _files[filename] = res
    return res


def _functions(rel):
    got = _ranges.get(rel)
    if got is not None:
        return got
    out = []
    try:
        with open(os.path.join(ROOT, rel), "rb") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        tree = None

    def visit(body, prefix):
        for n in body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = n.decorator_list[0].lineno if n.decorator_list else n.lineno
                out.append((start, n.end_lineno, prefix + n.name))
            elif isinstance(n, ast.ClassDef):
                visit(n.body, prefix + n.name + ".")

    if tree is not None:
        visit(tree.body, "")
    _ranges[rel] = out
    return out


_code_cache = {}


def _node_of(code):
    """(node id or None, is_test, is_module_level) for a project code object."""
    try:
        return _code_cache[code]
    except KeyError:
        pass
    res = _node_of_uncached(code)
    _code_cache[code] = res
    return res


def _node_of_uncached(code):
    c = _classify(code.co_filename)
    if c is None:
        return None
    rel, is_test = c
    line = code.co_firstlineno
    for start, end, qual in _functions(rel):
        if start <= line <= end:
            nid = "%s:%d:%s" % (rel, start, qual)
            if not is_test and nid not in _nodes:
                _nodes[nid] = {"file": rel, "line": start, "end_line": end, "name": qual}
            return (nid, is_test, False)
    # module code is a barrier; other code outside every def (a def inside
    # a module-level if, a class body) is transparent
    return (None, is_test, code.co_name == "<module>")


def _caller(frame, callee):
    """Walk up from frame's parent; return ('edge', node) / ('test', None) /
    ('import', None) / ('none', None)."""
    under_import = False
    found = None
    f = frame.f_back
    while f is not None:
        info = _node_of(f.f_code)
        if info is not None:
            nid, is_test, module_level = info
            if module_level:
                under_import = True
                break
            if found is None and (is_test or nid is not None):
                found = ("test", None) if is_test else ("node", nid)
        f = f.f_back
    if under_import:
        return ("import", None)
    if found is None:
        parent = getattr(threading.current_thread(), "_dialogfarm_parent", None)
        if parent is not None:
            return parent
        return ("none", None)
    return found


def _on_call(frame):
    info = _node_of(frame.f_code)
    if info is None:
        return
    nid, is_test, module_level = info
    if is_test or module_level or nid is None:
        return
    kind, parent = _caller(frame, nid)
    with _lock:
        if kind == "import":
            _init_nodes.add(nid)
            return
        test = _current["test"]
        if test is None:
            if kind == "none":
                _init_nodes.add(nid)
            return
        rec = _tests[test]
        rec["covers"].add(nid)
        if kind == "test":
            rec["calls"].add(nid)
        elif kind == "node" and parent != nid:
            rec["edges"].add((parent, nid))


def _profile(frame, event, arg):
    if event == "call":
        _on_call(frame)


_orig_start = threading.Thread.start


def _start(self, *a, **kw):
    f = sys._getframe(1)
    parent = None
    while f is not None:
        info = _node_of(f.f_code)
        if info is not None and (info[0] is not None or info[1] or info[2]):
            nid, is_test, module_level = info
            parent = ("import", None) if module_level else (("test", None) if is_test else ("node", nid))
            break
        f = f.f_back
    self._dialogfarm_parent = parent
    return _orig_start(self, *a, **kw)


def _install():
    if not CALLS:
        return
    threading.Thread.start = _start
    mon = getattr(sys, "monitoring", None)
    if mon is not None:
        tool = mon.PROFILER_ID
        mon.use_tool_id(tool, "dialogfarm")

        def on_start(code, offset):
            _on_call(sys._getframe(1))

        mon.register_callback(tool, mon.events.PY_START, on_start)
        mon.set_events(tool, mon.events.PY_START)
    else:
        threading.setprofile(_profile)
        sys.setprofile(_profile)


def _uninstall():
    mon = getattr(sys, "monitoring", None)
    if not CALLS:
        return
    if mon is not None:
        mon.set_events(mon.PROFILER_ID, 0)
        mon.free_tool_id(mon.PROFILER_ID)
    else:
        sys.setprofile(None)
        threading.setprofile(None)
    threading.Thread.start = _orig_start


_install()


def _record(nodeid):
    return _tests.setdefault(nodeid, {"outcome": "passed", "covers": set(), "calls": set(), "edges": set(), "longrepr": ""})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    with _lock:
        _record(item.nodeid)
        _current["test"] = item.nodeid
    try:
        yield
    finally:
        with _lock:
            _current["test"] = None


def pytest_runtest_logreport(report):
    rec = _record(report.nodeid)
    if report.failed:
        rec["outcome"] = "failed"
        rec["longrepr"] += str(report.longrepr)[-3000:]
    elif report.skipped and rec["outcome"] == "passed":
        rec["outcome"] = "skipped"


def pytest_collectreport(report):
    if report.failed:
        rec = _record("<collect>:" + report.nodeid)
        rec["outcome"] = "error"
        rec["longrepr"] += str(report.longrepr)[-3000:]


def pytest_sessionfinish(session, exitstatus):
    _uninstall()
    if not OUT:
        return
    tests = {}
    for k, r in _tests.items():
        tests[k] = {"outcome": r["outcome"], "covers": sorted(r["covers"]), "calls": sorted(r["calls"]),
                    "edges": sorted([list(e) for e in r["edges"]]), "longrepr": r["longrepr"]}
    with open(OUT, "w") as f:
        json.dump({"python": sys.version.split()[0], "nodes": _nodes, "init_nodes": sorted(_init_nodes), "tests": tests}, f)
