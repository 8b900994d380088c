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
import platform
import textwrap
from collections import defaultdict

import pytest

from . import devices as dev
from . import registry as reg
from . import results

NOT_APPLICABLE = "not-applicable: "
SUITE_DIR = reg.ROOT / "conformance"


def pytest_addoption(parser):
    group = parser.getgroup("conformance")
    group.addoption("--device", default=None, help="comma-separated devices (cpu,meta,cuda,mps); default: all present")
    group.addoption(
        "--ignore-ranges",
        action="store_true",
        help="run tests of clauses outside their version range too (to check that a range's boundary is tight: "
        "such tests should fail); results are not written",
    )
    group.addoption(
        "--results", default=None, metavar="PATH", help="write results JSON; '{device}' in PATH = one file per device"
    )


def pytest_configure(config):
    config.addinivalue_line("markers", "clause(*ids): the spec clauses this test proves")
    config.addinivalue_line("markers", "only_devices(*names): run this test on these devices only")
    try:
        config._conformance_registry = reg.default()
        config._conformance_devices = dev.select(config.getoption("--device"))
    except (reg.SpecError, dev.DeviceError) as exc:
        raise pytest.UsageError(str(exc)) from None
    config.pluginmanager.register(Recorder(config), "conformance-recorder")


def pytest_generate_tests(metafunc):
    if "device" not in metafunc.fixturenames:
        return
    chosen = metafunc.config._conformance_devices
    only = metafunc.definition.get_closest_marker("only_devices")
    if only:
        chosen = [d for d in chosen if d in only.args]
    metafunc.parametrize("device", chosen)


@pytest.fixture(autouse=True)
def device(request):
    """The device this test runs on (parametrized over the selected devices)."""
    return request.param


def pytest_collection_modifyitems(session, config, items):
    registry = config._conformance_registry
    for item in items:
        if SUITE_DIR not in item.path.parents:
            continue  # not a conformance test (e.g. the harness's own tests in the same run)
        ids = [cid for mark in item.iter_markers("clause") for cid in mark.args]
        if not ids:
            raise pytest.UsageError(f"{item.nodeid}: test has no @pytest.mark.clause(...) marker")
        for cid in ids:
            if cid not in registry.clauses:
                raise pytest.UsageError(f"{item.nodeid}: unknown clause {cid!r} (not defined in spec/*.md)")
        clauses = [registry.clauses[cid] for cid in ids]
        ranges = {(c.since, c.until) for c in clauses}
        if len(ranges) > 1:
            raise pytest.UsageError(f"{item.nodeid}: clauses {ids} have different version ranges; split the test")
        item._conformance_clauses = clauses
    if config.getoption("--ignore-ranges"):
        # Only tests of clauses with a version range say anything about a range's boundary.
        ranged = [i for i in items if any(c.since or c.until for c in getattr(i, "_conformance_clauses", []))]
        config.hook.pytest_deselected(items=[i for i in items if i not in ranged])
        items[:] = ranged


def _not_applicable_reason(item, torch_version: str) -> str | None:
    clauses = getattr(item, "_conformance_clauses", [])
    ignore = item.config.getoption("--ignore-ranges")
    outside = [c for c in clauses if not ignore and not c.applies_to(torch_version)]
    if outside:
        return NOT_APPLICABLE + ", ".join(f"{c.id} holds {c.range_text()}" for c in outside)
    device = item.callspec.params.get("device") if hasattr(item, "callspec") else None
    excluded = [f"{c.id}: {why}" for c in clauses if (why := c.excludes_device(device))]
    if excluded:
        return NOT_APPLICABLE + "; ".join(excluded)
    return None


def pytest_runtest_setup(item):
    import torch

    reason = _not_applicable_reason(item, torch.__version__)
    if reason:
        pytest.skip(reason)


def _global_state():
    """Process-wide torch settings a test must leave as it found them."""
    import torch
    import torch.__future__ as future

    probes = {
        "grad mode": torch.is_grad_enabled,
        "inference mode": torch.is_inference_mode_enabled,
        "anomaly mode": torch.is_anomaly_enabled,
        "anomaly check_nan": getattr(torch, "is_anomaly_check_nan_enabled", None),
        "default dtype": torch.get_default_dtype,
        "default device": getattr(torch, "get_default_device", None),
        "manual seed": torch.initial_seed,
        "deterministic algorithms": torch.are_deterministic_algorithms_enabled,
        "overwrite_module_params_on_conversion": future.get_overwrite_module_params_on_conversion,
        "swap_module_params_on_conversion": getattr(future, "get_swap_module_params_on_conversion", None),
    }
    return {name: probe() for name, probe in probes.items() if probe is not None}


def _restore(state):
    import torch
    import torch.__future__ as future

    torch.set_grad_enabled(state["grad mode"])
    if "anomaly check_nan" in state:
        torch.set_anomaly_enabled(state["anomaly mode"], state["anomaly check_nan"])
    else:
        torch.set_anomaly_enabled(state["anomaly mode"])
    torch.set_default_dtype(state["default dtype"])
    if "default device" in state:
        torch.set_default_device(state["default device"])
    torch.manual_seed(state["manual seed"])
    torch.use_deterministic_algorithms(state["deterministic algorithms"])
    future.set_overwrite_module_params_on_conversion(state["overwrite_module_params_on_conversion"])
    if "swap_module_params_on_conversion" in state:
        future.set_swap_module_params_on_conversion(state["swap_module_params_on_conversion"])


@pytest.fixture(autouse=True)
def torch_global_state_guard():
    """Fail a test that leaves global torch state changed (and put the state back)."""
    before = _global_state()
    yield
    after = _global_state()
    changed = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
    if changed:
        _restore(before)
        detail = "; ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in changed.items())
        pytest.fail(f"test leaked global torch state: {detail}", pytrace=False)


@pytest.fixture
def observe(request):
    """Record what torch does, for tests of UNSPECIFIED clauses: observe("name", value)."""
    store = request.node._conformance_observed = {}

    def record(name: str, value):
        store[name] = value if isinstance(value, (bool, int, float, str, type(None))) else repr(value)

    yield record
    if not store:
        pytest.fail("an observe() test recorded nothing", pytrace=False)


def _reproducer(item) -> str:
    device = item.callspec.params.get("device", "cpu") if hasattr(item, "callspec") else "cpu"
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
    device = item.callspec.params.get("device") if hasattr(item, "callspec") else None
    report.user_properties.append(
        (
            "conformance",
            {
                "clauses": [c.id for c in clauses],
                "device": device,
                "observed": getattr(item, "_conformance_observed", {}),
            },
        )
    )
    if report.failed and clauses:
        head = "\n".join(f"clause {c.id} ({c.level}) - {c.url}: {' '.join(c.text.split())[:160]}" for c in clauses)
        report.sections.append(
            (
                "conformance",
                f"{head}\ntorch {torch.__version__}, device {device}, python {platform.python_version()}\n"
                f"reproduce:\n{_reproducer(item)}",
            )
        )
    return report


def _short_reason(report) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return f"{report.nodeid}: {crash.message.splitlines()[0][:300]}"
    if isinstance(report.longrepr, tuple):  # skip: (file, line, reason)
        return report.longrepr[2].removeprefix("Skipped: ")
    return f"{report.nodeid}: {str(report.longrepr).splitlines()[-1][:300]}"


class Recorder:
    """Collects per-(clause, device) reports (on the xdist controller too) and writes the results."""

    def __init__(self, config):
        self.config = config
        self.reports = defaultdict(list)
        self.observed = defaultdict(dict)
        self.written = []
        self.complete = False

    def pytest_runtest_logreport(self, report):
        info = dict(report.user_properties).get("conformance")
        if not info or not info["device"]:
            return
        # One entry per test: its call outcome, or the setup/teardown phase that went wrong.
        relevant = report.when == "call" or (report.when == "setup" and not report.passed)
        if not (relevant or (report.when == "teardown" and report.failed)):
            return
        reason = "" if report.passed else _short_reason(report)
        if report.skipped and reason.startswith(NOT_APPLICABLE):
            return  # the clause's range already says not-applicable
        entry = {"outcome": report.outcome, "reason": reason}
        for cid in info["clauses"]:
            key = (cid, info["device"])
            if report.when == "teardown" and self.reports[key] and self.reports[key][-1]["outcome"] == "passed":
                self.reports[key].pop()  # a teardown failure (e.g. leaked state) turns a pass into a failure
            self.reports[key].append(entry)
            self.observed[key].update(info["observed"])

    def document(self) -> dict:
        import torch

        present = dev.present()
        return results.build(
            self.config._conformance_registry,
            torch.__version__,
            platform.python_version(),
            platform.platform(),
            # the selected devices, plus every absent one (reported not-run, never silently left out)
            self.config._conformance_devices + [d for d in dev.KNOWN if d not in present],
            present,
            self.reports,
            self.observed,
        )

    def pytest_sessionfinish(self, session, exitstatus):
        # A run stopped by a usage error or an interrupt proves nothing: write no results for it.
        self.complete = exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
        if self.config.getoption("--ignore-ranges") and self.complete and not hasattr(self.config, "workerinput"):
            import torch

            # Failures outside a range are the expected outcome here; only a loose boundary fails the run.
            ok = all(good for good, _ in self.range_verdicts(torch.__version__).values())
            session.exitstatus = pytest.ExitCode.OK if ok else pytest.ExitCode.TESTS_FAILED
        path = self.config.getoption("--results")
        if self.config.getoption("--ignore-ranges"):
            path = None  # outcomes of tests run outside their clause's range are no results
        if path and self.complete and not hasattr(self.config, "workerinput"):
            self.written = results.write(self.document(), path)

    def pytest_terminal_summary(self, terminalreporter):
        if hasattr(self.config, "workerinput") or not self.complete:
            return
        import torch

        doc = self.document()
        devices = list(doc["devices"])
        tr = terminalreporter
        tr.section("conformance: outcome per clause and device")
        tr.write_line(f"torch {torch.__version__}, python {doc['python']}, suite {doc['suite_hash'][:19]}")
        tr.write_line("clause".ljust(12) + "".join(d.ljust(16) for d in devices))
        totals = defaultdict(int)
        for cid in sorted(doc["devices"][devices[0]], key=_natural):
            row = [doc["devices"][d][cid]["outcome"] for d in devices]
            for outcome in row:
                totals[outcome] += 1
            tr.write_line(cid.ljust(12) + "".join(o.ljust(16) for o in row))
        tr.write_line("clause outcomes: " + ", ".join(f"{totals[o]} {o}" for o in results.OUTCOMES))
        for written in self.written:
            tr.write_line(f"results written to {written}")
        if self.config.getoption("--ignore-ranges"):
            self._range_report(tr, torch.__version__)

    def range_verdicts(self, torch_version) -> dict[str, tuple[bool, str]]:
        """With --ignore-ranges: {clause: (as expected, verdict)} for every clause with a version range.

        A clause inside its range must pass; outside it, its tests must fail, or the boundary is not tight.
        """
        verdicts = {}
        for cid, clause in self.config._conformance_registry.clauses.items():
            if not (clause.since or clause.until):
                continue
            reports = [r for (c, _), rs in self.reports.items() if c == cid for r in rs]
            failed = any(r["outcome"] == "failed" for r in reports)
            if not reports:
                verdicts[cid] = (True, "no test ran")
            elif clause.applies_to(torch_version):
                verdicts[cid] = (not failed, "inside its range: " + ("FAILS" if failed else "passes"))
            elif failed:
                verdicts[cid] = (True, "outside its range: fails, boundary confirmed")
            else:
                verdicts[cid] = (False, "outside its range: PASSES, the range is too narrow or the test too weak")
        return verdicts

    def _range_report(self, tr, torch_version):
        tr.section("version ranges: tests of ranged clauses, run on every version")
        for cid, (_, verdict) in sorted(self.range_verdicts(torch_version).items(), key=lambda kv: _natural(kv[0])):
            clause = self.config._conformance_registry.clauses[cid]
            tr.write_line(f"{cid:<12} {clause.range_text():<28} {verdict}")


def _natural(cid: str):
    prefix, number = cid.rsplit("-", 1)
    return prefix, int(number)
