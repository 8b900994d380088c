"""The outcome rules: what a run's test reports make of each clause on each device and mode.

A clause is ``pass`` only when every one of its tests for that device and mode was collected, ran and passed
(``clause_outcome``); its version range, devices and modes, an absent device or a torch.compile that cannot run
decide some outcomes before any test does (``expected_outcome``). results.py writes what these rules decide;
fingerprints.py counts this module among the harness that decides every outcome.
"""

from __future__ import annotations

import json
import re

from . import modes as mod
from . import registry as reg

CLAUSE_IDS = f"{reg.CLAUSE_ID_PATTERN}(?:, {reg.CLAUSE_ID_PATTERN})*"
# What each {field} of a reason template of harness/modes.py may read as.
TEMPLATE_FIELDS = {
    "release": mod.RELEASE_AND_SERIES,
    "clauses": CLAUSE_IDS,
    "clause": reg.CLAUSE_ID_PATTERN,
    "device": r"\w+",
    "where": ".*",
    "member": ".*",
    "what": ".*",
}


def template_pattern(template: str) -> re.Pattern:
    """The texts a template of harness/modes.py makes, each {field} a named group."""
    field = re.compile(r"\\\{(\w+)\\\}")  # "{name}" as re.escape writes it
    return re.compile(field.sub(lambda m: f"(?P<{m[1]}>{TEMPLATE_FIELDS[m[1]]})", re.escape(template)))


# Why a run found no applicable compile-mode test of a clause: the texts of harness/modes.py, any release/member.
# {template: its regex}; status.py reads its status lines back with the same regexes.
HARNESS_REASONS = {text: template_pattern(text) for text in (mod.EAGER_ONLY, mod.SPECIFIED_FROM, mod.DIVERGES)}


def harness_reason(why: str) -> bool:
    return any(p.fullmatch(why) for p in HARNESS_REASONS.values())


def expected_outcome(clause: reg.Clause, device: str, mode: str, torch_version: str, python: str, present):
    """The outcome a clause must have whatever its tests do, as (outcome, reason), or None when its tests decide."""
    if clause.withdrawn is not None:
        return "not-applicable", f"withdrawn: {clause.withdrawn}"
    if not clause.applies_to(torch_version):
        return "not-applicable", f"holds {clause.range_text()}; this is torch {torch_version}"
    if excluded := clause.excludes_device(device) or clause.excludes_mode(mode):
        return "not-applicable", excluded
    if mode in reg.COMPILED_MODES and (why := mod.unsupported(torch_version, python, mode, device)):
        return "not-applicable", why
    if device not in present:
        return "not-run", absent_reason(device)
    return None


def absent_reason(device: str) -> str:
    return f"device {device} not present"


def clause_outcome(clause, device, mode, torch_version, python, present, ran: dict[str, dict], manifest=None):
    """(outcome, tests run, reasons) of one clause on one device in one mode.

    ran: {nodeid: {"outcome": passed|failed|skipped, "reason": ...}} for the clause's tests on the device and mode;
    manifest: what the whole suite expects (harness.manifest); without one, the tests that ran are all there are.
    """
    if fixed := expected_outcome(clause, device, mode, torch_version, python, present):
        return fixed[0], 0, [fixed[1]]
    executed = [e for e in ran.values() if e["outcome"] in ("passed", "failed")]
    if failed := [e["reason"] for e in executed if e["outcome"] == "failed"]:
        return "fail", len(executed), failed
    if manifest is not None:
        expected, missing = manifest.missing((clause.id, device, mode), ran)
        if not expected and mode in reg.COMPILED_MODES:
            # the harness's reasons (e.g. a test specified compiled from a later release), else: no test takes part
            return (
                "not-applicable",
                0,
                sorted(manifest.inapplicable.get((clause.id, device, mode), ())) or [mod.EAGER_ONLY],
            )
    else:
        expected = len(ran)
        missing = [f"{n}: skipped: {e['reason']}" for n, e in ran.items() if e["outcome"] == "skipped"]
    if not expected:
        return "not-run", 0, ["no test of this clause ran"]
    if missing:
        return "not-run", len(executed), missing
    # A pass of some tests only, the others not-applicable for the harness's reasons (specified compiled from a later
    # release, or doing on meta what another clause says): it holds in part, and says why the rest said nothing.
    gaps = (
        sorted(manifest.inapplicable.get((clause.id, device, mode), ()))
        if manifest and mode in reg.COMPILED_MODES
        else []
    )
    return "pass", len(executed), [why for why in gaps if harness_reason(why)]


def observations(per_test: dict[str, dict]) -> dict:
    """What the tests of one clause observed ({test id: {name: value}}), the same whatever order they ran in (under
    xdist, the order their reports arrive): a name on whose value they agree keeps it; a name on which they differ
    lists the values seen, sorted, as text ("aot_autograd, dynamo")."""
    seen: dict[str, set[str]] = {}
    for observed in per_test.values():
        for name, value in observed.items():
            seen.setdefault(name, set()).add(json.dumps(value))  # hashable; 1, true and "1" stay apart
    return {
        name: json.loads(next(iter(values))) if len(values) == 1 else ", ".join(sorted(map(_text, values)))
        for name, values in sorted(seen.items())
    }


def _text(value_json: str) -> str:
    value = json.loads(value_json)
    return value if isinstance(value, str) else value_json


def entries(registry, devices, torch_version, python, present, ran, observed, manifest=None, modes=mod.KNOWN) -> dict:
    """{device: {mode: {clause: entry}}} of a run: ran: {(clause, device, mode): {nodeid: report entry}}, observed:
    {(clause, device, mode): {nodeid: {name: value}}}; the modes not selected are ``not-run`` (never left out)."""
    found = {}
    for device in devices:
        found[device] = {}
        for mode in mod.KNOWN:
            table = found[device][mode] = {}
            for cid, clause in sorted(registry.clauses.items()):
                key = (cid, device, mode)
                if mode in modes:
                    outcome, tests, reasons = clause_outcome(
                        clause, device, mode, torch_version, python, present, ran.get(key, {}), manifest
                    )
                else:
                    fixed = expected_outcome(clause, device, mode, torch_version, python, present)
                    outcome, why = fixed or ("not-run", f"mode {mode} not selected (--mode)")
                    tests, reasons = 0, [why]
                table[cid] = {
                    "outcome": outcome,
                    "tests": tests,
                    "reasons": sorted(set(reasons)),
                    "observed": observations(observed.get(key, {})),
                }
    return found
