"""What the recorded results say: one line per clause, and the coverage said once per page and once per site."""

from __future__ import annotations

import functools
from collections import defaultdict

from packaging.version import Version

from . import modes, outcomes, results
from . import registry as reg
from .devices import KNOWN
from .modes import KNOWN as MODES

WORDS = {"pass": "holds", "fail": "FAILS", "not-applicable": "not applicable", "not-run": "not run"}
# Why a clause inside its range was not-applicable compiled, in the words of a clause's status line.
SPECIFIED_FROM = outcomes.HARNESS_REASONS[modes.SPECIFIED_FROM]
DIVERGES = outcomes.HARNESS_REASONS[modes.DIVERGES]
COMPILED_GAPS = (
    (SPECIFIED_FROM, "before {release} see {clauses}"),
    (outcomes.HARNESS_REASONS[modes.EAGER_ONLY], "no test compiles its update step"),
    (DIVERGES, "`{member}` {what} on {device}, {where} ({clause})"),
)


# A draft of the site (the short loop: nox -s page) is built before a changed clause is recorded: its stale
# outcomes, {torch version: clause ids}, are shown as not run there. A real build refuses stale results.
DRAFT_ENV = "CONFORMANCE_SITE_DRAFT"  # =1: a draft build (docs/_ext/clauses.py check_results)
DRAFT_STALE: dict[str, set[str]] = {}
DRAFT_REASON = "changed since it was recorded (a draft of the site): nox -s conformance records it"
DRAFT_ENTRY = {"fingerprint": "", "observed": {}, "outcome": "not-run", "reasons": [DRAFT_REASON], "tests": 0}


@functools.cache
def recorded() -> dict[tuple[str, str], dict]:
    """{(torch public version, device): results document} for every valid committed results file
    (its stale clauses fail the build: results.check_recorded; a draft shows them as not run)."""
    found = {}
    registry = reg.default()
    for path in results.recorded_files():
        try:
            doc = found[(path.parent.name, path.stem)] = results.check_file(path, registry)
        except results.ResultsError:
            continue  # results.check_recorded() reports it and fails the build
        for _, entries in results.tables(doc):
            for cid in DRAFT_STALE.get(path.parent.name, ()):
                entries[cid] = dict(DRAFT_ENTRY)
    return found


def versions() -> list[str]:
    """The recorded torch releases, oldest first."""
    return sorted({v for v, _ in recorded()}, key=Version)


def devices_run() -> list[str]:
    """The devices some recorded run had (in KNOWN order); the others were never run."""
    present = {d for (_, device), doc in recorded().items() for d in doc["present"] if d == device}
    return [d for d in KNOWN if d in present]


def column(device: str, mode: str) -> str:
    return device if mode == "eager" else f"{device} {reg.MODE_WORDS[mode]}"


def outcomes(clause_id: str) -> dict[str, dict[str, list[str]]]:
    """{column ("cpu", "cpu compiled", ...): {outcome: [versions]}} for one clause, versions in ascending order."""
    table: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for (version, _), doc in sorted(recorded().items(), key=lambda kv: Version(kv[0][0])):
        for (device, mode), entries in results.tables(doc):
            table[column(device, mode)][entries[clause_id]["outcome"]].append(version)
    return table


def spans(versions: list[str], everything: list[str]) -> str:
    """'2.0.1–2.4.1, 2.9.1' style: runs of consecutive recorded versions."""
    runs: list[list[str]] = []
    for v in everything:
        if v in versions:
            if runs and everything.index(runs[-1][-1]) == everything.index(v) - 1:
                runs[-1].append(v)
            else:
                runs.append([v])
    return ", ".join(r[0] if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)


def coverage() -> str:
    """Where the results come from: said once per site and once per spec page, not under each clause."""
    everything, ran = versions(), devices_run()
    if not everything:
        return "No results are recorded yet."
    never = [d for d in KNOWN if d not in ran]
    text = (
        f"Results recorded on torch {everything[0]} to {everything[-1]} ({len(everything)} releases), "
        f"on {' and '.join(ran)}, in eager mode and compiled (torch.compile with aot_eager, and with inductor, "
        "the default backend)."
    )
    if never:
        text += f" Never run on {' or '.join(never)}: the recording machines have no such device."
    return text


def _story(clause: reg.Clause, device: str, mode: str) -> tuple[str, ...]:
    """What one device and mode recorded for a clause, in version order: ('holds on 2.0.1–2.8.0', ...)."""
    everything = versions()
    by_word: dict[str, list[str]] = defaultdict(list)
    told = set(WORDS.values())  # the words of outcomes, said with their releases; the others are gaps
    for version in everything:
        doc = recorded().get((version, device))
        entry = doc and doc["devices"][device][mode].get(clause.id)
        if not entry or not clause.applies_to(version):
            continue  # outside its range: the boundary sentence says where to look instead
        if entry["outcome"] == "not-applicable":
            for gap in compiled_gaps(entry["reasons"]):
                by_word[gap].append(version)
            continue  # torch.compile unsupported (torch 2.0) and the like: nothing to say per clause
        if results.in_part(entry):
            told.add(word := f"holds in part (other tests: {'; '.join(compiled_gaps(entry['reasons']))})")
            by_word[word].append(version)
            continue
        by_word[WORDS[entry["outcome"]]].append(version)
    outcomes = sorted((w for w in by_word if w in told), key=lambda w: Version(by_word[w][0]))
    gaps = [w for w in by_word if w not in told]
    return tuple([f"{w} on {spans(by_word[w], everything)}" for w in outcomes] + gaps)


def compiled_gaps(reasons: list[str]) -> list[str]:
    """Why a clause's compiled tests said nothing, in the words of its status line ('before 2.3 see SET-90')."""
    gaps = []
    for pattern, words in COMPILED_GAPS:
        # Of several tests' reasons ("specified from 2.9", "from 2.11"), the earliest release tells; every clause
        # they name is said.
        matches = [m for m in map(pattern.match, reasons) if m]
        matches.sort(key=lambda m: Version(m.groupdict().get("release", "0").split()[0]))
        if matches:
            said = matches[0].groupdict()
            if "clauses" in said:
                named = [c for m in matches for c in m["clauses"].split(", ")]
                said["clauses"] = ", ".join(dict.fromkeys(named))
            if "member" in said:  # a population's members: each differs as its clause says
                members = {m["member"]: m["clause"] for m in matches}
                if len(members) > 1:
                    clauses = ", ".join(dict.fromkeys(members.values()))
                    gaps.append(f"{len(members)} members differ on {said['device']} ({clauses})")
                    continue
            gaps.append(words.format(**said))
    return gaps


def boundaries(clause: reg.Clause) -> list[str]:
    """'from 2.9 see INDEX-5' and 'before 2.9 see INDEX-4': the clauses of the same page across its range ends."""
    same_page = [c for c in reg.default().clauses.values() if c.page == clause.page and c.id != clause.id]
    said = []
    if clause.until:
        after = [c.id for c in same_page if c.since == clause.until and c.modes == clause.modes]
        if after:
            said.append(
                f"From {clause.until}{_except(v for v in clause.also_on if v > clause.until)}: {', '.join(after)}."
            )
    if clause.since:
        before = [c.id for c in same_page if c.until == clause.since and c.modes == clause.modes]
        if before:
            said.append(
                f"Before {clause.since}{_except(v for v in clause.also_on if v < clause.since)}: {', '.join(before)}."
            )
    return said


def _except(series) -> str:
    """' (except on 2.1)': the ``also-on`` release series where the clause itself holds, beyond a range end."""
    series = [str(v) for v in series]
    return f" (except on {', '.join(series)})" if series else ""


def clause_line(clause: reg.Clause) -> str:
    """The recorded results of one clause in a sentence, eager first, devices with the same story together."""
    if not recorded():
        return "Recorded results: none yet."
    by_mode = {}
    for mode in MODES:
        if clause.excludes_mode(mode):
            continue
        stories: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for device in devices_run():
            if not clause.excludes_device(device):
                stories[_story(clause, device, mode)].append(device)
        stories.pop((), None)
        by_mode[mode] = stories
    # Modes with the same story are said together: with eager's in its parenthesis ("(cpu, meta; eager and
    # compiled)"), or as one labelled sentence ("Compiled and inductor: ..."); only eager's sentence goes unlabelled.
    together: dict[tuple, list[str]] = defaultdict(list)
    for mode, stories in by_mode.items():
        together[tuple((story, tuple(devices)) for story, devices in stories.items())].append(mode)
    sentences = []
    for stories, named in together.items():
        told = "; ".join(f"{'; '.join(story)} ({', '.join(devices)})" for story, devices in stories)
        if not told:
            continue
        words = [reg.MODE_WORDS[m] for m in named]
        if named[0] == "eager":
            also = f"; eager and {' and '.join(words[1:])})" if len(named) > 1 else ")"
            sentences.append(told[:-1] + also + ".")
        else:
            sentences.append(f"{' and '.join(words).capitalize()}: {told}.")
    text = " ".join(sentences) or "not applicable on every recorded release."
    return " ".join(["Recorded:", text, *boundaries(clause)])


def short(clause: reg.Clause) -> str:
    """The clause index's "holds on" column: the releases where it held (any device or mode), or where it failed."""
    table = outcomes(clause.id)
    everything = versions()
    failed = sorted({v for by in table.values() for v in by.get("fail", [])}, key=Version)
    if failed:
        return f"FAILS on {spans(failed, everything)}"
    held = sorted({v for by in table.values() for v in by.get("pass", [])}, key=Version)
    return spans(held, everything) if held else "no recorded release in its range"
