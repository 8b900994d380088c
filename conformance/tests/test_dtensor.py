"""Conformance tests for spec/dtensor.md (DTensor parameters and FSDP2). Each test quotes its clause.

A mesh of one CPU process: a ``gloo`` process group of world size 1 over an in-memory store (no network), made
once per test process and left for the others of this module. DTENSOR-15 to DTENSOR-24 look at a mesh of two: each
rank a process of its own (conformance/harness/ranks.py), what it saw returned to the test, which checks it.
"""

import importlib
import os

import pytest
import torch
from torch import nn

from conformance.harness import ranks
from conformance.harness.checks import assert_values, raises

dist = torch.distributed


def _api():
    """DTensor's names from the newest module the running torch has (public ``torch.distributed.tensor`` from 2.5)."""
    for name in ("torch.distributed.tensor", "torch.distributed._tensor"):
        module = importlib.import_module(name)
        if hasattr(module, "distribute_tensor"):
            return module
    raise ImportError("no DTensor")


@pytest.fixture(scope="module")
def dt():
    if not dist.is_initialized():
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    return _api()


@pytest.fixture
def mesh(dt, device):
    return dt.DeviceMesh(device, [0])


def param(dt, mesh, values=(0.0, 1.0, 2.0, 3.0)):
    """``nn.Parameter(distribute_tensor(torch.tensor(values), mesh, [Shard(0)]))``."""
    return nn.Parameter(dt.distribute_tensor(torch.tensor(values), mesh, [dt.Shard(0)]))


def local(p):
    return p.to_local().tolist()


def sharded(dt, mesh, values):
    return dt.distribute_tensor(torch.tensor(values), mesh, [dt.Shard(0)])


# The in-place updates of DTENSOR-1, each a step(p, d) for a DTensor d of nines, with the values it leaves in
# [0, 1, 2, 3].
UPDATES = {
    "p.add_(1)": (lambda p, d: p.add_(1), [1.0, 2.0, 3.0, 4.0]),
    "p.mul_(2)": (lambda p, d: p.mul_(2), [0.0, 2.0, 4.0, 6.0]),
    "p.zero_()": (lambda p, d: p.zero_(), [0.0, 0.0, 0.0, 0.0]),
    "p.copy_(d)": (lambda p, d: p.copy_(d), [9.0, 9.0, 9.0, 9.0]),
}


# > DTENSOR-1: With grad mode enabled, an in-place update of a DTensor parameter `p` (`p.add_(1)`, `p.mul_(2)`,
# > `p.zero_()`, `p.copy_(d)` for a DTensor `d` of the same shape) raises `RuntimeError` whose message contains "a leaf
# > Variable that requires grad is being used in an in-place operation", and `p` keeps its values. Under
# > `torch.no_grad()` the same updates write into `p`: it holds the result, `p._version` has increased, and `p` is
# > still the same `nn.Parameter`, a DTensor with its placements, a leaf that requires grad.
@pytest.mark.clause("DTENSOR-1")
@pytest.mark.parametrize("update", list(UPDATES))
def test_update_refused_with_grad_written_under_no_grad(dt, mesh, update):
    step, expected = UPDATES[update]
    p, d = param(dt, mesh), sharded(dt, mesh, [9.0, 9.0, 9.0, 9.0])
    with raises(RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation"):
        step(p, d)
    assert local(p) == [0.0, 1.0, 2.0, 3.0]
    version, placements = p._version, tuple(p.placements)
    with torch.no_grad():
        step(p, d)
    assert local(p) == expected
    assert p._version > version
    assert isinstance(p, nn.Parameter) and isinstance(p, dt.DTensor) and tuple(p.placements) == placements
    assert p.is_leaf and p.requires_grad


DATA_SOURCES = {
    "a DTensor sharded as p": lambda dt, mesh: sharded(dt, mesh, [7.0, 7.0, 7.0, 7.0]),
    "a replicated DTensor": lambda dt, mesh: dt.distribute_tensor(torch.full((4,), 7.0), mesh, [dt.Replicate()]),
    "a plain tensor": lambda dt, mesh: torch.full((4,), 7.0),
}


# > DTENSOR-2: `p.data = t` for a DTensor parameter `p` and a tensor `t` of the same shape (a DTensor sharded as `p`, a
# > replicated DTensor, or a plain `torch.Tensor`) raises nothing and changes nothing: `p` keeps its values, its
# > placements and its local tensor (pytorch/pytorch#157391). For a plain tensor parameter the same assignment
# > replaces its data (DATA-9).
@pytest.mark.clause("DTENSOR-2")
@pytest.mark.parametrize("source", list(DATA_SOURCES))
def test_data_assignment_changes_nothing(dt, mesh, source):
    p = param(dt, mesh)
    before = p._local_tensor
    p.data = DATA_SOURCES[source](dt, mesh)
    assert local(p) == [0.0, 1.0, 2.0, 3.0]
    assert tuple(p.placements) == (dt.Shard(0),) and p._local_tensor is before


def assign_data(p, t):
    p.data = t


# > DTENSOR-25: Inside a compiled function (with `aot_eager` and with inductor), `p.data = t` for a DTensor parameter
# > `p` and a DTensor `t` of the same shape (sharded as `p`, or replicated) raises nothing and changes nothing, as
# > eagerly (DTENSOR-2): `p` keeps its values and its placements.
@pytest.mark.clause("DTENSOR-25")
@pytest.mark.parametrize("source", [s for s in DATA_SOURCES if s != "a plain tensor"])
def test_compiled_data_assignment_changes_nothing(dt, mesh, source, run):
    p = param(dt, mesh)
    run(assign_data, p, DATA_SOURCES[source](dt, mesh))
    assert local(p) == [0.0, 1.0, 2.0, 3.0]
    assert tuple(p.placements) == (dt.Shard(0),)


def copy_with_grad(p, d):
    p.copy_(d)


def under_no_grad(update):
    """The step ``update(p, d)`` under ``torch.no_grad()``."""

    def step(p, d):
        with torch.no_grad():
            update(p, d)

    return step


# > DTENSOR-26 (since 2.2): From 2.2, inside a compiled function (with `aot_eager` and with inductor), `p.copy_(d)` for
# > a DTensor parameter `p` and a DTensor `d` of its shape does what it does eagerly (DTENSOR-1): with grad mode
# > enabled it raises `RuntimeError` (`torch._dynamo.exc.TorchRuntimeError`, while Dynamo traces the step) whose
# > message contains "a leaf Variable that requires grad is being used in an in-place operation", and `p` keeps its
# > values; under `torch.no_grad()` it writes `d`'s values into `p`. Layer (the exception's type): Dynamo.
@pytest.mark.clause("DTENSOR-26")
def test_compiled_copy_refused_with_grad_written_under_no_grad(dt, mesh, run):
    p, d = param(dt, mesh), sharded(dt, mesh, [9.0, 9.0, 9.0, 9.0])
    with raises(RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation") as info:
        run(copy_with_grad, p, d)
    assert type(info.value).__name__ == "TorchRuntimeError"
    assert local(p) == [0.0, 1.0, 2.0, 3.0]
    run(under_no_grad(copy_with_grad), p, d)
    assert local(p) == [9.0, 9.0, 9.0, 9.0]


# The operator named in DTENSOR-27's message, for each update of DTENSOR-1 that fails to compile on 2.1.
NO_SHARDING_STRATEGY = {"p.copy_(d)": "aten.copy.default", "p.zero_()": "aten.zero.default"}


# > DTENSOR-27 (until 2.2): On 2.1, inside a compiled function (with `aot_eager` and with inductor), the `p.copy_(d)`
# > of DTENSOR-26 and `p.zero_()` fail to compile, with grad mode enabled and under `torch.no_grad()`: each raises
# > `torch._dynamo.exc.BackendCompilerFailed` (a `RuntimeError`) whose message contains "Operator aten.copy.default
# > does not have a sharding strategy registered" (for `p.zero_()`: "aten.zero.default"), and `p` keeps its values.
# > Layer: AOTAutograd.
@pytest.mark.clause("DTENSOR-27")
@pytest.mark.parametrize("update", list(NO_SHARDING_STRATEGY))
@pytest.mark.parametrize("grad", ["enabled", "no_grad"])
def test_compiled_update_fails_to_compile_on_2_1(dt, mesh, update, grad, run):
    p, d = param(dt, mesh), sharded(dt, mesh, [9.0, 9.0, 9.0, 9.0])
    step = UPDATES[update][0] if grad == "enabled" else under_no_grad(UPDATES[update][0])
    message = f"Operator {NO_SHARDING_STRATEGY[update]} does not have a sharding strategy registered"
    with raises(RuntimeError, message) as info:
        run(step, p, d)
    assert type(info.value).__name__ == "BackendCompilerFailed"
    assert local(p) == [0.0, 1.0, 2.0, 3.0]


# The arithmetic updates of DTENSOR-1 (with `zero_()`, the updates other than `p.copy_(d)` of DTENSOR-26).
ARITHMETIC = ["p.add_(1)", "p.mul_(2)"]


# > DTENSOR-28 (since 2.2): From 2.2, inside a compiled function, `p.add_(1)`, `p.mul_(2)` and `p.zero_()` for a
# > DTensor parameter `p` do what they do eagerly (DTENSOR-1), as `p.copy_(d)` does (DTENSOR-26): with grad mode
# > enabled each raises `RuntimeError` (`torch._dynamo.exc.TorchRuntimeError`) whose message contains "a leaf Variable
# > that requires grad is being used in an in-place operation", and `p` keeps its values; under `torch.no_grad()` each
# > writes into `p`, which stays the same `nn.Parameter`, a DTensor with its placements, a leaf that requires grad. With
# > `aot_eager` from 2.2, with inductor from 2.3 (on 2.2 inductor fails to compile the updates under
# > `torch.no_grad()`: DTENSOR-29). Layer (the exception's type): Dynamo.
@pytest.mark.clause("DTENSOR-28")
@pytest.mark.compiled_since("2.3", before="DTENSOR-29", modes="inductor")
@pytest.mark.parametrize("update", [*ARITHMETIC, "p.zero_()"])
def test_compiled_update_refused_with_grad_written_under_no_grad(dt, mesh, update, run):
    step, expected = UPDATES[update]
    p, d = param(dt, mesh), sharded(dt, mesh, [9.0, 9.0, 9.0, 9.0])
    with raises(RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation") as info:
        run(step, p, d)
    assert type(info.value).__name__ == "TorchRuntimeError"
    assert local(p) == [0.0, 1.0, 2.0, 3.0]
    run(under_no_grad(step), p, d)
    assert local(p) == expected
    assert isinstance(p, nn.Parameter) and isinstance(p, dt.DTensor) and tuple(p.placements) == (dt.Shard(0),)
    assert p.is_leaf and p.requires_grad


# > DTENSOR-31 (until 2.2): On 2.1, compiled with `aot_eager`, `p.add_(1)` and `p.mul_(2)` for a DTensor parameter `p`
# > are accepted with grad mode enabled, where eagerly they raise (DTENSOR-1): `p` holds the result and stays a leaf
# > that requires grad, with no `grad_fn`; under `torch.no_grad()` they write into `p`, as eagerly. Layer: AOTAutograd
# > (Dynamo alone, `backend="eager"`, raises the error of DTENSOR-1).
@pytest.mark.clause("DTENSOR-31")
@pytest.mark.parametrize("update", ARITHMETIC)
def test_compiled_update_with_grad_accepted_on_2_1(dt, mesh, update, run):
    step, expected = UPDATES[update]
    p, q, d = param(dt, mesh), param(dt, mesh), sharded(dt, mesh, [9.0, 9.0, 9.0, 9.0])
    run(step, p, d)
    assert local(p) == expected
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    run(under_no_grad(step), q, d)
    assert local(q) == expected


# What a rank compiles with: the test's backend, passed in the environment ("" when the harness runs the step
# uncompiled); and the update (a key of UPDATES) and grad mode of compiled_update_in_a_process.
BACKEND_ENV, STEP_ENV, GRAD_ENV = "CONFORMANCE_DTENSOR_BACKEND", "CONFORMANCE_DTENSOR_STEP", "CONFORMANCE_DTENSOR_GRAD"


def compiled_in_this_rank(function):
    """``function`` as the test's mode runs it, in a rank: through torch.compile with its backend, or as written."""
    backend = os.environ[BACKEND_ENV]
    return torch.compile(function, backend=backend) if backend else function


def _ranks_compiling(monkeypatch, run, function, world_size: int = 1, **settings) -> list:
    """``ranks.run(function, world_size)`` with the test's backend (and ``settings``) in the ranks' environment."""
    for name, value in {BACKEND_ENV: run.backend or "", **settings}.items():
        monkeypatch.setenv(name, value)
    return ranks.run(function, world_size=world_size)


def compiled_update_in_a_process(rank, world_size):
    """DTENSOR-29 and DTENSOR-30 in a process of their own (a rank of a mesh of one): one update of a DTensor
    parameter compiled there, since on 2.1 inductor's compilation of it kills the process. What it raised ("ok" if
    nothing), and the values of ``p`` after."""
    dt = _api()
    mesh = dt.DeviceMesh("cpu", [0])
    p, d = param(dt, mesh), sharded(dt, mesh, [9.0, 9.0, 9.0, 9.0])
    update = UPDATES[os.environ[STEP_ENV]][0]
    step = compiled_in_this_rank(update if os.environ[GRAD_ENV] == "enabled" else under_no_grad(update))
    return {"raised": _outcome(lambda: step(p, d)), "p": local(p)}


def _compiled_in_a_process(monkeypatch, run, update: str, grad: str) -> dict:
    return _ranks_compiling(monkeypatch, run, compiled_update_in_a_process, **{STEP_ENV: update, GRAD_ENV: grad})[0]


# > DTENSOR-29 (2.2 only): On 2.2, compiled with inductor, `p.add_(1)`, `p.mul_(2)` and `p.zero_()` under
# > `torch.no_grad()` for a DTensor parameter `p` fail to compile: each raises
# > `torch._dynamo.exc.BackendCompilerFailed` whose message contains "AssertionError", and `p` keeps its values (with
# > `aot_eager` they write: DTENSOR-28; `p.copy_(d)` compiles with both: DTENSOR-26). Layer: Inductor.
@pytest.mark.clause("DTENSOR-29")
@pytest.mark.parametrize("update", [*ARITHMETIC, "p.zero_()"])
def test_compiled_update_under_no_grad_fails_with_inductor_on_2_2(monkeypatch, update, run):
    seen = _compiled_in_a_process(monkeypatch, run, update, "no_grad")
    assert seen["raised"].startswith("BackendCompilerFailed: ") and "AssertionError" in seen["raised"], seen["raised"]
    assert seen["p"] == [0.0, 1.0, 2.0, 3.0]


# > DTENSOR-30 (until 2.2): On 2.1, compiling `p.add_(1)` or `p.mul_(2)` for a DTensor parameter `p` with inductor, with
# > grad mode enabled or under `torch.no_grad()`, ends the process: it dies of signal 11 (`SIGSEGV`) while the step
# > compiles, with no Python exception (`p.copy_(d)` and `p.zero_()` fail to compile: DTENSOR-27). The suite compiles
# > these steps in a process of their own. Layer: Inductor (with `aot_eager` they are accepted: DTENSOR-31).
@pytest.mark.clause("DTENSOR-30")
@pytest.mark.parametrize("update", ARITHMETIC)
@pytest.mark.parametrize("grad", ["enabled", "no_grad"])
def test_compiling_update_with_inductor_kills_the_process_on_2_1(monkeypatch, update, grad, run):
    with pytest.raises(pytest.fail.Exception, match="rank 0 of 1 died of signal 11"):
        _compiled_in_a_process(monkeypatch, run, update, grad)


# > DTENSOR-3: `p.data = t` for a DTensor `t` of another shape than the DTensor parameter `p` raises nothing and sets
# > `p.shape` to `t.shape`, while `p.to_local()` keeps `p`'s old values and shape: `p` describes a tensor it does not
# > hold.
@pytest.mark.clause("DTENSOR-3")
def test_data_assignment_of_other_shape_changes_shape_only(dt, mesh):
    p = param(dt, mesh)
    p.data = sharded(dt, mesh, [0.0] * 8)
    assert tuple(p.shape) == (8,)
    assert local(p) == [0.0, 1.0, 2.0, 3.0] and tuple(p.to_local().shape) == (4,)


# > DTENSOR-4: `p.data` of a DTensor parameter `p` is a DTensor that is not an `nn.Parameter`, does not require grad
# > and shares `p`'s memory: `p.data.add_(1)` and `p.data.copy_(d)` (for a DTensor `d`) change `p`'s values, with
# > grad mode enabled, and leave `p._version` as it was.
@pytest.mark.clause("DTENSOR-4")
@pytest.mark.parametrize("update", ["p.data.add_(1)", "p.data.copy_(d)"])
def test_data_reads_a_dtensor_sharing_memory(dt, mesh, update):
    p = param(dt, mesh)
    d = p.data
    assert isinstance(d, dt.DTensor) and not isinstance(d, nn.Parameter) and not d.requires_grad
    version = p._version
    if update == "p.data.add_(1)":
        p.data.add_(1)
        expected = [1.0, 2.0, 3.0, 4.0]
    else:
        p.data.copy_(sharded(dt, mesh, [5.0, 6.0, 7.0, 8.0]))
        expected = [5.0, 6.0, 7.0, 8.0]
    assert local(p) == expected
    assert p._version == version


MIXED = {  # the updates of DTENSOR-5, with a plain tensor operand
    "p.copy_(torch.zeros(4))": lambda p: p.copy_(torch.zeros(4)),
    "p.add_(torch.ones(4))": lambda p: p.add_(torch.ones(4)),
    "p.data.copy_(torch.zeros(4))": lambda p: p.data.copy_(torch.zeros(4)),
}


def _mixed(dt, mesh, update):
    """Run a DTENSOR-5 update of a fresh parameter; (p, the error raised)."""
    p = param(dt, mesh)
    with pytest.raises(RuntimeError) as error, torch.no_grad():
        MIXED[update](p)
    return p, error.value


# > DTENSOR-5: An in-place update of a DTensor parameter `p` under `torch.no_grad()` whose operand is a plain
# > `torch.Tensor` (`p.copy_(torch.zeros(4))`, `p.add_(torch.ones(4))`, and `p.data.copy_(torch.zeros(4))`) raises
# > `RuntimeError`, and `p` keeps its values.
@pytest.mark.clause("DTENSOR-5")
@pytest.mark.parametrize("update", list(MIXED))
def test_plain_operand_refused(dt, mesh, update):
    p, _ = _mixed(dt, mesh, update)
    assert local(p) == [0.0, 1.0, 2.0, 3.0]


# DTensor's refusal of a plain operand (DTENSOR-6, DTENSOR-7; an optimizer step's too: DTENSOR-20, DTENSOR-21)
MIXED_MESSAGE = "got mixed torch.Tensor and DTensor"
MIXED_MESSAGE_ON_2_0 = "got mixed distributed and non-distributed tensors"


# > DTENSOR-6: In the case of DTENSOR-5 the message contains "got mixed torch.Tensor and DTensor".
@pytest.mark.clause("DTENSOR-6")
@pytest.mark.parametrize("update", list(MIXED))
def test_plain_operand_message(dt, mesh, update):
    _, error = _mixed(dt, mesh, update)
    assert MIXED_MESSAGE in str(error), str(error)


# > DTENSOR-7: On 2.0, in the case of DTENSOR-5 the message contains "got mixed distributed and non-distributed
# > tensors".
@pytest.mark.clause("DTENSOR-7")
@pytest.mark.parametrize("update", list(MIXED))
def test_plain_operand_message_on_2_0(dt, mesh, update):
    _, error = _mixed(dt, mesh, update)
    assert MIXED_MESSAGE_ON_2_0 in str(error), str(error)


def _index_assign(p):
    with torch.no_grad():
        p[0] = 5


# > DTENSOR-8: Before 2.8, `p[0] = 5` under `torch.no_grad()` for a DTensor parameter `p` raises
# > `NotImplementedError` whose message names `aten.select.int` (it has no sharding rule), and `p` keeps its values.
@pytest.mark.clause("DTENSOR-8")
def test_index_assignment_refused_before_2_8(dt, mesh):
    p = param(dt, mesh)
    with raises(NotImplementedError, "aten.select.int"):
        _index_assign(p)
    assert local(p) == [0.0, 1.0, 2.0, 3.0]


# > DTENSOR-9: On 2.8 and 2.9, `p[0] = 5` under `torch.no_grad()` for a DTensor parameter `p` raises nothing and
# > increases `p._version`, but `p` keeps its values: the write is lost.
# > DTENSOR-10: From 2.10, `p[0] = 5` under `torch.no_grad()` for a DTensor parameter `p` writes 5 into `p[0]` and
# > increases `p._version`, as for a plain tensor (INDEX-9).
@pytest.mark.parametrize(
    "values",
    [
        pytest.param([0.0, 1.0, 2.0, 3.0], marks=pytest.mark.clause("DTENSOR-9"), id="DTENSOR-9"),
        pytest.param([5.0, 1.0, 2.0, 3.0], marks=pytest.mark.clause("DTENSOR-10"), id="DTENSOR-10"),
    ],
)
def test_index_assignment_accepted_from_2_8(dt, mesh, values):
    p = param(dt, mesh)
    version = p._version
    _index_assign(p)
    assert p._version > version
    assert local(p) == values


# > DTENSOR-11: `q = p.detach()` of a DTensor parameter `p` is a DTensor that does not require grad and shares `p`'s
# > memory and version counter: after `q.add_(10)`, `p` holds the new values and `p._version` has increased.
@pytest.mark.clause("DTENSOR-11")
def test_detach_shares_memory_and_version_counter(dt, mesh):
    p = param(dt, mesh)
    q = p.detach()
    assert isinstance(q, dt.DTensor) and not q.requires_grad
    version = p._version
    q.add_(10)
    assert local(p) == [10.0, 11.0, 12.0, 13.0]
    assert p._version > version


# > DTENSOR-12: `torch.utils.swap_tensors(p, q)` of two DTensor parameters swaps their values, and `p` and `q` stay the
# > same Python objects; with a plain `nn.Parameter` as `q` it raises `RuntimeError` whose message contains "Cannot
# > swap t1 and t2 if they have different slots", and both keep their values.
@pytest.mark.clause("DTENSOR-12")
def test_swap_tensors_of_dtensor_parameters(dt, mesh):
    p, q = param(dt, mesh), param(dt, mesh, (4.0, 5.0, 6.0, 7.0))
    ids = id(p), id(q)
    torch.utils.swap_tensors(p, q)
    assert (id(p), id(q)) == ids
    assert local(p) == [4.0, 5.0, 6.0, 7.0] and local(q) == [0.0, 1.0, 2.0, 3.0]
    p, plain = param(dt, mesh), nn.Parameter(torch.full((4,), 7.0))
    with raises(RuntimeError, "Cannot swap t1 and t2 if they have different slots"):
        torch.utils.swap_tensors(p, plain)
    assert local(p) == [0.0, 1.0, 2.0, 3.0]
    assert_values(plain, [7.0] * 4, "the plain parameter")


def _sharded_linear(dt, mesh):
    m = nn.Linear(2, 2, bias=False)
    m.weight = nn.Parameter(dt.distribute_tensor(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), mesh, [dt.Shard(0)]))
    return m


# > DTENSOR-13: `m.load_state_dict({"weight": t}, assign=True)` with a plain tensor `t` silently replaces the DTensor
# > weight by a plain `nn.Parameter` holding `t`'s values. Without `assign`, the same call raises `RuntimeError`
# > whose message contains "While copying the parameter named \"weight\"", and the DTensor weight keeps its values.
@pytest.mark.clause("DTENSOR-13")
def test_load_state_dict_of_plain_tensors(dt, mesh):
    t = torch.full((2, 2), 9.0)
    m = _sharded_linear(dt, mesh)
    with raises(RuntimeError, 'While copying the parameter named "weight"'):
        m.load_state_dict({"weight": t})
    assert m.weight.to_local().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    m.load_state_dict({"weight": t}, assign=True)
    assert isinstance(m.weight, nn.Parameter) and not isinstance(m.weight, dt.DTensor)
    assert_values(m.weight, [[9.0, 9.0], [9.0, 9.0]], "the weight after assign=True")


def _fully_shard():
    """FSDP2's ``fully_shard``: public from 2.6, under ``torch.distributed._composable.fsdp`` from 2.3."""
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:
        from torch.distributed._composable.fsdp import fully_shard
    return fully_shard


# > DTENSOR-14: After FSDP2's `fully_shard(m)`, `m.weight` is a DTensor `nn.Parameter`, and DTENSOR-2 holds for it:
# > `m.weight.data = torch.zeros(4, 4)` raises nothing and leaves `m.weight`'s values as they were. Under
# > `torch.no_grad()`, `m.weight.zero_()` writes zeros into it (DTENSOR-1).
@pytest.mark.clause("DTENSOR-14")
def test_fully_shard_parameters_are_dtensor_parameters(dt, mesh):
    m = nn.Linear(4, 4, bias=False)
    with torch.no_grad():
        m.weight.copy_(torch.arange(16.0).reshape(4, 4))
    _fully_shard()(m, mesh=mesh)
    assert isinstance(m.weight, nn.Parameter) and isinstance(m.weight, dt.DTensor)
    m.weight.data = torch.zeros(4, 4)
    assert m.weight.to_local().tolist() == torch.arange(16.0).reshape(4, 4).tolist()
    with torch.no_grad():
        m.weight.zero_()
    assert m.weight.to_local().tolist() == [[0.0] * 4] * 4


def train_two_steps(forward, step, opt, x) -> None:
    """DTENSOR-32/33's training: two steps of ``forward(x).sum().backward()``, the optimizer's ``step()``, the
    gradients zeroed."""
    for _ in range(2):
        forward(x).sum().backward()
        step()
        opt.zero_grad()


# > DTENSOR-32 (since 2.7): A module sharded by FSDP2 on a mesh of one CPU process (`nn.Linear(4, 2, bias=False)` with
# > weight `torch.arange(8.).reshape(2, 4)`, after `fully_shard(m, mesh=mesh)`) trains the same compiled as eagerly:
# > with the module compiled (`f = torch.compile(m)`) and the step of `opt = torch.optim.SGD(m.parameters(), lr=0.1)`
# > compiled, two steps `f(x).sum().backward(); opt.step(); opt.zero_grad()` for `x = torch.ones(3, 4)` leave `m.weight`
# > a DTensor `nn.Parameter` holding the weight minus 0.6, and an update `m.weight.add_(1)` under `torch.no_grad()`
# > between two calls is seen by the next one: `f(x).sum()` is then 93.6. Before 2.7 FSDP2's forward does not run on
# > CPU (DTENSOR-22).
@pytest.mark.clause("DTENSOR-32")
def test_fully_shard_module_trains_compiled_as_eagerly(dt, mesh, run):
    m = nn.Linear(4, 2, bias=False)
    weight = torch.arange(8.0).reshape(2, 4)
    with torch.no_grad():
        m.weight.copy_(weight)
    _fully_shard()(m, mesh=mesh)
    forward, opt = run.function(m), torch.optim.SGD(m.parameters(), lr=0.1)
    step, x = run.function(opt.step), torch.ones(3, 4)
    train_two_steps(forward, step, opt, x)
    assert isinstance(m.weight, nn.Parameter) and isinstance(m.weight, dt.DTensor)
    torch.testing.assert_close(m.weight.to_local(), weight - 0.6)  # float32: each step subtracts 0.3
    with torch.no_grad():
        m.weight.add_(1)
    assert forward(x).sum().item() == pytest.approx(93.6)


ROWS = torch.arange(16.0).reshape(4, 4).tolist()  # the weight of the modules sharded on two ranks


def on_two_ranks(rank, world_size):
    """Run on each rank of a mesh of two CPU processes: what DTENSOR-15 to DTENSOR-17 look at, as JSON."""
    dt = _api()
    mesh = dt.DeviceMesh("cpu", list(range(world_size)))
    p = param(dt, mesh)
    seen = {"shard": local(p)}
    with torch.no_grad():
        p.add_(1)
    seen["after add_(1)"] = local(p)
    before = p._local_tensor
    p.data = sharded(dt, mesh, [7.0, 7.0, 7.0, 7.0])
    seen["after .data ="] = local(p)
    seen["same local tensor"] = p._local_tensor is before
    seen.update(_grad_assignments(dt, mesh))
    try:
        fully_shard = _fully_shard()
    except ImportError:  # before 2.3
        return {**seen, "fully_shard": None}
    m = nn.Linear(4, 4, bias=False)
    with torch.no_grad():
        m.weight.copy_(torch.tensor(ROWS))
    fully_shard(m, mesh=mesh)
    w = m.weight
    fsdp = {"a DTensor parameter": isinstance(w, nn.Parameter) and isinstance(w, dt.DTensor), "shard": local(w)}
    w.data = torch.zeros(4, 4)
    fsdp["after .data ="] = local(w)
    with torch.no_grad():
        w.zero_()
    fsdp["after zero_()"] = local(w)
    fsdp["after forward"] = {flag: _update_after_forward(dt, mesh, fully_shard, flag) for flag in ("True", "False")}
    return {**seen, "fully_shard": fsdp}


def _update_after_forward(dt, mesh, fully_shard, reshard_after_forward: str) -> dict | str:
    """DTENSOR-22 to DTENSOR-24 on one rank: ``m.weight`` after a forward, updated under no_grad, then resharded;
    what the forward raised where it cannot run on CPU."""
    m = nn.Linear(4, 4, bias=False)
    with torch.no_grad():
        m.weight.copy_(torch.tensor(ROWS))
    fully_shard(m, mesh=mesh, reshard_after_forward=reshard_after_forward == "True")
    try:
        m(torch.ones(1, 4))
    except Exception as e:  # noqa: BLE001 -- before 2.7 FSDP2's forward wants CUDA
        return f"{type(e).__name__}: {e}"
    seen = {"a DTensor": isinstance(m.weight, dt.DTensor), "values": values(dt, m.weight)}
    with torch.no_grad():
        m.weight.add_(100)
    m.reshard()
    seen["a DTensor after reshard"] = isinstance(m.weight, dt.DTensor)
    seen["after reshard"] = values(dt, m.weight)
    return seen


def values(dt, t):
    """The values this rank holds of ``t``: its shard for a DTensor."""
    return local(t) if isinstance(t, dt.DTensor) else t.tolist()


def _outcome(step) -> str:
    """What ``step()`` did: "ok", or the type and message of what it raised."""
    try:
        step()
    except Exception as e:  # noqa: BLE001 -- the test compares what was raised
        return f"{type(e).__name__}: {e}"
    return "ok"


def _grad_assignments(dt, mesh) -> dict:
    """DTENSOR-18 and DTENSOR-19 on one rank."""
    seen = {}
    p = param(dt, mesh)
    seen["p.grad = torch.zeros(2)"] = _outcome(lambda: setattr(p, "grad", torch.zeros(2)))
    p.grad = torch.ones(4)
    seen["p.grad after p.grad = torch.ones(4)"] = type(p.grad).__name__
    seen["SGD step"] = _outcome(torch.optim.SGD([p], lr=1.0).step)
    seen["after SGD step"] = local(p)
    q = param(dt, mesh)
    q.grad = sharded(dt, mesh, [1.0, 1.0, 1.0, 1.0])
    seen["q.grad after q.grad = d"] = [type(q.grad).__name__, local(q.grad)]
    return seen


def trained_on_two_ranks(rank, world_size):
    """DTENSOR-33 on each rank: the FSDP2 module of DTENSOR-17 trained by two steps, compiled as the test's mode
    compiles (module and optimizer step), then updated under no_grad: this rank's shard, and the next forward's sum."""
    dt = _api()
    mesh = dt.DeviceMesh("cpu", list(range(world_size)))
    m = nn.Linear(4, 4, bias=False)
    with torch.no_grad():
        m.weight.copy_(torch.tensor(ROWS))
    _fully_shard()(m, mesh=mesh)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    forward, step, x = compiled_in_this_rank(m), compiled_in_this_rank(opt.step), torch.ones(3, 4)
    train_two_steps(forward, step, opt, x)
    seen = {"shard": local(m.weight)}
    with torch.no_grad():
        m.weight.add_(1)
    seen["sum after add_(1)"] = forward(x).sum().item()
    return seen


@pytest.fixture(scope="module")
def two_ranks():
    """What each rank of a mesh of two saw: one run of two processes for the module's tests of it."""
    return ranks.run(on_two_ranks, world_size=2)


# > DTENSOR-15: On a mesh of two CPU processes, `p = nn.Parameter(distribute_tensor(torch.arange(4.), mesh,
# > [Shard(0)]))` holds `[0, 1]` on rank 0 and `[2, 3]` on rank 1, and under `torch.no_grad()` `p.add_(1)` writes into
# > the shards of both ranks: `[1, 2]` on rank 0, `[3, 4]` on rank 1 (DTENSOR-1).
@pytest.mark.clause("DTENSOR-15")
def test_update_writes_each_ranks_shard(two_ranks):
    assert [seen["shard"] for seen in two_ranks] == [[0.0, 1.0], [2.0, 3.0]]
    assert [seen["after add_(1)"] for seen in two_ranks] == [[1.0, 2.0], [3.0, 4.0]]


# > DTENSOR-16: On a mesh of two CPU processes, `p.data = t` for a DTensor `t` sharded as `p` raises nothing on either
# > rank and changes nothing: both ranks keep their shards' values and their local tensors (DTENSOR-2).
@pytest.mark.clause("DTENSOR-16")
def test_data_assignment_changes_no_ranks_shard(two_ranks):
    assert [seen["after .data ="] for seen in two_ranks] == [[1.0, 2.0], [3.0, 4.0]]
    assert all(seen["same local tensor"] for seen in two_ranks)


# > DTENSOR-17: After FSDP2's `fully_shard(m, mesh=mesh)` on a mesh of two CPU processes, `m.weight` of
# > `nn.Linear(4, 4, bias=False)` is a DTensor `nn.Parameter` whose rank 0 holds rows 0-1 and rank 1 rows 2-3;
# > `m.weight.data = torch.zeros(4, 4)` leaves both shards as they were, and under `torch.no_grad()`
# > `m.weight.zero_()` writes zeros into both (DTENSOR-14).
@pytest.mark.clause("DTENSOR-17")
def test_fully_shard_on_two_ranks(two_ranks):
    fsdp = [seen["fully_shard"] for seen in two_ranks]
    assert None not in fsdp, "no fully_shard in this torch"
    assert all(f["a DTensor parameter"] for f in fsdp)
    assert [f["shard"] for f in fsdp] == [ROWS[:2], ROWS[2:]]
    assert [f["after .data ="] for f in fsdp] == [ROWS[:2], ROWS[2:]]
    assert [f["after zero_()"] for f in fsdp] == [[[0.0] * 4] * 2] * 2


# > DTENSOR-18: On a mesh of two CPU processes, for a DTensor parameter `p` of shape `(4,)` sharded on dim 0,
# > `p.grad = torch.zeros(2)` (a plain tensor of the shape of one rank's shard) raises `RuntimeError`, while `p.grad =
# > torch.ones(4)` (a plain tensor of `p`'s global shape) raises nothing and makes `p.grad` a plain `torch.Tensor`, not
# > a DTensor. `q.grad = d` for a DTensor `d` sharded as `q` makes `q.grad` that DTensor, its shard on both ranks.
@pytest.mark.clause("DTENSOR-18")
def test_grad_assignment_checks_the_global_shape_only(two_ranks):
    assert all(seen["p.grad = torch.zeros(2)"].startswith("RuntimeError: ") for seen in two_ranks)
    assert [seen["p.grad after p.grad = torch.ones(4)"] for seen in two_ranks] == ["Tensor", "Tensor"]
    assert [seen["q.grad after q.grad = d"] for seen in two_ranks] == [["DTensor", [1.0, 1.0]]] * 2


# > DTENSOR-19: After `p.grad = torch.ones(4)` of DTENSOR-18, `torch.optim.SGD([p], lr=1.0).step()` raises
# > `RuntimeError` on both ranks, and `p` keeps its values.
@pytest.mark.clause("DTENSOR-19")
def test_step_with_a_plain_grad_refused(two_ranks):
    assert all(seen["SGD step"].startswith("RuntimeError: ") for seen in two_ranks)
    assert [seen["after SGD step"] for seen in two_ranks] == [[0.0, 1.0], [2.0, 3.0]]


def _messages(two_ranks, size: str, mixed: str) -> None:
    for seen in two_ranks:
        assert size in seen["p.grad = torch.zeros(2)"], seen["p.grad = torch.zeros(2)"]
        assert mixed in seen["SGD step"], seen["SGD step"]


# > DTENSOR-20: In DTENSOR-18 the message of the refused `p.grad = torch.zeros(2)` contains "attempting to assign a
# > gradient of size '[2]' to a tensor of size '[4]'", and in DTENSOR-19 the message of the refused step contains "got
# > mixed torch.Tensor and DTensor".
@pytest.mark.clause("DTENSOR-20")
def test_grad_messages(two_ranks):
    _messages(two_ranks, "attempting to assign a gradient of size '[2]' to a tensor of size '[4]'", MIXED_MESSAGE)


# > DTENSOR-21: On 2.0, in DTENSOR-18 the message of the refused `p.grad = torch.zeros(2)` contains "assigned grad has
# > data of a different size", and in DTENSOR-19 the message of the refused step contains "got mixed distributed and
# > non-distributed tensors".
@pytest.mark.clause("DTENSOR-21")
def test_grad_messages_on_2_0(two_ranks):
    _messages(two_ranks, "assigned grad has data of a different size", MIXED_MESSAGE_ON_2_0)


def _after_forward(two_ranks, reshard_after_forward: str) -> list:
    after = [seen["fully_shard"] and seen["fully_shard"]["after forward"][reshard_after_forward] for seen in two_ranks]
    assert all(isinstance(a, dict) for a in after), f"no forward of fully_shard's module on CPU: {after}"
    return after


def _update_lost(after) -> None:
    assert [a["a DTensor"] for a in after] == [False, False]
    assert [a["values"] for a in after] == [ROWS, ROWS]
    assert [a["a DTensor after reshard"] for a in after] == [True, True]
    assert [a["after reshard"] for a in after] == [ROWS[:2], ROWS[2:]]


# > DTENSOR-22: After `fully_shard(m, mesh=mesh, reshard_after_forward=False)` of `nn.Linear(4, 4, bias=False)` on a
# > mesh of two CPU processes and a forward `m(x)`, `m.weight` on both ranks is a plain `nn.Parameter`, not a DTensor,
# > holding the whole weight; `m.weight.add_(100)` under `torch.no_grad()` is then lost: after `m.reshard()`,
# > `m.weight` is a DTensor again and its shards hold the values from before the update.
@pytest.mark.clause("DTENSOR-22")
def test_update_of_the_unsharded_weight_lost_at_reshard(two_ranks):
    _update_lost(_after_forward(two_ranks, "False"))


# > DTENSOR-23: With the default `reshard_after_forward=True`, after a forward `m(x)` of the module of DTENSOR-22,
# > `m.weight` is the DTensor parameter, and `m.weight.add_(100)` under `torch.no_grad()` writes into both shards: after
# > `m.reshard()` they hold the updated values.
@pytest.mark.clause("DTENSOR-23")
def test_update_after_a_resharding_forward_written(two_ranks):
    after = _after_forward(two_ranks, "True")
    assert [a["a DTensor"] for a in after] == [True, True]
    assert [a["after reshard"] for a in after] == [
        [[v + 100 for v in row] for row in ROWS[:2]],
        [[v + 100 for v in row] for row in ROWS[2:]],
    ]


# > DTENSOR-24: On 2.7, with the default `reshard_after_forward=True`, the module of DTENSOR-22 (the root of its FSDP
# > tree) is not resharded after its forward: `m.weight` is a plain `nn.Parameter` holding the whole weight, and
# > `m.weight.add_(100)` under `torch.no_grad()` is lost at `m.reshard()` as in DTENSOR-22.
@pytest.mark.clause("DTENSOR-24")
def test_root_not_resharded_after_forward_on_2_7(two_ranks):
    _update_lost(_after_forward(two_ranks, "True"))


def _trained_as(seen, lowered_by: float, total: float) -> None:
    """Each rank of trained_on_two_ranks holds its rows of ROWS minus ``lowered_by``, and summed ``total``."""
    trained = (torch.tensor(ROWS) - lowered_by).tolist()
    for rank, rows in enumerate((trained[:2], trained[2:])):
        torch.testing.assert_close(torch.tensor(seen[rank]["shard"]), torch.tensor(rows))
        assert seen[rank]["sum after add_(1)"] == pytest.approx(total)


# > DTENSOR-33 (since 2.9): On a mesh of two CPU processes, the module of DTENSOR-17 (`nn.Linear(4, 4, bias=False)`
# > with weight `torch.arange(16.).reshape(4, 4)`, after `fully_shard(m, mesh=mesh)`) trains the same compiled as
# > eagerly, as on one process (DTENSOR-32): with the module and the SGD step (`lr=0.1`) compiled, two steps on
# > `x = torch.ones(3, 4)` on each rank leave each rank's shard holding its rows of the weight minus 0.6 (the gradient
# > is the mean of the ranks' gradients, 3 for each element), and after `m.weight.add_(1)` under `torch.no_grad()` the
# > next compiled forward sums to 379.2 on both. Before 2.9: DTENSOR-34.
@pytest.mark.clause("DTENSOR-33")
def test_fully_shard_module_trains_compiled_on_two_ranks(monkeypatch, run):
    _trained_as(_ranks_compiling(monkeypatch, run, trained_on_two_ranks, world_size=2), 0.6, 379.2)


# > DTENSOR-34 (since 2.7, until 2.9): On 2.7 and 2.8, in the setting of DTENSOR-33 (eagerly and compiled), the
# > gradient FSDP2 gives each rank's shard is the sum of the two ranks' gradients, not their mean (6 for each element,
# > where from 2.9 it is 3): two steps lower the weight by 1.2, and the forward after `m.weight.add_(1)` sums to 350.4.
# > FSDP2 asked the `gloo` process group for an average it did not compute (pytorch/pytorch#162338, "Incorrect AVG
# > reduction for GLOO").
@pytest.mark.clause("DTENSOR-34")
def test_fully_shard_gradient_is_the_sum_on_gloo_before_2_9(monkeypatch, run):
    _trained_as(_ranks_compiling(monkeypatch, run, trained_on_two_ranks, world_size=2), 1.2, 350.4)
