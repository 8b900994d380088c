"""Compare two results documents clause by clause: what a new torch changed."""

from __future__ import annotations

from dataclasses import dataclass

from . import registry as reg
from . import results

# What a maintainer acts on first: a change of a clause at one of these levels is a change of what torch promises;
# at any other level (what torch does today, recorded on purpose, or what varies) it is a change of an observation.
CONTRACT_LEVELS = ("MUST", "SHOULD", "MAY")


@dataclass(frozen=True)
class Change:
    clause: str
    device: str
    mode: str
    before: str
    after: str
    reasons: tuple[str, ...]

    @property
    def kind(self) -> str:
        if self.after == "fail":
            return "newly failing"
        if self.after == "pass":
            return "newly passing"
        return f"newly {self.after}"

    def describe(self, level: str = "") -> str:
        why = f"\n      observed: {self.reasons[0]}" if self.reasons else ""
        level = f" ({level})" if level else ""
        return (
            f"  {self.clause}{level} [{self.device}, {self.mode}]: expected {self.before}, observed {self.after}{why}"
        )


def ran(table: dict) -> bool:
    """Whether any test ran in a (device, mode) table: some clause passed or failed."""
    return any(e["outcome"] in ("pass", "fail") for e in table.values())


def unrecorded(old: dict, new: dict) -> list[tuple[str, str]]:
    """(device, mode) where the new run ran tests but the old document recorded none (a device it did not have)."""
    return [
        (device, mode)
        for (device, mode), table in results.tables(new)
        if ran(table) and not ran(old["devices"].get(device, {}).get(mode, {}))
    ]


def not_comparable(old: dict, new: dict) -> list[str]:
    """The clauses of both documents whose outcomes were decided by different versions of the clause or its tests
    (their fingerprints differ): a different outcome there says nothing about torch."""
    found = set()
    for (device, mode), table in results.tables(new):
        before = old["devices"].get(device, {}).get(mode, {})
        found.update(c for c, e in table.items() if c in before and before[c]["fingerprint"] != e["fingerprint"])
    return sorted(found, key=results.natural)


def compare(old: dict, new: dict) -> list[Change]:
    """Changes of outcome for every (clause, device, mode) in both documents, where both runs ran tests under the
    same fingerprint of the clause (``not_comparable``)."""
    changes = []
    for (device, mode), table in results.tables(new):
        before = old["devices"].get(device, {}).get(mode)
        if before is None or not ran(table) or not ran(before):
            continue  # a device or mode absent from either run has nothing to compare (see unrecorded)
        for cid, entry in sorted(table.items()):
            if cid not in before or before[cid]["fingerprint"] != entry["fingerprint"]:
                continue
            if before[cid]["outcome"] != entry["outcome"]:
                was = before[cid]["outcome"]
                changes.append(Change(cid, device, mode, was, entry["outcome"], tuple(entry["reasons"])))
    return changes


def report(changes: list[Change]) -> str:
    """The changes by level, what torch promises first, then what it was observed to do; each by kind of change."""
    if not changes:
        return "no clause changed its outcome"
    clauses = reg.default().clauses
    level = {c.clause: clauses[c.clause].level if c.clause in clauses else "no longer in the spec" for c in changes}
    contract = [c for c in changes if level[c.clause] in CONTRACT_LEVELS]
    observed = [c for c in changes if c not in contract]
    lines = []
    for title, group in (("contract changed", contract), ("observed detail changed", observed)):
        if group:
            lines.append(f"{title} ({len(group)}):")
            for kind in sorted({c.kind for c in group}):
                lines.append(f"  {kind}:")
                lines.extend(f"  {c.describe(level[c.clause])}" for c in group if c.kind == kind)
    return "\n".join(lines)
