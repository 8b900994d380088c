"""Time the suite against the floor measured in the same run: `python -c "import torch"`.

    python benchmarks/bench.py                    # floor, suite serial, suite -n 2, docs build
    python benchmarks/bench.py --nox 2.15.0       # also a warm `nox -s conformance` for that torch: fresh (nothing
                                                  # to run), one page re-recorded (--page), every clause (--all)
    python benchmarks/bench.py --window           # also one page re-recorded over the whole window
    python benchmarks/bench.py --window --window-all --only-nox  # the floor, then one page and every clause
                                                  # over the whole window (record + range checks, minutes to hours)
    python benchmarks/bench.py --modes-per-version  # only: compile-mode suite / eager suite, per kept environment

Each measurement is the median of --repeat runs; ratios are to the floor. These
machines are small and noisy: read ratios, not absolute seconds. No thresholds
are asserted here; the targets are in the README.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(cmd: list[str], repeat: int, env=None) -> float:
    return statistics.median(run_timed(cmd, env)[0] for _ in range(repeat))


def run_timed(cmd: list[str], env=None) -> tuple[float, float]:
    """Seconds of one run: wall clock, and CPU (user + system of the command and every process it waited for, g++
    included), which a busy machine changes much less than the wall clock."""
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, env={**os.environ, **(env or {})})
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--python", default=sys.executable, help="python with torch and pytest (docs: this script's python)"
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--nox", metavar="TORCH", help="also time a warm `nox -s conformance` for this torch")
    parser.add_argument(
        "--window",
        action="store_true",
        help="also time one page re-recorded by a warm `nox -s conformance`, every release",
    )
    parser.add_argument("--window-all", action="store_true", help="with --window: also every clause (-- --all)")
    parser.add_argument("--only-nox", action="store_true", help="time the floor and the nox rows only (no suite runs)")
    parser.add_argument(
        "--page", default="set", help="with --nox/--window: the spec page whose clauses are re-recorded (one change)"
    )
    parser.add_argument("--no-docs", action="store_true", help="skip the docs build")
    parser.add_argument(
        "--modes-per-version",
        action="store_true",
        help="time the suite in eager and in compile mode (cpu, meta) with each .nox/conformance-torch-* python",
    )
    parser.add_argument(
        "--versions", help="with --modes-per-version: only these releases (comma-separated, e.g. 2.1.2,2.13.0)"
    )
    parser.add_argument(
        "--modes",
        default="eager,compile,inductor",
        help="with --modes-per-version: the modes timed, eager first (eager,inductor: compile has its own table)",
    )
    args = parser.parse_args()
    if args.modes_per_version:  # a table of its own: minutes per release, so nothing else is timed
        modes = args.modes.split(",")
        if modes[0] != "eager" or not set(modes) <= {"eager", "compile", "inductor"}:  # ratios are to eager
            sys.exit(f"bench.py: --modes must start with eager and name eager, compile, inductor: {args.modes}")
        modes_per_version(args.repeat, args.versions.split(",") if args.versions else None, modes)
        return 0

    py = args.python
    suite = [py, "-m", "pytest", "conformance", "-q", "-p", "no:cacheprovider"]
    rows = [("floor: python -c 'import torch'", timed([py, "-c", "import torch"], args.repeat))]
    if not args.only_nox:
        rows.append(("suite, serial", timed(suite, args.repeat)))
        rows.append(("suite, -n 2", timed([*suite, "-n", "2"], args.repeat)))
        rows.append(("suite, compile mode (--mode compile)", timed([*suite, "--mode", "compile"], args.repeat)))
    if args.nox:
        session = f"conformance(torch='{args.nox}')"
        timed(["nox", "-s", session], 1)  # make sure it is warm, and nothing stale
        rows.append((f'nox -s "{session}" (warm, fresh)', timed(["nox", "-s", session], args.repeat)))
        page = ["nox", "-s", session, "--", "--page", args.page]
        rows.append((f"  ... one page re-recorded (-- --page {args.page})", timed(page, args.repeat)))
        whole = ["nox", "-s", session, "--", "--all"]
        rows.append(("  ... every clause (-- --all)", timed(whole, args.repeat)))
        # The same two pytest runs the session makes (record + range check), without nox: the difference is nox's cost.
        env_python = str(ROOT / ".nox" / f"conformance-torch-{args.nox.replace('.', '-')}" / "bin" / "python")
        out = tempfile.mkdtemp()
        bare = [env_python, "-m", "pytest", "conformance", "-p", "no:cacheprovider"]
        start = time.perf_counter()
        for _ in range(args.repeat):
            subprocess.run([*bare, "--results", f"{out}/{{device}}.json"], cwd=ROOT, capture_output=True)
            subprocess.run([*bare, "-q", "--ignore-ranges", "--device", "cpu,meta"], cwd=ROOT, capture_output=True)
        rows.append(("same pytest runs without nox", (time.perf_counter() - start) / args.repeat))
        shutil.rmtree(out)
    if args.window:  # once each: they record every release of the window (minutes)
        page = ["nox", "-s", "conformance", "--", "--page", args.page]
        rows.append((f"nox -s conformance -- --page {args.page}, window", timed(page, 1)))
        if args.window_all:
            rows.append(("nox -s conformance -- --all, window", timed(["nox", "-s", "conformance", "--", "--all"], 1)))
    if not (args.no_docs or args.only_nox):
        out = Path(tempfile.mkdtemp())
        sphinx = [sys.executable, "-m", "sphinx", "-W", "-q", "-E", "-b", "html", ".", str(out)]
        rows.append(("docs, clean build", timed(sphinx, 1)))
        shutil.rmtree(out)

    floor = rows[0][1]
    print(f"cores: {os.cpu_count()}, python: {py}")
    print(f"{'measurement':<48} {'seconds':>8} {'x floor':>8}")
    for name, seconds in rows:
        print(f"{name:<48} {seconds:8.2f} {seconds / floor:8.2f}")
    times = dict(rows)
    if not args.only_nox:
        compiled, eager = times["suite, compile mode (--mode compile)"], times["suite, serial"]
        print(f"compile mode / eager suite: {compiled / eager:.2f}x")
    return 0


def modes_per_version(repeat: int, versions: list[str] | None, modes: list[str]) -> None:
    """Per kept release: the floor, then the suite (serial, cpu + meta) in each mode, as a markdown table of seconds and
    of ratios to the floor (eager) and to the eager suite (the compiled modes)."""
    envs = sorted((ROOT / ".nox").glob("conformance-torch-*"), key=lambda p: [int(n) for n in p.name.split("-")[2:]])
    if versions:
        kept = {".".join(e.name.split("-")[2:]): e for e in envs}
        if missing := [v for v in versions if v not in kept]:  # every asked release, or none: no silent gaps
            sys.exit(f"bench.py: no kept environment under .nox/ for --versions {','.join(missing)}")
        envs = [kept[v] for v in versions]
    if not envs:
        sys.exit("bench.py: no kept environment under .nox/ (nox -s conformance --install-only makes them)")
    compiled = modes[1:]
    print(f"cores: {os.cpu_count()}, repeat: {repeat}, started {time.strftime('%Y-%m-%d %H:%M')}", flush=True)
    header = ["torch", "floor s", *(f"{m} s" for m in modes), "eager x floor", *(f"{m} / eager" for m in compiled)]
    header += [f"{m} CPU s" for m in modes] + [f"{m} / eager, CPU" for m in compiled]
    print("| " + " | ".join(header) + " |")
    print("| --- |" + " ---: |" * (len(header) - 1), flush=True)
    for env in envs:
        py = str(env / "bin" / "python")
        suite = [py, "-m", "pytest", "conformance", "-q", "-p", "no:cacheprovider", "--device", "cpu,meta"]
        version = ".".join(env.name.split("-")[2:])
        try:
            floor = timed([py, "-c", "import torch"], repeat)
            # inductor runs on cpu (conformance/harness/modes.py), with torch's on-disk caches (TORCHINDUCTOR_CACHE_DIR)
            # as the environment has them
            runs = {mode: [run_timed([*suite, "--mode", mode]) for _ in range(repeat)] for mode in modes}
        except subprocess.CalledProcessError as e:  # a run that failed has no time to report: say so, go on
            why = f"signal {-e.returncode}" if e.returncode < 0 else f"exit {e.returncode}"
            output = (e.stdout or b"").decode(errors="replace").splitlines()
            failed = [line.removeprefix("FAILED ") for line in output if line.startswith("FAILED")]
            run = " ".join(e.cmd[1:])
            print(f"| {version} | `{run}` failed ({why}): {len(failed)} tests, {failed[:3]} |", flush=True)
            continue
        seconds = {m: statistics.median(wall for wall, _ in runs[m]) for m in modes}
        cpu = {m: statistics.median(used for _, used in runs[m]) for m in modes}
        cells = [version, f"{floor:.2f}", *(f"{seconds[m]:.2f}" for m in modes), f"{seconds['eager'] / floor:.1f}"]
        cells += [f"{seconds[m] / seconds['eager']:.1f}" for m in compiled]
        cells += [f"{cpu[m]:.2f}" for m in modes] + [f"{cpu[m] / cpu['eager']:.1f}" for m in compiled]
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
