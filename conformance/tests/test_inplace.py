"""Conformance tests for spec/inplace.md (in-place operations). Each test quotes the clause it proves."""

import re
import warnings

import pytest
import torch

from conformance.harness.checks import SAVED_MODIFIED, assert_values, by_mode, raises
from conformance.harness.checks import leaf as make_leaf
from conformance.harness.kinds import GRAD_LEAF_KINDS, TENSOR_KINDS
from conformance.harness.populations import (
    COPY_SPELLINGS,
    INPLACE_RECORDED,
    INPLACE_SPELLINGS,
    SAVES_INPUT,
    SAVES_OUTPUT,
    _index,
    _iop,
    _mask,
    _setitem,
    check_each,
)

LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."
OUT_ERROR = (
    "functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad"
)
HINT_OLD = (
    "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
    "with torch.autograd.set_detect_anomaly(True)."
)
HINT_NEW = (
    "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
    "with torch.autograd.set_detect_anomaly(True, check_nan=False)."
)
HINT_ANOMALY = (
    "Hint: the backtrace further above shows the operation that failed to compute its gradient. "
    "The variable in question was changed in there or anywhere later. Good luck!"
)


def leaf(device, values=(1.0, 2.0, 3.0)):
    return make_leaf(device, values)


def no_grad(update):
    """The update step `with torch.no_grad(): update(x)`, as one function (for the `run` fixture)."""

    def step(*args):
        with torch.no_grad():
            return update(*args)

    return step


# Every spelling of an in-place update this page speaks of, applied to x = [1, 2, 3]:
# (function, values afterwards, grad_fn type name on a non-leaf, d(sum(x after))/d(x before)).
METHODS = {
    "x.add_(1)": (lambda x: x.add_(1), [2.0, 3.0, 4.0], "AddBackward0", [1.0, 1.0, 1.0]),
    "x.sub_(1)": (lambda x: x.sub_(1), [0.0, 1.0, 2.0], "SubBackward0", [1.0, 1.0, 1.0]),
    "x.mul_(3)": (lambda x: x.mul_(3), [3.0, 6.0, 9.0], "MulBackward0", [3.0, 3.0, 3.0]),
    "x.div_(2)": (lambda x: x.div_(2), [0.5, 1.0, 1.5], "DivBackward0", [0.5, 0.5, 0.5]),
    "x.zero_()": (lambda x: x.zero_(), [0.0, 0.0, 0.0], "ZeroBackward0", [0.0, 0.0, 0.0]),
    "x.fill_(7)": (lambda x: x.fill_(7.0), [7.0, 7.0, 7.0], "FillBackward2", [0.0, 0.0, 0.0]),
    "x.clamp_(1.5, 2.5)": (lambda x: x.clamp_(1.5, 2.5), [1.5, 2.0, 2.5], "ClampBackward1", [0.0, 1.0, 0.0]),
    "x.copy_(v)": (
        lambda x: x.copy_(torch.tensor([5.0, 6.0, 7.0], device=x.device)),
        [5.0, 6.0, 7.0],
        "CopyBackwards",
        [0.0, 0.0, 0.0],
    ),
    "x += 1": (lambda x: _iop(x, "+=", 1), [2.0, 3.0, 4.0], "AddBackward0", [1.0, 1.0, 1.0]),
    "x *= 3": (lambda x: _iop(x, "*=", 3), [3.0, 6.0, 9.0], "MulBackward0", [3.0, 3.0, 3.0]),
}
OUT = {
    "torch.add(x, 1, out=x)": (lambda x: torch.add(x, 1, out=x), [2.0, 3.0, 4.0]),
    "torch.mul(x, 3, out=x)": (lambda x: torch.mul(x, 3, out=x), [3.0, 6.0, 9.0]),
}
ALL = {**{k: v[:2] for k, v in METHODS.items()}, **OUT}


# > INPLACE-1: With grad mode enabled, an in-place operation on a leaf tensor that requires grad and is not a view
# > (`x.add_(1)`, `x.sub_(1)`, `x.mul_(3)`, `x.div_(2)`, `x.zero_()`, `x.fill_(7)`, `x.clamp_(lo, hi)`, `x.copy_(v)`,
# > `x += 1`, `x *= 3`) raises `RuntimeError` whose message is "a leaf Variable that requires grad is being used in an
# > in-place operation.". This holds for every kind of tensor of the population `TENSOR_KINDS` (listed below) that is
# > such a leaf: float16, bfloat16, float32, float64 and complex64; 0-dim, zero-size, 1-D and 4-D; transposed and
# > channels-last; an `nn.Parameter`. (A view taken under `torch.no_grad()` of a leaf that requires grad is a leaf that
# > requires grad too; it is refused with another message, VIEW-11.)
def _refused_on_leaf(device, spelling, run):
    """The error that the update of INPLACE-1 raises on a leaf that requires grad."""
    x = leaf(device)
    with raises(RuntimeError, LEAF_ERROR) as info:
        run(METHODS[spelling][0], x)
    return info.value


@pytest.mark.clause("INPLACE-1")
@pytest.mark.parametrize("spelling", list(METHODS))
def test_inplace_on_leaf_requiring_grad_raises(device, spelling, run):
    assert str(_refused_on_leaf(device, spelling, run)) == LEAF_ERROR


# > INPLACE-90: In a compiled function, the in-place operations of INPLACE-1 on a leaf that requires grad, with grad
# > mode enabled, raise `torch._dynamo.exc.TorchRuntimeError` (a subclass of `RuntimeError`) while Dynamo traces the
# > function with fake tensors; its message contains "a leaf Variable that requires grad is being used in an in-place
# > operation." but is not that message alone (it begins "RuntimeError when making fake tensor call" on torch 2.13). The
# > layer is Dynamo (the same with `backend="eager"`). Evidence: the executed tests; `torch/_dynamo/utils.py`
# > (`get_fake_value` wraps the error raised by the fake tensor call in `TorchRuntimeError`).
@pytest.mark.clause("INPLACE-90")
@pytest.mark.parametrize("spelling", list(METHODS))
def test_inplace_on_leaf_requiring_grad_raises_compiled(device, spelling, run):
    import torch._dynamo.exc

    error = _refused_on_leaf(device, spelling, run)
    assert isinstance(error, torch._dynamo.exc.TorchRuntimeError)
    assert str(error) != LEAF_ERROR


# > INPLACE-2: An operation refused by INPLACE-1 or INPLACE-4 changes no metadata: `x` is still a leaf that requires
# > grad, has no `grad_fn`, and keeps its `_version`.
@pytest.mark.clause("INPLACE-2")
@pytest.mark.parametrize("spelling", list(ALL))
@pytest.mark.compiled_since("2.2", before="INPLACE-95", devices="meta")  # AssertionError on meta
def test_refused_inplace_changes_no_metadata(device, spelling, run):
    x = leaf(device)
    with pytest.raises(RuntimeError):
        run(ALL[spelling][0], x)
    assert (x.is_leaf, x.requires_grad, x.grad_fn, x._version) == (True, True, None, 0)


# > INPLACE-95 (compile, meta, until 2.2): On the `meta` device, before 2.2, the compiled step
# > `x.copy_(torch.tensor([5.0, 6.0, 7.0], device=x.device))` on a leaf `x` that requires grad, with grad mode enabled
# > (the spelling `x.copy_(v)` of INPLACE-1), raises a bare `AssertionError` (not a `RuntimeError`) while Dynamo traces
# > the function, at `torch.tensor([5.0, 6.0, 7.0], device=x.device)`, before the `copy_` (the value Dynamo gets for
# > that tensor on `meta` is not a fake tensor: `assert is_fake(e)` in `torch/_dynamo/utils.py`). Afterwards `x` is
# > still a leaf that requires grad, has no `grad_fn`, and keeps `_version` 0, as INPLACE-2 says. From 2.2 the step
# > still fails on `meta`, but with `torch._dynamo.exc.InternalTorchDynamoError`, a `RuntimeError` (observed on 2.2.2 to
# > 2.4.1). Layer: Dynamo (the same with `backend="eager"`).
@pytest.mark.clause("INPLACE-95")
def test_compiled_refused_copy_raises_assertion_error_on_meta_before_2_2(device, run):
    x = leaf(device)
    with pytest.raises(AssertionError) as info:
        run(METHODS["x.copy_(v)"][0], x)
    assert not isinstance(info.value, RuntimeError)
    assert (x.is_leaf, x.requires_grad, x.grad_fn, x._version) == (True, True, None, 0)


# > INPLACE-3: An operation refused by INPLACE-1 or INPLACE-4 leaves the values of `x` as they were.
@pytest.mark.clause("INPLACE-3")
@pytest.mark.parametrize("spelling", list(ALL))
def test_refused_inplace_changes_no_values(device, spelling, run):
    x = leaf(device)
    with pytest.raises(RuntimeError):
        run(ALL[spelling][0], x)
    assert_values(x, [1.0, 2.0, 3.0], f"x after refused {spelling}")


GRAD_LEAVES = TENSOR_KINDS.without(
    *(k for k in TENSOR_KINDS.ids() if k not in GRAD_LEAF_KINDS),
    name="GRAD_LEAVES",
    description="the kinds of TENSOR_KINDS that are leaves requiring grad and not views",
)


# > INPLACE-1, INPLACE-2, INPLACE-3: ... on every kind of TENSOR_KINDS that is a leaf that requires grad and is not a
# > view (eager: the update step is not compiled).
@pytest.mark.clause("INPLACE-1")
@pytest.mark.parametrize("spelling", list(METHODS))
def test_inplace_on_every_leaf_kind_requiring_grad_raises(device, spelling):
    def check(make):
        x = make(device)
        with raises(RuntimeError, LEAF_ERROR) as info:
            METHODS[spelling][0](x)
        assert str(info.value) == LEAF_ERROR

    check_each(GRAD_LEAVES, check)


@pytest.mark.clause("INPLACE-2")
@pytest.mark.parametrize("spelling", list(ALL))
def test_refused_inplace_changes_no_metadata_of_any_leaf_kind(device, spelling):
    def check(make):
        x = make(device)
        with pytest.raises(RuntimeError):
            ALL[spelling][0](x)
        assert (x.is_leaf, x.requires_grad, x.grad_fn, x._version) == (True, True, None, 0)

    check_each(GRAD_LEAVES, check)


@pytest.mark.clause("INPLACE-3")
@pytest.mark.parametrize("spelling", list(ALL))
def test_refused_inplace_changes_no_values_of_any_leaf_kind(device, spelling):
    def check(make):
        x = make(device)
        before = x.detach().clone()
        with pytest.raises(RuntimeError):
            ALL[spelling][0](x)
        assert torch.equal(x.detach(), before), f"x after refused {spelling}: {x} (before: {before})"

    check_each(GRAD_LEAVES, check)


# > INPLACE-4: With grad mode enabled, a function called with `out=x` (`torch.add(x, 1, out=x)`,
# > `torch.mul(x, 3, out=x)`) where an argument requires grad raises `RuntimeError` whose message contains "functions
# > with out=... arguments don't support automatic differentiation, but one of the arguments requires grad", whether `x`
# > is a leaf or a non-leaf.
@pytest.mark.clause("INPLACE-4")
@pytest.mark.parametrize("spelling", list(OUT))
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_out_argument_requiring_grad_raises(device, spelling, kind, run):
    x = leaf(device)
    if kind == "non-leaf":
        x = x.clone()
    with raises(RuntimeError, OUT_ERROR):
        run(OUT[spelling][0], x)
    assert x._version == 0


# > INPLACE-5: Inside `torch.no_grad`, every member of the population `INPLACE_SPELLINGS` (listed below; it includes the
# > spellings of INPLACE-1 and INPLACE-4) is accepted on a leaf that requires grad: it returns `x` itself, `x` stays a
# > leaf that requires grad and has no `grad_fn`, and `x._version` increases (INPLACE-10).
@pytest.mark.clause("INPLACE-5")
@pytest.mark.parametrize("spelling", INPLACE_SPELLINGS.params())
def test_inplace_on_leaf_under_no_grad(device, spelling, run):
    x = make_leaf(device)
    result = run(no_grad(spelling), x)
    assert result is x
    assert (x.is_leaf, x.requires_grad, x.grad_fn) == (True, True, None)
    assert x._version > 0


# > INPLACE-6: The values of `x` after such an update are the result of the operation.
@pytest.mark.clause("INPLACE-6")
@pytest.mark.parametrize("spelling", list(ALL))
def test_inplace_on_leaf_under_no_grad_values(device, spelling, run):
    x = leaf(device)
    run(no_grad(ALL[spelling][0]), x)
    assert_values(x, ALL[spelling][1], f"x after {spelling}")


# > INPLACE-7: On a tensor that does not require grad, every member of `INPLACE_SPELLINGS` (listed below) is accepted
# > with grad mode enabled: it returns the tensor itself, which stays a leaf that does not require grad and has no
# > `grad_fn`; `_version` increases.
@pytest.mark.clause("INPLACE-7")
@pytest.mark.parametrize("spelling", INPLACE_SPELLINGS.params())
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_inplace_on_tensor_not_requiring_grad(device, spelling, run):
    x = torch.tensor([1.0, 2.0], device=device)
    result = run(spelling, x)
    assert result is x
    assert (x.is_leaf, x.requires_grad, x.grad_fn) == (True, False, None)
    assert x._version > 0


# > INPLACE-8: On a non-leaf that requires grad and is not a view (`x = a.clone()`; a view of a non-leaf: INPLACE-21),
# > every member of the population `INPLACE_RECORDED` (listed below) is accepted with grad mode enabled. It returns the
# > tensor itself, which stays a non-leaf that requires grad; its `grad_fn` is replaced by a new node; `_version`
# > increases. For the spellings of INPLACE-1 the new node is that of the operation's backward (`add_` and `+=`:
# > `AddBackward0`; `sub_`: `SubBackward0`; `mul_` and `*=`: `MulBackward0`; `div_`: `DivBackward0`; `zero_`:
# > `ZeroBackward0`; `fill_` with a number: `FillBackward2`; `clamp_` with numbers: `ClampBackward1`; `copy_`:
# > `CopyBackwards`).
def _recorded_on_non_leaf(device, spelling, run):
    x = make_leaf(device).clone()
    old = x.grad_fn
    result = run(spelling, x)
    assert result is x
    assert (x.is_leaf, x.requires_grad) == (False, True)
    assert x._version > 0
    assert x.grad_fn is not None and x.grad_fn is not old


@pytest.mark.clause("INPLACE-8")
@pytest.mark.parametrize("spelling", INPLACE_RECORDED.params())
def test_recorded_inplace_on_non_leaf_replaces_grad_fn(device, spelling, run):
    _recorded_on_non_leaf(device, spelling, run)


# > INPLACE-91: In a compiled function, every member of INPLACE_RECORDED is accepted on a non-leaf ... its
# > `grad_fn` is replaced by a new node; `_version` increases.
@pytest.mark.clause("INPLACE-91")
@pytest.mark.parametrize("spelling", INPLACE_RECORDED.params())
def test_recorded_inplace_on_non_leaf_replaces_grad_fn_compiled(device, spelling, run):
    _recorded_on_non_leaf(device, spelling, run)


# > INPLACE-8: For the spellings of INPLACE-1 the new node is that of the operation's backward.
def _node_after_update_of_non_leaf(device, spelling, run):
    a = leaf(device)
    x = a.clone()
    old = x.grad_fn
    assert type(old).__name__ == "CloneBackward0"
    result = run(METHODS[spelling][0], x)
    assert result is x
    assert (x.is_leaf, x.requires_grad) == (False, True)
    assert x._version > 0
    assert x.grad_fn is not old
    return type(x.grad_fn).__name__


@pytest.mark.clause("INPLACE-8")
@pytest.mark.parametrize("spelling", list(METHODS))
def test_inplace_on_non_leaf_rebases_grad_fn(device, spelling, run):
    assert _node_after_update_of_non_leaf(device, spelling, run) == METHODS[spelling][2]


# > INPLACE-91: For every spelling of INPLACE-1 that node is `CopyBackwards`, not the node of the operation's
# > backward.
@pytest.mark.clause("INPLACE-91")
@pytest.mark.parametrize("spelling", list(METHODS))
def test_inplace_on_non_leaf_node_is_copy_compiled(device, spelling, run):
    assert _node_after_update_of_non_leaf(device, spelling, run) == "CopyBackwards"


# > INPLACE-9: Gradients flow through an in-place operation on a non-leaf as through its out-of-place twin.
@pytest.mark.clause("INPLACE-9")
@pytest.mark.parametrize("spelling", list(METHODS))
def test_inplace_on_non_leaf_gradient(device, spelling, run):
    a = leaf(device)
    x = a.clone()
    run(METHODS[spelling][0], x)
    x.sum().backward()
    assert_values(a.grad, METHODS[spelling][3], f"a.grad through {spelling}")


def _view_of_non_leaf(device, values):
    """(a, x, y): `a` a leaf that requires grad holding `values`, `x = a * 1`, `y = x[1:-1]` (a view of x)."""
    a = torch.tensor(list(values), device=device, requires_grad=True)
    x = a * 1
    return a, x, x[1:-1]


def _recorded_on_view_of_non_leaf(device, update, values, run):
    a, x, y = _view_of_non_leaf(device, values)
    result = run(update, y)
    assert result is y
    assert (y.is_leaf, y.requires_grad, y._is_view(), y._base is x) == (False, True, True, True)
    assert (type(x.grad_fn).__name__, type(y.grad_fn).__name__) == ("CopySlices", "AsStridedBackward0")
    assert y.grad_fn.next_functions[0][0] is x.grad_fn
    assert x._version == y._version > 0


# > INPLACE-21: On a view of a non-leaf that requires grad (`y = x[1:-1]` of `x = a * 1`, `a` a leaf that requires
# > grad), every member of `INPLACE_RECORDED` is accepted with grad mode enabled, and the operation is recorded in the
# > graph of the base, not as the view's `grad_fn`: it returns `y` itself, which stays a non-leaf view of `x`
# > (`y._base is x`) that requires grad; the `grad_fn` of `x` is replaced by a node of type `CopySlices` (VIEW-8), that
# > of `y` by a node of type `AsStridedBackward0` whose first input is that `CopySlices` node, also for the spellings of
# > INPLACE-1 (not the node of the operation, as for a non-leaf that is not a view, INPLACE-8); the `_version` of `x`
# > and of `y` increase. Observed the same on the releases 2.0.1 to 2.15.0, on `cpu` and `meta`.
@pytest.mark.clause("INPLACE-21")
@pytest.mark.parametrize("spelling", INPLACE_RECORDED.params())
def test_recorded_inplace_on_view_of_non_leaf(device, spelling, run):
    _recorded_on_view_of_non_leaf(device, spelling, (9.0, 1.0, 2.0, 9.0), run)


@pytest.mark.clause("INPLACE-21")
@pytest.mark.parametrize("spelling", list(METHODS))
def test_inplace_on_view_of_non_leaf_records_no_node_of_the_operation(device, spelling, run):
    _recorded_on_view_of_non_leaf(device, METHODS[spelling][0], (9.0, 1.0, 2.0, 3.0, 9.0), run)


# > INPLACE-22: Gradients flow through such an update of a view to the base's leaf: for `a = [9, 1, 2, 3, 9]`,
# > `x = a * 1` and `y = x[1:-1]` updated by a spelling of INPLACE-1, the gradient of `x.sum()` with respect to `a` is 1
# > at the positions the view does not cover and, at those it covers, the gradient that INPLACE-9 gives for that
# > spelling.
@pytest.mark.clause("INPLACE-22")
@pytest.mark.parametrize("spelling", list(METHODS))
def test_inplace_on_view_of_non_leaf_gradient(device, spelling, run):
    a, x, y = _view_of_non_leaf(device, (9.0, 1.0, 2.0, 3.0, 9.0))
    run(METHODS[spelling][0], y)
    x.sum().backward()
    assert_values(a.grad, [1.0, *METHODS[spelling][3], 1.0], f"a.grad through {spelling} of x[1:-1]")


# > INPLACE-10: Each in-place operation of the population `INPLACE_SPELLINGS` (listed below) increases the tensor's
# > `_version`, whether it runs under `torch.no_grad()`, on a tensor that does not require grad, or (the members of
# > `INPLACE_RECORDED`) on a non-leaf with grad mode on. A view shares the version counter of its base: after an
# > in-place operation through the view, or on the base, both read the same, increased value. By how much one operation
# > increases the counter is not promised (VERSION-40 observes 1 on every release); `resize_` is not a member
# > (VERSION-41, VERSION-42).
@pytest.mark.clause("INPLACE-10")
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
@pytest.mark.parametrize("kind", ["plain", "leaf under no_grad"])
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_version_increases_with_every_spelling(device, update, kind, run):
    if kind == "leaf under no_grad":
        x, step = make_leaf(device, (1.0, 2.0)), run.function(no_grad(update))
    else:
        x, step = torch.tensor([1.0, 2.0], device=device), run.function(update)
    for _ in range(2):
        before = x._version
        step(x)
        assert x._version > before


@pytest.mark.clause("INPLACE-10")
@pytest.mark.parametrize("update", INPLACE_RECORDED.params())
def test_version_increases_on_non_leaf(device, update, run):
    x = make_leaf(device, (1.0, 2.0)).clone()
    step = run.function(update)
    for _ in range(2):
        before = x._version
        step(x)
        assert x._version > before


@pytest.mark.clause("INPLACE-10")
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
@pytest.mark.parametrize("through", ["the view", "the base"])
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_view_and_base_share_the_counter(device, update, through, run):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    v = x[1]
    before = x._version
    run(update, v if through == "the view" else x[0])
    assert x._version == v._version > before


# The modifications of INPLACE-11: spelling -> update step (a leaf under no_grad, a non-leaf with grad mode on).
MODIFICATIONS = {
    "leaf: x.add_(1)": no_grad(lambda x: x.add_(1)),
    "leaf: x.zero_()": no_grad(lambda x: x.zero_()),
    "leaf: torch.add(x, 1, out=x)": no_grad(lambda x: torch.add(x, 1, out=x)),
    "non-leaf: x += 1": lambda x: _iop(x, "+=", 1),
    "non-leaf: x.mul_(2)": lambda x: x.mul_(2),
    "non-leaf: x.clamp_(0, 1)": lambda x: x.clamp_(0, 1),
}
SAVED = list(MODIFICATIONS)


def _saved_then_modified(device, spelling, run):
    """Build a graph that saved a tensor, modify that tensor in place, return (loss, modified tensor)."""
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    if not spelling.startswith("leaf"):  # x * x saves the leaf x, modified under no_grad; or the non-leaf x
        x = x.clone()
    loss = (x * x).sum()
    run(MODIFICATIONS[spelling], x)
    return loss, x


# > INPLACE-11: When autograd has saved a tensor for backward (as `x * x` saves `x`) and the tensor is then modified in
# > place (a leaf under `torch.no_grad()`, or a non-leaf with grad mode on, by any member of `INPLACE_SPELLINGS` for the
# > leaf and of `INPLACE_RECORDED` for the non-leaf, both listed below), `backward()` raises `RuntimeError` whose
# > message contains "one of the variables needed for gradient computation has been modified by an inplace operation".
@pytest.mark.clause("INPLACE-11")
@pytest.mark.parametrize("spelling", SAVED)
def test_backward_after_modifying_saved_tensor_raises(device, spelling, run):
    loss, x = _saved_then_modified(device, spelling, run)
    assert x._version > 0
    with raises(RuntimeError, SAVED_MODIFIED):
        loss.backward()


# > INPLACE-11: When autograd has saved a tensor for backward (as `x * x` saves `x`) and the tensor is then modified in
# > place (a leaf under `torch.no_grad()`, or a non-leaf with grad mode on, by any member of `INPLACE_SPELLINGS` for the
# > leaf and of `INPLACE_RECORDED` for the non-leaf, both listed below), `backward()` raises `RuntimeError` whose
# > message contains "one of the variables needed for gradient computation has been modified by an inplace operation".
@pytest.mark.clause("INPLACE-11")
@pytest.mark.parametrize("spelling", INPLACE_SPELLINGS.params())
def test_backward_after_updating_saved_leaf_raises(device, spelling, run):
    x = make_leaf(device)
    loss = (x * x).sum()
    run(no_grad(spelling), x)
    assert x._version > 0
    with raises(RuntimeError, SAVED_MODIFIED):
        loss.backward()


# > INPLACE-11: When autograd has saved a tensor for backward (as `x * x` saves `x`) and the tensor is then modified in
# > place (a leaf under `torch.no_grad()`, or a non-leaf with grad mode on, by any member of `INPLACE_SPELLINGS` for the
# > leaf and of `INPLACE_RECORDED` for the non-leaf, both listed below), `backward()` raises `RuntimeError` whose
# > message contains "one of the variables needed for gradient computation has been modified by an inplace operation".
@pytest.mark.clause("INPLACE-11")
@pytest.mark.parametrize("spelling", INPLACE_RECORDED.params())
def test_backward_after_updating_saved_non_leaf_raises(device, spelling, run):
    x = make_leaf(device).clone()
    loss = (x * x).sum()  # saves the non-leaf x
    run(spelling, x)
    assert x._version > 0
    with raises(RuntimeError, SAVED_MODIFIED):
        loss.backward()


# > INPLACE-12: That message names the tensor's type and shape, its current `_version` V and the version S at which it
# > was saved, as "[TYPE [SHAPE]] ... is at version V; expected version S instead": for a float32 leaf of shape `(2,)`
# > saved at version 0 it contains "[torch.FloatTensor [2]]" on cpu and "[MetaFloatType [2]]" on meta; a float64 tensor
# > of shape `(2, 3)` is named `[torch.DoubleTensor [2, 3]]` (`[MetaDoubleType [2, 3]]`). (After one update, "is at
# > version 1; expected version 0 instead" on every release tested: the size of an increase is not promised,
# > VERSION-40.)
@pytest.mark.clause("INPLACE-12")
@pytest.mark.parametrize("times", [1, 2])
def test_backward_error_names_type_shape_and_versions(device, times, run):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    loss = (x * x).sum()
    step = run.function(no_grad(lambda x: x.add_(1)))
    for _ in range(times):
        step(x)
    kind = "MetaFloatType" if device == "meta" else "torch.FloatTensor"
    with raises(RuntimeError, f"[{kind} [2]] is at version {x._version}; expected version 0 instead"):
        loss.backward()


@pytest.mark.clause("INPLACE-12")
def test_backward_error_names_dtype_and_shape_of_2d_double(device, run):
    x = torch.ones(2, 3, device=device, dtype=torch.float64, requires_grad=True)
    loss = (x * x).sum()
    run(no_grad(lambda x: x.mul_(2)), x)
    kind = "MetaDoubleType" if device == "meta" else "torch.DoubleTensor"
    with raises(RuntimeError, f"[{kind} [2, 3]] is at version {x._version}; expected version 0 instead"):
        loss.backward()


# > INPLACE-13 (until 2.11): Without anomaly detection, that message ends with "Hint: enable anomaly detection to find
# > the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True).".
@pytest.mark.clause("INPLACE-13")
@pytest.mark.parametrize("spelling", SAVED)
def test_backward_error_hint_before_2_11(device, spelling, run):
    loss, _ = _saved_then_modified(device, spelling, run)
    with raises(RuntimeError, SAVED_MODIFIED) as info:
        loss.backward()
    assert str(info.value).endswith(HINT_OLD)


# > INPLACE-14 (since 2.11): Without anomaly detection, that message ends with "Hint: enable anomaly detection to find
# > the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).".
@pytest.mark.clause("INPLACE-14")
@pytest.mark.parametrize("spelling", SAVED)
def test_backward_error_hint_since_2_11(device, spelling, run):
    loss, _ = _saved_then_modified(device, spelling, run)
    with raises(RuntimeError, SAVED_MODIFIED) as info:
        loss.backward()
    assert str(info.value).endswith(HINT_NEW)


# > INPLACE-15: With anomaly detection enabled during backward (`torch.autograd.detect_anomaly` or
# > `torch.autograd.set_detect_anomaly`), the same error ends instead with "Hint: the backtrace further above shows the
# > operation that failed to compute its gradient. The variable in question was changed in there or anywhere later. Good
# > luck!", and a `UserWarning` whose message contains "Error detected in MulBackward0" names the node whose saved
# > tensor was modified.
@pytest.mark.clause("INPLACE-15")
@pytest.mark.parametrize("manager", ["detect_anomaly", "set_detect_anomaly"])
def test_backward_error_under_anomaly_mode(device, manager, run):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    loss = (x * x).sum()
    run(no_grad(lambda x: x.add_(1)), x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # check_nan=False: the NaN check reads values, which meta tensors do not have.
        mode = (
            torch.autograd.detect_anomaly(check_nan=False)
            if manager == "detect_anomaly"
            else torch.autograd.set_detect_anomaly(True, check_nan=False)
        )
        with mode, raises(RuntimeError, SAVED_MODIFIED) as info:
            loss.backward()
    assert str(info.value).endswith(HINT_ANOMALY)
    assert "set_detect_anomaly" not in str(info.value)
    assert any(w.category is UserWarning and "Error detected in MulBackward0" in str(w.message) for w in caught)


# > INPLACE-16: An in-place operation whose operands do not require grad does not make a tensor require grad: after an
# > update by any member of `INPLACE_SPELLINGS` (listed below; its operands `v`, `m` and `i` do not require grad) of a
# > tensor that does not require grad, `x.sum().backward()` raises `RuntimeError` whose message contains "element 0 of
# > tensors does not require grad and does not have a grad_fn". (An operand that requires grad does make it require
# > grad: INPLACE-23.)
@pytest.mark.clause("INPLACE-16")
@pytest.mark.parametrize("spelling", INPLACE_SPELLINGS.params())
def test_inplace_does_not_make_tensor_require_grad(device, spelling, run):
    x = torch.tensor([1.0, 2.0], device=device)
    run(spelling, x)
    with raises(RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn"):
        x.sum().backward()


# The updates of INPLACE-23 by an operand `w` that requires grad: the members of INPLACE_SPELLINGS that take a tensor
# operand `v` (with `w` in its place), then other spellings; `w[0]` is a 0-dim operand.
OPERAND_UPDATES = {
    "t.addcmul_(w, w)": lambda t, w: t.addcmul_(w, w),
    "t.lerp_(w, 0.5)": lambda t, w: t.lerp_(w, 0.5),
    "t.copy_(w)": lambda t, w: t.copy_(w),
    "t[:] = w": lambda t, w: _setitem(t, slice(None), w),
    "t.add_(w)": lambda t, w: t.add_(w),
    "t.sub_(w)": lambda t, w: t.sub_(w),
    "t.mul_(w)": lambda t, w: t.mul_(w),
    "t.div_(w)": lambda t, w: t.div_(w),
    "t += w": lambda t, w: _iop(t, "+=", w),
    "t *= w": lambda t, w: _iop(t, "*=", w),
    "t.pow_(w)": lambda t, w: t.pow_(w),
    "t.clamp_(w, w)": lambda t, w: t.clamp_(w, w),
    "t[0] = w[0]": lambda t, w: _setitem(t, 0, w[0]),
    "t[[0]] = w[0]": lambda t, w: _setitem(t, [0], w[0]),
    "t.fill_(w[0])": lambda t, w: t.fill_(w[0]),
    "t.masked_fill_(m, w[0])": lambda t, w: t.masked_fill_(_mask(t), w[0]),
    "t.index_fill_(0, i, w[0])": lambda t, w: t.index_fill_(0, _index(t), w[0]),
}


# > INPLACE-23: With grad mode enabled, an in-place update of a tensor `t` of shape `(2,)` that does not require grad (a
# > leaf) by an operation whose other operand `w` (a float tensor of the same shape) requires grad makes `t` a non-leaf
# > that requires grad: `t.is_leaf` is False, `t.requires_grad` True, `t.grad_fn` is not `None`, `t._version` increases,
# > a method returns `t` itself, and `t.sum().backward()` gives `w` a gradient (but on `meta` after
# > `t.index_fill_(0, i, w[0])`, where it raises `NotImplementedError` whose message contains "aten::_unique": that
# > operator has no `meta` kernel). So do the members of `INPLACE_SPELLINGS` that take a tensor operand, with `w` in
# > place of `v` (`t.addcmul_(w, w)`, `t.lerp_(w, 0.5)`, `t.copy_(w)` as COPY-7 says, `t[:] = w`), and `t.add_(w)`,
# > `t.sub_(w)`, `t.mul_(w)`, `t.div_(w)`, `t += w`, `t *= w`, `t.pow_(w)`, `t.clamp_(w, w)`, `t[0] = w[0]`,
# > `t[[0]] = w[0]`, and, with the 0-dim operand `w[0]`, `t.fill_(w[0])`, `t.masked_fill_(m, w[0])` and
# > `t.index_fill_(0, i, w[0])`. (`torch.add(t, w, out=t)` is refused instead, INPLACE-4.) Observed the same on the
# > releases 2.0.1 to 2.15.0, on `cpu` and `meta`.
@pytest.mark.clause("INPLACE-23")
@pytest.mark.parametrize("spelling", list(OPERAND_UPDATES))
def test_inplace_with_operand_requiring_grad_makes_tensor_require_grad(device, spelling, run):
    t = torch.tensor([1.0, 2.0], device=device)
    w = torch.full((2,), 0.5, device=device, requires_grad=True)
    result = run(OPERAND_UPDATES[spelling], t, w)
    assert result is t
    assert (t.is_leaf, t.requires_grad) == (False, True)
    assert t.grad_fn is not None and t._version > 0
    if device == "meta" and spelling == "t.index_fill_(0, i, w[0])":
        with raises(NotImplementedError, "aten::_unique"):
            t.sum().backward()
        return
    t.sum().backward()
    assert w.grad is not None


# > INPLACE-23: With grad mode enabled, an in-place update of a tensor `t` of shape `(2,)` that does not require grad (a
# > leaf) by an operation whose other operand `w` (a float tensor of the same shape) requires grad makes `t` a non-leaf
# > that requires grad: `t.is_leaf` is False, `t.requires_grad` True, `t.grad_fn` is not `None`, `t._version` increases,
# > a method returns `t` itself, and `t.sum().backward()` gives `w` a gradient (but on `meta` after
# > `t.index_fill_(0, i, w[0])`, where it raises `NotImplementedError` whose message contains "aten::_unique": that
# > operator has no `meta` kernel). So do the members of `INPLACE_SPELLINGS` that take a tensor operand, with `w` in
# > place of `v` (`t.addcmul_(w, w)`, `t.lerp_(w, 0.5)`, `t.copy_(w)` as COPY-7 says, `t[:] = w`), and `t.add_(w)`,
# > `t.sub_(w)`, `t.mul_(w)`, `t.div_(w)`, `t += w`, `t *= w`, `t.pow_(w)`, `t.clamp_(w, w)`, `t[0] = w[0]`,
# > `t[[0]] = w[0]`, and, with the 0-dim operand `w[0]`, `t.fill_(w[0])`, `t.masked_fill_(m, w[0])` and
# > `t.index_fill_(0, i, w[0])`. (`torch.add(t, w, out=t)` is refused instead, INPLACE-4.) Observed the same on the
# > releases 2.0.1 to 2.15.0, on `cpu` and `meta`.
@pytest.mark.clause("INPLACE-23")
@pytest.mark.parametrize("spelling", [p for p in INPLACE_SPELLINGS.params() if re.search(r"\bv\b", p.id)])
def test_population_members_with_operand_requiring_grad(device, spelling, run, monkeypatch):
    from conformance.harness import populations

    operands = []

    def operand_requiring_grad(t):
        operands.append(torch.full_like(t.detach(), 0.5).requires_grad_())
        return operands[-1]

    monkeypatch.setattr(populations, "_v", operand_requiring_grad)
    t = torch.tensor([1.0, 2.0], device=device)
    assert run(spelling, t) is t
    assert operands, "the member took no operand v"
    assert (t.is_leaf, t.requires_grad, t.grad_fn is not None, t._version > 0) == (False, True, True, True)
    t.sum().backward()
    assert all(w.grad is not None for w in operands)


# The counterexample to the wording of INPLACE-16 before it was scoped to operands that do not require grad.
@pytest.mark.clause("INPLACE-23")
def test_addcmul_with_operand_requiring_grad_then_backward_runs(device, run):
    v = torch.ones(2, device=device, requires_grad=True)
    x = run(lambda x, v: x.addcmul_(v, v), torch.zeros(2, device=device), v)
    x.sum().backward()
    assert (x.requires_grad, v.grad is not None) == (True, True)


# The updates of INPLACE-24: id -> (update, the dtypes it is refused on). Each is refused on bool; those whose promoted
# result is floating on the integer dtypes too.
INTEGER_DTYPES = (torch.int64, torch.int32, torch.uint8)
PROMOTING_UPDATES = {
    "t.add_(0.5)": (lambda t: t.add_(0.5), "floating"),
    "t += 0.5": (lambda t: _iop(t, "__iadd__", 0.5), "floating"),
    "t.mul_(1.5)": (lambda t: t.mul_(1.5), "floating"),
    "t.sub_(f)": (lambda t: t.sub_(torch.ones(2, device=t.device)), "floating"),
    "t.div_(2)": (lambda t: t.div_(2), "floating"),
    "t.exp_()": (lambda t: t.exp_(), "floating"),
    "t.sqrt_()": (lambda t: t.sqrt_(), "floating"),
    "t.add_(1)": (lambda t: t.add_(1), "integer"),
    "t.clamp_(0, 1)": (lambda t: t.clamp_(0, 1), "integer"),
    'div_(2, rounding_mode="floor")': (lambda t: t.div_(2, rounding_mode="floor"), "integer"),
}
CANNOT_CAST = "can't be cast to the desired output type"


# > INPLACE-24: On an integer tensor `t`, each of the in-place operations `t.add_(0.5)`, `t += 0.5`, `t.mul_(1.5)`,
# > `t.sub_(f)` with `f` a float32 tensor, `t.div_(2)`, `t.exp_()` and `t.sqrt_()`, whose promoted result type is
# > floating, raises `RuntimeError` whose message contains "can't be cast to the desired output type"; on a `bool`
# > tensor so do those but `t.sub_(f)` (refused because `-` is not defined on `bool`), and the operations whose promoted
# > result type is an integer one, `t.add_(1)`, `t.clamp_(0, 1)` and `t.div_(2, rounding_mode="floor")`. In each case
# > `t` keeps its values, its dtype and its `_version`. On an integer tensor the last three are accepted and keep the
# > dtype; the out-of-place `t + 0.5` gives a floating tensor.
@pytest.mark.clause("INPLACE-24")
@pytest.mark.parametrize(
    ("dtype", "update"),
    [
        pytest.param(dtype, update, id=f"{update}-{dtype}")
        for dtype in (*INTEGER_DTYPES, torch.bool)
        for update in PROMOTING_UPDATES
        if (dtype, update) != (torch.bool, "t.sub_(f)")  # `-` is refused on bool for a reason of its own
    ],
)
def test_inplace_refuses_a_promoted_dtype(device, dtype, update, run):
    step, result = PROMOTING_UPDATES[update]
    t = torch.tensor([1, 0], device=device, dtype=dtype)
    if dtype != torch.bool and result == "integer":
        assert run(step, t) is t and t.dtype == dtype and t._version > 0
        return
    with raises(RuntimeError, CANNOT_CAST):
        run(step, t)
    assert (t.dtype, t._version) == (dtype, 0)
    if device != "meta":
        assert t.tolist() == [1, 0]  # [True, False] for bool


# > INPLACE-25 (UNSPECIFIED): What the updates of INPLACE-24 do to a `meta` tensor, and run as a compiled step:
# > recorded per update and dtype.
@pytest.mark.clause("INPLACE-25")
@pytest.mark.parametrize("dtype", [*INTEGER_DTYPES, torch.bool], ids=str)
@pytest.mark.parametrize("update", list(PROMOTING_UPDATES))
def test_promoted_dtype_on_meta_and_compiled(device, dtype, update, run, observe):
    t = torch.tensor([1, 0], device=device, dtype=dtype)
    try:
        run(PROMOTING_UPDATES[update][0], t)
    except Exception as exc:  # noqa: BLE001 (recorded, not asserted)
        observe("exception", f"{type(exc).__module__}.{type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
    else:
        observe("accepted", f"{t.dtype}, _version {t._version}")


@pytest.mark.clause("INPLACE-24")
@pytest.mark.parametrize("dtype", INTEGER_DTYPES, ids=str)
def test_out_of_place_promotes(device, dtype):
    assert (torch.ones(2, device=device, dtype=dtype) + 0.5).dtype == torch.float32


HALF_GAPS_2_0 = ("t.clamp_(0, 1)", "t.exp_()", "t.addcmul_(v, v)", "t.lerp_(v, 0.5)")  # INPLACE-27


def _half_precision_update(device, dtype, update, run):
    t = torch.ones(2, device=device, dtype=dtype)
    run(update, t)
    assert (t.dtype, t._version > 0) == (dtype, True)


# > INPLACE-26 (since 2.1, cpu): Every member of INPLACE_SPELLINGS is accepted on a float16 and on a bfloat16 tensor
# > on cpu and increases its `_version`; the tensor keeps its dtype.
@pytest.mark.clause("INPLACE-26")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_half_precision_takes_every_spelling(device, dtype, update, run):
    _half_precision_update(device, dtype, update, run)


# > INPLACE-27 (until 2.1, cpu): On torch 2.0, on `cpu`, `t.clamp_(0, 1)`, `t.exp_()`, `t.addcmul_(v, v)` and
# > `t.lerp_(v, 0.5)` on a `float16` tensor `t` raise `RuntimeError` whose message contains "not implemented for
# > 'Half'", and leave its `_version` unchanged; every other member of `INPLACE_SPELLINGS`, and every member on a
# > `bfloat16` tensor, is accepted.
@pytest.mark.clause("INPLACE-27")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize(("member", "update"), [pytest.param(*m, id=m[0]) for m in INPLACE_SPELLINGS.available()])
def test_half_precision_gaps_before_2_1(device, dtype, member, update, run):
    if dtype == torch.bfloat16 or member not in HALF_GAPS_2_0:
        _half_precision_update(device, dtype, update, run)
        return
    t = torch.ones(2, device=device, dtype=dtype)
    with raises(RuntimeError, "not implemented for 'Half'"):
        run(update, t)
    assert t._version == 0


# > INPLACE-17: Operations recorded after an in-place update made under `torch.no_grad()` are differentiated at the new
# > values: after `x.add_(2.0)` on `x = [1., 2.]`, the gradient of `(x * x).sum()` is `[6., 8.]`.
@pytest.mark.clause("INPLACE-17")
def test_graph_after_no_grad_update_uses_new_values(device, run):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    run(no_grad(lambda x: x.add_(2.0)), x)
    (x * x).sum().backward()
    assert_values(x.grad, [6.0, 8.0], "x.grad = 2 * new x")


# Seeds, run as written (fixing only what stops them from running, as noted).


@pytest.mark.clause("INPLACE-1", "INPLACE-2")
def test_seed_en_add_on_leaf(device):
    # English seed, in-place operations section, verbatim:
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    with raises(RuntimeError, LEAF_ERROR):
        x.add_(2.0)  # "Equivalent to x = x + 2.0 (but in-place)": it does not run
    assert (x.is_leaf, x._version) == (True, 0)
    # The out-of-place spelling the comment calls equivalent runs, and rebinds x to a new non-leaf:
    x = x + 2.0
    assert (x.is_leaf, x.grad_fn is not None) == (False, True)


@pytest.mark.clause("INPLACE-1")
def test_seed_ko_method2_inplace_requires_grad(device):
    # Korean seed, method 2 ("in_place 연산 사용"). As written it calls torch.Variable, which does not exist:
    with raises(AttributeError, "has no attribute 'Variable'"):
        torch.Variable(torch.randn(5))
    # Fixed to a tensor that requires grad (what the seed means by a Variable taking part in backprop):
    x = torch.randn(5, device=device, requires_grad=True)
    with raises(RuntimeError, LEAF_ERROR):
        x.add_(1)


@pytest.mark.clause("INPLACE-7", "INPLACE-16")
def test_seed_ko_method2_inplace_autograd_variable(device):
    # The same snippet with the old `torch.autograd.Variable`, which still exists and gives a tensor that does
    # not require grad: add_ runs, and the seed's "역전파 확인" (check backprop) step raises.
    x = torch.autograd.Variable(torch.randn(5, device=device))
    assert (x.requires_grad, x.is_leaf) == (False, True)
    x.add_(1)
    assert x._version > 0
    y = x.sum()
    with raises(RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn"):
        y.backward()


@pytest.mark.clause("INPLACE-5", "INPLACE-10")
def test_seed_ko_method2_fixed_with_no_grad(device):
    # The way that runs: update under no_grad, then backward. x.grad is then all ones (as the seed printed).
    x = torch.randn(5, device=device, requires_grad=True)
    with torch.no_grad():
        x.add_(1)
    y = x.sum()
    y.backward()
    assert (x.is_leaf, x._version > 0, x.grad.shape) == (True, True, torch.Size([5]))


@pytest.mark.clause("INPLACE-17")
def test_seed_ko_method2_fixed_gradient_values(device):
    x = torch.randn(5, device=device, requires_grad=True)
    with torch.no_grad():
        x.add_(1)
    x.sum().backward()
    assert_values(x.grad, [1.0] * 5, "x.grad of x.sum()")


def _short(name):
    """The node name as messages give it since torch 2.13: AddBackward0 -> Add, FillBackward2 -> Fill2."""
    m = re.fullmatch(r"(\w+)Backward(\d+)", name)
    return name if m is None else m[1] + ("" if m[2] == "0" else m[2])


def _node_in_message(message):
    m = re.search(r", which is output 0 of ([^,]+), is at version ", message)
    return m[1] if m else f"(no node in the message: {message[:200]})"


def _saved_input_then_updated(device, saving, update):
    """x = a.clone(), saved as an input by `saving`, then updated (`update`: the step as `run.function` gives it):
    (message of backward(), grad_fn name of x)."""
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    x = a.clone()
    loss = saving(x).sum()
    update(x)
    with raises(RuntimeError, SAVED_MODIFIED) as info:
        loss.backward()
    return str(info.value), type(x.grad_fn).__name__


def _expected_for_saved_input(node, shortened):
    if node in ("CopyBackwards", "CopySlices"):  # the hand-written nodes of COPY_SPELLINGS (INPLACE-20)
        return f"torch::autograd::{node}"
    return _short(node) if shortened else node


# > INPLACE-18 (until 2.13): When an operation of `SAVES_INPUT` saved `x` and `x` is then updated by a member of
# > `INPLACE_RECORDED`, the message contains ", which is output 0 of NAME," where NAME is the type name of the `grad_fn`
# > of `x` at the time of `backward()`, the node of the update (`AddBackward0` after `x.add_(1)` or `x += 1`,
# > `FillBackward2` after `x.fill_(7)`, `IndexPutBackward0` after `x[[0]] = 5`), except for the hand-written nodes of
# > `COPY_SPELLINGS`, whose name is qualified (INPLACE-20).
@pytest.mark.clause("INPLACE-18")
@pytest.mark.parametrize("update", INPLACE_RECORDED.params())
def test_error_names_node_of_update_of_saved_input_before_2_13(device, update, run):
    update = run.function(update)

    def check(saving):
        message, node = _saved_input_then_updated(device, saving, update)
        assert _node_in_message(message) == _expected_for_saved_input(node, shortened=False)

    check_each(SAVES_INPUT, check)


# > INPLACE-19 (since 2.13): In the case of INPLACE-18, NAME is that type name with "Backward0" removed, and with
# > "Backward" removed when another number follows it (`Add`, `Fill2`, `Clamp1`, `IndexPut`), except for the
# > hand-written nodes of COPY_SPELLINGS (INPLACE-20).
@pytest.mark.clause("INPLACE-19")
@pytest.mark.parametrize("update", INPLACE_RECORDED.params())
def test_error_names_node_of_update_of_saved_input_since_2_13(device, update, run):
    update = run.function(update)

    def check(saving):
        message, node = _saved_input_then_updated(device, saving, update)
        assert _node_in_message(message) == _expected_for_saved_input(node, shortened=True)

    check_each(SAVES_INPUT, check)


# > INPLACE-20: When an operation of SAVES_INPUT saved `x` and `x` is then updated by a member of COPY_SPELLINGS,
# > its `grad_fn` at `backward()` is one of the hand-written nodes `CopyBackwards` and `CopySlices`, and the
# > message names it qualified and unshortened on every release: ", which is output 0 of
# > torch::autograd::CopyBackwards," and ", which is output 0 of torch::autograd::CopySlices,".
@pytest.mark.clause("INPLACE-20")
@pytest.mark.parametrize("update", COPY_SPELLINGS.params())
def test_error_names_copy_nodes_qualified(device, update, run):
    update = run.function(update)

    def check(saving):
        message, node = _saved_input_then_updated(device, saving, update)
        assert node in ("CopyBackwards", "CopySlices")
        assert f", which is output 0 of torch::autograd::{node}, is at version " in message

    check_each(SAVES_INPUT, check)


def _saved_output_then_updated(device, saving, update):
    """y = saving(a), which saves y, then updated (`update`: the step as `run.function` gives it):
    (message of backward(), grad_fn name of y before the update)."""
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = saving(a)
    saver = type(y.grad_fn).__name__
    update(y)
    with raises(RuntimeError, SAVED_MODIFIED) as info:
        y.sum().backward()
    return str(info.value), saver


# After `y.pow_(2)` inside a compiled function, the message names the `copy_` writing the result back (INPLACE-92/93).
COMPILED_NAMES = {"t.pow_(2)": "torch::autograd::CopyBackwards"}
RECORDED_ID = {fn: mid for mid, fn in INPLACE_RECORDED.members}


# > INPLACE-40 (until 2.13): When an operation of `SAVES_OUTPUT` made and saved `y` (`y = a.exp()`) and `y` is then
# > updated by any member of `INPLACE_RECORDED` (`y.copy_(v)` and `y[0] = 5`, whose `grad_fn` afterwards is a
# > hand-written node, included), the message contains ", which is output 0 of NAME," where NAME is the type name of the
# > saving node, the `grad_fn` of `y` before the update (`ExpBackward0` after `y.add_(1)`, `y.copy_(v)` or `y[0] = 5`),
# > not its `grad_fn` at the time of `backward()`.
# > INPLACE-93 (until 2.13): Inside a compiled function, INPLACE-40 holds for every member of `INPLACE_RECORDED` but
# > `t.pow_(2)`: after `y.pow_(2)` NAME is `torch::autograd::CopyBackwards`, as in INPLACE-92. (The step returns the
# > updated tensor, as each member does; for a step that returns nothing see INPLACE-99 and INPLACE-100.)
@pytest.mark.parametrize("exceptions", by_mode("INPLACE-40", "INPLACE-93", {}, COMPILED_NAMES))
@pytest.mark.parametrize("saving", SAVES_OUTPUT.params())
def test_error_names_saving_node_of_saved_output_before_2_13(device, saving, exceptions, run):
    def check(update):
        message, saver = _saved_output_then_updated(device, saving, run.function(update))
        assert _node_in_message(message) == exceptions.get(RECORDED_ID[update], saver)

    check_each(INPLACE_RECORDED, check, raising=run.untraceable_members(device))


def _pow_returning_nothing(y):
    y.pow_(2)


# > INPLACE-99 (2.2 to 2.3): When the compiled step updates `y` with `y.pow_(2)` and returns nothing, where `y` is made
# > and saved by an operation of `SAVES_OUTPUT`, the exception of INPLACE-93 does not apply: the message names the
# > saving node as INPLACE-40 says (`ExpBackward0` for `y = a.exp()`), though `y.grad_fn` is `CopyBackwards` as when the
# > step returns `y`. Measured on 2.2.2 and 2.3.1; on 2.1 and from 2.4, INPLACE-100.
# > INPLACE-100 (2.4 to 2.14, and on 2.1): In the case of INPLACE-99, the message names
# > `torch::autograd::CopyBackwards`, as when the step returns `y` (INPLACE-93, INPLACE-92), and `y.grad_fn` is
# > `CopyBackwards`. From 2.15, INPLACE-94.
# > INPLACE-94 (since 2.15): ... So it is when the step updates `y` with `y.pow_(2)` and returns nothing.
# (The grad_fn after the step: CopyBackwards for INPLACE-99 and INPLACE-100; INPLACE-94 states the message only.)
@pytest.mark.parametrize(
    ("named", "grad_fn"),
    [
        pytest.param(lambda saver: saver, "CopyBackwards", marks=pytest.mark.clause("INPLACE-99"), id="INPLACE-99"),
        pytest.param(
            lambda saver: COMPILED_NAMES["t.pow_(2)"],
            "CopyBackwards",
            marks=pytest.mark.clause("INPLACE-100"),
            id="INPLACE-100",
        ),
        pytest.param(_short, None, marks=pytest.mark.clause("INPLACE-94"), id="INPLACE-94"),
    ],
)
@pytest.mark.parametrize("saving", SAVES_OUTPUT.params())
def test_error_names_after_compiled_pow_returning_nothing(device, saving, named, grad_fn, run):
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = saving(a)
    saver = type(y.grad_fn).__name__
    run(_pow_returning_nothing, y)
    if grad_fn:
        assert type(y.grad_fn).__name__ == grad_fn
    with raises(RuntimeError, SAVED_MODIFIED) as info:
        y.sum().backward()
    assert _node_in_message(str(info.value)) == named(saver)


# > INPLACE-41 (since 2.13): In the case of INPLACE-40, NAME is the type name of the saving node shortened as in
# > INPLACE-19 (`Exp`, `Sigmoid`, `LogSoftmax`), also after `y.copy_(v)` and `y[0] = 5`.
# > INPLACE-92 (since 2.13): Inside a compiled function, INPLACE-41 holds for every member of `INPLACE_RECORDED` but
# > `t.pow_(2)`: after `y.pow_(2)` NAME is `torch::autograd::CopyBackwards`, the node of the `copy_` by which
# > AOTAutograd writes the compiled result back into `y` (pytorch/pytorch#131665).


# > INPLACE-94 (since 2.15): From 2.15, INPLACE-41 holds inside a compiled function for every member of
# > `INPLACE_RECORDED`, `t.pow_(2)` included: the exception of INPLACE-92 is gone (measured on 2.14.1 and 2.15.0). So it
# > is when the step updates `y` with `y.pow_(2)` and returns nothing.
@pytest.mark.parametrize(
    "exceptions",
    [
        *by_mode("INPLACE-41", "INPLACE-92", {}, COMPILED_NAMES),
        pytest.param({}, marks=pytest.mark.clause("INPLACE-94"), id="INPLACE-94"),
    ],
)
@pytest.mark.parametrize("saving", SAVES_OUTPUT.params())
def test_error_names_saving_node_of_saved_output_since_2_13(device, saving, exceptions, run):
    def check(update):
        message, saver = _saved_output_then_updated(device, saving, run.function(update))
        assert _node_in_message(message) == exceptions.get(RECORDED_ID[update], _short(saver))

    check_each(INPLACE_RECORDED, check, raising=run.untraceable_members(device))
