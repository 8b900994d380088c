"""A function run on every rank of a process group of its own: one new process per rank, gloo on 127.0.0.1 only,
bounded in time, torn down by itself.

    values = ranks.run(on_two_ranks, world_size=2)  # on_two_ranks(rank, world_size) on each rank: its values

Each rank is ``python -m conformance.harness.ranks``: a new interpreter (nothing of the test process, its grad mode,
its compiled code or its process group, leaks into it). Rank 0 opens the group's store on 127.0.0.1, on a port the
system picks free; ``GLOO_SOCKET_IFNAME=lo`` keeps gloo's own connections on the loopback too. The function takes
the rank and the world size and returns a JSON value. A rank that raises, dies or is still running when the bound passes
(``CONFORMANCE_RANK_TIMEOUT`` seconds, default 120) fails the test with its reason, and every rank still running is
killed: a hung rank is a failing outcome, never a hung suite.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import pytest

DEFAULT_TIMEOUT = 120.0  # seconds for a whole run: each rank imports torch (2-5 s) and sets up gloo


def timeout() -> float:
    return float(os.environ.get("CONFORMANCE_RANK_TIMEOUT", DEFAULT_TIMEOUT))


def run(function, world_size: int = 2) -> list:
    """``function`` (a module-level function: each rank imports it by name) run on ``world_size`` ranks; its return
    value on each rank, by rank. Passed as itself, not as its name, so that the clauses' fingerprints follow it."""
    target, bound = f"{function.__module__}:{function.__qualname__}", timeout()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p or os.getcwd() for p in sys.path),  # what the test process imports
        "GLOO_SOCKET_IFNAME": "lo0" if sys.platform == "darwin" else "lo",  # the loopback interface's name
        "OMP_NUM_THREADS": "1",
    }
    with tempfile.TemporaryDirectory(prefix="ranks-") as tmp:
        out = Path(tmp)
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", __name__, target, str(rank), str(world_size), str(bound), tmp],
                env={**env, "CONFORMANCE_RANK": str(rank)},
                stdout=subprocess.DEVNULL,
                stderr=(out / f"{rank}.err").open("w"),
            )
            for rank in range(world_size)
        ]
        deadline = time.monotonic() + bound
        try:
            while time.monotonic() < deadline:
                codes = [p.poll() for p in procs]
                if None not in codes or any(code not in (None, 0) for code in codes):
                    break  # all done, or one rank failed: the others would wait for it until the bound
                time.sleep(0.05)
        finally:
            running = [rank for rank, p in enumerate(procs) if p.poll() is None]
            for p in procs:
                if p.poll() is None:
                    p.kill()
                p.wait()
        for rank, p in enumerate(procs):  # the first rank that failed on its own says why
            if p.returncode not in (0, None) and rank not in running:
                how = f"died of signal {-p.returncode}" if p.returncode < 0 else f"exited with code {p.returncode}"
                pytest.fail(f"rank {rank} of {world_size} {how} running {target}{_tail(out / f'{rank}.err')}")
        if running:
            pytest.fail(
                f"rank {', '.join(map(str, running))} of {world_size} still running {target} after {bound:g} s"
                " (CONFORMANCE_RANK_TIMEOUT): killed"
            )
        return [json.loads((out / f"{rank}.json").read_text()) for rank in range(world_size)]


def _tail(path: Path) -> str:
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    return f": {lines[-1]}" if lines else ""


def _rank_main(target: str, rank: int, world_size: int, bound: float, out: Path) -> None:
    import torch.distributed as dist

    # A hook for the harness's self-tests: the sabotage that patches torch in the test process patches each rank too.
    if setup := os.environ.get("CONFORMANCE_RANK_SETUP"):
        module, function = setup.split(":")
        getattr(importlib.import_module(module), function)()
    dist.init_process_group(
        "gloo",
        store=_store(rank, world_size, bound, out),
        rank=rank,
        world_size=world_size,
        timeout=timedelta(seconds=bound),
    )
    try:
        module, function = target.split(":")
        value = getattr(importlib.import_module(module), function)(rank, world_size)
        (out / f"{rank}.json").write_text(json.dumps(value))
    finally:
        dist.destroy_process_group()


def _store(rank: int, world_size: int, bound: float, out: Path):
    """The group's TCP store on 127.0.0.1: rank 0 opens it on a port the system picks free and writes the port down
    for the other ranks (no port chosen first and taken by another process in between)."""
    import torch.distributed as dist

    timeout, port_file = timedelta(seconds=bound), out / "port"
    if rank == 0:
        store = dist.TCPStore("127.0.0.1", 0, world_size, True, timeout=timeout, wait_for_workers=False)
        (out / "port.tmp").write_text(str(store.port))
        (out / "port.tmp").rename(port_file)  # whole or absent
        return store
    while not port_file.exists():  # the parent kills this rank when the bound passes
        time.sleep(0.05)
    return dist.TCPStore("127.0.0.1", int(port_file.read_text()), world_size, False, timeout=timeout)


if __name__ == "__main__":
    target, rank, world_size, bound, out = sys.argv[1:]
    _rank_main(target, int(rank), int(world_size), float(bound), Path(out))
    # The rank's values are written and its group destroyed: it leaves without the interpreter's teardown, where on
    # torch 2.10.0 a thread still running ends the process in std::terminate ("terminate called without an active
    # exception", SIGABRT with no Python frame: 3 runs of 25), which is no outcome of the function's. Gloo's worker
    # threads outliving the interpreter's finalization: pytorch/pytorch#179291 (an atexit fix, abandoned), #190489.
    sys.stderr.flush()
    os._exit(0)
