"""What the recorded results say about each clause: one line per clause for the spec pages."""

from __future__ import annotations

import functools
from collections import defaultdict

from packaging.version import Version

from . import registry as reg
from . import results
from .devices import KNOWN
from .modes import KNOWN as MODES

WORDS = {"pass": "holds", "fail": "FAILS", "not-applicable": "not applicable", "not-run": "not run"}


@functools.cache
def recorded() -> dict[tuple[str, str], dict]:
    """{(torch public version, device): results document} for every valid, fresh committed results file."""
    found = {}
    registry, current = reg.default(), results.suite_hash()
    for path in results.recorded_files():
        try:
            found[(path.parent.name, path.stem)] = results.check_file(path, registry, current)
        except results.ResultsError:
            continue  # results.check_recorded() reports it and fails the build
    return found


def column(device: str, mode: str) -> str:
    return device if mode == "eager" else f"{device} compiled"


COLUMNS = [column(d, m) for m in MODES for d in KNOWN]  # cpu, meta, ..., cpu compiled, ...


def outcomes(clause_id: str) -> dict[str, dict[str, list[str]]]:
    """{column ("cpu", "cpu compiled", ...): {outcome: [versions]}} for one clause, versions in ascending order."""
    table: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for (version, _), doc in sorted(recorded().items(), key=lambda kv: Version(kv[0][0])):
        for (device, mode), entries in results.tables(doc):
            table[column(device, mode)][entries[clause_id]["outcome"]].append(version)
    return table


def spans(versions: list[str], everything: list[str]) -> str:
    """'2.0.1-2.4.1, 2.9.1' style: runs of consecutive recorded versions."""
    runs: list[list[str]] = []
    for v in everything:
        if v in versions:
            if runs and everything.index(runs[-1][-1]) == everything.index(v) - 1:
                runs[-1].append(v)
            else:
                runs.append([v])
    return ", ".join(r[0] if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)


def clause_line(clause: reg.Clause) -> str:
    everything = sorted({v for v, _ in recorded()}, key=Version)
    table = outcomes(clause.id)
    if not table:
        return "Recorded results: none yet."
    # Devices with the same story are told together.
    stories: dict[str, list[str]] = defaultdict(list)
    for name in COLUMNS:
        if name in table:
            story = "; ".join(
                f"{WORDS[o]} on {spans(vs, everything)}" for o, vs in sorted(table[name].items(), key=lambda kv: kv[0])
            )
            stories[story].append(name)
    return "Recorded results: " + " | ".join(f"{', '.join(ds)}: {s}" for s, ds in stories.items()) + "."
