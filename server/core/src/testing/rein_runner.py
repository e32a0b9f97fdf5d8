"""Rein's verifier runs a project's unittest or pytest tests through this
file, as `python3 -I rein_runner.py unittest|pytest <the runner's
arguments>` from the workspace root, the file itself in a directory made for
the run alone, outside the workspace (and the examples files document, as
`rein_runner.py examples <files>`: each doctest `>>>` example a test). It
makes sure that:

- the runner is the installed one: it is imported before anything of the
  workspace is on sys.path (`-I` keeps the current directory, the script's
  and PYTHONPATH off it; PYTHONPATH and the user's site directory are put
  back for the runner, minus what lies in the workspace), then sys.path is
  what `python3 -m <runner>` has (the workspace first); bytecode caches in
  the workspace are not read from then on;
- the result goes through a file, report.json next to this one, written
  only once the runner has finished: lines the code under test prints prove
  nothing, and a process ended early (os._exit) leaves no report. Its first
  line is the token Rein left in the file `token`, read and deleted here
  before any code of the workspace runs (and $REIN_RUN_DIR is taken out of
  the environment): a report the code under test writes does not count;
- the test framework stays as it was: runner objects, sys.exit, os._exit
  and builtins found replaced at the end are named in the report;
- for each test, where the code that ran is defined, and which files of the
  workspace the run imported (Rein scans them).

Rein reads the report in server/core/src/testing/reporter.rs. Python 3.8+.
"""

import os
import sys

_KIND = sys.argv[1] if len(sys.argv) > 1 else ""
_ARGS = sys.argv[2:]
_HERE = os.path.dirname(os.path.abspath(__file__))
_CWD = os.getcwd()
_ROOT = os.path.realpath(_CWD)
os.environ.pop("REIN_RUN_DIR", None)


def _take_token():
    path = os.path.join(_HERE, "token")
    try:
        with open(path, encoding="utf-8") as f:
            token = f.read().strip()
        os.remove(path)
    except OSError:
        return ""
    return token


import builtins  # noqa: E402
import types  # noqa: E402

# What the reporter itself uses, taken before any code of the workspace runs.
_open = open
_getattr = getattr
_isinstance = isinstance
_replace = os.replace
_realpath = os.path.realpath
_relpath = os.path.relpath
_join = os.path.join
_sep = os.sep
_sys_exit = sys.exit
_MISSING = object()
_CALLABLES = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    type,
    staticmethod,
    classmethod,
    property,
)
_MAX_FILES = 5000


def _dumps(value):
    """JSON, written here: importing `json` before the tests would take a
    project's own `json.py` from them (the runner modules are the only ones
    loaded ahead)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if _isinstance(value, int):
        return str(int(value))
    if _isinstance(value, dict):
        return "{" + ",".join(_dumps(str(k)) + ":" + _dumps(v) for k, v in value.items()) + "}"
    if _isinstance(value, (list, tuple)):
        return "[" + ",".join(_dumps(v) for v in value) + "]"
    out = ['"']
    for ch in str(value):
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif code < 0x20:
            out.append("\\u%04x" % code)
        elif 0xD800 <= code <= 0xDFFF:
            # A lone surrogate (an undecodable file name) is not JSON.
            out.append("\ufffd")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _report_writer(token):
    """Writes the report, its first line the token (kept here only)."""

    def write(report):
        part = _join(_HERE, "report.json.part")
        with _open(part, "w", encoding="utf-8") as f:
            f.write(token + "\n" + _dumps(report))
        _replace(part, _join(_HERE, "report.json"))

    return write


_write_report = _report_writer(_take_token())
del _take_token


def _inside(path):
    try:
        real = _realpath(path)
    except (OSError, ValueError, TypeError):
        return False
    return real == _ROOT or real.startswith(_ROOT + _sep)


def _shown(path):
    """A path as Rein compares it: workspace-relative, else absolute."""
    real = _realpath(path)
    if real == _ROOT or real.startswith(_ROOT + _sep):
        return _relpath(real, _ROOT).replace(_sep, "/")
    return real


def _unique(paths):
    seen = set()
    out = []
    for p in paths:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


# ---------------------------------------------------------------------------
# sys.path: the runner from outside the workspace, then the usual order.

_BASE = list(sys.path)
# Site directories in the workspace (a virtualenv there): their .pth files
# ran before this file.
_SITE_DIRS_INSIDE = [
    p for p in _BASE if os.path.basename(p) in ("site-packages", "dist-packages") and _inside(p)
]
_PYTHONPATH = [
    os.path.abspath(p)
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if p
]
_USER_SITE = []
if not os.environ.get("PYTHONNOUSERSITE"):
    try:
        import site

        _user = site.getusersitepackages()
        if _user and os.path.isdir(_user):
            _USER_SITE = [_user]
    except Exception:  # noqa: BLE001 - no user site, then
        pass

sys.path[:] = [
    p for p in _unique(_BASE + _PYTHONPATH + _USER_SITE) if not _inside(p)
]
for _dir in _USER_SITE:
    if not _inside(_dir):
        # Its .pth files, as `site` does without -I.
        site.addsitedir(_dir)
sys.path[:] = [p for p in sys.path if not _inside(p)]

import unittest  # noqa: E402
import unittest.case  # noqa: E402
import unittest.loader  # noqa: E402
import unittest.main  # noqa: E402
import unittest.result  # noqa: E402
import unittest.runner  # noqa: E402
import unittest.signals  # noqa: E402
import unittest.suite  # noqa: E402
import unittest.util  # noqa: E402

_RUNNER_MODULES = [
    "unittest",
    "unittest.case",
    "unittest.loader",
    "unittest.main",
    "unittest.result",
    "unittest.runner",
    "unittest.signals",
    "unittest.suite",
    "unittest.util",
]

if _KIND == "pytest":
    try:
        import pytest
        import _pytest  # noqa: F401
        import pluggy  # noqa: F401
    except ImportError as e:
        sys.stderr.write("%s: %s\n" % (sys.executable, e))
        sys.stderr.flush()
        _sys_exit(1)
    for _name in ("iniconfig", "packaging.version", "exceptiongroup", "tomli"):
        try:
            __import__(_name)
        except ImportError:
            pass

if _KIND == "examples":
    # doctest and what it imports (pdb, inspect, difflib…), from outside
    # the workspace like the test runners.
    import ast
    import doctest
    import importlib
    import importlib.util
    import signal

# Whether pytest-xdist is installed (found, not imported: pytest would
# warn that it cannot rewrite a plugin imported before it).
_HAS_XDIST = False
if _KIND == "pytest":
    import importlib.util

    try:
        _HAS_XDIST = importlib.util.find_spec("xdist") is not None
    except (ImportError, ValueError):
        pass

# The usual order now: the workspace first, as `python3 -m` has it.
sys.path[:] = _unique([_CWD] + _PYTHONPATH + _BASE + _USER_SITE + sys.path)
# Bytecode is read and written here from now on, never in the workspace.
sys.pycache_prefix = _join(_HERE, "pycache")


# ---------------------------------------------------------------------------
# What must not change while the tests run.


class _Watch:
    """The runner's functions and classes, sys.exit, os._exit and the
    builtins as they were, to name what was replaced."""

    def __init__(self, modules):
        self.entries = []
        self.classes = []
        for name in modules:
            module = sys.modules.get(name)
            if module is None:
                continue
            self.entries.append(("sys.modules[%r]" % name, sys.modules, name, module, True))
            for attr, value in list(vars(module).items()):
                if _isinstance(value, type) and value.__module__ == name:
                    self.entries.append((name + "." + attr, module, attr, value, False))
                    members = {
                        k: v for k, v in list(vars(value).items()) if _isinstance(v, _CALLABLES)
                    }
                    self.classes.append((name + "." + attr, value, members))
                    for k, v in members.items():
                        self.entries.append(
                            (name + "." + attr + "." + k, value, k, v, True)
                        )
                elif _isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
                    self.entries.append((name + "." + attr, module, attr, value, False))
        self.entries.append(("sys.exit", sys, "exit", sys.exit, False))
        self.entries.append(("os._exit", os, "_exit", os._exit, False))
        for attr, value in list(vars(builtins).items()):
            if attr != "_":
                self.entries.append(("builtins." + attr, builtins, attr, value, False))

    def replaced(self):
        found = []
        for shown, holder, key, value, in_dict in self.entries:
            if in_dict or _isinstance(holder, type):
                now = (holder if _isinstance(holder, dict) else vars(holder)).get(key, _MISSING)
            else:
                now = _getattr(holder, key, _MISSING)
            if now is not value:
                found.append(shown + (" was removed" if now is _MISSING else " was replaced"))
        for shown, cls, members in self.classes:
            for k, v in list(vars(cls).items()):
                if k not in members and _isinstance(v, _CALLABLES):
                    found.append(shown + "." + k + " was added")
        return found


# ---------------------------------------------------------------------------
# The report.


class _Report:
    def __init__(self):
        self.tests = {}
        self.order = []

    def entry(self, cls, name):
        key = (cls, name)
        if key not in self.tests:
            self.tests[key] = {"class": cls, "name": name, "outcome": "running"}
            self.order.append(key)
        return self.tests[key]

    def outcome(self, cls, name, outcome):
        entry = self.entry(cls, name)
        rank = {"running": 0, "passed": 1, "skipped": 2, "failed": 3}
        if rank[outcome] >= rank[entry["outcome"]]:
            entry["outcome"] = outcome

    def write(self, runner, status, watch, plugins, error=None):
        imported = []
        for module in list(sys.modules.values()):
            f = _getattr(module, "__file__", None)
            if _isinstance(f, str) and _inside(f):
                imported.append(_shown(f))
        # The .pth files Python ran at start-up from a site directory in
        # the workspace (a virtualenv there).
        for entry in _SITE_DIRS_INSIDE:
            try:
                names = os.listdir(entry)
            except OSError:
                continue
            imported.extend(_shown(_join(entry, n)) for n in names if n.endswith(".pth"))
        report = {
            "runner": runner,
            "exit_status": status,
            "tests": [self.tests[k] for k in self.order],
            "tampered": watch.replaced() if watch is not None else [],
            "imported": sorted(set(imported))[:_MAX_FILES],
            "plugins": plugins,
        }
        if error:
            report["error"] = error
        _write_report(report)


def _code_of(function):
    """Where a test's code is defined: its file and first line, through
    decorators that keep `__wrapped__`."""
    for _ in range(64):
        function = _getattr(function, "__func__", function)
        inner = _getattr(function, "__wrapped__", None)
        if inner is None:
            break
        function = inner
    code = _getattr(function, "__code__", None)
    if code is None:
        return None, None
    return _shown(code.co_filename), code.co_firstlineno


def _module_file(name):
    module = sys.modules.get(name)
    f = _getattr(module, "__file__", None)
    return _shown(f) if _isinstance(f, str) else None


# ---------------------------------------------------------------------------
# unittest


def _run_unittest():
    report = _Report()

    def ids(test):
        method = _getattr(test, "_testMethodName", None)
        if _isinstance(test, unittest.TestCase) and _isinstance(method, str):
            cls = type(test)
            return cls.__module__ + "." + cls.__qualname__, method
        return "", str(test)

    def started(test):
        cls, name = ids(test)
        entry = report.entry(cls, name)
        method = _getattr(test, "_testMethodName", None)
        if _isinstance(method, str):
            entry["file"], entry["line"] = _code_of(_getattr(test, method, None))
        entry["module_file"] = _module_file(type(test).__module__)

    def ended(test, outcome):
        cls, name = ids(test)
        report.outcome(cls, name, outcome)

    class Result(unittest.TextTestResult):
        def startTest(self, test):
            started(test)
            super().startTest(test)

        def addSuccess(self, test):
            super().addSuccess(test)
            ended(test, "passed")

        def addFailure(self, test, err):
            super().addFailure(test, err)
            ended(test, "failed")

        def addError(self, test, err):
            super().addError(test, err)
            ended(test, "failed")

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            ended(test, "skipped")

        def addExpectedFailure(self, test, err):
            super().addExpectedFailure(test, err)
            ended(test, "skipped")

        def addUnexpectedSuccess(self, test):
            super().addUnexpectedSuccess(test)
            ended(test, "failed")

        def addSubTest(self, test, subtest, err):
            super().addSubTest(test, subtest, err)
            if err is not None:
                ended(test, "failed")

    class Runner(unittest.TextTestRunner):
        resultclass = Result

    watch = _Watch(_RUNNER_MODULES)
    sys.argv[:] = ["python3 -m unittest"] + _ARGS
    error = None
    try:
        program = unittest.main(module=None, argv=sys.argv, testRunner=Runner, exit=False)
        result = program.result
        status = 0 if result.wasSuccessful() else 1
        if sys.version_info >= (3, 12) and result.testsRun == 0 and not result.skipped:
            status = 5
    except SystemExit as e:
        status = e.code if _isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException as e:  # noqa: BLE001 - reported, then re-raised by the exit
        import traceback

        traceback.print_exc()
        status, error = 1, "%s: %s" % (type(e).__name__, e)
    report.write("unittest", status, watch, [], error)
    return status


# ---------------------------------------------------------------------------
# pytest


def _run_pytest():
    results = _Report()
    state = {"watch": None, "plugins": []}

    def mangled(nodeid):
        # As pytest's JUnit XML names a case: dotted path and classes, name.
        path, _, rest = nodeid.partition("::")
        names = rest.split("::") if rest else [path]
        module = path[:-3] if path.endswith(".py") else path
        cls = ".".join([module.replace("/", ".")] + names[:-1])
        return cls, names[-1]

    class Plugin:
        @pytest.hookimpl(tryfirst=True)
        def pytest_load_initial_conftests(self, early_config):
            # After the installed plugins, before the workspace's conftests.
            names = [
                n
                for n in list(sys.modules)
                if n in ("pytest", "_pytest", "pluggy")
                or n.startswith("_pytest.")
                or n.startswith("pluggy.")
            ]
            state["watch"] = _Watch(_RUNNER_MODULES + sorted(names))

        @pytest.hookimpl(trylast=True)
        def pytest_collection_finish(self, session):
            for item in session.items:
                cls, name = mangled(item.nodeid)
                entry = results.entry(cls, name)
                function = _getattr(item, "obj", None)
                entry["file"], entry["line"] = _code_of(function)
                module = _getattr(item, "module", None)
                f = _getattr(module, "__file__", None)
                entry["module_file"] = _shown(f) if _isinstance(f, str) else None

        def pytest_runtest_logreport(self, report):
            cls, name = mangled(report.nodeid)
            if report.failed:
                outcome = "failed"
            elif report.skipped:
                outcome = "skipped"
            elif report.when == "call":
                # An expected failure that passed is not a pass.
                outcome = "skipped" if _getattr(report, "wasxfail", None) is not None else "passed"
            else:
                return
            results.outcome(cls, name, outcome)

        @pytest.hookimpl(trylast=True)
        def pytest_unconfigure(self, config):
            found = []
            for name, plugin in config.pluginmanager.list_name_plugin():
                f = _getattr(plugin, "__file__", None)
                if _isinstance(f, str) and _inside(f):
                    found.append(_shown(f))
            state["plugins"] = sorted(set(found))

    # The environment's extra options and plugins are not the project's tests.
    for name in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS"):
        os.environ.pop(name, None)
    args = list(_ARGS)
    if _HAS_XDIST and not os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        # pytest-xdist would run the tests in processes of its own, which
        # this runner does not watch: in this one.
        args += ["-n", "0"]
    sys.argv[:] = ["python3 -m pytest"] + args
    error = None
    try:
        status = int(pytest.main(args, plugins=[Plugin()]))
    except SystemExit as e:
        status = e.code if _isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException as e:  # noqa: BLE001 - reported, then the exit
        import traceback

        traceback.print_exc()
        status, error = 1, "%s: %s" % (type(e).__name__, e)
    watch = state["watch"] or _Watch(_RUNNER_MODULES)
    results.write("pytest", status, watch, state["plugins"], error)
    return status


# ---------------------------------------------------------------------------
# examples: what the given files document they do (doctest's `>>>`), each
# example reported as a test (class: the file, name: the call and what it
# should give). Read by server/core/src/testing/examples.rs.

# An example that takes longer fails, and the file's later examples are
# not run: a hang (a loop the bug leaves, as QuixBugs' sqrt) costs the
# check these seconds once, not once an example.
_EXAMPLE_SECONDS = 5
_SHOWN_CHARS = 200


class _ExampleTimeout(Exception):
    pass


def _short(text):
    text = str(text).strip()
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def _documented(source, path):
    """The file's strings that hold examples: docstrings, and strings
    standing alone as statements (a description after the code), in the
    order of the file."""
    found = []
    for node in ast.walk(ast.parse(source, path)):
        value = _getattr(_getattr(node, "value", None), "value", None)
        if _isinstance(node, ast.Expr) and _isinstance(value, str) and ">>>" in value:
            found.append((node.lineno, value))
    found.sort()
    return found


def _load(path, n):
    """The file's module as the tests import it: by its dotted name from
    the workspace root, else from its own directory."""
    rel = _relpath(_realpath(path), _ROOT)
    dotted = rel[:-3].replace(_sep, ".")
    if dotted.endswith(".__init__"):
        dotted = dotted[: -len(".__init__")]
    if not rel.startswith("..") and all(p.isidentifier() for p in dotted.split(".")):
        try:
            return importlib.import_module(dotted)
        except ImportError:
            pass
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    name = "_rein_examples_%d" % n
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError("not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _run_examples():
    report = _Report()
    watch = _Watch(_RUNNER_MODULES)
    parser = doctest.DocTestParser()
    state = {"failed": 0}

    def alarm(signum, frame):
        raise _ExampleTimeout("took longer than %d s" % _EXAMPLE_SECONDS)

    def timer(seconds):
        signal.setitimer(signal.ITIMER_REAL, seconds)

    signal.signal(signal.SIGALRM, alarm)

    def record(path, line, example, passed, got=None):
        base = _short(example.source) + " => " + _short(example.want)
        name, k = base, 1
        # The same call documented twice (a counter, say): each its own.
        while (path, name) in report.tests and report.tests[(path, name)].get("line") != line:
            k += 1
            name = "%s (%d)" % (base, k)
        entry = report.entry(path, name)
        entry["file"], entry["line"] = path, line
        entry["source"], entry["want"] = _short(example.source), _short(example.want)
        if not passed:
            entry["got"] = _short(got)
            state["failed"] += 1
        report.outcome(path, name, "passed" if passed else "failed")

    class Runner(doctest.DocTestRunner):
        def __init__(self, path, line):
            doctest.DocTestRunner.__init__(self, verbose=False)
            self.path, self.line = path, line

        def at(self, example):
            return self.line + example.lineno

        def report_start(self, out, test, example):
            timer(_EXAMPLE_SECONDS)

        def report_success(self, out, test, example, got):
            timer(0)
            record(self.path, self.at(example), example, True)

        def report_failure(self, out, test, example, got):
            timer(0)
            record(self.path, self.at(example), example, False, got or "nothing")

        def report_unexpected_exception(self, out, test, example, exc_info):
            timer(0)
            kind, value = exc_info[0], exc_info[1]
            if kind is _ExampleTimeout:
                record(self.path, self.at(example), example, False, str(value))
                raise value
            got = "raises %s: %s" % (_getattr(kind, "__name__", kind), value)
            record(self.path, self.at(example), example, False, got)

    for n, arg in enumerate(_ARGS):
        path = _shown(arg)
        try:
            with _open(arg, encoding="utf-8") as f:
                strings = _documented(f.read(), arg)
        except (OSError, SyntaxError, ValueError) as e:
            # Nothing to run: the file's examples are missing from the
            # report, and Rein holds that against a change.
            sys.stderr.write("%s: %s\n" % (path, e))
            continue
        if not strings:
            continue
        hung = None
        try:
            timer(_EXAMPLE_SECONDS)
            module = _load(arg, n)
            timer(0)
            failure = None
        except BaseException as e:  # noqa: BLE001 - every example fails with it
            timer(0)
            module, failure = None, "the module cannot be imported: %s: %s" % (type(e).__name__, e)
        for line, text in strings:
            try:
                examples = parser.get_examples(text, arg)
            except ValueError as e:
                sys.stderr.write("%s:%d: %s\n" % (path, line, e))
                continue
            if module is not None and hung:
                module, failure = None, hung
            if module is None:
                for example in examples:
                    record(path, line + example.lineno, example, False, failure)
                continue
            test = doctest.DocTest(examples, dict(vars(module)), module.__name__, arg, line - 1, text)
            try:
                Runner(path, line).run(test, clear_globs=True)
            except BaseException as e:  # noqa: BLE001 - what did not run fails
                timer(0)
                if _isinstance(e, _ExampleTimeout):
                    why = "did not run: an example before it %s" % e
                    hung = why
                else:
                    why = "did not run: %s: %s" % (type(e).__name__, e)
                done = {v.get("line") for (c, _), v in report.tests.items() if c == path}
                for example in examples:
                    if line + example.lineno not in done:
                        record(path, line + example.lineno, example, False, why)
    status = 1 if state["failed"] else 0
    report.write("examples", status, watch, [])
    return status


def _main():
    if _KIND == "unittest":
        status = _run_unittest()
    elif _KIND == "pytest":
        status = _run_pytest()
    elif _KIND == "examples":
        status = _run_examples()
    else:
        sys.stderr.write("rein_runner.py: unknown runner %r\n" % _KIND)
        status = 2
    sys.stdout.flush()
    sys.stderr.flush()
    _sys_exit(status)


_main()
