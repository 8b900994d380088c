"""The conformance plugin for pytest.

Note [Writing a conformance test]
---------------------------------
A test states which clauses of the spec it proves, quotes them, and asserts
the specific thing they say::

    # > DATA-2: Writing through ``x.data`` does not bump ``x._version``.
    @pytest.mark.clause("DATA-2")
    def test_write_through_data_keeps_version(device):
        x = torch.ones(2, device=device, requires_grad=True)
        x.data.add_(1)
        assert x._version == 0

Every test runs once per selected device; ids read ``test_name[cpu]``,
``test_name[meta]``. The clause ID must exist in ``spec/*.md`` (collection
fails otherwise). A test whose clauses are outside the installed torch's
version range, or not about the device (``needs: values`` on ``meta``,
``devices:`` naming others), is skipped as
``not-applicable`` and never runs. Tests of an UNSPECIFIED clause record what
torch does with the ``observe`` fixture instead of asserting.

Outcomes per (clause, device), written by ``--results``:
``pass`` every test of the clause ran and passed; ``fail`` one failed;
``not-applicable`` excluded by the clause's range or devices; ``not-run`` the device is
absent or no test of the clause ran. Nothing that did not run is ``pass``.
"""

from __future__ import annotations

import inspect
import math
import platform
import textwrap

import pytest

from . import devices as dev
from . import fingerprints as fp
from . import modes as mod
from . import registry as reg
from . import results
from .manifest import item_clauses, item_compiled_since, item_device, item_mode, item_params
from .recorder import Recorder, not_applicable

SUITE_DIR = reg.ROOT / "conformance"
TESTS_DIR = SUITE_DIR / "tests"
# Options that select part of the suite: a recording (--record) refuses them before running anything.
SELECTING = {
    "keyword": "-k",
    "markexpr": "-m",
    "deselect": "--deselect",
    "maxfail": "-x/--maxfail",
    "lf": "--lf",
    "stepwise": "--sw",
    "stepwise_skip": "--sw-skip",
}


# Plugins the suite cannot do without (-p no:NAME blocks one): without them a run would end without its outcomes,
# or with exit 0 and no results written.
NEEDED_PLUGINS = {
    "skipping": "pytest's skipping plugin (a test outside its clause's range is skipped as not-applicable)",
    "conformance-recorder": "its recorder (the outcome of each clause, and the results files)",
    "conformance.harness.opdb_plugin": "its operator-database populations (harness/opdb_plugin.py)",
}


def pytest_addoption(parser):
    group = parser.getgroup("conformance")
    group.addoption("--device", default=None, help="comma-separated devices (cpu,meta,cuda,mps); default: all present")
    group.addoption(
        "--mode",
        default=None,
        help="comma-separated modes (eager,compile,inductor): the update step as written, or through torch.compile "
        "with backend aot_eager or inductor (harness/modes.py); default: eager",
    )
    group.addoption(
        "--ignore-ranges",
        action="store_true",
        help="run tests of clauses outside their version range too (to check that a range's boundary is tight: "
        "such tests should fail); results are not written",
    )
    group.addoption(
        "--results", default=None, metavar="PATH", help="write results JSON; '{device}' in PATH = one file per device"
    )
    group.addoption(
        "--clauses",
        default=None,
        metavar="IDS",
        help="comma-separated clause IDs: run only their tests, and with --results merge their outcomes into the "
        "recorded results there (what nox -s conformance does for the stale clauses, harness/fingerprints.py)",
    )
    group.addoption(
        "--record",
        action="store_true",
        help="this run records results (nox -s conformance): refuse options that select part of the suite, and "
        "write nothing for a partial run",
    )


def pytest_configure(config):
    config.addinivalue_line("markers", "clause(*ids): the spec clauses this test proves")
    config.addinivalue_line("markers", "only_devices(*names): run this test on these devices only")
    config.addinivalue_line(
        "markers",
        "compiled_since(release, before=clauses, also_on=series, devices=names, modes=names): compile mode of this"
        " test is specified from this torch release; before, the compile-only clauses named say what the step does"
        " (harness/modes.CompiledSince)",
    )
    try:
        for name, what in NEEDED_PLUGINS.items():
            if config.pluginmanager.is_blocked(name):
                raise results.ResultsError(f"-p no:{name}: the suite cannot run without {what}")
        config._conformance_registry = reg.default()
        config._conformance_devices = dev.select(config.getoption("--device"))
        config._conformance_modes = mod.select(config.getoption("--mode"))
        config._conformance_clauses = _clauses(config.getoption("--clauses"), config._conformance_registry)
        if (path := config.getoption("--results")) is not None:
            # before any test runs, not after the whole run
            results.check_writable(path, record=config.getoption("--record"))
            if config._conformance_clauses is not None:
                results.mergeable(path, config._conformance_registry)  # refused now, not after the run
            if (config.getoption("--record") or config._conformance_clauses is not None) and not hasattr(
                config,
                "workerinput",  # an xdist worker: its controller holds the lock and writes
            ):
                results.hold(path)  # one recording of a release at a time
        if config.getoption("--record") and (why := _selects_part(config)):
            raise results.ResultsError(f"--record needs the whole suite; {why} selects part of it")
    except (reg.SpecError, dev.DeviceError, mod.ModeError, results.ResultsError) as exc:
        raise pytest.UsageError(str(exc)) from None
    import torch

    config.pluginmanager.register(Recorder(config, torch.__version__), "conformance-recorder")


def _clauses(requested: str | None, registry) -> list[str] | None:
    """The clauses --clauses names (None: every clause); a name that is no clause of the spec is an error."""
    if requested is None:
        return None
    chosen = [cid for cid in requested.split(",") if cid]
    if not chosen or len(chosen) != len(set(chosen)):
        raise results.ResultsError(
            f"--clauses {requested[:60]!r}: give each clause ID once, e.g. --clauses DATA-1,DATA-2"
        )
    if unknown := [cid for cid in chosen if cid not in registry.clauses]:
        raise results.ResultsError(f"--clauses: {unknown[0]!r} is no clause of spec/*.md")
    return chosen


def _selects_part(config) -> str | None:
    """The first option or argument of this run that leaves part of the suite out, if any."""
    for dest, flag in SELECTING.items():
        if getattr(config.option, dest, None):
            return flag
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        if path == SUITE_DIR or path in SUITE_DIR.parents:
            continue
        # With --clauses, test modules may be named (nox -s conformance names those of the stale clauses): the
        # manifest still expects every test of each clause, so a module left out makes the run partial.
        if "::" in arg or not (config.getoption("--clauses") and path.parent == TESTS_DIR and path.is_file()):
            return f"the argument {arg}"
    return None


def pytest_generate_tests(metafunc):
    if "device" not in metafunc.fixturenames:
        return
    chosen = metafunc.config._conformance_devices
    only = metafunc.definition.get_closest_marker("only_devices")
    if only:
        chosen = [d for d in chosen if d in only.args]
    metafunc.parametrize("device", chosen)
    if "run_mode" in metafunc.fixturenames:  # the test hands its update step to ``run``: it takes part in every mode
        metafunc.parametrize("run_mode", metafunc.config._conformance_modes)


@pytest.fixture(autouse=True)
def device(request):
    """The device this test runs on (parametrized over the selected devices)."""
    return request.param


@pytest.fixture
def run_mode(request):
    """The mode this test runs in (parametrized over the selected modes, for tests that use ``run``)."""
    return request.param


@pytest.fixture
def run(request, run_mode):
    """``run(step, *args)``: the test's update step, as written or through torch.compile (harness/modes.py)."""
    runner = request.node._conformance_runner = mod.Runner(run_mode)
    if run_mode == "eager":
        yield runner
        return
    # A compiled backward is compiled by the test body's backward(), outside the step (inductor on 2.4): the flag
    # Runner.compiling puts back may be left raised there too.
    with runner.compiling():
        yield runner


def pytest_collection_modifyitems(session, config, items):
    registry = config._conformance_registry
    unselected = []  # e.g. a cpu-only test in a --device meta run: pytest gives it no device, we run nothing
    for item in items:
        if SUITE_DIR not in item.path.parents:
            continue  # not a conformance test (e.g. the harness's own tests in the same run)
        ids = item_clauses(item)
        skip = item.get_closest_marker("skip")
        if not ids and skip and str(skip.kwargs.get("reason", "")).startswith("got empty parameter set"):
            unselected.append(item)  # a parametrization with no members here (e.g. no compile-only example)
            continue
        if not ids:
            raise pytest.UsageError(f"{item.nodeid}: test has no @pytest.mark.clause(...) marker")
        for cid in ids:
            if cid not in registry.clauses:
                raise pytest.UsageError(f"{item.nodeid}: unknown clause {cid!r} (not defined in spec/*.md)")
        clauses = [registry.clauses[cid] for cid in ids]
        # One test, one verdict: its clauses must apply to the same releases and to its device, or a skip for
        # one of them would silently take the test away from the others.
        if len({(c.ranges, c.withdrawn) for c in clauses}) > 1:
            raise pytest.UsageError(f"{item.nodeid}: clauses {', '.join(ids)} differ in version range; split the test")
        device = item_device(item)
        if device is None or item_mode(item) not in config._conformance_modes:
            unselected.append(item)  # e.g. an eager-only test in a --mode compile run
        elif len({c.excludes_device(device) is None for c in clauses}) > 1:
            why = "; ".join(f"{c.id}: {c.excludes_device(device)}" for c in clauses if c.excludes_device(device))
            raise pytest.UsageError(
                f"{item.nodeid}: its clauses do not all apply on {device} ({why}); split the test or limit it "
                "with @pytest.mark.only_devices"
            )
        elif len({c.excludes_mode(item_mode(item)) is None for c in clauses}) > 1:
            raise pytest.UsageError(
                f"{item.nodeid}: its clauses do not all apply in {item_mode(item)} mode; split the test"
            )
        item._conformance_clauses = clauses
        if config.getoption("--record") and (unseen := fp.check_item(item, ids)):
            raise pytest.UsageError(unseen)  # a recording stamps each outcome with a fingerprint that must see it
        if (only := config._conformance_clauses) is not None and not set(ids) & set(only):
            unselected.append(item)
            continue
        for mark in item.iter_markers("compiled_since"):
            if problem := mod.CompiledSince.from_mark(mark).problem(registry.clauses):
                raise pytest.UsageError(f"{item.nodeid}: compiled_since: {problem}")
    if config.getoption("--ignore-ranges"):
        # Only tests of a clause outside its version range on this torch say anything about the range's boundary;
        # inside it, the run without --ignore-ranges (the recording) is what shows the clause holds.
        import torch

        unselected += [
            i for i in items if all(c.applies_to(torch.__version__) for c in getattr(i, "_conformance_clauses", []))
        ]
    if unselected:
        config.hook.pytest_deselected(items=unselected)
        items[:] = [i for i in items if i not in set(unselected)]


def pytest_runtest_setup(item):
    import torch

    reason = not_applicable(
        getattr(item, "_conformance_clauses", []),
        item_device(item),
        item_mode(item),
        torch.__version__,
        ignore_ranges=item.config.getoption("--ignore-ranges"),
        params=item_params(item),
        compiled_since=item_compiled_since(item),
    )
    item._conformance_not_applicable = reason is not None
    if reason:
        pytest.skip(reason)


@pytest.fixture(autouse=True)
def torch_global_state_guard():
    """Fail a test that leaves process-wide torch state changed, naming each kind, and put exactly that back.

    What is covered, and how it is read and restored: conformance/harness/state.py.
    """
    from . import state

    before = state.snapshot()
    yield
    leaked = state.check(before)
    if leaked:
        pytest.fail(f"test leaked global torch state: {leaked}", pytrace=False)


@pytest.fixture
def observe(request):
    """Record what torch does, for tests of UNSPECIFIED clauses: observe("name", value)."""
    store = request.node._conformance_observed = {}

    def record(name: str, value):
        plain = isinstance(value, (bool, int, str, type(None))) or (isinstance(value, float) and math.isfinite(value))
        store[name] = value if plain else repr(value)  # NaN and infinity as text: JSON has no such numbers

    yield record
    if not store:
        pytest.fail("an observe() test recorded nothing", pytrace=False)


def _reproducer(item) -> str:
    device = item_device(item) or "cpu"
    lines = [f"python -m pytest '{item.nodeid}'"]
    func = getattr(item, "function", None)
    params = set(inspect.signature(func).parameters) if func else {"?"}
    if func and params <= {"device"}:
        src = textwrap.dedent(inspect.getsource(func))
        body = src.split(":\n", 1)[1] if src.lstrip().startswith(("def", "@")) else src
        body = textwrap.dedent(body.split("\n", 1)[1] if body.startswith('"""') else body)
        lines += ["or, standalone:", f"import torch\ndevice = {device!r}\n{body.rstrip()}"]
    return "\n".join(lines)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    import torch

    clauses = getattr(item, "_conformance_clauses", [])
    device = item_device(item)
    observed = dict(getattr(item, "_conformance_observed", {}))
    runner = getattr(item, "_conformance_runner", None)
    if runner is not None and runner.mode in reg.COMPILED_MODES and call.when == "call":
        observed["graph breaks"] = runner.graph_breaks
        if runner.leaked_dispatch_state:
            observed["torch.compile left the dispatch-mode state changed (put back)"] = True
        # Where compiled behaviour may depart from eager (a failure, or a clause about compile mode only): which
        # layer; none where the step run uncompiled gives the same outcome.
        divergent = report.failed or any(c.compiled_only for c in clauses)
        if runner.compiled_steps and divergent:
            layer = runner.layer(item.runtest, report.passed)
            if layer is not None:
                observed["diverging layer"] = layer
            said = f"diverging layer: {layer}" if layer else "no diverging layer: the same outcome uncompiled"
            report.sections.append(("conformance", said))
    info = {
        "clauses": [c.id for c in clauses],
        "device": device,
        "mode": item_mode(item),
        "observed": observed,
        # skipped by the harness because the clauses say nothing here (not a test that skipped itself)
        "not_applicable": getattr(item, "_conformance_not_applicable", False),
    }
    report.user_properties = [p for p in report.user_properties if p[0] != "conformance"] + [("conformance", info)]
    if report.failed and clauses:
        head = "\n".join(f"clause {c.id} ({c.level}) - {c.url}: {' '.join(c.text.split())[:160]}" for c in clauses)
        report.sections.append(
            (
                "conformance",
                f"{head}\ntorch {torch.__version__}, device {device}, mode {item_mode(item)}, "
                f"python {platform.python_version()}\n"
                f"reproduce:\n{_reproducer(item)}",
            )
        )
    return report
