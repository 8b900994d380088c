"""OPDB_INPLACE: every in-place operation of torch's own operator database, as a population.

Note [The op_db population]
---------------------------
``torch.testing._internal.common_methods_invocations.op_db`` ships in every torch wheel: one ``OpInfo`` per
operator (and per variant of it, ``div.floor_rounding``), with its in-place variant (``op.inplace_variant``, e.g.
``torch.Tensor.add_``) and a generator of sample inputs (``op.sample_inputs(device, dtype)``). The population
``OPDB_INPLACE`` is drawn from it for the installed torch, so that it grows with torch:

- candidates: every OpInfo of op_db whose ``inplace_variant`` is not None, in op_db's order;
- a member is a candidate that has a float32 sample usable in place on cpu: float32 is among its supported
  dtypes on cpu, and some sample of ``op.sample_inputs("cpu", torch.float32)`` (generated with
  ``torch.manual_seed(0)``) has a non-empty float32 tensor as input and runs through the in-place variant, with
  grad mode on, on a copy of that input that does not require grad, and also on meta (moved there, under
  ``torch.no_grad()``); the first such sample is the member's (every member of every release 2.0.1 .. 2.15.0
  runs on meta, so the population is the same on both devices);
- every other candidate is left out with its reason (no float32 on cpu: the integer-only ``bitwise_*_``,
  ``gcd_``, ``lcm_``; no sample that runs in place: each sample's input would have to broadcast): ``excluded``.

The member id is ``op.name`` + ``_`` (unless it ends with one: ``resize_``, ``zero_``), + ``.`` +
``op.variant_test_name`` if any: ``add_``, ``div_.floor_rounding``,
``nn.functional.elu_`` (the in-place variant of an ``nn.functional`` op is the function with ``inplace=True``).
A member is called with a device: ``member(device)`` returns a fresh copy ``x`` of the sample's input on that
device (a leaf that does not require grad) and ``update(t)``, which runs the in-place variant on ``t`` with the
sample's other arguments (copied to the device; none requires grad).

Importing op_db takes 0.3 to 0.7 s on torch 2.0 .. 2.3 and 2 to 5 s from 2.4 on (it imports torch's test
utilities; drawing the members after it, 0.3 to 0.5 s, since ``op.sample_inputs`` is bypassed: from 2.1 it wraps
every sample in an iterator that calls ``inspect.stack()``, about 50 ms a sample): it is imported only when a
population's members are first asked for (the collection of a test over it), never when this module is imported
(the docs build has no torch). That import changes process-wide state, which is put back at once: the manual
seed (``torch.manual_seed(1234)`` up to 2.9), ``torch.backends.disable_global_flags()``, the patched
``ScriptFunction.__call__``/``ScriptMethod.__call__``; it parses ``sys.argv``, which it is not given.

Sample or full: a run takes all members (``--population full``) or a fixed sample (``--population sample``, the
default of a run that writes no results): ``SAMPLE_SIZE`` members drawn with ``random.Random(SAMPLE_SEED)``
from the members in op_db's order, so the same members for a given torch release. A run that writes results
(``--results``, ``--record``) takes all of them; ``--record`` refuses ``--population sample``. What a run took is
recorded with each clause's outcome (``observed``: ``{"OPDB_INPLACE": "sample: 40 of 149 members"}``) and
printed in the run's summary. See ``opdb_plugin.py``.

The members per release, for the spec page (whose build has no torch): ``opdb_inplace.json`` beside this
module, written by ``python -m conformance.harness.opdb --write`` in each release's environment.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import logging
import random
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

NAME = "OPDB_INPLACE"
SAMPLE_SIZE = 40
SAMPLE_SEED = 20251201
DATA_FILE = Path(__file__).with_name("opdb_inplace.json")

DESCRIPTION = (
    "Every OpInfo of torch's operator database (`op_db` of `torch.testing._internal.common_methods_invocations`, "
    "drawn from the installed torch) that has an in-place variant and a float32 sample usable in place on cpu: "
    "float32 is among its dtypes on cpu and a sample of `op.sample_inputs('cpu', torch.float32)` (seed 0) has a "
    "non-empty float32 input and runs through the in-place variant, with grad mode on, on a copy of that input "
    "that does not require grad, on cpu and (under `torch.no_grad()`) on meta; the first such sample is the "
    "member's input `x` and arguments. Left out: the OpInfos with an in-place variant that have no such sample "
    "(named below per release: integer-only operations, and `float_power_`, whose float32 result would be "
    "float64). Id: the OpInfo's name with `_` (and `.variant`)."
)


def _public(version: str) -> str:
    return version.split("+")[0]


@contextlib.contextmanager
def _contained():
    """Import op_db and make samples without leaving process-wide state changed (see the module's note)."""
    import torch

    from . import state

    before = state.snapshot()
    argv, sys.argv = sys.argv, sys.argv[:1]  # common_utils parses sys.argv at import (2.0 .. 2.9)
    disabled = logging.root.manager.disable
    logging.disable(logging.WARNING)  # "No CUDA runtime is found" and the like, at import
    flag = "__allow_nonbracketed_mutation_flag"
    backends_flag = torch.backends.__dict__.get(flag)
    calls = (torch._C.ScriptFunction.__call__, torch._C.ScriptMethod.__call__)
    try:
        quiet = io.StringIO()
        with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        sys.argv = argv
        logging.disable(disabled)
        if backends_flag is not None:
            torch.backends.__dict__[flag] = backends_flag
        torch._C.ScriptFunction.__call__, torch._C.ScriptMethod.__call__ = calls
        state.check(before)  # puts back what changed (the manual seed)


def _map(fn, value):
    """``fn`` applied to every tensor in nested lists, tuples and dicts."""
    import torch

    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        mapped = [_map(fn, v) for v in value]
        return type(value)(mapped) if type(value) in (list, tuple) else type(value)(*mapped)
    if isinstance(value, dict):
        return {k: _map(fn, v) for k, v in value.items()}
    return value


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:160] if text else ''}"


@dataclass(frozen=True)
class Member:
    """One in-place operation of op_db with its sample; ``member(device)`` -> (x, update)."""

    id: str
    population: str
    inplace: object = field(repr=False, compare=False)
    input: object = field(repr=False, compare=False)
    args: tuple = field(repr=False, compare=False)
    kwargs: dict = field(repr=False, compare=False)

    def __call__(self, device: str):
        def to(t):
            return t.detach().clone().to(device)

        x = to(self.input)
        inplace, args, kwargs = self.inplace, _map(to, self.args), _map(to, self.kwargs)

        # Closes over the variant itself, not over this Member: Dynamo 2.5 to 2.11 cannot trace a method call on a
        # frozen dataclass and would break the graph there, running the update eagerly.
        def update(t):
            return inplace(t, *args, **kwargs)

        return x, update


@dataclass(frozen=True)
class Drawn:
    """The population as drawn from the installed torch."""

    torch: str
    candidates: int
    members: tuple[Member, ...]
    excluded: dict[str, str]  # id -> why it is not a member


def _member_id(op) -> str:
    name = op.name if op.name.endswith("_") else f"{op.name}_"  # the OpInfos `resize_`, `zero_` ... keep their name
    return name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def _runs(inplace, sample, device) -> str | None:
    """None when the in-place variant runs on a copy of the sample on ``device``; else the error's first line."""

    def to(t):
        return t.detach().clone().to(device)

    try:
        inplace(to(sample.input), *_map(to, tuple(sample.args)), **_map(to, dict(sample.kwargs)))
    except Exception as exc:  # noqa: BLE001 - any failure means: not usable in place here
        return _first_line(exc)
    return None


def _draw_one(op):
    """(sample, None) for the op's first usable float32 sample on cpu, or (None, why not)."""
    import torch

    try:
        if torch.float32 not in op.supported_dtypes("cpu"):
            return None, "float32 is not among its dtypes on cpu"
    except Exception as exc:  # noqa: BLE001
        return None, f"its dtypes cannot be read: {_first_line(exc)}"
    torch.manual_seed(0)
    why = "no sample with a non-empty float32 tensor input"
    try:
        # sample_inputs_func itself: op.sample_inputs (2.1+) wraps it in an iterator that calls inspect.stack()
        # for every sample (about 50 ms each under pytest). The samples are the same.
        make = getattr(op, "sample_inputs_func", None)
        samples = make(op, "cpu", torch.float32, False) if make else op.sample_inputs("cpu", torch.float32)
        for sample in samples:
            x = sample.input
            if not (isinstance(x, torch.Tensor) and x.dtype == torch.float32 and x.layout == torch.strided):
                continue
            if x.numel() == 0:
                continue
            failed = _runs(op.inplace_variant, sample, "cpu")
            if failed is None:
                with torch.no_grad():
                    on_meta = _runs(op.inplace_variant, sample, "meta")
                if on_meta is None:
                    return sample, None
                why = f"its sample does not run in place on meta ({on_meta})"
                continue
            why = f"no sample runs in place on cpu (the last: {failed})"
    except Exception as exc:  # noqa: BLE001
        return None, f"its samples cannot be made: {_first_line(exc)}"
    return None, why


@functools.cache
def drawn() -> Drawn:
    """Draw the population from the installed torch (imports op_db; cached for the process)."""
    import torch

    with _contained():
        from torch.testing._internal.common_methods_invocations import op_db

        members, excluded = [], {}
        candidates = [op for op in op_db if getattr(op, "inplace_variant", None) is not None]
        for op in candidates:
            mid = _member_id(op)
            sample, why = _draw_one(op)
            if sample is None:
                excluded[mid] = why
            else:
                members.append(
                    Member(mid, NAME, op.inplace_variant, sample.input, tuple(sample.args), dict(sample.kwargs))
                )
    ids = [m.id for m in members]
    if len(set(ids)) != len(ids):
        raise RuntimeError(f"{NAME}: op_db gives duplicate member ids on torch {torch.__version__}")
    return Drawn(torch.__version__, len(candidates), tuple(members), excluded)


def sample_ids(ids: list[str], size: int = SAMPLE_SIZE, seed: int = SAMPLE_SEED) -> list[str]:
    """The fixed sample: ``size`` of ``ids`` drawn with ``random.Random(seed)``, in their original order."""
    if len(ids) <= size:
        return list(ids)
    chosen = set(random.Random(seed).sample(sorted(ids), size))
    return [i for i in ids if i in chosen]


class OpdbPopulation:
    """A population drawn from op_db (see the module's note); ``members`` imports op_db on first use.

    Used like ``populations.Population`` (name, description, members, ids); the tests take ``params(full)``.
    """

    def __init__(self, name: str, description: str):
        self.name = name
        self.description = description
        self.data_file = DATA_FILE  # its members per recorded release, for the page

    @property
    def members(self) -> tuple[tuple[str, Member], ...]:
        return tuple((m.id, m) for m in drawn().members)

    def ids(self) -> list[str]:
        return [m.id for m in drawn().members]

    def available(self) -> list[tuple[str, Member]]:
        return list(self.members)

    def chosen(self, full: bool) -> list[Member]:
        """The members a run takes: all of them, or the fixed sample."""
        members = list(drawn().members)
        if full:
            return members
        keep = set(sample_ids([m.id for m in members]))
        return [m for m in members if m.id in keep]

    def params(self, full: bool = True, without: tuple[str, ...] = ()) -> list:
        """``pytest.param(member, id=member id)`` for the members a run takes, less ``without``."""
        import pytest

        return [pytest.param(m, id=m.id) for m in self.chosen(full) if m.id not in without]

    def page_lines(self) -> list[str]:
        """The population on its page: description, then its members per recorded release (DATA_FILE)."""
        return page_lines(self)


OPDB_INPLACE = OpdbPopulation(NAME, DESCRIPTION)
ALL = {OPDB_INPLACE.name: OPDB_INPLACE}


# -- the committed member lists per release (the docs build has no torch) --


def record() -> dict:
    """This release's entry of DATA_FILE."""
    d = drawn()
    ids = [m.id for m in d.members]
    return {"candidates": d.candidates, "members": ids, "sample": sample_ids(ids), "excluded": d.excluded}


def load_data() -> dict[str, dict]:
    if not DATA_FILE.exists():
        return {}
    return json.loads(DATA_FILE.read_text(encoding="utf-8"))


def write_data() -> str:
    """Add (or replace) the installed release's entry of DATA_FILE; returns the release."""
    import torch
    from packaging.version import Version

    version = _public(torch.__version__)
    data = load_data()
    data[version] = record()
    data = dict(sorted(data.items(), key=lambda kv: Version(kv[0])))
    DATA_FILE.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return version


def _ids(ids) -> str:
    return ", ".join(f"`{i}`" for i in ids)


def page_lines(population: OpdbPopulation) -> list[str]:
    from packaging.version import Version

    data = load_data()
    lines = [f"**Population `{population.name}`** (drawn from the installed torch): {population.description}", ""]
    if not data:
        return [*lines, "No release recorded yet (`python -m conformance.harness.opdb --write`)."]
    releases = sorted(data, key=Version)
    newest = releases[-1]
    lines += [f"On torch {newest}, {len(data[newest]['members'])} members: {_ids(data[newest]['members'])}.", ""]
    lines += [f"The fixed sample of a default run on torch {newest}: {_ids(data[newest]['sample'])}.", ""]
    lines += ["Per release recorded (`conformance/harness/opdb_inplace.json`):", ""]
    previous = None
    for v in releases:
        entry = data[v]
        parts = [f"{len(entry['members'])} members of {entry['candidates']} OpInfos with an in-place variant"]
        if previous is not None:
            if added := [i for i in entry["members"] if i not in previous["members"]]:
                parts.append(f"new: {_ids(added)}")
            if gone := [i for i in previous["members"] if i not in entry["members"]]:
                parts.append(f"gone: {_ids(gone)}")
        if previous is not None and entry["excluded"] == previous["excluded"]:
            parts.append("left out: the same")
        else:
            left_out = "; ".join(f"`{i}`: {why}" for i, why in entry["excluded"].items())
            parts.append(f"left out: {left_out or 'none'}")
        lines.append(f"- torch {v}: " + "; ".join(parts))
        previous = entry
    return lines


def main(argv: list[str] | None = None) -> int:
    """python -m conformance.harness.opdb [--write]: show (or record in DATA_FILE) the installed release's members."""
    import time

    argv = sys.argv[1:] if argv is None else argv
    start = time.perf_counter()
    d = drawn()
    took = time.perf_counter() - start
    if "--write" in argv:
        print(f"{DATA_FILE.name}: recorded torch {write_data()}")
    print(
        f"torch {d.torch}: {len(d.members)} members of {d.candidates} OpInfos with an in-place variant, "
        f"drawn in {took:.1f} s"
    )
    for mid, why in d.excluded.items():
        print(f"  left out {mid}: {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
