"""Conformance tests for spec/clone.md (`y = x.clone()`, then modifying `y`)."""

import pytest
import torch

from conformance.harness.checks import assert_values, by_mode, leaf, raises, same_storage
from conformance.harness.kinds import TENSOR_KINDS
from conformance.harness.populations import INPLACE_RECORDED

OUT_NOT_DIFFERENTIABLE = "functions with out=... arguments don't support automatic differentiation"
COPY_CONSTRUCT = "To copy construct from a tensor, it is recommended to use sourceTensor."


# > CLONE-1: `x.clone()` returns a new tensor object with its own storage (not shared with `x`), with the shape, dtype
# > and device of `x`, for every kind of tensor of the population `TENSOR_KINDS` (listed below). Its strides are those
# > of `x` when the elements of `x` fill their memory without gaps or overlap (contiguous, transposed, channels-last,
# > 0-dim, zero-size, an output of `split`: `memory_format` defaults to `torch.preserve_format`), and contiguous strides
# > otherwise: for the expanded tensor (stride 0) and the views `x[:, 1:]` of `TENSOR_KINDS`.
@pytest.mark.clause("CLONE-1")
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_clone_has_own_storage(device, layout):
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device, requires_grad=True)
    if layout == "transposed":
        x = x.t()
    y = x.clone()
    assert y is not x
    assert not same_storage(x, y)
    assert (y.shape, y.dtype, y.device, y.stride()) == (x.shape, x.dtype, x.device, x.stride())


@pytest.mark.clause("CLONE-2")
def test_clone_values(device):
    # > CLONE-2: `x.clone()` has the values of `x`.
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device).t()
    assert_values(x.clone(), [[1.0, 3.0], [2.0, 4.0]], "x.clone()")


# The kinds of TENSOR_KINDS whose elements leave gaps in their memory or overlap: CLONE-1 gives them contiguous strides.
NOT_DENSE = {"expanded tensor (2, 3) of (1, 3)", "view of a leaf", "view of a non-leaf", "view taken under no_grad"}


def contiguous_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.insert(0, step)
        step *= max(size, 1)
    return tuple(strides)


# > CLONE-1: `x.clone()` returns a new tensor object with its own storage (not shared with `x`), with the shape, dtype
# > and device of `x`, for every kind of tensor of the population `TENSOR_KINDS` (listed below). Its strides are those
# > of `x` when the elements of `x` fill their memory without gaps or overlap (contiguous, transposed, channels-last,
# > 0-dim, zero-size, an output of `split`: `memory_format` defaults to `torch.preserve_format`), and contiguous strides
# > otherwise: for the expanded tensor (stride 0) and the views `x[:, 1:]` of `TENSOR_KINDS`.
@pytest.mark.clause("CLONE-1")
@pytest.mark.parametrize("kind, make", [pytest.param(*m, id=m[0]) for m in TENSOR_KINDS.available()])
def test_clone_of_every_kind(device, kind, make):
    x = make(device)
    y = x.clone()
    assert y is not x and not same_storage(x, y)
    assert (y.shape, y.dtype, y.device) == (x.shape, x.dtype, x.device)
    assert y.stride() == (contiguous_strides(x.shape) if kind in NOT_DENSE else x.stride())


# > CLONE-2: `x.clone()` has the values of `x`, for every kind of tensor of TENSOR_KINDS.
@pytest.mark.clause("CLONE-2")
@pytest.mark.parametrize("make", TENSOR_KINDS.params())
def test_clone_values_of_every_kind(device, make):
    x = make(device)
    assert torch.equal(x.clone().detach(), x.detach()), f"{x.clone()} != {x}"


# > CLONE-3: When `x` requires grad and grad mode is on, `y = x.clone()` requires grad, is not a leaf and has `grad_fn`
# > `CloneBackward0`, whose next function is the `AccumulateGrad` node of `x`. When `x` does not require grad, or inside
# > `torch.no_grad`, `y` is a leaf that does not require grad.
@pytest.mark.clause("CLONE-3")
@pytest.mark.parametrize("how", ["x requires grad", "x without grad", "under no_grad"])
def test_clone_autograd_state(device, how):
    x = leaf(device) if how != "x without grad" else torch.tensor([1.0, 2.0], device=device)
    if how == "under no_grad":
        with torch.no_grad():
            y = x.clone()
    else:
        y = x.clone()
    if how == "x requires grad":
        assert (y.requires_grad, y.is_leaf, type(y.grad_fn).__name__) == (True, False, "CloneBackward0")
        ((fn, _),) = y.grad_fn.next_functions
        assert type(fn).__name__ == "AccumulateGrad" and fn.variable is x
    else:
        assert (y.requires_grad, y.is_leaf, y.grad_fn) == (False, True, None)


# > CLONE-4: Gradients flow through `clone()`: the gradient with respect to `y = x.clone()` reaches `x.grad` unchanged.
@pytest.mark.clause("CLONE-4")
def test_gradient_flows_through_clone(device):
    x = leaf(device)
    y = x.clone()
    (y * torch.tensor([3.0, 5.0], device=device)).sum().backward()
    assert_values(x.grad, [3.0, 5.0], "x.grad through clone")


MODIFY = ["y[:] = t", "y[0] = 5", "y.copy_(t)", "y.fill_(7)", "y.zero_()", "y.add_(1)", "y += 1", "y.mul_(3)"]
# spelling -> (values of y afterwards, gradient of y.sum() with respect to x, grad_fn name or None)
AFTER = {
    "y[:] = t": ([3.0, 4.0], [0.0, 0.0], None),  # CopySlices on 2.0.1, CopyBackwards on 2.13 and 2.15
    "y[0] = 5": ([5.0, 2.0], [0.0, 1.0], "CopySlices"),
    "y.copy_(t)": ([3.0, 4.0], [0.0, 0.0], "CopyBackwards"),
    "y.fill_(7)": ([7.0, 7.0], [0.0, 0.0], "FillBackward2"),
    "y.zero_()": ([0.0, 0.0], [0.0, 0.0], "ZeroBackward0"),
    "y.add_(1)": ([2.0, 3.0], [1.0, 1.0], "AddBackward0"),
    "y += 1": ([2.0, 3.0], [1.0, 1.0], "AddBackward0"),
    "y.mul_(3)": ([3.0, 6.0], [3.0, 3.0], "MulBackward0"),
}


def modify(y, spelling):
    t = torch.tensor([3.0, 4.0], device=y.device)
    if spelling == "y[:] = t":
        y[:] = t
    elif spelling == "y[0] = 5":
        y[0] = 5.0
    elif spelling == "y.copy_(t)":
        y.copy_(t)
    elif spelling == "y.fill_(7)":
        y.fill_(7.0)
    elif spelling == "y.zero_()":
        y.zero_()
    elif spelling == "y.add_(1)":
        y.add_(1)
    elif spelling == "y += 1":
        y += 1
    else:
        y.mul_(3)
    return y


# Member of INPLACE_RECORDED -> (values of y = [1, 2] afterwards, grad_fn name or None), for the members the page
# names; `v` is [0.5, 0.5]. Every other member: its values are those of the update on a normal tensor, and its
# grad_fn is not CloneBackward0.
NAMED = {
    "t[:] = v": ([0.5, 0.5], None),  # CopySlices on 2.0.1, CopyBackwards on 2.13 and 2.15
    "t[0] = 5": ([5.0, 2.0], "CopySlices"),
    "t.copy_(v)": ([0.5, 0.5], "CopyBackwards"),
    "t.fill_(7)": ([7.0, 7.0], "FillBackward2"),
    "t.zero_()": ([0.0, 0.0], "ZeroBackward0"),
    "t.add_(1)": ([2.0, 3.0], "AddBackward0"),
    "t += 1": ([2.0, 3.0], "AddBackward0"),
    "t.mul_(2)": ([2.0, 4.0], "MulBackward0"),
}
MEMBER_ID = {fn: mid for mid, fn in INPLACE_RECORDED.members}


# > CLONE-5: Every in-place modification of `y = x.clone()` (every spelling of the population `INPLACE_RECORDED`, listed
# > below, applied to `t = y`: `t[:] = v`, `t[0] = 5`, `t.copy_(v)`, `t.fill_(7)`, `t.zero_()`, `t.add_(1)`, `t += 1`,
# > `t.mul_(2)`, ...), with `x` a leaf that requires grad, raises no error; it bumps `y._version` to 1 and leaves
# > `x._version` at 0 and `x` a leaf; `y` stays a non-leaf that requires grad, and its `grad_fn` is no longer
# > `CloneBackward0` but that of the modifying operation: `CopySlices` for `t[0] = 5`, `CopyBackwards` for `t.copy_(v)`,
# > `FillBackward2` for `t.fill_(7)`, `ZeroBackward0`, `AddBackward0` (also for `t += 1`), `MulBackward0` for
# > `t.mul_(2)`. (The `out=` spellings are refused, CLONE-9.)
@pytest.mark.parametrize("compiled_fn", by_mode("CLONE-5", "CLONE-90", None, "CopyBackwards"))
@pytest.mark.parametrize("update", INPLACE_RECORDED.params())
def test_modifying_clone_leaves_x_version(device, update, compiled_fn, run):
    x = leaf(device)
    y = x.clone()
    run(update, y)
    assert (x._version, y._version) == (0, 1)
    assert (x.is_leaf, x.grad_fn) == (True, None)
    assert (y.requires_grad, y.is_leaf) == (True, False)
    expected_fn = compiled_fn or NAMED.get(MEMBER_ID[update], (None, None))[1]
    if expected_fn is None:
        assert type(y.grad_fn).__name__ != "CloneBackward0"
    else:
        assert type(y.grad_fn).__name__ == expected_fn


# > CLONE-6: Each modification of CLONE-5 leaves the values of `x` unchanged, and `y` takes the new values.
@pytest.mark.clause("CLONE-6")
@pytest.mark.parametrize("update", INPLACE_RECORDED.params())
def test_modifying_clone_leaves_x_values(device, update, run):
    mid = MEMBER_ID[update]
    x = leaf(device)
    y = x.clone()
    run(update, y)
    assert_values(x, [1.0, 2.0], f"x after {mid}")
    if mid in NAMED:
        assert_values(y, NAMED[mid][0], f"y after {mid}")
    plain = torch.tensor([1.0, 2.0])
    update(plain)
    assert_values(y, plain.tolist(), f"y after {mid} (as on a normal tensor)")


# > CLONE-7: After one of the modifications named here the gradient that reaches `x` through `y` is that of the modified
# > `y`: elements overwritten (`y[:] = t`, `y[0] = v`, `y.copy_(t)`, `y.fill_(v)`, `y.zero_()`) send a zero
# > gradient to `x`; untouched elements, and elements changed by `add_` or `mul_`, send the chain-rule
# > gradient. `x.grad` is a tensor (of zeros where everything was overwritten), not `None`.
@pytest.mark.clause("CLONE-7")
@pytest.mark.parametrize("spelling", MODIFY)
def test_gradient_through_modified_clone(device, spelling, run):
    x = leaf(device)
    y = run(modify, x.clone(), spelling)
    y.sum().backward()
    assert x.grad is not None
    assert_values(x.grad, AFTER[spelling][1], f"x.grad after {spelling}; y.sum().backward()")


# > CLONE-8: A graph built from `x` is not affected by modifications of its clone (any spelling of CLONE-5):
# > it backpropagates the gradient at the original values of `x`.
@pytest.mark.clause("CLONE-8")
@pytest.mark.parametrize("update", INPLACE_RECORDED.params())
def test_graph_of_x_unaffected_by_clone_changes(device, update, run):
    x = leaf(device)
    loss = (x * x).sum()
    run(update, x.clone())
    loss.backward()
    assert_values(x.grad, [2.0, 4.0], "x.grad = 2 * x")


# > CLONE-9: `torch.add(y, 1, out=y)` or `torch.mul(y, 3, out=y)` on a clone that requires grad raises `RuntimeError`
# > whose message contains "functions with out=... arguments don't support automatic differentiation", and leaves
# > `y._version` and `x._version` at 0.
OUT_SPELLINGS = {
    "torch.add(y, 1, out=y)": lambda y: torch.add(y, 1, out=y),
    "torch.mul(y, 3, out=y)": lambda y: torch.mul(y, 3, out=y),
}


@pytest.mark.clause("CLONE-9")
@pytest.mark.parametrize("spelling", list(OUT_SPELLINGS))
def test_out_on_clone_raises(device, spelling, run):
    x = leaf(device)
    y = x.clone()
    with raises(RuntimeError, OUT_NOT_DIFFERENTIABLE):
        run(OUT_SPELLINGS[spelling], y)
    assert (y._version, x._version) == (0, 0)


# > CLONE-10: `x.clone().detach()` and `x.detach().clone()` both give a tensor with its own storage that does not
# > require grad, is a leaf, has no `grad_fn` and starts at `_version` 0; modifying it in place leaves `x._version`
# > unchanged. `.requires_grad_()` then makes it a new leaf that requires grad.
# > VERSION-96 (compile, until 2.5): these compiled steps do what their eager clauses say, `_version` included.
@pytest.mark.parametrize("bump", by_mode("CLONE-10", "CLONE-91", 1, 2, as_eager="VERSION-96"))
@pytest.mark.parametrize("spelling", ["x.clone().detach()", "x.detach().clone()"])
def test_detached_copy(device, spelling, bump, run):
    x = leaf(device)
    c = x.clone().detach() if spelling == "x.clone().detach()" else x.detach().clone()
    assert not same_storage(c, x)
    assert (c.requires_grad, c.is_leaf, c.grad_fn, c._version) == (False, True, None, 0)
    run(lambda c: c.add_(1), c)
    assert (c._version, x._version) == (bump, 0)
    run(lambda c: c.requires_grad_(), c)
    assert (c.requires_grad, c.is_leaf, c.grad_fn) == (True, True, None)


@pytest.mark.clause("CLONE-11")
@pytest.mark.parametrize("spelling", ["x.clone().detach()", "x.detach().clone()"])
def test_detached_copy_values_and_gradient(device, spelling):
    # > CLONE-11: Such a copy has the values of `x`, and a gradient computed through it does not reach `x`: after
    # > `(c * c).sum().backward()` through a copy `c` made to require grad, `c.grad` is `[2, 4]` for `x = [1, 2]` and
    # > `x.grad` stays `None`.
    x = leaf(device)
    c = (x.clone().detach() if spelling == "x.clone().detach()" else x.detach().clone()).requires_grad_()
    assert_values(c, [1.0, 2.0], spelling)
    (c * c).sum().backward()
    assert_values(c.grad, [2.0, 4.0], "c.grad")
    assert x.grad is None


# > CLONE-12: `torch.tensor(x)` with a tensor `x` emits a UserWarning whose message contains "To copy
# > construct from a tensor, it is recommended to use sourceTensor." and gives, like `x.detach().clone()`, a
# > leaf with its own storage that does not require grad.
@pytest.mark.clause("CLONE-12")
def test_torch_tensor_of_tensor_warns(device):
    x = leaf(device)
    with pytest.warns(UserWarning, match=COPY_CONSTRUCT.replace(".", r"\.")):
        c = torch.tensor(x)
    assert not same_storage(c, x)
    assert (c.requires_grad, c.is_leaf, c.grad_fn) == (False, True, None)


# Seeds, run as written.


@pytest.mark.clause("CLONE-6", "CLONE-7", "CLONE-8")
def test_seed_en_clone_then_modify(device):
    # English seed, "Cloning the variable", verbatim:
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = x.clone()
    y[:] = torch.tensor([3.0, 4.0], device=device)
    # "Backpropagation will still work on the original x": x is unchanged and usable ...
    assert_values(x, [1.0, 2.0], "x")
    (x * x).sum().backward()
    assert_values(x.grad, [2.0, 4.0], "x.grad from a graph of x")
    # ... but the modified copy carries no gradient back to x (it is all overwritten).
    x.grad = None
    y.sum().backward()
    assert_values(x.grad, [0.0, 0.0], "x.grad through the overwritten clone")


@pytest.mark.clause("CLONE-5")
def test_seed_en_clone_then_modify_metadata(device):
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = x.clone()
    y[:] = torch.tensor([3.0, 4.0], device=device)
    assert (x._version, y._version, y.is_leaf, y.requires_grad) == (0, 1, False, True)


def _mul_under_no_grad(x):
    with torch.no_grad():
        x.mul_(10)


ORIGINAL_UPDATES = {
    "x.mul_(10) under no_grad": _mul_under_no_grad,
    "x.detach().mul_(10)": lambda x: x.detach().mul_(10),
}


# > CLONE-13: An in-place update of `x` made after `y = x.clone()` (`x.mul_(10)` under `torch.no_grad()`, or
# > `x.detach().mul_(10)`), with `x` a leaf `[1, 2]` that requires grad or a non-leaf `x = a * 1` of such a leaf `a`,
# > leaves the values of `y` as they were, and `backward()` through `y` raises no error: after
# > `(y * y).sum().backward()` the gradient that reaches the leaf is computed from the values `y` holds (`[2, 4]`), not
# > from the updated ones.
@pytest.mark.clause("CLONE-13")
@pytest.mark.parametrize("update", list(ORIGINAL_UPDATES))
@pytest.mark.parametrize("source", ["leaf", "non-leaf"])
def test_updating_x_leaves_its_clone(device, source, update, run):
    a = leaf(device)
    x = a if source == "leaf" else a * 1
    y = x.clone()
    run(ORIGINAL_UPDATES[update], x)
    assert_values(y, [1.0, 2.0], "the clone after x was updated")
    (y * y).sum().backward()
    assert_values(a.grad, [2.0, 4.0], "the leaf's gradient through the clone")
