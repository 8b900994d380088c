"""Conformance tests for spec/set.md (`Tensor.set_`). Each test quotes the clause it proves."""

import pytest
import torch
from packaging.version import Version

from conformance.harness.checks import SAVED_MODIFIED, assert_values, compiled_since, raises, same_storage

# Compile mode of this page is specified from torch 2.1. Before 2.3 the compiled steps of SET-1 (x smaller than s),
# SET-4 (set_()), SET-6 (set_(s), set_()), SET-7, SET-10 and SET-11 diverge (SET-90 to SET-93; SET-97 for SET-10 on
# 2.1): those tests say so with compiled_since("2.3"). On 2.1 a compiled set_(s) leaves x its own storage and values
# (SET-94, SET-95: SET-1 with x of shape (3, 4), SET-2) and raises under no_grad on a leaf that requires grad (SET-96:
# SET-8, SET-9): those tests say so with compiled_since("2.2").


LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."
NOT_IMPLEMENTED = "derivative for set_ is not implemented"


def set_(x, s):
    return x.set_(s)


def set_no_grad(x, s):
    with torch.no_grad():
        return x.set_(s)


# shapes of x with fewer elements than source()'s six
SMALLER = [(), (0,), (2,)]


def source(device, requires_grad=False):
    return torch.tensor([[5.0, 6.0, 7.0], [8.0, 9.0, 10.0]], device=device, requires_grad=requires_grad)


# > SET-1: `x.set_(s)` returns `x` itself; afterwards `x` shares the storage of `s` and takes its shape, strides and
# > storage offset, for `s` itself, the non-contiguous `s.t()` and the slice `s[1:]` of a `(2, 3)` tensor `s`, and for
# > each of the shapes `()`, `(0,)`, `(2,)` and `(3, 4)` that `x` had before.
@pytest.mark.clause("SET-1")
@pytest.mark.parametrize("kind", ["s", "s.t()", "s[1:]"])
@pytest.mark.parametrize(
    "x_shape",
    [
        *(
            pytest.param(shape, id=str(shape), marks=pytest.mark.compiled_since("2.3", before="SET-90"))
            for shape in SMALLER
        ),
        pytest.param((3, 4), id="(3, 4)", marks=pytest.mark.compiled_since("2.2", before="SET-94")),
    ],
)
def test_set_adopts_storage_and_geometry(device, kind, x_shape, run):
    x = torch.zeros(x_shape, device=device)
    base = source(device)
    s = {"s": base, "s.t()": base.t(), "s[1:]": base[1:]}[kind]
    assert run(set_, x, s) is x
    assert same_storage(x, s)
    assert (x.shape, x.stride(), x.storage_offset()) == (s.shape, s.stride(), s.storage_offset())


# > SET-2: From then on `x` and `s` read and write the same values: `x` holds the values of `s`, and a write into either
# > is seen in the other.
@pytest.mark.clause("SET-2")
@pytest.mark.compiled_since("2.2", before="SET-95")
def test_set_shares_values(device, run):
    x = torch.tensor([1.0, 2.0], device=device)
    s = torch.tensor([5.0, 6.0, 7.0], device=device)
    run(set_, x, s)
    assert_values(x, [5.0, 6.0, 7.0], "x after set_")
    s[0] = 100.0
    x[2] = -1.0
    assert_values(x, [100.0, 6.0, -1.0], "x")
    assert_values(s, [100.0, 6.0, -1.0], "s")


# > SET-3: `x.set_(s)` increases `x._version` (by how much is not promised, VERSION-40), whatever the `_version` of `s`
# > (tested: below, equal to and above that of `x`), and leaves that of `s` unchanged. `x` keeps a version counter of
# > its own: an in-place operation on either tensor afterwards changes only the `_version` of that tensor, although
# > their values are shared.
@pytest.mark.clause("SET-3")
@pytest.mark.parametrize("s_updates", [0, 2, 5], ids=lambda n: f"s_updated_{n}_times")
def test_set_version(device, s_updates, run):
    x = torch.tensor([1.0, 2.0], device=device)
    x.add_(1)
    x.add_(1)
    s = torch.tensor([5.0, 6.0], device=device)
    for _ in range(s_updates):
        s.add_(1)
    xv, sv = x._version, s._version
    run(set_, x, s)
    assert x._version > xv, f"x._version did not increase ({xv} -> {x._version})"
    assert s._version == sv
    xv = x._version
    x.add_(1)
    assert x._version > xv and s._version == sv
    xv = x._version
    s.mul_(2)
    s[0] = 1.0
    assert x._version == xv and s._version > sv


def _set_part(y, s):
    y.set_(s.untyped_storage(), 1, (2,), (1,))


# > SET-4: `x.set_(s.untyped_storage())` makes `x` a one-dimensional tensor over the whole storage;
# > `x.set_(storage, offset, size, stride)` selects a part of it; `x.set_()` makes `x` an empty tensor of shape
# > `(0,)`. Each increases `x._version`.
@pytest.mark.clause("SET-4")
@pytest.mark.compiled_since("2.3", before="SET-92")
def test_set_storage_forms(device, run):
    s = torch.tensor([5.0, 6.0, 7.0, 8.0], device=device)
    x = torch.tensor([1.0, 2.0], device=device)
    run(lambda x, s: x.set_(s.untyped_storage()), x, s)
    assert (x.shape, same_storage(x, s), x._version > 0) == (torch.Size([4]), True, True)
    y = torch.tensor([1.0, 2.0], device=device)
    run(_set_part, y, s)
    assert (y.shape, y.storage_offset(), same_storage(y, s), y._version > 0) == (torch.Size([2]), 1, True, True)
    z = torch.tensor([1.0, 2.0], device=device)
    run(lambda z: z.set_(), z)
    assert (z.shape, z._version > 0) == (torch.Size([0]), True)


# > SET-5: The part selected by `x.set_(storage, offset, size, stride)` holds the values of the storage there.
@pytest.mark.clause("SET-5")
def test_set_storage_offset_values(device, run):
    s = torch.tensor([5.0, 6.0, 7.0, 8.0], device=device)
    y = torch.tensor([1.0, 2.0], device=device)
    run(_set_part, y, s)
    assert_values(y, [6.0, 7.0], "y")


# > SET-6: With grad mode enabled, `x.set_(s)`, `x.set_(storage)` and `x.set_()` on a leaf that requires grad raise
# > `RuntimeError` whose message is "a leaf Variable that requires grad is being used in an in-place operation." (as for
# > the in-place operations of INPLACE-1), whether or not `s` requires grad; `x` keeps its shape, storage and
# > `_version`, and stays a leaf that requires grad with no `grad_fn`.
SET_FORMS = {
    "set_(s)": set_,
    "set_(storage)": lambda x, s: x.set_(s.untyped_storage()),
    "set_()": lambda x, s: x.set_(),
}


@pytest.mark.clause("SET-6")
@pytest.mark.parametrize("form", compiled_since("2.3", list(SET_FORMS), ["set_(s)", "set_()"], "SET-91"))
@pytest.mark.parametrize("s_requires_grad", [False, True])
def test_set_on_leaf_requiring_grad_raises(device, form, s_requires_grad, run):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    s = source(device, s_requires_grad)
    storage = x.untyped_storage()
    with raises(RuntimeError, LEAF_ERROR) as info:
        run(SET_FORMS[form], x, s)
    assert str(info.value) == LEAF_ERROR
    assert x.shape == torch.Size([2]) and x.untyped_storage()._cdata == storage._cdata
    assert (x._version, x.is_leaf, x.requires_grad, x.grad_fn) == (0, True, True, None)


# > SET-7: Inside `torch.no_grad()`, `x.set_(s)` on a leaf that requires grad is accepted and returns `x`: `x` stays a
# > leaf that requires grad with no `grad_fn`, shares the storage of `s`, takes its shape, and `x._version` increases.
@pytest.mark.clause("SET-7")
@pytest.mark.compiled_since("2.3", before="SET-90")
def test_set_on_leaf_under_no_grad(device, run):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    s = source(device)
    r = run(set_no_grad, x, s)
    assert r is x
    assert (x.is_leaf, x.requires_grad, x.grad_fn, x._version > 0) == (True, True, None, True)
    assert same_storage(x, s) and x.shape == torch.Size([2, 3])


# > SET-8: When a graph saved `x` for backward (as `x * x` does) before `x.set_(s)` under `torch.no_grad()`,
# > `backward()` raises `RuntimeError` whose message contains "one of the variables needed for gradient computation has
# > been modified by an inplace operation".
@pytest.mark.clause("SET-8")
@pytest.mark.compiled_since("2.2", before="SET-96")
def test_set_after_save_raises_at_backward(device, run):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = (x * x).sum()
    run(set_no_grad, x, torch.tensor([5.0, 6.0], device=device))
    with raises(RuntimeError, SAVED_MODIFIED):
        y.backward()


# > SET-9: Operations recorded after `x.set_(s)` use the new values and shape: for `x = [1., 2.]` set to
# > `[5., 6., 7.]` under `torch.no_grad()`, the gradient of `(x * x).sum()` is `[10., 12., 14.]`; `s` receives no
# > gradient.
@pytest.mark.clause("SET-9")
@pytest.mark.compiled_since("2.2", before="SET-96")
def test_graph_after_set_uses_new_values(device, run):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    s = torch.tensor([5.0, 6.0, 7.0], device=device)
    run(set_no_grad, x, s)
    (x * x).sum().backward()
    assert_values(x.grad, [10.0, 12.0, 14.0], "x.grad")
    assert s.grad is None


def _set_with_grad(device, kind):
    """(a, x, s) where grad mode makes `x.set_(s)` matter: `x = a * 2` a non-leaf, or `s` requiring grad."""
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    if kind == "non-leaf":
        return a, a * 2, torch.tensor([5.0, 6.0], device=device)
    return a, torch.tensor([1.0, 2.0], device=device), torch.tensor([5.0, 6.0], device=device, requires_grad=True)


# > SET-10: `set_` is not differentiable. With grad mode enabled it is accepted on a non-leaf that requires grad,
# > and on a tensor that does not require grad when `s` requires grad; afterwards `x` requires grad, is not a
# > leaf, and its `grad_fn` is of type `NotImplemented`; `backward()` through it raises RuntimeError whose
# > message contains "derivative for set_ is not implemented".
@pytest.mark.clause("SET-10")
@pytest.mark.compiled_since("2.3", before="SET-93 SET-97")
@pytest.mark.parametrize("kind", ["non-leaf", "source requires grad"])
def test_set_is_not_differentiable(device, kind, run):
    _, x, s = _set_with_grad(device, kind)
    run(set_, x, s)
    assert (x.requires_grad, x.is_leaf, type(x.grad_fn).__name__) == (True, False, "NotImplemented")
    assert same_storage(x, s)
    with raises(RuntimeError, NOT_IMPLEMENTED):
        x.sum().backward()


# > SET-11: `x.set_(s)` where `s` has another dtype raises `RuntimeError` whose message contains "Could not set tensor
# > of type double to a tensor of type float" (a float64 `s` into a float32 `x`); where `s` is on another device (a
# > `meta` tensor into a `cpu` one, or the reverse) it raises `RuntimeError` whose message contains "the devices must
# > match". `x` is left as it was.
@pytest.mark.clause("SET-11")
@pytest.mark.compiled_since("2.3", before="SET-91")
def test_set_dtype_and_device_mismatch(device, run):
    x = torch.tensor([1.0, 2.0], device=device)
    with raises(RuntimeError, "Could not set tensor of type double to a tensor of type float"):
        run(set_, x, torch.tensor([5.0, 6.0], device=device, dtype=torch.float64))
    other = "cpu" if device == "meta" else "meta"
    with raises(RuntimeError, "the devices must match"):
        run(set_, x, torch.tensor([5.0, 6.0], device=other))
    assert x.shape == torch.Size([2]) and x._version == 0


def _set_empty_then_index(s):
    x = torch.empty(0, device=s.device)
    x.set_(s)
    return x[0]


# > SET-12 (eager): In code that makes an empty tensor (`x = torch.empty(0)`) and calls `x.set_(s)`, `x[0]` then reads
# > the first element of `s` (for `s = [1., 2.]`: `1.`).
@pytest.mark.clause("SET-12")
def test_set_on_empty_tensor_then_index(device, run):
    assert_values(run(_set_empty_then_index, torch.tensor([1.0, 2.0], device=device)), 1.0, "x[0]")


# > SET-98 (compile, until 2.5): Before 2.5, SET-12 holds for the same code run compiled: `x[0]` reads `s[0]`
# > (`1.0` here).
@pytest.mark.clause("SET-98")
def test_set_on_empty_tensor_then_index_compiled_before_2_5(device, run):
    assert_values(run(_set_empty_then_index, torch.tensor([1.0, 2.0], device=device)), 1.0, "x[0]")


# > SET-99 (compile, since 2.5): From 2.5, the code of SET-12 run compiled fails while it is traced: it raises an
# > exception whose message contains "index 0 is out of bounds for dimension 0 with size 0"
# > (`torch._dynamo.exc.BackendCompilerFailed`, a `RuntimeError`, up to 2.12; `IndexError` from 2.13). The graph's fake
# > tensor for `x` keeps the size 0 that `torch.empty(0)` gave it. Layer: AOTAutograd (Dynamo alone, `backend="eager"`,
# > compiles it and reads `1.`). Reported as pytorch/pytorch#197399. Run with `aot_eager` and inductor on 2.1.2 to
# > 2.15.0: it compiles on 2.1.2 to 2.4.1.
@pytest.mark.clause("SET-99")
def test_set_on_empty_tensor_then_index_fails_to_trace_from_2_5(device, run):
    expected = IndexError if Version(torch.__version__) >= Version("2.13") else RuntimeError
    with raises(expected, "index 0 is out of bounds for dimension 0 with size 0"):
        run(_set_empty_then_index, torch.tensor([1.0, 2.0], device=device))


# > SET-90 (compile, until 2.3): Before 2.3, inside a compiled function, `x.set_(s)` where `x` has fewer elements than
# > `s` (`x` of shape `()`, `(0,)` or `(2,)`, `s` of shape `(2, 3)`; with grad mode on, and under `torch.no_grad()`
# > on a leaf that requires grad) raises AssertionError while Dynamo traces it; `x` keeps its shape and `_version`.
@pytest.mark.clause("SET-90")
@pytest.mark.parametrize("x_shape", SMALLER, ids=str)
@pytest.mark.parametrize("grad_mode", ["enabled", "no_grad, leaf"])
def test_compiled_set_growing_x_fails_to_trace_before_2_3(device, x_shape, grad_mode, run):
    step, requires_grad = (set_, False) if grad_mode == "enabled" else (set_no_grad, True)
    x = torch.zeros(x_shape, device=device, requires_grad=requires_grad)
    with pytest.raises(AssertionError):
        run(step, x, source(device))
    assert (x.shape, x._version) == (torch.Size(x_shape), 0)


# > SET-91 (compile, until 2.3): Before 2.3, inside a compiled function, the errors that `x.set_(s)` and `x.set_()`
# > raise while Dynamo traces them are `torch._dynamo.exc.TorchRuntimeError` (a `RuntimeError`) whose message starts
# > with "Failed running call_method set_" and goes on with the message of eager code: the refusal of SET-6 and the
# > dtype error of SET-11. For the device mismatch of SET-11 it goes on with "Unhandled FakeTensor Device Propagation
# > for aten.set_.source_Tensor, found two different devices". `x` keeps its shape and `_version`. Layer: Dynamo (it
# > runs `set_` on fake tensors while tracing).
@pytest.mark.clause("SET-91")
@pytest.mark.parametrize(
    "case",
    ["leaf, set_(s)", "leaf, set_()", "float64 s", "s on another device"],
)
def test_compiled_set_errors_come_wrapped_before_2_3(device, case, run):
    from torch._dynamo.exc import TorchRuntimeError

    other = "cpu" if device == "meta" else "meta"
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=case.startswith("leaf"))
    step, s, message = {
        "leaf, set_(s)": (set_, source(device), LEAF_ERROR),
        "leaf, set_()": (SET_FORMS["set_()"], source(device), LEAF_ERROR),
        "float64 s": (set_, source(device).double(), "Could not set tensor of type double to a tensor of type float"),
        "s on another device": (
            set_,
            source(other),
            "Unhandled FakeTensor Device Propagation for aten.set_.source_Tensor, found two different devices",
        ),
    }[case]
    with raises(TorchRuntimeError, message) as info:
        run(step, x, s)
    assert str(info.value).startswith("Failed running call_method set_")
    assert (x.shape, x._version) == (torch.Size([2]), 0)


# > SET-92 (compile, until 2.3): Before 2.3, inside a compiled function, `x.set_()` on `x = [1., 2.]` (not requiring
# > grad) raises `RuntimeError` whose message contains "The size of tensor a (2) must match the size of tensor b (0)";
# > `x` keeps its shape and `_version`. Layer: AOTAutograd.
@pytest.mark.clause("SET-92")
def test_compiled_set_to_empty_fails_before_2_3(device, run):
    x = torch.tensor([1.0, 2.0], device=device)
    with raises(RuntimeError, "The size of tensor a (2) must match the size of tensor b (0)"):
        run(lambda x: x.set_(), x)
    assert (x.shape, x._version) == (torch.Size([2]), 0)


# > SET-93 (compile, since 2.2, until 2.3): On 2.2, inside a compiled function with grad mode on, `x.set_(s)` on the
# > non-leaf `x = a * 2` (`a = [1., 2.]` requiring grad) gives `x` the storage and values of `s` but keeps the `grad_fn`
# > of `a * 2` (`MulBackward0`), so `x.sum().backward()` does not raise (SET-10): `a.grad` is `[2., 2.]`, the gradient
# > of the graph before the update. When `s` requires grad and `x` does not, `x` takes the storage of `s` and stays a
# > leaf that does not require grad. Layer: AOTAutograd (Dynamo alone does what SET-10 says).
@pytest.mark.clause("SET-93")
def test_compiled_set_keeps_old_graph_on_2_2(device, run):
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    x = a * 2
    s = torch.tensor([5.0, 6.0], device=device)
    run(set_, x, s)
    assert same_storage(x, s)
    assert (x.requires_grad, x.is_leaf, type(x.grad_fn).__name__) == (True, False, "MulBackward0")
    x.sum().backward()
    assert_values(a.grad, [2.0, 2.0], "a.grad")
    y = torch.tensor([1.0, 2.0], device=device)
    t = torch.tensor([5.0, 6.0], device=device, requires_grad=True)
    run(set_, y, t)
    assert same_storage(y, t)
    assert (y.requires_grad, y.is_leaf) == (False, True)


# > SET-94 (compile, until 2.2): On 2.1, inside a compiled function, `x.set_(s)` on an `x` that does not require grad,
# > for `s`, the non-contiguous `s.t()` and the slice `s[1:]` of a `(2, 3)` tensor `s` with `x` of shape `(2, 3)` or
# > `(3, 4)`, and for `x` of shape `(2,)` with `s` of shape `(3,)`, returns `x`, gives `x` the shape, strides and
# > storage offset of `s` and increases `x._version`, but `x` keeps its own storage object (grown to fit in the last
# > case) and does not share the storage of `s` (SET-1). `s._version` is unchanged. Layer: AOTAutograd
# > (`backend="eager"` gives `x` the storage of `s`).
ON_2_1_CASES = [
    *((x_shape, kind) for x_shape in [(2, 3), (3, 4)] for kind in ["s", "s.t()", "s[1:]"]),
    ((2,), "s of shape (3,)"),
]


def _on_2_1_case(device, x_shape, kind):
    x = (torch.arange(float(torch.Size(x_shape).numel()), device=device) + 100).reshape(x_shape)
    if kind == "s of shape (3,)":
        x = torch.tensor([1.0, 2.0], device=device)
        return x, torch.tensor([5.0, 6.0, 7.0], device=device)
    base = source(device)
    return x, {"s": base, "s.t()": base.t(), "s[1:]": base[1:]}[kind]


@pytest.mark.clause("SET-94")
@pytest.mark.parametrize(("x_shape", "kind"), ON_2_1_CASES, ids=[f"x{shape}-{kind}" for shape, kind in ON_2_1_CASES])
def test_compiled_set_keeps_own_storage_on_2_1(device, x_shape, kind, run):
    x, s = _on_2_1_case(device, x_shape, kind)
    storage, sv = x.untyped_storage()._cdata, s._version
    assert run(set_, x, s) is x
    assert (x.shape, x.stride(), x.storage_offset()) == (s.shape, s.stride(), s.storage_offset())
    assert x.untyped_storage()._cdata == storage
    assert not same_storage(x, s)
    assert x._version > 0 and s._version == sv


# > SET-95 (compile, until 2.2): On 2.1, in the cases of SET-94, `x` holds the values its own storage held, read with
# > the shape, strides and offset of `s`: `x = [[100., 101., 102.], [103., 104., 105.]]` after `x.set_(s)`,
# > `x.set_(s.t())` and `x.set_(s[1:])` equals the same tensor, its transpose and its second row; for `x = [1., 2.]` and
# > `s` of three elements, the first two values of `x` are `[1., 2.]` (SET-2: not the values of `s`). A later write into
# > `s` is not seen in `x`. Layer: AOTAutograd.
@pytest.mark.clause("SET-95")
@pytest.mark.parametrize(("x_shape", "kind"), ON_2_1_CASES, ids=[f"x{shape}-{kind}" for shape, kind in ON_2_1_CASES])
def test_compiled_set_keeps_own_values_on_2_1(device, x_shape, kind, run):
    x, s = _on_2_1_case(device, x_shape, kind)
    old = x.clone().flatten()
    run(set_, x, s)
    if kind == "s of shape (3,)":
        assert_values(x[:2], [1.0, 2.0], "x[:2]")
    else:
        expected = old.as_strided(s.shape, s.stride(), s.storage_offset())
        assert_values(x, expected.tolist(), "x")
    before = x.tolist()
    s.fill_(-1.0)
    assert x.tolist() == before


# > SET-96 (compile, until 2.2): On 2.1, inside a compiled function, `x.set_(s)` under `torch.no_grad()` on a leaf
# > `x = [1., 2.]` that requires grad raises `RuntimeError`: whose message is "a leaf Variable that requires grad is
# > being used in an in-place operation." when `s` has the shape of `x` (`[5., 6.]`), and whose message contains "shape
# > '[3]' is invalid for input of size 2" when `s` is `[5., 6., 7.]` (SET-7, SET-8, SET-9 say it is accepted). `x` keeps
# > its shape and `_version`, and stays a leaf that requires grad. Layer: AOTAutograd (`backend="eager"` accepts it).
@pytest.mark.clause("SET-96")
@pytest.mark.parametrize("s_values", [[5.0, 6.0], [5.0, 6.0, 7.0]], ids=["same shape", "three elements"])
def test_compiled_set_under_no_grad_on_leaf_raises_on_2_1(device, s_values, run):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    s = torch.tensor(s_values, device=device)
    message = LEAF_ERROR if len(s_values) == 2 else "shape '[3]' is invalid for input of size 2"
    with raises(RuntimeError, message) as info:
        run(set_no_grad, x, s)
    if len(s_values) == 2:
        assert str(info.value) == LEAF_ERROR
    assert (x.shape, x._version, x.is_leaf, x.requires_grad, x.grad_fn) == (torch.Size([2]), 0, True, True, None)


# > SET-97 (compile, until 2.2): On 2.1, inside a compiled function with grad mode on, `x.set_(s)` on the non-leaf
# > `x = a * 2` (`a = [1., 2.]` requiring grad, `s` of the shape of `x`) leaves `x` its own storage and gives it a
# > `grad_fn` of type `AsStridedBackward1`, so `x.sum().backward()` does not raise (SET-10): `a.grad` is `[2., 2.]`.
# > When `s` requires grad and `x` does not, `x` keeps its own storage and stays a leaf that does not require grad.
# > Layer: AOTAutograd (`backend="eager"` does what SET-10 says).
@pytest.mark.clause("SET-97")
@pytest.mark.parametrize("kind", ["non-leaf", "source requires grad"])
def test_compiled_set_differentiated_as_old_view_on_2_1(device, kind, run):
    a, x, s = _set_with_grad(device, kind)
    storage = x.untyped_storage()._cdata
    run(set_, x, s)
    assert x.untyped_storage()._cdata == storage and not same_storage(x, s)
    if kind == "non-leaf":
        assert (x.requires_grad, x.is_leaf, type(x.grad_fn).__name__) == (True, False, "AsStridedBackward1")
        x.sum().backward()
        assert_values(a.grad, [2.0, 2.0], "a.grad")
    else:
        assert (x.requires_grad, x.is_leaf) == (False, True)
