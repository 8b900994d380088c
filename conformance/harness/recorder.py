"""The recorder: per-(clause, device, mode) outcomes of a run, the summary table, and the results files.

Runs on the pytest-xdist controller too: the workers collect (and so build the
manifest, sent back in ``workeroutput``), the controller receives every test
report and writes. Nothing is written for a run that collected wrongly or was
stopped by a usage error; a partial run (deselection, ``-x``, an interrupt)
is written with the clauses it did not cover as ``not-run``, except under
``--record``, which refuses to write anything partial.
"""

from __future__ import annotations

import platform
import sys
from collections import defaultdict

import pytest

from . import devices as dev
from . import fingerprints as fp
from . import modes as mod
from . import results
from .manifest import Manifest, item_clauses, item_compiled_since, item_device, item_mode, item_params
from .registry import COMPILED_MODES

NOT_APPLICABLE = "not-applicable: "
WIRE_KEY = "conformance_manifest"


def not_applicable(
    clauses, device: str | None, mode: str, torch_version: str, ignore_ranges=False, params="", compiled_since=()
) -> str | None:
    """Why a test of these clauses (parametrized with ``params``, its compile mode specified from the release
    ``compiled_since``) says nothing on this torch, device and mode, or None when it applies."""
    reasons = []
    for c in clauses:
        if not ignore_ranges and not c.applies_to(torch_version):
            reasons.append(f"{c.id} holds {c.range_text()}")
        elif why := c.excludes_device(device) or c.excludes_mode(mode):
            reasons.append(f"{c.id}: {why}")
    if mode in COMPILED_MODES and (
        why := mod.unsupported(torch_version, mode=mode, device=device or "")
        # a reason of the clause's own (its range, device or mode) says why better than the test's floor
        or (not reasons and mod.specified_later(compiled_since, torch_version))
        or mod.diverging_member(params, device, torch_version, tuple(c.id for c in clauses), mode)
    ):
        reasons.append(why)
    return NOT_APPLICABLE + "; ".join(reasons) if reasons else None


def short_reason(report) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return f"{report.nodeid}: {crash.message.splitlines()[0][:300]}"
    if isinstance(report.longrepr, tuple):  # skip: (file, line, reason)
        return report.longrepr[2].removeprefix("Skipped: ")
    return f"{report.nodeid}: {str(report.longrepr).splitlines()[-1][:300]}"


class Recorder:
    def __init__(self, config, torch_version: str):
        self.config = config
        self.registry = config._conformance_registry
        self.torch_version = torch_version
        self.is_worker = hasattr(config, "workerinput")
        # The files that decide each outcome, as the run starts (the controller writes the results); checked again
        # before writing, so a test edited mid-run is never recorded under its new fingerprint.
        self.sources = None if self.is_worker else fp.sources()
        # Every test module, or with --clauses the modules that hold those clauses' tests: only their outcomes count.
        only = config._conformance_clauses
        self.manifest = Manifest(results.TESTS_DIR.glob("test_*.py") if only is None else fp.modules_of(only))
        self.ran: dict[tuple[str, str, str], dict[str, dict]] = defaultdict(dict)  # (clause, device, mode)
        # (clause, device, mode) -> {test id: what that test observed}: merged once the run ends (outcomes.observations)
        self.observed: dict[tuple[str, str, str], dict[str, dict]] = defaultdict(dict)
        self.collect_failed = False
        self.finished = False
        self.doc: dict | None = None
        self.written = []
        self.refused: str | None = None

    # -- collection: what a complete run holds (on xdist workers, sent to the controller) --

    def _why_not(self, item) -> str | None:
        clauses = [self.registry.clauses[c] for c in item_clauses(item) if c in self.registry.clauses]
        why = not_applicable(
            clauses,
            item_device(item),
            item_mode(item),
            self.torch_version,
            params=item_params(item),
            compiled_since=item_compiled_since(item),
        )
        return why and why.removeprefix(NOT_APPLICABLE)

    def pytest_collectreport(self, report):
        self.collect_failed |= report.failed
        self.manifest.add_module_report(report, self._why_not, self.config.rootpath)

    def pytest_deselected(self, items):
        self.manifest.deselected.update(item.nodeid for item in items)

    def pytest_collection_finish(self, session):
        if not self.collect_failed:
            self.manifest.add_uncollected(session, self._why_not)
        if self.is_worker:
            self.config.workeroutput[WIRE_KEY] = self.manifest.to_wire()

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        wire = getattr(node, "workeroutput", {}).get(WIRE_KEY)
        if wire:
            self.manifest.merge_wire(wire)

    # -- reports --

    def pytest_runtest_logreport(self, report):
        info = dict(report.user_properties).get("conformance")
        if not info or not info["device"] or info["not_applicable"]:
            return
        # One entry per test: its call outcome, or the setup/teardown phase that went wrong.
        if not (report.when == "call" or (report.when == "setup" and not report.passed) or report.failed):
            return
        entry = {"outcome": report.outcome, "reason": "" if report.passed else short_reason(report)}
        for cid in info["clauses"]:
            key = (cid, info["device"], info["mode"])
            tests = self.ran[key]
            before = tests.get(report.nodeid)
            if before is None or (report.failed and before["outcome"] != "failed"):
                tests[report.nodeid] = entry  # a teardown failure (e.g. leaked state) turns a pass into a failure
            self.observed[key].setdefault(report.nodeid, {}).update(info["observed"])

    def document(self) -> dict:
        present = dev.present()
        return results.build(
            self.registry,
            self.torch_version,
            platform.python_version(),
            platform.platform(),
            # the selected devices, plus every absent one (reported not-run, never silently left out)
            self.config._conformance_devices + [d for d in dev.KNOWN if d not in present],
            present,
            self.ran,
            self.observed,
            self.manifest,
            modes=self.config._conformance_modes,
        )

    # -- the end of the run --

    def pytest_sessionfinish(self, session, exitstatus):
        if self.is_worker:
            return
        usable = (
            pytest.ExitCode.OK,
            pytest.ExitCode.TESTS_FAILED,
            pytest.ExitCode.INTERRUPTED,
            pytest.ExitCode.NO_TESTS_COLLECTED,
        )
        # A run stopped by a usage error or a broken collection proves nothing: no results for it.
        self.finished = exitstatus in usable and not self.collect_failed
        if not self.finished:
            return
        self.doc = self.document()
        if self.config.getoption("--ignore-ranges"):
            # Failures outside a range are the expected outcome here; only a loose boundary fails the run.
            ok = all(good for good, _ in self.range_verdicts().values())
            session.exitstatus = pytest.ExitCode.OK if ok else pytest.ExitCode.TESTS_FAILED
            return  # outcomes of tests run outside their clause's range are no results
        path = self.config.getoption("--results")
        if path is None:
            return
        only = self.config._conformance_clauses
        not_run = [key for key in results.partial(self.doc) if only is None or key[0] in only]
        if fp.sources() != self.sources:
            self.refused = "the tests or the spec changed while the suite ran"
        elif not_run and self.config.getoption("--record"):
            cid, device, mode = not_run[0]
            why = self.doc["devices"][device][mode][cid]["reasons"][0]
            self.refused = (
                f"partial run, {len(not_run)} clauses not run (e.g. {cid} on {device}, {mode}: {why}); "
                "--record needs the whole suite"
            )
        else:
            try:
                # --clauses: their outcomes (complete for them) merged into the recorded ones, all files or none.
                doc = self.doc if only is None else results.merge(self.doc, path, only, self.registry)
                self.written = results.write(doc, path)
            except results.ResultsError as exc:
                self.refused = str(exc)
        if self.refused:
            self.refused = f"results not written to {path}: {self.refused}"
            session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def pytest_terminal_summary(self, terminalreporter):
        if self.is_worker or self.doc is None:
            return
        doc, tr = self.doc, terminalreporter
        # a column per device and selected mode (the modes not selected are all not-run)
        columns = [(d, m) for d in doc["devices"] for m in self.config._conformance_modes]
        tr.section("conformance: outcome per clause, device and mode")
        tr.write_line(f"torch {self.torch_version}, python {doc['python']}")
        tr.write_line("clause".ljust(12) + "".join(f"{d} {m}".ljust(20) for d, m in columns))
        totals = defaultdict(int)
        only = self.config._conformance_clauses
        touched = {cid for cid, _, _ in self.ran}  # a row for each clause some test of this run ran for
        untouched = 0
        for cid in sorted(only or self.registry.clauses, key=results.natural):
            row = [doc["devices"][d][m][cid]["outcome"] for d, m in columns]
            for outcome in row:
                totals[outcome] += 1
            if cid in touched:
                tr.write_line(cid.ljust(12) + "".join(o.ljust(20) for o in row))
            else:
                untouched += 1
        if untouched:
            tr.write_line(f"{untouched} other clauses: no test of theirs ran here (the results file has each outcome)")
        tr.write_line("clause outcomes: " + ", ".join(f"{totals[o]} {o}" for o in results.OUTCOMES))
        not_run = results.partial(doc)
        if other_modes := sorted({m for _, _, m in not_run} - set(self.config._conformance_modes)):
            tr.write_line(f"mode {', '.join(other_modes)} not selected: its outcomes are not-run (--mode)", yellow=True)
        if not_run := [
            key for key in not_run if key[2] in self.config._conformance_modes and (not only or key[0] in only)
        ]:
            tr.write_line(
                f"partial run: {len(not_run)} clauses on present devices are not-run, because some of their tests "
                "were deselected, not collected, skipped or not reached; no pass is claimed for them",
                yellow=True,
            )
        for written in self.written:
            merged = (
                ""
                if self.config._conformance_clauses is None
                else f" ({len(self.config._conformance_clauses)} clauses merged)"
            )
            tr.write_line(f"results written to {written}{merged}")
        if self.config.getoption("--ignore-ranges"):
            self._range_report(tr)

    def pytest_unconfigure(self, config):
        if self.refused:  # the last line of the run, on stderr
            print(f"ERROR: {self.refused}", file=sys.stderr)

    # -- version ranges (--ignore-ranges) --

    def range_verdicts(self) -> dict[str, tuple[bool, str]]:
        """With --ignore-ranges: {clause: (as expected, verdict)} for every clause with a version range.

        Outside its range, a clause's tests must fail, or the boundary is not tight. Inside it, they are not run
        here: the run without --ignore-ranges (the recording) shows whether the clause holds.
        """
        verdicts = {}
        for cid, clause in self.registry.clauses.items():
            if not clause.ranged:
                continue
            reports = [r for (c, _, _), tests in self.ran.items() if c == cid for r in tests.values()]
            failed = any(r["outcome"] == "failed" for r in reports)
            if clause.applies_to(self.torch_version):
                verdicts[cid] = (True, "inside its range: checked by the recording, not here")
            elif not clause.normative:  # its range is where the tests of other clauses leave its members to it
                verdicts[cid] = (True, "UNSPECIFIED: its tests record, they cannot fail")
            elif not reports:
                verdicts[cid] = (True, "no test ran")
            elif failed:
                verdicts[cid] = (True, "outside its range: fails, boundary confirmed")
            else:
                verdicts[cid] = (False, "outside its range: PASSES, the range is too narrow or the test too weak")
        return verdicts

    def _range_report(self, tr):
        tr.section("version ranges: tests of ranged clauses, run on every version")
        for cid, (_, verdict) in sorted(self.range_verdicts().items(), key=lambda kv: results.natural(kv[0])):
            clause = self.registry.clauses[cid]
            tr.write_line(f"{cid:<12} {clause.range_text():<28} {verdict}")
