"""What a complete run is: every test of every (clause, device, mode) the suite holds, and which of them ran.

A clause is ``pass`` only when every one of its tests for that device was
collected, executed in this run and passed. To know "every", the manifest is
built from the suite itself, not from what the user selected: the children of
each test module as pytest collected them (before ``-k``, ``-m``,
``--deselect`` take any away), and, for modules the run did not collect at all
(a path or node id narrower than the suite), a collection of its own. Whatever
the manifest expects and the run did not execute (deselected, not collected,
skipped by the test itself, stopped early by ``-x`` or an interrupt) makes the
clause ``not-run``, with the reason.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from .modes import CompiledSince

Key = tuple[str, str, str]  # (clause id, device, mode)


def item_device(item) -> str | None:
    """The device a test item runs on; None for items that are not parametrized over a real device."""
    device = item.callspec.params.get("device") if hasattr(item, "callspec") else None
    return device if isinstance(device, str) else None


def item_mode(item) -> str:
    """The mode a test item runs in: a test without the ``run`` fixture runs eagerly only (harness/modes.py)."""
    return item.callspec.params.get("run_mode", "eager") if hasattr(item, "callspec") else "eager"


def item_params(item) -> str:
    """The id of a test item's parameters (``meta-compile-t[[0]] = 5``): population members show by their id."""
    return item.callspec.id if hasattr(item, "callspec") else ""


def item_compiled_since(item) -> tuple[CompiledSince, ...]:
    """The ``@pytest.mark.compiled_since`` marks (harness/modes.py) that speak about this test's device and mode: the
    closest one without ``modes`` and those naming its mode (``devices="meta"``: only there does the compiled step
    differ on older releases; ``modes="inductor"``: only with that backend)."""
    marks = [CompiledSince.from_mark(mark) for mark in item.iter_markers("compiled_since")]
    general = [m for m in marks if not m.modes][:1]
    device, mode = item_device(item), item_mode(item)
    return tuple(m for m in (*general, *(m for m in marks if m.modes)) if m.applies(device, mode))


def item_clauses(item) -> list[str]:
    return [cid for mark in item.iter_markers("clause") for cid in mark.args]


def _expand(node) -> Iterator[pytest.Item]:
    for child in node.collect():
        if isinstance(child, pytest.Item):
            yield child
        else:
            yield from _expand(child)


class Manifest:
    """Expected tests per (clause, device, mode), filled from collection; what ran is checked against it."""

    def __init__(self, test_files: Iterable[Path]):
        self.test_files = sorted(test_files)
        self.expected: dict[Key, set[str]] = defaultdict(set)
        self.inapplicable: dict[Key, set[str]] = defaultdict(set)  # why tests were not expected: the harness's reasons
        self.deselected: set[str] = set()
        self.collected_files: set[Path] = set()

    def add(self, items: Iterable[pytest.Item], why_not) -> None:
        """Expect these items for their clauses; ``why_not(item)`` is the reason a not-applicable item says nothing."""
        for item in items:
            device = item_device(item)
            if device is None:
                continue
            why = why_not(item)
            for cid in item_clauses(item):
                key = (cid, device, item_mode(item))
                if why is None:
                    self.expected[key].add(item.nodeid)
                else:
                    self.inapplicable[key].add(why)

    def add_module_report(self, report, why_not, rootpath: Path) -> None:
        """A module's collect report lists all its tests, whatever the user then deselects. Its path is relative to
        pytest's rootdir, which need not be the folder pytest runs in (the installed package's command)."""
        path = (rootpath / str(getattr(report, "fspath", "") or "")).resolve() if report.passed else None
        if path in self.test_files:
            self.collected_files.add(path)
            self.add((i for i in report.result if isinstance(i, pytest.Item)), why_not)

    def add_uncollected(self, session, why_not) -> None:
        """Collect the test modules that the run's arguments left out, to know which tests they hold."""
        for path in self.test_files:
            if path not in self.collected_files:
                self.add(_expand(pytest.Module.from_parent(session, path=path)), why_not)

    def to_wire(self) -> dict:
        """A form that pytest-xdist can send from a worker to the controller."""
        return {
            "expected": [[*key, sorted(ids)] for key, ids in self.expected.items()],
            "inapplicable": [[*key, sorted(why)] for key, why in self.inapplicable.items()],
            "deselected": sorted(self.deselected),
        }

    def merge_wire(self, wire: dict) -> None:
        for cid, dev, mode, ids in wire["expected"]:
            self.expected[(cid, dev, mode)].update(ids)
        for cid, dev, mode, why in wire["inapplicable"]:
            self.inapplicable[(cid, dev, mode)].update(why)
        self.deselected.update(wire["deselected"])

    def missing(self, key: Key, ran: dict[str, dict]) -> tuple[int, list[str]]:
        """(tests expected, reasons) where the reasons say why some of them did not run to a pass or a fail."""
        expected = self.expected.get(key, set())
        counts: dict[str, int] = defaultdict(int)
        skips = set()
        for nodeid in expected:
            entry = ran.get(nodeid)
            if entry and entry["outcome"] in ("passed", "failed"):
                continue
            if entry:
                counts["skipped by the test"] += 1
                skips.add(f"{nodeid}: skipped: {entry['reason']}")
            elif nodeid in self.deselected:
                counts["deselected"] += 1
            else:
                counts["not collected or not reached (-x, interrupt)"] += 1
        if not counts:
            return len(expected), []
        how = ", ".join(f"{n} {why}" for why, n in sorted(counts.items()))
        return len(expected), [f"{sum(counts.values())} of {len(expected)} tests did not run: {how}", *sorted(skips)]
