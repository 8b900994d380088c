"""Modes: a test's update step run as written (``eager``) or through ``torch.compile``: with ``backend="aot_eager"``
(``compile``) or with the default backend, inductor (``inductor``).

Note [Writing a test that runs in both modes]
---------------------------------------------
The update step of a test, the user code its clause is about, goes into a function handed to the
``run`` fixture; set-up and assertions stay outside it and always run eagerly::

    # > INPLACE-7: ...
    @pytest.mark.clause("INPLACE-7")
    def test_update_under_no_grad(device, run):
        x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)

        def step(x):
            with torch.no_grad():
                x.mul_(2)

        run(step, x)  # eager: called; compile: torch.compile(step, backend="aot_eager")(x)
        assert x.is_leaf and x.requires_grad and x._version > 0

A test that asks for ``run`` runs once per selected mode (ids ``test_x[cpu-eager]``,
``test_x[cpu-compile]``, ``test_x[cpu-inductor]``); a test without it is eager-only, and a clause none of whose
tests takes part is ``not-applicable`` in the compiled modes. A clause without ``:modes:`` is about all three
(registry.DEFAULT_MODES); inductor runs on cpu (and cuda), not on meta. ``run.function(step)`` returns the step
compiled once, to call it several times (a mutation between two calls of one compiled function:
Dynamo's guards). Dynamo is reset before each compile-mode test. A graph break is not a failure:
the number of breaks is recorded as an observation.

Attribution: when a compiled-mode test fails, or passes for a clause about compiled modes only (a
divergence from eager, ``:modes: compile``), the harness runs it again, first with the step uncompiled: the same
outcome means no divergence (the test checks what holds eagerly too, or fails eagerly too) and no layer is
recorded. Otherwise it runs it with the lighter backends, in LAYERS' order, and records the layer the behaviour
comes from as the observation "diverging layer": the first whose backend alone gives the same outcome
(``dynamo``: ``backend="eager"``, Dynamo alone; ``aot_autograd``: ``aot_eager``), else the mode's own
(``inductor`` for the inductor mode).
"""

from __future__ import annotations

import platform
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass

from .populations import INPLACE_SPELLINGS
from .registry import BACKENDS, COMPILED_MODES, listed
from .registry import MODES as KNOWN  # noqa: F401  (one list of mode names)
from .registry import default as spec_registry

BACKEND = BACKENDS["compile"]  # the backend of the compile mode (and of the aot_eager settings reset below)
# The layers of torch.compile, lightest first: each backend and the layer it adds.
LAYERS = (("eager", "dynamo"), ("aot_eager", "aot_autograd"), ("inductor", "inductor"))
EAGER_ONLY = "no test of this clause runs its update step under torch.compile"
# Why a test is not-applicable in compile mode (the results validator accepts these, harness/results.py).
# {clauses}: "NOGRAD-92" or "INDEX-94, INDEX-96".
SPECIFIED_FROM = "the compiled behaviour of this test is specified from torch {release}; before, see {clauses}"
RELEASE_AND_SERIES = r"[\d.]+(?: \(and on [\d., ]+\))?"  # how {release} reads there: "2.4" or "2.4 (and on 2.1)"
# {where}: the clause's releases, "since 2.2, until 2.5 (exclusive)" (registry.Clause.range_text).
DIVERGES = "{clause}: compiled on {device}, {where}, `{member}` {what}"


@dataclass(frozen=True)
class MemberDivergence:
    """Population members (ids) whose compiled step does, on the releases and devices of ``clause``, what that clause
    says instead of what their tests check: a test item that runs one is not-applicable there, naming ``clause``,
    whose own test checks it. ``of``: only the tests of these clauses (default: every test that runs the member).
    ``error`` (exception type, message fragment) is what the step raises, if it does. ``modes``: only in these
    compiled modes (default: both)."""

    clause: str
    members: tuple[str, ...]
    what: str
    error: tuple[type, str] | None = None
    of: tuple[str, ...] = ()
    modes: tuple[str, ...] = ()


CANNOT_TRACE = "cannot be traced"
ACCEPTED_ON_LEAF = "accepts a leaf that requires grad"
OPDB_COMPILED_UNSPECIFIED = (  # INPLACE-98: what their compiled update does before 2.8 is recorded, not specified
    "as_strided_",
    "as_strided_.partial_views",
    "conj_physical_",
    "eq_",
    "ge_",
    "gt_",
    "le_",
    "lt_",
    "ne_",
    "logical_and_",
    "logical_not_",
    "logical_or_",
    "logical_xor_",
    "nn.functional.alpha_dropout_",
    "nn.functional.dropout_",
    "nn.functional.dropout2d_",
    "nn.functional.dropout3d_",
    "nn.functional.feature_alpha_dropout_.with_train",
    "nn.functional.feature_alpha_dropout_.without_train",
    "nn.functional.rrelu_",
    "resize_",
    "squeeze_",
    "squeeze_.multiple",
    "t_",
    "transpose_",
    "unsqueeze_",
)
MEMBER_DIVERGENCES = (
    # A list index becomes a tensor made from Python data, and fake-tensor propagation refuses a real meta tensor.
    MemberDivergence(
        "COMPILE-9", ("t[[0]] = 5",), CANNOT_TRACE, (RuntimeError, "Please convert all Tensors to FakeTensors first")
    ),
    # A tensor made from Python data on meta is a real tensor, not a fake one of the graph: refused by the check of
    # pytorch/pytorch#111954 (2.2), which exempts meta from 2.5.
    MemberDivergence(
        "COMPILE-10",
        ("torch.tensor(v)", "torch.tensor(v, requires_grad=True)"),
        CANNOT_TRACE,
        (RuntimeError, "`example_value` needs to be a `FakeTensor`"),
    ),
    MemberDivergence("INDEX-98", ("torch.where(mask, 5.0, x)",), "gives a result that does not require grad"),
    # OPDB_INPLACE (conformance/tests/test_inplace_ops.py): members whose compiled update does what another clause says.
    MemberDivergence(
        "INPLACE-96", ("nn.functional.selu_", "square_", "true_divide_"), ACCEPTED_ON_LEAF, of=("INPLACE-80",)
    ),
    MemberDivergence(
        "INPLACE-97",
        tuple(f"polygamma_.polygamma_n_{n}" for n in range(5)),
        "fails to compile",
        of=("INPLACE-81", "INPLACE-84", "VERSION-80", "VERSION-81"),
    ),
    MemberDivergence(
        "INPLACE-98",
        OPDB_COMPILED_UNSPECIFIED,
        "does what is recorded, not specified",
        of=("INPLACE-80", "INPLACE-81", "INPLACE-84", "VERSION-80", "VERSION-81"),
    ),
    # Inductor on 2.1 generates code that reads a buffer it never made for a fill of a 0-d tensor.
    MemberDivergence(
        "INPLACE-101",
        ("zero_", "fill_", "index_fill_"),
        "fails in the code inductor generates",
        (NameError, "is not defined"),
        of=("INPLACE-84", "VERSION-81"),
        modes=("inductor",),
    ),
    # Inductor from 2.8 drops the check that refuses an update of an inference tensor outside inference mode.
    MemberDivergence(
        "INFER-92",
        tuple(INPLACE_SPELLINGS.ids()),
        "is accepted and written",
        of=("INFER-9", "INFER-20"),
        modes=("inductor",),
    ),
    MemberDivergence(
        "INFER-93", tuple(INPLACE_SPELLINGS.ids()), "is written but not counted", of=("INFER-41",), modes=("inductor",)
    ),
)


class ModeError(ValueError):
    pass


def select(requested: str | None) -> list[str]:
    """The modes to run: eager by default, else the comma-separated list asked for."""
    if requested is None:
        return ["eager"]
    return listed("--mode", requested, KNOWN, ModeError)


# Why the inductor mode does not run on meta (probed on every release of the window): inductor compiles no step on
# meta tensors before 2.8 (`torch.compile(lambda x: x.add_(1))(torch.zeros(2, device="meta"))`: BackendCompilerFailed
# on 2.1-2.6, InductorError on 2.7.1), and from 2.8 a step whose graph needs a backward fails (2.13.0, COMPILE-1's
# test: "AOT Autograd failed to partition the joint forward-backward graph").
INDUCTOR_NOT_ON_META = (
    "the inductor mode runs on devices with values only: on meta, inductor compiles no step before torch 2.8 and "
    "no step that needs a backward after"
)


def unsupported(torch_version: str, python: str | None = None, mode: str = "compile", device: str = "") -> str | None:
    """Why this compiled mode cannot run on this torch, Python and device, or None when it can (no torch import)."""
    from packaging.version import Version

    python = python or platform.python_version()
    if Version(Version(torch_version).base_version) < Version("2.1") and Version(python) >= Version("3.11"):
        return f"torch.compile does not support Python {python} on torch {torch_version} (it does from torch 2.1)"
    if mode == "inductor" and device == "meta":
        return INDUCTOR_NOT_ON_META
    return None


@dataclass(frozen=True)
class CompiledSince:
    """``@pytest.mark.compiled_since(release, before="ID ...", also_on="2.1", devices="meta", modes="inductor")`` on
    a test: its compiled step does what the test checks from ``release`` on (and on the ``also_on`` release series);
    before, it does something else, which the compile-only clauses ``before`` state with their own ranges.
    ``devices``, ``modes``: only there (elsewhere the test is specified on every release). A test may carry one mark
    without ``modes`` and one per mode: in a mode, the closest mark without ``modes`` and every mark naming the mode
    apply, and the test is specified where all of them cover the release."""

    release: str
    before: tuple[str, ...]
    also_on: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    modes: tuple[str, ...] = ()

    @classmethod
    def from_mark(cls, mark) -> CompiledSince:
        keys = ("before", "also_on", "devices", "modes")
        return cls(mark.args[0], **{key: tuple(str(mark.kwargs.get(key, "")).split()) for key in keys})

    def applies(self, device: str | None, mode: str | None) -> bool:
        """Whether the mark speaks about a test run on this device and in this mode."""
        return (not self.devices or device in self.devices) and (not self.modes or mode in self.modes)

    def covers(self, torch_version: str) -> bool:
        """Whether the test is specified compiled on this torch."""
        from packaging.version import Version

        from .registry import in_range, next_minor

        release = Version(Version(torch_version).base_version)
        series = (Version(s) for s in self.also_on)
        return in_range(release, Version(self.release), None) or any(
            in_range(release, s, next_minor(s)) for s in series
        )

    def problem(self, clauses: dict) -> str | None:
        """What is wrong with the mark, given the registry's clauses, or None."""
        from packaging.version import Version

        if not self.before:
            return f"name the compile-only clauses that state what the step does before {self.release} (before=...)"
        for cid in self.before:
            clause = clauses.get(cid)
            if clause is None:
                return f"unknown clause {cid!r} in before="
            if not clause.compiled_only:
                return f"{cid} in before= is not a clause about compile mode only"
            if self.modes and not set(self.modes) & set(clause.modes):
                return f"{cid} in before= is not about the mode {' or '.join(self.modes)} (modes=)"
            if all(since is not None and since >= Version(self.release) for since, _ in clause.ranges):
                return f"{cid} in before= holds on no release before {self.release}"
        return None

    def reason(self) -> str:
        also = f" (and on {', '.join(self.also_on)})" if self.also_on else ""
        return SPECIFIED_FROM.format(release=f"{self.release}{also}", clauses=", ".join(self.before))


def specified_later(compiled_since: tuple[CompiledSince, ...], torch_version: str) -> str | None:
    """Why a test marked ``compiled_since`` is not-applicable compiled on this torch (another clause states what its
    step does here), or None."""
    for mark in compiled_since:
        if not mark.covers(torch_version):
            return mark.reason()
    return None


def member_divergences(
    device: str | None, torch_version: str, of: tuple[str, ...] = (), mode: str | None = None
) -> dict[str, MemberDivergence]:
    """The members whose compiled step does on this device and torch (and in this mode) what an entry of
    MEMBER_DIVERGENCES says, for a test of the clauses ``of`` (any test: empty)."""
    clauses = spec_registry().clauses
    return {
        member: entry
        for entry in MEMBER_DIVERGENCES
        if entry.clause in clauses  # (a test's own spec has none of them)
        and clauses[entry.clause].applies_to(torch_version)
        and not clauses[entry.clause].excludes_device(device or "")
        and (not entry.of or set(entry.of) & set(of))
        and (not entry.modes or mode in entry.modes)
        for member in entry.members
    }


def diverging_member(
    params: str, device: str | None, torch_version: str, of: tuple[str, ...] = (), mode: str | None = None
) -> str | None:
    """Why a test item (of the clauses ``of``) does not check its compiled step here, from the id of its parameters
    (its parts joined by "-", one of them the member it runs): another clause states what that member does; or None."""
    for mid, entry in member_divergences(device, torch_version, of, mode).items():
        if f"-{mid}-" in f"-{params}-":
            clause = spec_registry().clauses[entry.clause]
            where = clause.range_text()
            return DIVERGES.format(clause=entry.clause, device=device, where=where, member=mid, what=entry.what)
    return None


def reset_dynamo() -> None:
    """Forget every compiled function, so that no test sees what an earlier one compiled.

    Before torch 2.4, ``torch._dynamo.reset()`` keeps the module classes Dynamo marked dynamic (any class whose
    instance a compiled step mutated, e.g. ``m.weight = w``): every later module of that class is then traced
    instead of run, and on 2.1-2.2 ``nn.Linear(..., device="meta").double()`` fails to compile after that. 2.4
    clears the marks in ``reset()``; clear them here for the releases before."""
    import torch._dynamo
    from torch._dynamo.backends.registry import lookup_backend
    from torch._dynamo.mutation_guard import GenerationTracker

    torch._dynamo.reset()
    GenerationTracker.dynamic_classes.clear()
    # The registered aot_eager backend keeps its settings in a dict it changes at every compilation: before torch 2.6
    # it wraps its backward compiler once more each time (pytorch/pytorch#93935), and after some thousands of compiles
    # in one process the nesting passes Python's recursion limit (a RecursionError on 2.3.1 and 2.5.1). Put the
    # settings back as they were before the first compilation of this process.
    settings = _backend_settings(lookup_backend(BACKEND))
    if settings is not None:
        registered = _REGISTERED_SETTINGS.setdefault(BACKEND, dict(settings))
        settings.clear()
        settings.update(registered)


def skip_guard_latency_profile() -> None:
    """From torch 2.8 every compilation times its new guards once for compile metrics, after flushing the CPU caches
    (pytorch/pytorch#154764): about 20 ms of the 75 ms a small step takes to compile here (2.13.0), the step at 2.8
    in the compile-mode suite's time. The number goes to a log line and a metric only; the guards themselves are
    built and checked as before. Time nothing."""
    import torch._dynamo.guards as guards

    if getattr(guards, "profile_guard_manager", _no_latency) is not _no_latency:
        guards.profile_guard_manager = _no_latency


def _no_latency(*args) -> float:
    return 0.0


_REGISTERED_SETTINGS: dict[str, dict] = {}  # backend -> its settings at the first reset, before any compilation


def _backend_settings(backend) -> dict | None:
    """The settings of an aot_autograd backend: the dict in its ``kwargs`` attribute from torch 2.4 (a class), before
    that the ``kwargs`` its function closes over (a closure only, which the reset above missed before 2.4)."""
    settings = getattr(backend, "kwargs", None)
    if settings is None and getattr(backend, "__closure__", None):
        cells = dict(zip(backend.__code__.co_freevars, backend.__closure__, strict=True))
        settings = cells["kwargs"].cell_contents if "kwargs" in cells else None
    return settings if isinstance(settings, dict) else None


# Storages handed to a compiled step on torch 2.1, kept to the end of the process: 2.1 crashes at exit (a segfault
# in the garbage collector, clear_weakref) once such a storage is freed after torch._dynamo.reset(), and resets come
# before each compile-mode test. Five lines of torch show it (README, "Compile mode per release"); 2.2 does not.
_KEPT_STORAGES: list = []


def keep_storages(args) -> None:
    import torch
    from packaging.version import Version

    if Version(Version(torch.__version__).base_version) < Version("2.2"):
        _KEPT_STORAGES.extend(a for a in args if isinstance(a, torch.UntypedStorage | torch.TypedStorage))


class Runner:
    """The ``run`` fixture's value: runs an update step in the test's mode."""

    def __init__(self, mode: str):
        self.mode = mode
        self.backend = BACKENDS.get(mode)
        self.graph_breaks = 0
        self.compiled_steps = 0  # steps handed to function(): code whose backend the attribution rerun can change
        self.leaked_dispatch_state = False
        # AOTAutograd's on-disk cache of inductor's graphs (on by default from torch 2.7): off, so that a step's
        # outcome is what tracing it gives, not what an earlier test (or process) left in the cache; a graph cached
        # inside inference mode is served outside it (INFER-94). None: as the release sets it (INFER-94's test).
        self.aot_autograd_cache: bool | None = False
        if mode in COMPILED_MODES:
            skip_guard_latency_profile()
            reset_dynamo()

    def function(self, step):
        """The step as this mode runs it: itself in eager mode, compiled once in a compiled mode."""
        if self.backend is None:  # eager mode, or the uncompiled rerun of layer()
            return step
        import torch
        from torch._dynamo.utils import counters

        compiled = torch.compile(step, backend=self.backend)
        self.compiled_steps += 1

        def call(*args, **kwargs):
            keep_storages(args)
            before = sum(counters["graph_break"].values())
            try:
                with self.compiling(), self.cache_setting():
                    return compiled(*args, **kwargs)
            finally:
                self.graph_breaks += sum(counters["graph_break"].values()) - before

        return call

    @contextmanager
    def compiling(self):
        """Around code that calls torch.compile: torch 2.4 leaves its "in a dispatch mode" flag raised after
        compiling (an internal of torch.compile, not the user's code); put it back, and say so in the results."""
        from .state import KINDS

        dispatch = next(k for k in KINDS if k.name == "torch dispatch mode stack")
        modes_before = dispatch.get()
        try:
            yield
        finally:
            if dispatch.get() != modes_before:
                self.leaked_dispatch_state = True
                dispatch.restore(None, modes_before)

    def cache_setting(self):
        """Around a call of a step compiled with inductor: AOTAutograd's cache as ``aot_autograd_cache`` says (a
        setting from 2.5; ``aot_eager`` caches nothing)."""
        if self.backend != "inductor" or self.aot_autograd_cache is None:
            return nullcontext()
        import torch._functorch.config as config  # not loaded by `import torch` on every release

        if not hasattr(config, "enable_autograd_cache"):
            return nullcontext()
        return config.patch(enable_autograd_cache=self.aot_autograd_cache)

    def untraceable_members(self, device: str) -> dict:
        """For a test that checks members of a population inside one item (``check_each``): the members this mode
        cannot trace on ``device`` (MEMBER_DIVERGENCES), each with the error it must raise instead."""
        import torch

        if self.mode not in COMPILED_MODES:
            return {}
        divergences = member_divergences(device, torch.__version__, mode=self.mode).items()
        return {member: entry.error for member, entry in divergences if entry.error}

    def __call__(self, step, *args, **kwargs):
        return self.function(step)(*args, **kwargs)

    def layer(self, rerun, passed: bool) -> str | None:
        """The layer whose behaviour the test saw: run the test again uncompiled, then with each lighter backend.

        The same outcome uncompiled: None (no divergence). Else the first backend of LAYERS that alone gives the same
        outcome names the layer; none: the mode's own backend's layer.
        """
        import pytest

        own = [backend for backend, _ in LAYERS].index(self.backend)
        try:
            for backend, layer in ((None, None), *LAYERS[:own]):
                self.backend = backend
                reset_dynamo()
                try:
                    rerun()
                    alone = True
                except (Exception, pytest.fail.Exception):  # pytest.fail's exception is no Exception
                    alone = False
                if alone == passed:
                    return layer
            return LAYERS[own][1]
        finally:
            self.backend = BACKENDS[self.mode]
            reset_dynamo()
