"""What the two commands that compare a run with the recorded results share: the release check
(conformance/release_check.py, from a clone) and torch-update-spec (conformance/cli.py, installed).

Their errors are one line on stderr and exit status 2, never a traceback; their arguments after ``--`` go to pytest;
and one comparison serves both: the recorded versions, the one compared with, what changed, and the report.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from packaging.version import InvalidVersion, Version

from conformance.harness import diff, releases, results
from conformance.harness.devices import KNOWN
from conformance.harness.registry import SpecError


class UsageError(Exception):
    pass


def lines(text: str) -> list[str]:
    """The non-blank lines of a text, stripped."""
    return [ln.strip() for ln in text.splitlines() if ln.strip()]


def shown(path: Path) -> str:
    """A path as the user reads it: relative to the folder the command runs in when it lies inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one UsageError line naming the help to read, not a usage block."""

    help_hint = "python conformance/release_check.py --help"

    def error(self, message):
        raise UsageError(f"{message} (see: {self.help_hint})")


def split_pytest_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """The command's own arguments, and those after ``--`` (for pytest)."""
    if "--" not in argv:
        return argv, []
    return argv[: argv.index("--")], argv[argv.index("--") + 1 :]


def one_line_errors(command, prog: str) -> int:
    """Run ``command()``; its exit status, or 2 for any error and 130 when interrupted, said in one line on stderr,
    never a traceback."""

    def say(message: str) -> None:
        line = "; ".join(lines(message)) or "(no message)"
        print(f"{prog}: {line[:1000]}", file=sys.stderr)

    try:
        return command()
    except (UsageError, results.ResultsError, SpecError) as exc:
        say(str(exc))
        return 2
    except KeyboardInterrupt:
        say("interrupted")
        return 130
    except Exception as exc:  # noqa: BLE001  (a crash is one line and exit 2, never a traceback)
        say(f"unexpected error: {type(exc).__name__}: {exc}")
        return 2


def recorded() -> list[str]:
    """The recorded versions, oldest first, once every recorded file is checked (valid, fresh, well placed)."""
    where = shown(results.RESULTS_DIR)
    if not results.RESULTS_DIR.is_dir():
        raise UsageError(
            f"no recorded results to compare with: {where}/ does not exist; record some with: nox -s conformance"
        )
    results.check_recorded(results.RESULTS_DIR, allow_stale=True)  # stale clauses: not compared, and named
    versions = results.recorded_versions(results.RESULTS_DIR)
    if not versions:
        raise UsageError(f"no recorded results to compare with in {where}/; record some with: nox -s conformance")
    return versions


def check_against(against: str, versions: list[str]) -> tuple[str, str]:
    """The recorded folder that --against names, and how: a version (v2.0.1 and 2.0.1 are the same), or a minor
    release (2.12: its recorded patch, as a run of any 2.12.x is compared with it)."""
    try:
        wanted = Version(against)
    except InvalidVersion:
        raise UsageError(f"--against {against!r} is not a version; recorded versions: {', '.join(versions)}") from None
    for version in versions:
        if Version(version) == wanted:
            return version, "--against"
    if len(wanted.release) == 2 and not (wanted.pre or wanted.dev or wanted.post or wanted.local):
        for version in versions:
            if Version(version).release[:2] == wanted.release:
                return version, f"--against {against}: its recorded patch"
    raise UsageError(f"no recorded results for torch {against}; recorded versions: {', '.join(versions)}")


def recorded_documents(against: str) -> dict[str, dict]:
    """The recorded results of ``against`` for each device recorded."""
    paths = {device: results.RESULTS_DIR / against / f"{device}.json" for device in KNOWN}
    return {device: results.load(path) for device, path in paths.items() if path.is_file()}


def compare(new: dict[str, dict], old: dict[str, dict], against: str, heading: str) -> int:
    """Print under ``heading`` what changed from the recorded results of ``against`` (``old``) to the run ``new``
    (one document per device each): 1 when a clause changed its outcome, else 0. A clause that ran before and did
    not run now (a partial run, a test that skipped itself) is a change, never an all-clear; a device or mode that
    only one of the two ran has nothing to compare, and is named."""
    nothing = {"devices": {}}
    changes, unrecorded, not_run, changed_spec = [], [], [], set()
    for device in [*new, *(d for d in old if d not in new)]:
        this, recorded_here = new.get(device, nothing), old.get(device, nothing)
        changes += diff.compare(recorded_here, this)
        changed_spec.update(diff.not_comparable(recorded_here, this))
        unrecorded += [f"{d} {m}" for d, m in diff.unrecorded(recorded_here, this)]
        not_run += [f"{d} {m}" for d, m in diff.unrecorded(this, recorded_here)]
    print(heading)
    print(diff.report(changes))
    if unrecorded:
        print(f"(not compared: {', '.join(unrecorded)}: nothing was recorded there for torch {against})")
    if not_run:
        print(f"(not compared: {', '.join(not_run)}: recorded for torch {against}, not run in this run)")
    if changed_spec:
        cids = sorted(changed_spec, key=results.natural)
        print(
            f"(not compared: {len(cids)} clauses whose text or tests changed since torch {against} was recorded, "
            f"not torch: {', '.join(cids[:20])}{' ...' if len(cids) > 20 else ''}; nox -s conformance refreshes them)"
        )
    return 1 if changes else 0


def release_pages(against: str, version: str) -> str:
    """The site's "What changed in torch X.Y" pages of the boundaries between the two versions, or ""."""
    crossed = releases.between(against, version)
    if not crossed:
        return ""
    text = [f"what the spec says changed between torch {against} and {version} (build the site: nox -s docs):"]
    text += [f"  torch {b}: {releases.built_page(b)}" for b in crossed]
    return "\n".join(text)
