"""Conformance tests for spec/data.md (`.data`). Each test quotes the clause it proves."""

import pytest
import torch

from conformance.harness.checks import (
    SAVED_MODIFIED,
    assert_values,
    by_mode,
    compiled_since,
    layout,
    leaf,
    raises,
    same_storage,
)
from conformance.harness.kinds import TENSOR_KINDS
from conformance.harness.populations import INPLACE_SPELLINGS


def dtypes(*members):
    """Parameters named for their dtype ("float64", not "dtype1")."""
    return [pytest.param(d, id=str(d).removeprefix("torch.")) for d in members]


# > DATA-1: `x.data` returns a tensor object other than `x` (a new one at every access) that shares the storage of `x`
# > and has the same shape, strides, storage offset, dtype and device, for every kind of tensor of the population
# > `TENSOR_KINDS` (listed below).
@pytest.mark.clause("DATA-1")
def test_data_is_new_object_sharing_storage(device):
    x = leaf(device)
    accesses = [x.data, x.data, x.data]  # kept alive, so that no id is reused
    assert all(d is not x for d in accesses)
    assert len({id(d) for d in accesses}) == 3, "each access returns a new object"
    for d in accesses:
        assert same_storage(d, x)
        assert (d.shape, d.dtype, d.device) == (x.shape, x.dtype, x.device)


# > DATA-2: `x.data` does not require grad, is a leaf and has no `grad_fn`, whether `x` is a leaf that
# > requires grad or a non-leaf result of an operation.
@pytest.mark.clause("DATA-2")
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_data_is_detached_leaf(device, kind):
    x = leaf(device)
    if kind == "non-leaf":
        x = x * 2
        assert x.grad_fn is not None
    d = x.data
    assert (d.requires_grad, d.is_leaf, d.grad_fn) == (False, True, None)


# > DATA-3: `x.data` has a version counter of its own.
# > VERSION-96 (compile, until 2.5): these compiled steps do what their eager clauses say, `_version` included.
@pytest.mark.parametrize(
    "versions",
    by_mode("DATA-3", "DATA-90", [(1, 0), (1, 1)], [(2, 0), (2, 2)], as_eager="VERSION-96"),
)
def test_data_has_own_version_counter(device, versions, run):
    x = leaf(device)
    d = x.data
    run(_add_one, d)
    assert (d._version, x._version) == versions[0]
    run(_add_one_no_grad, x)
    assert (d._version, x._version) == versions[1]


# > DATA-1, DATA-2, DATA-3: ... for every kind of tensor of TENSOR_KINDS (eager).
@pytest.mark.clause("DATA-1")
@pytest.mark.parametrize("make", TENSOR_KINDS.params())
def test_data_of_every_kind_shares_storage(device, make):
    x = make(device)
    accesses = [x.data, x.data, x.data]
    assert all(d is not x for d in accesses) and len({id(d) for d in accesses}) == 3
    for d in accesses:
        assert same_storage(d, x)
        assert layout(d) == layout(x)


@pytest.mark.clause("DATA-2")
@pytest.mark.parametrize("make", TENSOR_KINDS.params())
def test_data_of_every_kind_is_detached_leaf(device, make):
    d = make(device).data
    assert (d.requires_grad, d.is_leaf, d.grad_fn) == (False, True, None)


@pytest.mark.clause("DATA-3")
@pytest.mark.parametrize("make", TENSOR_KINDS.params())
def test_data_of_every_kind_has_own_version_counter(device, make):
    x = make(device)
    d, version = x.data, x._version
    d.zero_()
    assert (d._version > 0, x._version) == (True, version)
    own = d._version
    with torch.no_grad():
        x.zero_()
    assert (d._version, x._version > version) == (own, True)


def _add_one(t):
    t.add_(1)


def _add_one_no_grad(t):
    with torch.no_grad():
        t.add_(1)


def _through_data(update):
    return lambda x: update(x.data)


SET_ON_INPUT = "Encountered a set_ on a graph input"


def _write(run, write, x) -> bool:
    """Run a write of DATA-4; False where it raises: `x.data += 1` compiled (DATA-91)."""
    if run.mode == "compile" and WRITE_ID[write] == "x.data += 1":
        with raises(Exception, SET_ON_INPUT):
            run(write, x)
        return False
    run(write, x)
    return True


def _data_iadd(x):
    x.data += 1  # also assigns the result to `x.data` (DATA-8)


# The writes of DATA-4: every member of INPLACE_SPELLINGS applied to `t = x.data`, and the statement `x.data += 1`.
WRITES = [pytest.param(_through_data(fn), id=mid) for mid, fn in INPLACE_SPELLINGS.available()] + [
    # compiled, raises from 2.4 (DATA-91); before 2.4: DATA-101 (not refused, `_version` 1)
    pytest.param(_data_iadd, id="x.data += 1", marks=pytest.mark.compiled_since("2.4", before="DATA-101"))
]
WRITE_ID = {p.values[0]: p.id for p in WRITES}
SPELLING_WRITES = [p for p in WRITES if p.id != "x.data += 1"]  # the members of INPLACE_SPELLINGS only
MEMBER = dict(INPLACE_SPELLINGS.available())
# Values of `x = [1, 2]` after the writes the page names (`v` is [0.5, 0.5]); every other member: the values of
# the update on a normal tensor.
EXPECTED = {
    "t[:] = v": [0.5, 0.5],
    "t[0] = 5": [5.0, 2.0],
    "t.add_(1)": [2.0, 3.0],
    "x.data += 1": [2.0, 3.0],
    "torch.add(t, 1, out=t)": [2.0, 3.0],
    "t.copy_(v)": [0.5, 0.5],
    "t.zero_()": [0.0, 0.0],
    "t.fill_(7)": [7.0, 7.0],
}


# > DATA-4: Every in-place write through `x.data` of a leaf `x` that requires grad (every spelling of the population
# > `INPLACE_SPELLINGS`, listed below, applied to `t = x.data`: `t[:] = v`, `t[0] = 5`, `t.add_(1)`,
# > `torch.add(t, 1, out=t)`, `t.copy_(v)`, `t.zero_()`, `t.fill_(7)`, ...; and the statement `x.data += 1`) raises no
# > error, and afterwards `x` is still a leaf that requires grad, has no `grad_fn`, and has the same `_version` as
# > before.
@pytest.mark.parametrize("version", by_mode("DATA-4", "DATA-91", 0, 1))
@pytest.mark.parametrize("write", WRITES)
def test_write_through_data_is_invisible_to_autograd(device, write, version, run):
    x = leaf(device)
    if _write(run, write, x):
        assert (x.is_leaf, x.requires_grad, x.grad_fn, x._version) == (True, True, None, version)


# > DATA-5: The values written through `x.data`, by any of the spellings of DATA-4, are the values of `x`.
# > DATA-92: The values written through `x.data` inside a compiled function, by the spellings of DATA-91 other than
# > `x.data += 1` (which raises; before 2.4, DATA-101), are the values of `x` afterwards.
@pytest.mark.parametrize("clause", by_mode("DATA-5", "DATA-92", None, None))
@pytest.mark.parametrize("write", SPELLING_WRITES)
def test_write_through_data_changes_values(device, write, clause, run):
    wid = WRITE_ID[write]
    x = leaf(device)
    run(write, x)
    if wid in EXPECTED:
        assert_values(x, EXPECTED[wid], f"x after {wid}")
    if wid in MEMBER:
        plain = torch.tensor([1.0, 2.0])
        MEMBER[wid](plain)
        assert_values(x, plain.tolist(), f"x after {wid} (as on a normal tensor)")


@pytest.mark.clause("DATA-5")
def test_data_iadd_changes_values(device):
    x = leaf(device)
    _data_iadd(x)
    assert_values(x, EXPECTED["x.data += 1"], "x after x.data += 1")


# > DATA-101 (compile, until 2.4): Before 2.4, the statement `x.data += 1` inside a compiled function, on a leaf `x`
# > that requires grad, raises no error (not the refusal of DATA-91): `x` stays a leaf that requires grad with no
# > `grad_fn`, `x._version` is 1 afterwards (not 0, as eagerly, DATA-4), and on a device with values `x` holds its old
# > values plus 1 (DATA-5). Because the counter moved, when autograd had saved `x` before the statement
# > (`y = (x * x).sum()`), `y.backward()` raises `RuntimeError` whose message contains "one of the variables needed for
# > gradient computation has been modified by an inplace operation" and "is at version 1; expected version 0 instead",
# > where eagerly it computes the gradient from the new values. Layer: Dynamo (with `backend="eager"` the counter moves
# > too; from 2.4 AOTAutograd refuses the `set_` that Dynamo traces for the assignment, DATA-91).
@pytest.mark.clause("DATA-101")
@pytest.mark.parametrize("write", [pytest.param(_data_iadd, id="x.data += 1")])
def test_compiled_data_iadd_accepted_before_2_4(device, write, run):
    x = leaf(device)
    y = (x * x).sum()  # MulBackward0 saves x
    run(write, x)
    assert (x.is_leaf, x.requires_grad, x.grad_fn, x._version) == (True, True, None, 1)
    if device != "meta":
        assert_values(x, EXPECTED["x.data += 1"], "x after x.data += 1")
    with raises(RuntimeError, SAVED_MODIFIED) as info:
        y.backward()
    assert "is at version 1; expected version 0 instead" in str(info.value)


# > DATA-6: When autograd has saved `x` for backward (for example by `y = x * x`) and `x` is then modified through
# > `x.data`, `backward()` raises no error and computes the gradient from the modified values: after `x.data.mul_(10)`
# > the gradient of `(x * x).sum()` is `20 * x_old` instead of the correct `2 * x_old`.
def _data_setitem(x, new):
    x.data[:] = new


# The update steps of DATA-6.
DATA_WRITES = {
    "x.data.mul_(10)": lambda x, new: x.data.mul_(10),
    "x.data[:] = 10 * x": _data_setitem,
    "x.data.copy_(10 * x)": lambda x, new: x.data.copy_(new),
}


@pytest.mark.parametrize("detected", by_mode("DATA-6", "DATA-93", False, True))
@pytest.mark.parametrize("spelling", list(DATA_WRITES))
def test_write_through_data_to_saved_tensor_gives_wrong_gradient(device, spelling, detected, run):
    x = leaf(device)
    y = (x * x).sum()  # MulBackward0 saves x
    new = torch.tensor([10.0, 20.0], device=device)
    run(DATA_WRITES[spelling], x, new)
    if detected:
        with raises(RuntimeError, SAVED_MODIFIED) as info:
            y.backward()
        assert "is at version 1; expected version 0 instead" in str(info.value)
    else:
        y.backward()
        assert_values(x.grad, [20.0, 40.0], "x.grad (correct would be [2.0, 4.0])")


# > DATA-7: The same modification made through `x.detach()` (which shares the version counter of `x`) makes that
# > `backward()` raise `RuntimeError` whose message contains "one of the variables needed for gradient computation has
# > been modified by an inplace operation".
def _detach_setitem(x, new):
    x.detach()[:] = new


# The update steps of DATA-7.
DETACH_WRITES = {
    "x.detach().mul_(10)": lambda x, new: x.detach().mul_(10),
    "x.detach()[:] = v": _detach_setitem,
    "x.detach().copy_(v)": lambda x, new: x.detach().copy_(new),
}


@pytest.mark.clause("DATA-7")
@pytest.mark.parametrize("spelling", list(DETACH_WRITES))
def test_write_through_detach_to_saved_tensor_raises(device, spelling, run):
    x = leaf(device)
    y = (x * x).sum()
    new = torch.tensor([10.0, 20.0], device=device)
    run(DETACH_WRITES[spelling], x, new)
    assert x._version > 0
    with raises(
        RuntimeError, "one of the variables needed for gradient computation has been modified by an inplace operation"
    ):
        y.backward()


# > DATA-14: Operations recorded after a write through `x.data` use the new values.
@pytest.mark.clause("DATA-14")
def test_graph_after_data_write_uses_new_values(device, run):
    x = leaf(device)
    run(_data_setitem, x, torch.tensor([3.0, 4.0], device=device))
    (x * x).sum().backward()
    assert_values(x.grad, [6.0, 8.0], "x.grad = 2 * new x")


def assign_data(x, t):
    x.data = t


# > DATA-8: After `x.data = t` the Python object `x` is the same object, and keeps its own
# > `requires_grad`, leafness, `grad_fn` and `_version`; `t.requires_grad` is not copied to `x`.
# > DATA-100 (compile, 2.1 and since 2.14): On 2.1 and from 2.14, `x.data = t` inside a function compiled with
# > `aot_eager` does what eager code does: DATA-8 holds (`x` keeps its `requires_grad`, leafness, `grad_fn` and
# > `_version`, not the bump of DATA-94), and so does DATA-60 (the `backward()` of a graph that saved `x` raises
# > nothing, not the error of DATA-97), and so does DATA-12 (`t` on another device raises `RuntimeError` whose message
# > contains "incompatible tensor type"; from 2.14 it is a `torch._dynamo.exc.TorchRuntimeError`): Dynamo traces the
# > assignment as `aten.shallow_copy_data_`, no longer as `set_` (pytorch/pytorch#186040); 2.2 to 2.13 trace it as
# > `set_` (DATA-94, DATA-97, DATA-102, DATA-96). Layer: Dynamo. Not with inductor: there a `t` of another shape raises
# > from 2.4 (DATA-103, DATA-104).


@pytest.mark.parametrize("bump", by_mode("DATA-8", "DATA-94", 0, 1, as_eager="DATA-100"))
@pytest.mark.parametrize("x_requires_grad", [True, False])
def test_assign_data_keeps_autograd_identity(device, x_requires_grad, bump, run):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=x_requires_grad)
    with torch.no_grad():
        x.add_(1)
        x.add_(1)
    ident, version = id(x), x._version
    t = torch.zeros(3, device=device, requires_grad=not x_requires_grad)
    run(assign_data, x, t)
    assert id(x) == ident
    assert (x.requires_grad, x.is_leaf, x.grad_fn, x._version) == (x_requires_grad, True, None, version + bump)


# Compiled, the non-leaf keeps its grad_fn as eagerly: this test checks no divergence of DATA-94 (its layer is decided
# by the version bump of test_assign_data_keeps_autograd_identity; this one's rerun uncompiled gives the same outcome).
@pytest.mark.parametrize("clause", by_mode("DATA-8", "DATA-94", None, None, as_eager="DATA-100"))
def test_assign_data_keeps_grad_fn_of_non_leaf(device, clause, run):
    a = leaf(device)
    b = a * 2
    fn = b.grad_fn
    run(assign_data, b, torch.zeros(2, device=device))
    assert (b.grad_fn is fn, b.requires_grad, b.is_leaf) == (True, True, False)


# > DATA-9: After `x.data = t`, `x` shares the storage of `t` and takes its shape and dtype.
@pytest.mark.clause("DATA-9")
@pytest.mark.parametrize(  # compiled, another dtype raises before 2.9 (DATA-98)
    "dtype",
    compiled_since("2.9", dtypes(torch.float32, torch.float64, torch.complex64), ["float64", "complex64"], "DATA-98"),
)
@pytest.mark.compiled_since("2.15", before="DATA-103", also_on="2.1 2.2 2.3", modes="inductor")
def test_assign_data_adopts_storage_shape_dtype(device, dtype, run):
    x = leaf(device)
    t = torch.zeros(3, 2, device=device, dtype=dtype)
    run(assign_data, x, t)
    assert same_storage(x, t)
    assert (x.shape, x.dtype) == (torch.Size([3, 2]), dtype)


# > DATA-103: Compiled with inductor, the default backend, from 2.4 to 2.14, `x.data = t` where `x` is a leaf that
# > requires grad and `t`, which does not, has another shape than `x` raises `AssertionError`, whose message contains
# > "expected size" when `t` has as many dimensions as `x` (`x = [1, 2]`, `t` of shape `(3,)` or `(1,)`) and "wrong
# > number of dimensions" when it has not (`t` of shape `(3, 2)`); `x` keeps its shape and does not share the storage of
# > `t`. Eagerly and with `aot_eager`, `x` takes the shape of `t` (DATA-9). The code inductor generates for the step
# > checks the size of its input against the shape it was traced with. On 2.1 to 2.3 and from 2.15 the assignment
# > compiles with inductor and `x` takes the shape of `t` (2.15: Dynamo traces it as `aten.shallow_copy_data_`,
# > DATA-100); for an `x` that does not require grad and a `t` that does it raises on 2.15 too (DATA-104). The outcome
# > is that of a step traced with inductor's cache empty. Layer: Inductor.
# > DATA-104: Compiled with inductor, from 2.4, `x.data = t` where `x` does not require grad (`x = [1, 2]`) and `t`,
# > which requires grad, has another shape than `x` raises `AssertionError`, whose message contains "expected size" when
# > `t` has as many dimensions as `x` (`t` of shape `(3,)` or `(1,)`) and "wrong number of dimensions" when it has not
# > (`t` of shape `(3, 2)`); `x` keeps its shape and does not share the storage of `t`, as for a leaf that requires grad
# > on 2.4 to 2.14 (DATA-103), but on 2.15 too, where that leaf takes the shape of `t`. Eagerly and with `aot_eager`,
# > `x` takes the shape of `t` (DATA-9). On 2.1 to 2.3 the assignment compiles with inductor. The outcome is that of a
# > step traced with inductor's cache empty. Layer: Inductor (an issue of the same input check, for a `t` of other
# > strides: pytorch/pytorch#191337).
@pytest.mark.parametrize(
    ("shape", "message"), [((3,), "expected size"), ((1,), "expected size"), ((3, 2), "wrong number of dimensions")]
)
@pytest.mark.parametrize(
    "x_requires_grad",
    [
        pytest.param(True, marks=pytest.mark.clause("DATA-103"), id="DATA-103"),
        pytest.param(False, marks=pytest.mark.clause("DATA-104"), id="DATA-104"),
    ],
)
def test_inductor_assign_data_of_another_shape_raises(device, x_requires_grad, shape, message, run):
    from torch._inductor.utils import fresh_inductor_cache

    x = torch.tensor([1.0, 2.0], device=device, requires_grad=x_requires_grad)
    t = torch.zeros(shape, device=device, requires_grad=not x_requires_grad)
    # An empty FX graph cache: inductor serves the graph of this step compiled for the other requires_grad
    # combination when it holds one, and that graph's size check is what decides the outcome.
    with fresh_inductor_cache(), raises(AssertionError, message):
        run(assign_data, x, t)
    assert x.shape == (2,)
    assert not same_storage(x, t)


# > DATA-10: `x.data = v` where `v` is not a tensor raises `TypeError` whose message contains "Variable data has to be a
# > tensor".
@pytest.mark.parametrize(
    "error",
    by_mode(
        "DATA-10",
        "DATA-95",
        (TypeError, "Variable data has to be a tensor"),
        (RuntimeError, "object has no attribute 'dtype'"),
    ),
)
@pytest.mark.parametrize("value", [[1.0, 2.0], 3.0, None])
def test_assign_data_non_tensor_raises(device, value, error, run):
    x = leaf(device)
    with raises(*error):
        run(assign_data, x, value)


# > DATA-98 (2.2 to 2.9): Inside a compiled function, `x.data = t` where `t` has another dtype than `x` (a `float32` `x`
# > given a `float64`, `complex64`, `int64`, `int32` or `bool` tensor) raises, while Dynamo traces it, `RuntimeError`
# > (`torch._dynamo.exc.TorchRuntimeError`) whose message contains "Could not set tensor of type" (for example "Could
# > not set tensor of type double to a tensor of type float"), whether or not `x` requires grad, and `x` keeps its
# > dtype: not the assignment of DATA-9 nor the error of DATA-11. Dynamo traces `.data =` as `set_`
# > (pytorch/pytorch#113080), and `set_` on fake tensors refuses another dtype; 2.1.2 runs the assignment as eager code
# > does. Layer: Dynamo.
@pytest.mark.clause("DATA-98")
@pytest.mark.parametrize("requires_grad", [True, False], ids=["x requires grad", "x does not"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.complex64, torch.int64, torch.int32, torch.bool])
def test_compiled_assign_data_of_other_dtype_raises(device, dtype, requires_grad, run):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=requires_grad)
    with raises(RuntimeError, "Could not set tensor of type"):
        run(assign_data, x, torch.zeros(2, device=device, dtype=dtype))
    assert x.dtype == torch.float32


# > DATA-99 (2.1, and 2.4 to 2.9): Inside a compiled function, `x.data = v` where `v` is not a tensor (a list, a float,
# > `None`) raises the `TypeError` of DATA-10, "Variable data has to be a tensor" (2.2.2 and 2.3.1 raise
# > `torch._dynamo.exc.TorchRuntimeError` from `set_` instead; from 2.9, DATA-95). Layer: Dynamo.
@pytest.mark.clause("DATA-99")
@pytest.mark.parametrize("value", [[1.0, 2.0], 3.0, None])
def test_compiled_assign_data_non_tensor_raises_eagers_error(device, value, run):
    x = leaf(device)
    with raises(TypeError, "Variable data has to be a tensor"):
        run(assign_data, x, value)


# > DATA-11: `x.data = t` where `x` requires grad and `t` has an integer or bool dtype raises `RuntimeError` whose
# > message contains "must be floating point or complex dtype"; when `x` does not require grad the assignment is
# > accepted.
@pytest.mark.clause("DATA-11")
@pytest.mark.compiled_since("2.9", before="DATA-98")  # older releases raise another error
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool])
def test_assign_integer_data(device, dtype, run):
    x = leaf(device)
    with raises(RuntimeError, "must be floating point or complex dtype"):
        run(assign_data, x, torch.zeros(2, device=device, dtype=dtype))
    plain = torch.tensor([1.0, 2.0], device=device)
    run(assign_data, plain, torch.zeros(2, device=device, dtype=dtype))
    assert plain.dtype == dtype


# > DATA-12: `x.data = t` where `t` has another tensor implementation type than `x` (a `meta` tensor into a `cpu` one,
# > or the reverse) raises `RuntimeError` whose message contains "incompatible tensor type".
# > DATA-96 (compile, 2.13 only): Inside a compiled function, `x.data = t` where `t` is on another device (`meta` into
# > `cpu`, or the reverse) raises `RuntimeError` (`torch._dynamo.exc.TorchRuntimeError`) whose message contains "Tensor
# > device mismatch", not "incompatible tensor type" (DATA-12): Dynamo traces the assignment as `set_`
# > (pytorch/pytorch#186040). Layer: Dynamo. (On 2.12.1 the message is another one, "Unhandled FakeTensor Device
# > Propagation for aten.set_.source_Tensor, found two different devices": DATA-102.)
@pytest.mark.parametrize(
    "fragment",
    by_mode("DATA-12", "DATA-96", "incompatible tensor type", "Tensor device mismatch", as_eager="DATA-100"),
)
def test_assign_data_of_other_tensor_type_raises(device, fragment, run):
    x = leaf(device)
    other = "cpu" if device == "meta" else "meta"
    with raises(RuntimeError, fragment):
        run(assign_data, x, torch.zeros(2, device=other))
    assert x.device.type == device


# > DATA-102 (compile, 2.2 to 2.13): From 2.2 to 2.13, inside a compiled function, `x.data = t` where `t` is on another
# > device (`meta` into `cpu`, or the reverse) raises `torch._dynamo.exc.TorchRuntimeError` (a `RuntimeError`) while
# > Dynamo traces it as `set_`, whose message does not contain eager's "incompatible tensor type" (DATA-12); the message
# > itself changes across releases ("Failed running call_function <method 'set_' ...>" on 2.5.1, "RuntimeError when
# > making fake tensor call" on 2.12.1, "Tensor device mismatch" on 2.13: DATA-96), so this clause states the type only.
# > `x` keeps its device. 2.1 and 2.14 on raise eager's error (DATA-100). Layer: Dynamo.
@pytest.mark.clause("DATA-102")
def test_compiled_assign_data_of_other_tensor_type_raises_in_dynamo(device, run):
    from torch._dynamo.exc import TorchRuntimeError

    x = leaf(device)
    other = "cpu" if device == "meta" else "meta"
    with pytest.raises(TorchRuntimeError) as info:
        run(assign_data, x, torch.zeros(2, device=other))
    assert "incompatible tensor type" not in str(info.value)
    assert x.device.type == device


# > DATA-13: `x.data = t` leaves `x.grad` as it was (the same tensor object), even when `t` has another
# > shape than that gradient.
@pytest.mark.clause("DATA-13")
@pytest.mark.parametrize("shape", [(2,), (3,)])
@pytest.mark.compiled_since("2.15", before="DATA-103", also_on="2.1 2.2 2.3", modes="inductor")
def test_assign_data_keeps_grad(device, shape, run):
    x = leaf(device)
    (x * 1).sum().backward()
    grad = x.grad
    run(assign_data, x, torch.zeros(shape, device=device))
    assert x.grad is grad
    assert x.grad.shape == torch.Size([2])


def _saved_then_assigned(device, case, run):
    """A graph that saved a tensor, then `.data =` on that tensor; returns (loss, assigned tensor, leaf, version)."""
    a = leaf(device, (0.0, 1.0) if case == "saved output" else (1.0, 2.0))
    if case == "saved input, leaf":
        t, loss = a, (a * a).sum()  # MulBackward0 saves a (an input)
    elif case == "saved input, non-leaf":
        t = a * 1
        loss = (t * t).sum()
    else:
        t = (a * 1).exp()  # ExpBackward0 saves its result (an output)
        loss = t.sum()
    version = t._version
    run(assign_data, t, torch.tensor([10.0, 20.0], device=device))
    return loss, t, a, version


SAVED_CASES = ["saved input, leaf", "saved input, non-leaf", "saved output"]


# > DATA-60: When a graph has saved `x` for backward and `x.data = t` then gives `x` new data of the same shape,
# > `backward()` of that graph raises no error and `x._version` is what it was.
@pytest.mark.parametrize("bump", by_mode("DATA-60", "DATA-97", 0, 1, as_eager="DATA-100"))
@pytest.mark.parametrize("case", SAVED_CASES)
def test_assign_data_to_saved_tensor_does_not_raise(device, case, bump, run):
    loss, t, a, version = _saved_then_assigned(device, case, run)
    assert t._version == version + bump
    if bump:
        with raises(RuntimeError, SAVED_MODIFIED):
            loss.backward()
    else:
        loss.backward()  # no RuntimeError
        assert a.grad is not None and a.grad.shape == torch.Size([2])


# > DATA-61 (UNSPECIFIED): Which values that `backward()` computes with: the new data `t`, or the values the saved
# > tensor had.
@pytest.mark.clause("DATA-61")
@pytest.mark.parametrize("case", SAVED_CASES)
def test_assign_data_to_saved_tensor_values(device, case, observe, run):
    loss, _, a, _ = _saved_then_assigned(device, case, run)
    loss.backward()
    grad = [round(v, 4) for v in a.grad.tolist()]
    new = {"saved input, leaf": [20.0, 40.0], "saved input, non-leaf": [20.0, 40.0], "saved output": [10.0, 20.0]}
    observe(f"{case}: grad", str(grad))
    observe(f"{case}: computed from", "new data" if grad == new[case] else "old values")


# Seeds, run as written (fixing only what stops them from running, as noted).


@pytest.mark.clause("DATA-5", "DATA-14")
def test_seed_en_data_write_runs(device):
    # English seed, "Modifying the data attribute", verbatim.
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    x.data[:] = torch.tensor([3.0, 4.0], device=device)
    # "Backpropagation will still work on the modified values in x"
    y = x * x
    loss = torch.mean((y - 5) ** 2)
    loss.backward()
    assert_values(x.grad, [24.0, 88.0], "gradient of mean((x*x-5)**2) at [3, 4]")


@pytest.mark.clause("DATA-8", "DATA-14")
@pytest.mark.only_devices("cpu")  # the seed snippet as written: values, on the default device
def test_seed_ko_method1_data_assign(device):
    # Korean seed, method 1. As written it calls torch.Variable, which does not exist:
    with raises(AttributeError, "has no attribute 'Variable'"):
        torch.Variable(torch.randn(5))
    # Fixed to run: a leaf that requires grad. The seed prints zeros; torch gives ones.
    x = torch.randn(5, device=device, requires_grad=True)
    x.data = torch.randn(5, device=device)
    y = x.sum()
    y.backward()
    assert x.requires_grad
    assert_values(x.grad, [1.0] * 5, "x.grad (the seed printed zeros)")
