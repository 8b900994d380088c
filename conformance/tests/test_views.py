"""Conformance tests for spec/views.md (views and in-place operations). Each test quotes the clause it proves."""

import warnings

import pytest
import torch

from conformance.harness.checks import SAVED_MODIFIED, assert_values, compiled_since, raises, same_storage
from conformance.harness.checks import leaf as make_leaf
from conformance.harness.populations import (
    MULTI_OUTPUT_VIEWS,
    SINGLE_OUTPUT_VIEW_OPS,
    VIEW_OPS,
    VIEW_UPDATES,
    WRITABLE_SINGLE_OUTPUT_VIEW_OPS,
    WRITABLE_VIEW_OPS,
    check_each,
)

# Updates under no_grad of views of tensors that require grad: compiled, refused before 2.4 (VIEW-95).
BEFORE_2_4_VIEW_95 = pytest.mark.compiled_since("2.4", before="VIEW-95")


def _mul2(t):
    return t.mul_(2)


def _under_no_grad(update, run):
    """The step `with torch.no_grad(): update(v)`. In compile mode Dynamo is reset first: the steps of a population's
    members share this code object, and Dynamo stops compiling one code object after 8 versions (recompile_limit)."""

    def step(v):
        with torch.no_grad():
            update(v)

    if run.mode == "compile":
        torch._dynamo.reset()
    return step


LEAF = "leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF = "a view of a " + LEAF
NO_GRAD_VIEW = "created in no_grad mode and is being modified inplace with grad mode enabled"
MULTI = (
    "This view is the output of a function that returns multiple views. "
    "Such functions do not allow the output views to be modified inplace."
)
W = [1.0, 10.0, 100.0]  # weights of the loss (x * W).sum(), so that each position's gradient is visible


def leaf(device, values=(1.0, 2.0, 3.0)):
    return make_leaf(device, values)


def matrix(device, requires_grad=True):
    return torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=requires_grad)


VIEWS = {
    "x[0]": lambda x: x[0],
    "x[:, 1:]": lambda x: x[:, 1:],
    "x[:]": lambda x: x[:],
    "x.view(4)": lambda x: x.view(4),
    "x.reshape(4)": lambda x: x.reshape(4),
    "x.flatten()": lambda x: x.flatten(),
    "x.t()": lambda x: x.t(),
    "x.transpose(0, 1)": lambda x: x.transpose(0, 1),
    "x.permute(1, 0)": lambda x: x.permute(1, 0),
    "x.unsqueeze(0)": lambda x: x.unsqueeze(0),
    "x.narrow(0, 0, 1)": lambda x: x.narrow(0, 0, 1),
    "x[0].expand(3, 2)": lambda x: x[0].expand(3, 2),
    "x.diagonal()": lambda x: x.diagonal(),
    "x.view_as(x)": lambda x: x.view_as(x),
}
NOT_VIEWS = {
    "x": lambda x: x,
    "x.clone()": lambda x: x.clone(),
    "x + 0": lambda x: x + 0,
    "x.detach()": lambda x: x.detach(),
    "x.data": lambda x: x.data,
    "x.contiguous()": lambda x: x.contiguous(),
    "x.t().contiguous()": lambda x: x.t().contiguous(),
    "x.t().reshape(4)": lambda x: x.t().reshape(4),
}


# > VIEW-1: A view of `x` (`x[0]`, `x[:, 1:]`, `x[:]`, `x.view(4)`, `x.reshape(4)` and `x.flatten()` of a contiguous
# > `x`, `x.t()`, `x.transpose(0, 1)`, `x.permute(1, 0)`, `x.unsqueeze(0)`, `x.narrow(0, 0, 1)`, `x[0].expand(3, 2)`,
# > `x.diagonal()`, `x.view_as(x)`) has `_is_view()` True and `_base` the tensor `x`, and shares its storage, whether or
# > not `x` requires grad. A view of a view has as `_base` the tensor that is not a view, not the intermediate view.
@pytest.mark.clause("VIEW-1")
@pytest.mark.parametrize("kind", list(VIEWS))
@pytest.mark.parametrize("requires_grad", [True, False])
def test_view_has_base(device, kind, requires_grad):
    x = matrix(device, requires_grad)
    v = VIEWS[kind](x)
    assert v._is_view() is True
    assert v._base is x
    assert same_storage(v, x)
    vv = VIEWS[kind](x).unsqueeze(0)
    assert vv._is_view() is True and vv._base is x


# > VIEW-2: A tensor that is not a view (`x` itself, `x.clone()`, `x + 0`, `x.contiguous()`, `x.t().contiguous()`,
# > `x.t().reshape(4)` which copies) has `_is_view()` False and `_base` None; so do `x.detach()` and `x.data`, although
# > they share the storage of `x` (DATA-1, detach).
@pytest.mark.clause("VIEW-2")
@pytest.mark.parametrize("kind", list(NOT_VIEWS))
def test_non_view_has_no_base(device, kind):
    x = matrix(device)
    t = NOT_VIEWS[kind](x)
    assert t._is_view() is False
    assert t._base is None
    if kind in ("x.detach()", "x.data"):
        assert same_storage(t, x)


def _t(v):
    """The tensor operand `t` of `_update`: [7, 8], not requiring grad (made outside the update step)."""
    return torch.tensor([7.0, 8.0], device=v.device)


def _update(v, spelling, t):
    """Apply an in-place update spelled `spelling` to the 2-element view `v`; the operand `t` does not require grad."""
    if spelling == "v.add_(1)":
        v.add_(1)
    elif spelling == "v += 1":
        v += 1
    elif spelling == "v.mul_(2)":
        v.mul_(2)
    elif spelling == "v *= 2":
        v *= 2
    elif spelling == "v.copy_(t)":
        v.copy_(t)
    elif spelling == "v.zero_()":
        v.zero_()
    elif spelling == "v.fill_(7)":
        v.fill_(7.0)
    elif spelling == "v[0] = 7":
        v[0] = 7.0
    elif spelling == "v[...] = t":
        v[...] = t
    else:
        raise AssertionError(spelling)


UPDATE_ID = {fn: mid for mid, fn in VIEW_UPDATES.members}
# values of x = [1, 2, 3] after updating v = x[1:] (`t` is [7, 8])
AFTER = {
    "v.add_(1)": [1.0, 3.0, 4.0],
    "v += 1": [1.0, 3.0, 4.0],
    "v.mul_(2)": [1.0, 4.0, 6.0],
    "v *= 2": [1.0, 4.0, 6.0],
    "v.copy_(t)": [1.0, 7.0, 8.0],
    "v.zero_()": [1.0, 0.0, 0.0],
    "v.fill_(7)": [1.0, 7.0, 7.0],
    "v[0] = 7": [1.0, 7.0, 3.0],
    "v[...] = t": [1.0, 7.0, 8.0],
}
LEAF_VIEWS = {
    "x[1:]": lambda x: x[1:],
    "x.narrow(0, 1, 2)": lambda x: x.narrow(0, 1, 2),
    "x.view(3)[1:]": lambda x: x.view(3)[1:],
    "x.unsqueeze(0)[0, 1:]": lambda x: x.unsqueeze(0)[0, 1:],
}


# > VIEW-3: With grad mode enabled, an in-place operation on a view of a leaf that requires grad (every spelling of the
# > population `VIEW_UPDATES`: `v.add_(1)`, `v += 1`, `v.mul_(2)`, `v *= 2`, `v.copy_(t)`, `v.zero_()`, `v.fill_(7)`,
# > `v[0] = 7`, `v[...] = t`; for `v` the result of every operation of the population `SINGLE_OUTPUT_VIEW_OPS`, and
# > `x[1:]`, `x.narrow(0, 1, 2)`, `x.view(3)[1:]`, `x.unsqueeze(0)[0, 1:]` of a 1-d leaf; both populations listed below)
# > raises `RuntimeError` whose message is "a view of a leaf Variable that requires grad is being used in an in-place
# > operation.". (The outputs of `split`, `chunk` and `unbind`, left out of `SINGLE_OUTPUT_VIEW_OPS`, are the subject of
# > VIEW-15.)
def _check_view_of_leaf_refused(update, v, run, exact):
    with raises(RuntimeError, VIEW_OF_LEAF) as info:
        run(update, v)
    if exact:
        assert str(info.value) == VIEW_OF_LEAF


@pytest.mark.clause("VIEW-3")
@pytest.mark.parametrize("update", VIEW_UPDATES.params())
@pytest.mark.parametrize("view", list(LEAF_VIEWS))
def test_inplace_on_view_of_leaf_raises(device, update, view, run):
    _check_view_of_leaf_refused(update, LEAF_VIEWS[view](leaf(device)), run, exact=True)


@pytest.mark.clause("VIEW-3")
@pytest.mark.parametrize("view", SINGLE_OUTPUT_VIEW_OPS.params())
def test_inplace_on_other_views_of_leaf_raises(device, view, run):
    check_each(VIEW_UPDATES, lambda update: _check_view_of_leaf_refused(update, view(matrix(device)), run, exact=True))


@pytest.mark.clause("VIEW-3")
@pytest.mark.parametrize("kind", ["x[:]", "x.view(4)", "x.t()", "x.unsqueeze(0)", "x.diagonal()", "x[0].expand(3, 2)"])
def test_inplace_on_views_of_view_1_of_leaf_raises(device, kind, run):
    _check_view_of_leaf_refused(_mul2, VIEWS[kind](matrix(device)), run, exact=False)


# > VIEW-90 (compile): Run as a compiled step, every update of VIEW-3 (every spelling of the population `VIEW_UPDATES`,
# > on every view of the population `SINGLE_OUTPUT_VIEW_OPS` and on the views of a 1-d leaf that VIEW-3 names) raises a
# > `RuntimeError` whose message contains "a view of a leaf Variable that requires grad is being used in an in-place
# > operation.", as eagerly. (Observed, not checked by its tests: the message is not always that one alone. Where Dynamo
# > traces the update it runs it on fake tensors, gets the refusal there, and raises
# > `torch._dynamo.exc.TorchRuntimeError`, whose message quotes the refusal inside its own report ("Failed running
# > call_method mul_(...): a view of a leaf Variable ..." on 2.1.2 and 2.4.1, "Dynamo failed to run FX node with fake
# > tensors: ... got RuntimeError('a view of a leaf Variable ...')" on 2.9.1 and later). On 2.1.2 the assignments
# > through an index (`v[0] = 7`, `v[...] = t`) are not traced and raise the eager `RuntimeError`. Layer: Dynamo.)
# > Before 2.9, `v[...] = t` on `x.expand(3, 2, 2)` raises another error: VIEW-94.
@pytest.mark.clause("VIEW-90")
@pytest.mark.parametrize("update", VIEW_UPDATES.params())
@pytest.mark.parametrize("view", list(LEAF_VIEWS))
def test_compiled_inplace_on_view_of_leaf_raises(device, update, view, run):
    _check_view_of_leaf_refused(update, LEAF_VIEWS[view](leaf(device)), run, exact=False)


@pytest.mark.clause("VIEW-90")
@pytest.mark.parametrize(  # on `x.expand(3, 2, 2)`, `v[...] = t` raises another error before 2.9 (VIEW-94)
    "view", compiled_since("2.9", SINGLE_OUTPUT_VIEW_OPS.params(), ["x.expand(3, 2, 2)"], "VIEW-94")
)
def test_compiled_inplace_on_other_views_of_leaf_raises(device, view, run):
    check_each(VIEW_UPDATES, lambda update: _check_view_of_leaf_refused(update, view(matrix(device)), run, exact=False))


# > VIEW-94 (2.2 to 2.9): Inside a compiled function, `v[...] = t` on the view `v = x.expand(3, 2, 2)` of a leaf `x`
# > of shape (2, 2) that requires grad raises `RuntimeError` (`torch._dynamo.exc.BackendCompilerFailed`) whose
# > message contains "more than one element of the written-to tensor refers to a single memory location", not the
# > refusal of VIEW-90: Dynamo did not run an assignment of a tensor on fake tensors before 2.9
# > (pytorch/pytorch#161036, as in INDEX-96), and AOTAutograd's tracing checks the overlap first. 2.1.2 refuses it as
# > VIEW-90 says. Layer: AOTAutograd.
@pytest.mark.clause("VIEW-94")
def test_compiled_assignment_to_expanded_view_of_leaf_raises_overlap(device, run):
    v = matrix(device).expand(3, 2, 2)
    with raises(RuntimeError, "more than one element of the written-to tensor refers to a single memory location"):
        run(dict(VIEW_UPDATES.members)["v[...] = t"], v)


@pytest.mark.clause("VIEW-90")
@pytest.mark.parametrize("kind", ["x[:]", "x.view(4)", "x.t()", "x.unsqueeze(0)", "x.diagonal()", "x[0].expand(3, 2)"])
def test_compiled_inplace_on_views_of_view_1_of_leaf_raises(device, kind, run):
    _check_view_of_leaf_refused(_mul2, VIEWS[kind](matrix(device)), run, exact=False)


# > VIEW-4: An operation refused by VIEW-3 changes no metadata: `x` is still a leaf that requires grad with no
# > `grad_fn`, and the `_version` of `x` and of the view are unchanged.
@pytest.mark.clause("VIEW-4")
@pytest.mark.parametrize("update", VIEW_UPDATES.params())
def test_refused_view_update_changes_no_metadata(device, update, run):
    x = leaf(device)
    v = x[1:]
    with pytest.raises(RuntimeError):
        run(update, v)
    assert (x.is_leaf, x.requires_grad, x.grad_fn, x._version, v._version) == (True, True, None, 0, 0)


# > VIEW-5: An operation refused by VIEW-3 leaves the values of `x` as they were.
@pytest.mark.clause("VIEW-5")
@pytest.mark.parametrize("update", VIEW_UPDATES.params())
def test_refused_view_update_changes_no_values(device, update, run):
    x = leaf(device)
    v = x[1:]
    with pytest.raises(RuntimeError):
        run(update, v)
    assert_values(x, [1.0, 2.0, 3.0], f"x after refused {UPDATE_ID[update]}")


# > VIEW-6: Inside `torch.no_grad()`, every spelling of VIEW-3 on a view (taken with grad mode on) of a leaf that
# > requires grad is accepted, for the view `x[1:]` and for every operation of the population `WRITABLE_VIEW_OPS`
# > (listed below; the outputs of `split`, `chunk` and `unbind` included): `x` stays a leaf that requires grad with no
# > `grad_fn`, and the `_version` of `x` and of the view increase (to the same value, INPLACE-10). (`x.expand(3, 2, 2)`,
# > left out of `WRITABLE_VIEW_OPS`, is not covered: several of its elements share one memory location.)
@BEFORE_2_4_VIEW_95
@pytest.mark.clause("VIEW-6")
@pytest.mark.parametrize("update", VIEW_UPDATES.params())
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_view_of_leaf_update_under_no_grad(device, update, run):
    x = leaf(device)
    v = x[1:]
    run(_under_no_grad(update, run), v)
    assert (x.is_leaf, x.requires_grad, x.grad_fn) == (True, True, None)
    assert x._version == v._version > 0


@BEFORE_2_4_VIEW_95
@pytest.mark.clause("VIEW-6")
@pytest.mark.parametrize("view", WRITABLE_VIEW_OPS.params())
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_views_of_leaf_update_under_no_grad(device, view, run):
    def check(update):
        x = matrix(device)
        v = view(x)
        run(_under_no_grad(update, run), v)
        assert (x.is_leaf, x.requires_grad, x.grad_fn) == (True, True, None)
        assert x._version == v._version > 0

    check_each(VIEW_UPDATES, check)


# > VIEW-7: The values written through the view are the values of `x` afterwards at the positions the view covers; the
# > other positions keep theirs.
@BEFORE_2_4_VIEW_95
@pytest.mark.clause("VIEW-7")
@pytest.mark.parametrize("update", VIEW_UPDATES.params())
def test_view_of_leaf_update_under_no_grad_values(device, update, run):
    x = leaf(device)
    v = x[1:]
    run(_under_no_grad(update, run), v)
    assert_values(x, AFTER[UPDATE_ID[update]], f"x after {UPDATE_ID[update]} on x[1:]")


# > VIEW-8: On a view of a non-leaf `x` that requires grad (`x[1:]`, and the result of every operation of the population
# > `WRITABLE_SINGLE_OUTPUT_VIEW_OPS`, listed below; the outputs of `split`, `chunk` and `unbind` are refused, VIEW-15,
# > and `x.expand(3, 2, 2)` is not covered, as in VIEW-6), every spelling of VIEW-3 is accepted with grad mode enabled,
# > and the history of the base is rebased: the `grad_fn` of `x` is replaced by a node of type `CopySlices`, `x` stays a
# > non-leaf that requires grad, the view stays a view of `x` (`_base is x`) and gets a new `grad_fn`, and the
# > `_version` of both increases.
@pytest.mark.clause("VIEW-8")
@pytest.mark.parametrize("update", VIEW_UPDATES.params())
def test_view_of_non_leaf_update_rebases_base(device, update, run):
    a = leaf(device)
    x = a * 2
    v = x[1:]
    before_x, before_v = x.grad_fn, v.grad_fn
    run(update, v)
    assert type(x.grad_fn).__name__ == "CopySlices"
    assert x.grad_fn is not before_x
    assert (x.is_leaf, x.requires_grad) == (False, True)
    assert v._is_view() and v._base is x
    assert v.grad_fn is not None and v.grad_fn is not before_v
    assert x._version == v._version > 0


@pytest.mark.clause("VIEW-8")
@pytest.mark.parametrize("view", WRITABLE_SINGLE_OUTPUT_VIEW_OPS.params())
def test_views_of_non_leaf_update_rebase_base(device, view, run):
    def check(update):
        x = matrix(device) * 2
        v = view(x)
        before_x, before_v = x.grad_fn, v.grad_fn
        run(update, v)
        assert type(x.grad_fn).__name__ == "CopySlices"
        assert x.grad_fn is not before_x
        assert (x.is_leaf, x.requires_grad) == (False, True)
        assert v._is_view() and v._base is x
        assert v.grad_fn is not None and v.grad_fn is not before_v
        assert x._version == v._version > 0

    check_each(VIEW_UPDATES, check)


# spelling -> gradient of (x * W).sum() w.r.t. a, for x = a * 2, a = [1, 2, 3], after updating v = x[1:]
GRADS = {
    "v.add_(1)": [2.0, 20.0, 200.0],
    "v += 1": [2.0, 20.0, 200.0],
    "v.mul_(2)": [2.0, 40.0, 400.0],
    "v *= 2": [2.0, 40.0, 400.0],
    "v.copy_(t)": [2.0, 0.0, 0.0],
    "v.zero_()": [2.0, 0.0, 0.0],
    "v.fill_(7)": [2.0, 0.0, 0.0],
    "v[0] = 7": [2.0, 0.0, 200.0],
    "v[...] = t": [2.0, 0.0, 0.0],
}


# > VIEW-9: Gradients reach the original leaf with the correct values, through the base and through the view: for
# > `x = a * 2` with `a = [1, 2, 3]`, after `x[1:].mul_(2)` the gradient of `(x * [1, 10, 100]).sum()` with respect to
# > `a` is `[2, 40, 400]`; after an update that overwrites the view (`copy_`, `zero_`, `fill_`, `v[...] = t`) it is
# > `[2, 0, 0]`; after `v = x[1:]; v.mul_(10)` the gradient of `(v * [1, 10]).sum()` is `[0, 20, 200]`; an operand that
# > requires grad (`x[1:].mul_(w)`) receives its gradient too.
def _check_gradient_through_base(device, update, run):
    a = leaf(device)
    x = a * 2
    run(update, x[1:])
    (x * torch.tensor(W, device=device)).sum().backward()
    assert_values(a.grad, GRADS[UPDATE_ID[update]], f"a.grad after {UPDATE_ID[update]} on x[1:]")


def _check_gradient_through_view(device, run):
    a = leaf(device)
    x = a * 2
    v = x[1:]
    run(lambda v: v.mul_(10), v)
    (v * torch.tensor([1.0, 10.0], device=device)).sum().backward()
    assert_values(a.grad, [0.0, 20.0, 200.0], "a.grad through the updated view")


def _update_with_operand_requiring_grad(device, run, step=lambda v, w: v.mul_(w)):
    """(a, w, x): `x = a * 2` after `x[1:].mul_(w)`, with `w` requiring grad."""
    a = leaf(device)
    w = torch.tensor([3.0, 4.0], device=device, requires_grad=True)
    x = a * 2
    run(step, x[1:], w)
    return a, w, x


def _mul_without_return(v, w):
    v.mul_(w)


@pytest.mark.clause("VIEW-9")
@pytest.mark.parametrize("update", VIEW_UPDATES.params())
def test_view_of_non_leaf_update_gradient_through_base(device, update, run):
    _check_gradient_through_base(device, update, run)


@pytest.mark.clause("VIEW-9")
def test_view_of_non_leaf_update_gradient_through_view(device, run):
    _check_gradient_through_view(device, run)


@pytest.mark.clause("VIEW-9")
def test_view_update_with_operand_requiring_grad(device, run):
    a, w, x = _update_with_operand_requiring_grad(device, run)
    (x * torch.tensor(W, device=device)).sum().backward()
    assert_values(a.grad, [2.0, 60.0, 800.0], "a.grad")
    assert_values(w.grad, [40.0, 600.0], "w.grad")


# > VIEW-91 (compile): With the update of the view run as a compiled step, the gradients of VIEW-9 are as stated for
# > updates whose operand does not require grad (every spelling of the population `VIEW_UPDATES` on `x[1:]`, through the
# > base and through the view), but after `x[1:].mul_(w)` with an operand `w` that requires grad, in a step that returns
# > the updated view (`return v.mul_(w)`), the `backward()` of `(x * [1, 10, 100]).sum()` raises `RuntimeError` whose
# > message contains "one of the variables needed for gradient computation has been modified by an inplace operation"
# > (for a step that returns nothing, on 2.2 and 2.3: VIEW-97). Layer, on 2.13.0: AOTAutograd (with Dynamo alone,
# > `backend="eager"`, the gradients are those of VIEW-9). The same failure, an in-place update of a view input by an
# > operand that requires grad that backpropagates in eager and raises compiled, is reported in pytorch/pytorch#185497.
@pytest.mark.clause("VIEW-91")
@pytest.mark.parametrize("update", VIEW_UPDATES.params())
def test_compiled_view_of_non_leaf_update_gradient_through_base(device, update, run):
    _check_gradient_through_base(device, update, run)


@pytest.mark.clause("VIEW-91")
def test_compiled_view_of_non_leaf_update_gradient_through_view(device, run):
    _check_gradient_through_view(device, run)


@pytest.mark.clause("VIEW-91")
def test_compiled_view_update_with_operand_requiring_grad_breaks_backward(device, run):
    a, w, x = _update_with_operand_requiring_grad(device, run)
    with raises(RuntimeError, SAVED_MODIFIED):
        (x * torch.tensor(W, device=device)).sum().backward()


# > VIEW-97 (compile, 2.2 to 2.3): On 2.2 and 2.3, when the compiled step of VIEW-91 does not return the view it updates
# > (`def step(v, w): v.mul_(w)` on `x[1:]` of `x = a * 2`, with `w` requiring grad), the `backward()` of
# > `(x * [1, 10, 100]).sum()` raises nothing and the gradients are silently wrong: `a.grad` is `[2, 0, 0]` (eagerly
# > `[2, 60, 800]`, VIEW-9) and `w.grad` stays `None`. On 2.1 and from 2.4 that step raises as VIEW-91 says; from 2.15
# > it gives the gradients of VIEW-9 (VIEW-92).
@pytest.mark.clause("VIEW-97")
def test_compiled_view_update_not_returned_loses_gradients(device, run):
    a, w, x = _update_with_operand_requiring_grad(device, run, _mul_without_return)
    (x * torch.tensor(W, device=device)).sum().backward()
    assert_values(a.grad, [2.0, 0.0, 0.0], "a.grad")
    assert w.grad is None


# > VIEW-92 (compile, since 2.15): From 2.15, VIEW-9 holds with the update of the view run as a compiled step: after
# > `x[1:].mul_(w)` with an operand `w` that requires grad, `backward()` raises no error, `a` receives `[2, 60, 800]`
# > and `w` receives `[40, 600]`, as eagerly; the other gradients are those of VIEW-91.
@pytest.mark.clause("VIEW-92")
@pytest.mark.parametrize("update", VIEW_UPDATES.params())
def test_compiled_view_of_non_leaf_update_gradient_through_base_since_2_15(device, update, run):
    _check_gradient_through_base(device, update, run)


@pytest.mark.clause("VIEW-92")
def test_compiled_view_of_non_leaf_update_gradient_through_view_since_2_15(device, run):
    _check_gradient_through_view(device, run)


@pytest.mark.clause("VIEW-92")
def test_compiled_view_update_with_operand_requiring_grad_since_2_15(device, run):
    test_view_update_with_operand_requiring_grad(device, run)


def _base_of(kind, device):
    if kind == "leaf":
        return leaf(device)
    if kind == "non-leaf":
        return leaf(device) * 2
    return torch.tensor([1.0, 2.0, 3.0], device=device)


# > VIEW-10: A view taken inside `torch.no_grad()` (the result of every operation of the population `VIEW_OPS`, listed
# > below) of a tensor that requires grad (a leaf or a non-leaf) is a view (`_is_view()` True, `_base` that tensor) that
# > requires grad, yet has no `grad_fn` and is a leaf. (The same holds for a view taken inside `torch.inference_mode` of
# > a normal tensor, INFER-40.)
@pytest.mark.clause("VIEW-10")
@pytest.mark.parametrize("view", VIEW_OPS.params())
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_view_taken_under_no_grad(device, view, kind):
    x = matrix(device) if kind == "leaf" else matrix(device) * 2
    with torch.no_grad():
        v = view(x)
    assert (v._is_view(), v._base is x) == (True, True)
    assert (v.requires_grad, v.grad_fn, v.is_leaf) == (True, None, True)


def _no_grad_view_update(v, spelling, operand):
    if spelling == "v.mul_(w)":
        v.mul_(operand)
    elif spelling == "v.add_(w)":
        v.add_(operand)
    elif spelling == "v += w":
        v += operand
    elif spelling == "v.copy_(w)":
        v.copy_(operand)
    elif spelling == "v[0] = w[0]":
        v[0] = operand[0]
    else:
        _update(v, spelling, operand)


NO_GRAD_SPELLINGS = ["v.add_(1)", "v += 1", "v.mul_(2)", "v.copy_(t)", "v.zero_()", "v[0] = 7"]
# Compiled, `v[0] = 7` is refused on 2.1 and from 2.11, not in between (VIEW-93): also_on="2.1".
NO_GRAD_REFUSALS = compiled_since("2.11", NO_GRAD_SPELLINGS, ["v[0] = 7"], "VIEW-93", also_on="2.1")
OPERAND_SPELLINGS = ["v.mul_(w)", "v.add_(w)", "v += w", "v.copy_(w)", "v[0] = w[0]"]


# > VIEW-11: A view taken inside `torch.no_grad()` and then modified in place with grad mode enabled (`v.add_(1)`,
# > `v += 1`, `v.mul_(2)`, `v.copy_(t)`, `v.zero_()`, `v[0] = 7`) raises `RuntimeError` whose message contains "created
# > in no_grad mode and is being modified inplace with grad mode enabled" when its base requires grad (for a leaf this
# > message replaces that of VIEW-3), and also when its base does not require grad but the other operand does
# > (`v.mul_(w)`, `v.add_(w)`, `v += w`, `v.copy_(w)`, `v[0] = w[0]`). (Inside a compiled function on torch 2.2 to 2.10,
# > `v[0] = 7` is not refused: VIEW-93; on 2.2 and 2.3, neither is `v[0] = w[0]`: VIEW-98.)
@pytest.mark.clause("VIEW-11")
@pytest.mark.parametrize("spelling", NO_GRAD_REFUSALS)
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_no_grad_view_modified_with_grad_raises(device, spelling, kind, run):
    x = _base_of(kind, device)
    with torch.no_grad():
        v = x[1:]
    with raises(RuntimeError, NO_GRAD_VIEW):
        run(_update, v, spelling, _t(v))


@pytest.mark.clause("VIEW-11")
# compiled, v[0] = w[0] is not refused on 2.2 and 2.3 (VIEW-98); it is on 2.1
@pytest.mark.parametrize(
    "spelling", compiled_since("2.4", OPERAND_SPELLINGS, ["v[0] = w[0]"], "VIEW-98", also_on="2.1")
)
def test_no_grad_view_modified_with_operand_requiring_grad_raises(device, spelling, run):
    x = _base_of("plain", device)
    w = torch.tensor([3.0, 4.0], device=device, requires_grad=True)
    with torch.no_grad():
        v = x[1:]
    with raises(RuntimeError, NO_GRAD_VIEW):
        run(_no_grad_view_update, v, spelling, w)


# > VIEW-98 (compile, 2.2 to 2.4): Inside a compiled function on 2.2 and 2.3, `v[0] = w[0]` on a view `v = x[1:]` taken
# > inside `torch.no_grad()` of a tensor `x` that does not require grad, where `w` requires grad, with grad mode
# > enabled, is not refused (not the error of VIEW-11): no error is raised, the `_version` of the view and of its base
# > is 1, neither requires grad nor has a `grad_fn` (the gradient of `w` is lost, as that of the value in INDEX-99), and
# > on a device with values the base holds `w[0]` at the position `v[0]` covers. On 2.1 and from 2.4 it is refused as
# > VIEW-11 says. Layer: AOTAutograd (with `backend="eager"` it is refused).
@pytest.mark.clause("VIEW-98")
@pytest.mark.parametrize("spelling", ["v[0] = w[0]"])
def test_compiled_no_grad_view_assigned_operand_requiring_grad_accepted(device, spelling, run):
    x = _base_of("plain", device)
    w = torch.tensor([3.0, 4.0], device=device, requires_grad=True)
    with torch.no_grad():
        v = x[1:]
    run(_no_grad_view_update, v, spelling, w)
    assert (x._version, v._version) == (1, 1)
    assert (x.requires_grad, x.grad_fn, v.requires_grad, v.grad_fn) == (False, None, False, None)
    if device != "meta":
        assert_values(x, [1.0, 3.0, 3.0], f"x after {spelling}")


# > VIEW-12: An operation refused by VIEW-11 leaves the `_version` of the view and of its base unchanged.
@pytest.mark.clause("VIEW-12")
@pytest.mark.parametrize("spelling", NO_GRAD_REFUSALS)
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_no_grad_view_refusal_changes_no_version(device, spelling, kind, run):
    x = _base_of(kind, device)
    with torch.no_grad():
        v = x[1:]
    with pytest.raises(RuntimeError):
        run(_update, v, spelling, _t(v))
    assert (x._version, v._version) == (0, 0)


# > VIEW-93 (2.2 to 2.11): Inside a compiled function, `v[0] = 7` on a view taken inside `torch.no_grad()` of a tensor
# > that requires grad (a leaf or a non-leaf), with grad mode enabled, is not refused: no error is raised and the
# > `_version` of the view and of its base is 1. On 2.1 it is refused as VIEW-11 says; from 2.11 too. Layer: AOTAutograd
# > (the gap of INDEX-94: Dynamo did not run the assignment of a number on fake tensors; pytorch/pytorch#167583).
@pytest.mark.clause("VIEW-93")
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_compiled_number_assignment_to_no_grad_view_accepted(device, kind, run):
    x = _base_of(kind, device)
    with torch.no_grad():
        v = x[1:]
    run(_update, v, "v[0] = 7", _t(v))
    assert (x._version, v._version) == (1, 1)


def _update_under_no_grad(v, spelling, t):
    with torch.no_grad():
        _update(v, spelling, t)


# > VIEW-13: A view taken inside `torch.no_grad()` is accepted when it is modified in place inside `torch.no_grad()`
# > too, whether its base is a leaf that requires grad, a non-leaf that requires grad or a tensor that does not require
# > grad, and with grad mode enabled when neither its base nor the other operand requires grad; the `_version` of the
# > view and of its base increases. (Accepted, but when its base requires grad the view cannot be used with autograd
# > afterwards: VIEW-19.)
@pytest.mark.clause("VIEW-13")
@pytest.mark.parametrize("spelling", NO_GRAD_SPELLINGS)
@pytest.mark.parametrize("kind", ["leaf", "non-leaf", "plain"])
@pytest.mark.compiled_since("2.2", before="VIEW-96")
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_no_grad_view_modified_under_no_grad(device, spelling, kind, run):
    x = _base_of(kind, device)
    with torch.no_grad():
        v = x[1:]
    run(_update_under_no_grad, v, spelling, _t(v))
    assert x._version == v._version > 0


@pytest.mark.clause("VIEW-13")
@pytest.mark.parametrize("spelling", NO_GRAD_SPELLINGS)
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_no_grad_view_of_plain_tensor_modified_with_grad(device, spelling, run):
    x = _base_of("plain", device)
    with torch.no_grad():
        v = x[1:]
    run(_update, v, spelling, _t(v))
    assert (x.requires_grad, v.requires_grad) == (False, False)
    assert x._version == v._version > 0


# > VIEW-18: The values written under `torch.no_grad()` through a view taken under `torch.no_grad()` are the
# > values of its base at the positions the view covers.
@pytest.mark.clause("VIEW-18")
@pytest.mark.parametrize("spelling", NO_GRAD_SPELLINGS)
@pytest.mark.compiled_since("2.2", before="VIEW-96")
def test_no_grad_view_modified_under_no_grad_values(device, spelling, run):
    x = _base_of("leaf", device)
    with torch.no_grad():
        v = x[1:]
    run(_update_under_no_grad, v, spelling, _t(v))
    assert_values(x, AFTER[spelling], f"x after {spelling} on a no_grad view")


NO_GRAD_VIEW_MODIFIED = (
    "A view was created in no_grad mode and its base or another view of its base has been modified inplace with grad "
    "mode enabled"
)


def _uses(v):
    """The uses of a view after its update that VIEW-19 and VIEW-20 speak of: name -> function of the view."""

    def grad_fn_under_no_grad(v):
        with torch.no_grad():
            return v.grad_fn

    return {
        "v.grad_fn": lambda: v.grad_fn,
        "v.grad_fn inside no_grad": lambda: grad_fn_under_no_grad(v),
        "v.is_leaf": lambda: v.is_leaf,
        "v * 2": lambda: v * 2,
        "v.sum().backward()": lambda: v.sum().backward(),
        "v.grad_fn again": lambda: v.grad_fn,
    }


def _base_unaffected(x):
    fn = x.grad_fn
    assert (x * 2).requires_grad and x.grad_fn is fn


# > VIEW-19: After the update of VIEW-13 under `torch.no_grad()` (`v.add_(1)`, `v += 1`, `v.mul_(2)`, `v.copy_(t)`,
# > `v.zero_()`, `v[0] = 7`, on `v = x[1:]` taken under `torch.no_grad()`), when the base `x` requires grad (a leaf or a
# > non-leaf), the view can no longer be used with autograd: reading `v.grad_fn` (inside `torch.no_grad()` too) or
# > `v.is_leaf`, an operation on it with grad mode enabled (`v * 2`) and `v.sum().backward()` raise `RuntimeError` whose
# > message contains "A view was created in no_grad mode and its base or another view of its base has been modified
# > inplace with grad mode enabled" (although grad mode was disabled during the update), and raise it again when
# > repeated. `v.requires_grad` stays True, `v._base` is still `x`, `v * 2` inside `torch.no_grad()` runs, and `x` is
# > unaffected (its `grad_fn` stays, `x * 2` is recorded). When `x` does not require grad, after the update under
# > `torch.no_grad()` or with grad mode enabled, `v` stays a leaf that does not require grad with no `grad_fn`, and
# > `v * 2` does not require grad. Observed the same on the releases 2.0.1 to 2.15.0, on `cpu` and `meta`.
@pytest.mark.clause("VIEW-19")
@pytest.mark.parametrize("spelling", NO_GRAD_SPELLINGS)
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
@pytest.mark.compiled_since("2.2", before="VIEW-96")
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_no_grad_view_unusable_after_update_under_no_grad(device, spelling, kind, run):
    x = _base_of(kind, device)
    with torch.no_grad():
        v = x[1:]
    run(_update_under_no_grad, v, spelling, _t(v))
    for fn in _uses(v).values():
        with raises(RuntimeError, NO_GRAD_VIEW_MODIFIED):
            fn()
    assert (v.requires_grad, v._base is x) == (True, True)
    with torch.no_grad():
        assert not (v * 2).requires_grad
    _base_unaffected(x)


# > VIEW-19: When `x` does not require grad, after the update under `torch.no_grad()` or with grad mode enabled, `v`
# > stays a leaf that does not require grad with no `grad_fn`, and `v * 2` does not require grad.
@pytest.mark.clause("VIEW-19")
@pytest.mark.parametrize("spelling", NO_GRAD_SPELLINGS)
@pytest.mark.parametrize("mode", ["no_grad", "grad mode enabled"])
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_no_grad_view_of_plain_tensor_usable_after_update(device, spelling, mode, run):
    x = _base_of("plain", device)
    with torch.no_grad():
        v = x[1:]
    run(_update_under_no_grad if mode == "no_grad" else _update, v, spelling, _t(v))
    assert v._version > 0
    assert (v.is_leaf, v.requires_grad, v.grad_fn, (v * 2).requires_grad) == (True, False, None, False)


# > VIEW-96 (compile, until 2.2): On 2.1, inside a compiled function, the update of VIEW-13 under `torch.no_grad()` of a
# > view taken under `torch.no_grad()` (`x[1:]`, each spelling of `NO_GRAD_SPELLINGS`) is refused when its base requires
# > grad (a leaf or a non-leaf), although grad mode is disabled: `RuntimeError` with the message of VIEW-11 ("created in
# > no_grad mode and is being modified inplace with grad mode enabled"), and neither `_version` changes. A base that
# > does not require grad is updated, as VIEW-13 says.
@pytest.mark.clause("VIEW-96")
@pytest.mark.parametrize("spelling", NO_GRAD_SPELLINGS)
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_compiled_no_grad_view_modified_under_no_grad_refused_on_2_1(device, spelling, kind, run):
    x = _base_of(kind, device)
    with torch.no_grad():
        v = x[1:]
    with raises(RuntimeError, NO_GRAD_VIEW):
        run(_update_under_no_grad, v, spelling, _t(v))
    assert (x._version, v._version) == (0, 0)


MULTI_OUTPUT = {
    "x.unbind()": lambda x: x.unbind(),
    "torch.unbind(x)": lambda x: torch.unbind(x),
    "x.split(2)": lambda x: x.split(2),
    "torch.split(x, 2)": lambda x: torch.split(x, 2),
    "x.split([1, 3])": lambda x: x.split([1, 3]),
    "x.chunk(2)": lambda x: x.chunk(2),
    "torch.chunk(x, 2)": lambda x: torch.chunk(x, 2),
}


def _vector(kind, device):
    a = torch.tensor([1.0, 2.0, 3.0, 4.0], device=device, requires_grad=kind != "plain")
    return a * 2 if kind == "non-leaf" else a


def _multi_update(o, spelling, operand=None):
    if spelling == "o.mul_(2)":
        o.mul_(2)
    elif spelling == "o += 1":
        o += 1
    elif spelling == "o.copy_(t)":
        o.copy_(torch.zeros_like(o))
    elif spelling == "o.zero_()":
        o.zero_()
    elif spelling == "o.mul_(w)":
        o.mul_(operand)
    else:
        raise AssertionError(spelling)


MULTI_SPELLINGS = ["o.mul_(2)", "o += 1", "o.copy_(t)", "o.zero_()"]


# > VIEW-14: The outputs of `x.unbind()`, `torch.unbind(x)`, `x.split(2)`, `torch.split(x, 2)`, `x.split([1, 3])`,
# > `x.chunk(2)` and `torch.chunk(x, 2)` are views of `x`: `_is_view()` True, `_base` the tensor `x`, sharing its
# > storage.
@pytest.mark.clause("VIEW-14")
@pytest.mark.parametrize("op", list(MULTI_OUTPUT))
def test_multi_output_views_are_views(device, op):
    x = _vector("leaf", device)
    for o in MULTI_OUTPUT[op](x):
        assert (o._is_view(), o._base is x) == (True, True)
        assert same_storage(o, x)


# > VIEW-15: With grad mode enabled, an in-place operation (`o.mul_(2)`, `o += 1`, `o.copy_(t)`, `o.zero_()`) on an
# > output `o` of one of those functions raises `RuntimeError` whose message contains "This view is the output of a
# > function that returns multiple views. Such functions do not allow the output views to be modified inplace.", whether
# > `x` is a leaf that requires grad (this message replaces that of VIEW-3), a non-leaf, or does not require grad while
# > the other operand does (`o.mul_(w)`); no warning is emitted.
@pytest.mark.clause("VIEW-15")
@pytest.mark.parametrize("spelling", MULTI_SPELLINGS)
@pytest.mark.parametrize("op", list(MULTI_OUTPUT))
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_multi_output_view_inplace_raises(device, spelling, op, kind, run):
    x = _vector(kind, device)
    o = MULTI_OUTPUT[op](x)[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with raises(RuntimeError, MULTI):
            run(_multi_update, o, spelling)
    assert [str(w.message) for w in caught] == []


@pytest.mark.clause("VIEW-15")
@pytest.mark.parametrize("op", list(MULTI_OUTPUT))
def test_multi_output_view_inplace_with_operand_requiring_grad_raises(device, op, run):
    x = _vector("plain", device)
    o = MULTI_OUTPUT[op](x)[0]
    w = torch.ones_like(o).requires_grad_()
    with raises(RuntimeError, MULTI):
        run(_multi_update, o, "o.mul_(w)", w)


# > VIEW-16: An operation refused by VIEW-15 changes the `_version` of neither `x` nor its outputs, and does not replace
# > the `grad_fn` of `x`.
@pytest.mark.clause("VIEW-16")
@pytest.mark.parametrize("op", list(MULTI_OUTPUT))
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_multi_output_view_refusal_changes_nothing(device, op, kind, run):
    x = _vector(kind, device)
    fn = x.grad_fn
    outs = MULTI_OUTPUT[op](x)
    with pytest.raises(RuntimeError):
        run(_mul2, outs[0])
    assert x._version == 0 and all(o._version == 0 for o in outs)
    assert x.grad_fn is fn


def _multi_update_grad_mode(o, spelling, enabled):
    with torch.set_grad_enabled(enabled):
        _multi_update(o, spelling)


# > VIEW-17: The same operations are accepted inside `torch.no_grad()`, whether `x` is a leaf that requires grad,
# > a non-leaf that requires grad or a tensor that does not require grad, and with grad mode enabled when neither
# > `x` nor the other operand requires grad; the `_version` of `x` and of every output increases.
@pytest.mark.clause("VIEW-17")
@pytest.mark.parametrize("spelling", MULTI_SPELLINGS)
@pytest.mark.parametrize("op", list(MULTI_OUTPUT))
@pytest.mark.parametrize(
    ("kind", "mode"),
    [
        pytest.param("leaf", "no_grad", marks=BEFORE_2_4_VIEW_95),
        pytest.param("non-leaf", "no_grad", marks=BEFORE_2_4_VIEW_95),
        ("plain", "no_grad"),
        ("plain", "grad mode enabled"),
    ],
)
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_multi_output_view_inplace_accepted(device, spelling, op, kind, mode, run):
    x = _vector(kind, device)
    outs = MULTI_OUTPUT[op](x)
    run(_multi_update_grad_mode, outs[0], spelling, mode != "no_grad")
    assert x._version > 0 and all(o._version == x._version for o in outs)


MULTI_MODIFIED = (
    "is a view and its base or another view of its base has been modified inplace. "
    "This view is the output of a function that returns multiple views."
)


# > VIEW-20: After an update of VIEW-17 under `torch.no_grad()` of the first output of one of those functions of `x`
# > that requires grad (a leaf or a non-leaf), the outputs of that call (the updated one and the others) can no longer
# > be used with autograd: reading the `grad_fn` (inside `torch.no_grad()` too) or `is_leaf` of an output `o`, an
# > operation on it with grad mode enabled (`o * 2`) and `o.sum().backward()` raise `RuntimeError` whose message starts
# > with "Output K of " (K the index of that output), followed by the name of the node that made the outputs, and
# > contains "is a view and its base or another view of its base has been modified inplace. This view is the output of a
# > function that returns multiple views.". `o.requires_grad` stays True, `o * 2` inside `torch.no_grad()` runs, and `x`
# > is unaffected (its `grad_fn` stays, `x * 2` is recorded). When `x` does not require grad, after the update under
# > `torch.no_grad()` or with grad mode enabled, the outputs stay leaves that do not require grad, with no `grad_fn`.
# > Observed the same on the releases 2.0.1 to 2.15.0, on `cpu` and `meta`.
@pytest.mark.clause("VIEW-20")
@pytest.mark.parametrize("spelling", MULTI_SPELLINGS)
@pytest.mark.parametrize("op", list(MULTI_OUTPUT))
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
@BEFORE_2_4_VIEW_95
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_multi_output_views_unusable_after_update_under_no_grad(device, spelling, op, kind, run):
    x = _vector(kind, device)
    outs = MULTI_OUTPUT[op](x)
    run(_multi_update_grad_mode, outs[0], spelling, False)
    for k, o in enumerate(outs):
        for use, fn in _uses(o).items():
            with raises(RuntimeError, MULTI_MODIFIED) as info:
                fn()
            assert str(info.value).startswith(f"Output {k} of "), f"{use} of output {k}: {info.value}"
        assert o.requires_grad
        with torch.no_grad():
            assert not (o * 2).requires_grad
    _base_unaffected(x)


# > VIEW-20: After an update of VIEW-17 under `torch.no_grad()` of the first output of one of those functions of `x`
# > that requires grad (a leaf or a non-leaf), the outputs of that call (the updated one and the others) can no longer
# > be used with autograd: reading the `grad_fn` (inside `torch.no_grad()` too) or `is_leaf` of an output `o`, an
# > operation on it with grad mode enabled (`o * 2`) and `o.sum().backward()` raise `RuntimeError` whose message starts
# > with "Output K of " (K the index of that output), followed by the name of the node that made the outputs, and
# > contains "is a view and its base or another view of its base has been modified inplace. This view is the output of a
# > function that returns multiple views.". `o.requires_grad` stays True, `o * 2` inside `torch.no_grad()` runs, and `x`
# > is unaffected (its `grad_fn` stays, `x * 2` is recorded). When `x` does not require grad, after the update under
# > `torch.no_grad()` or with grad mode enabled, the outputs stay leaves that do not require grad, with no `grad_fn`.
# > Observed the same on the releases 2.0.1 to 2.15.0, on `cpu` and `meta`.
@pytest.mark.clause("VIEW-20")
@pytest.mark.parametrize("spelling", MULTI_SPELLINGS)
@pytest.mark.parametrize("op", list(MULTI_OUTPUT))
@pytest.mark.parametrize("mode", ["no_grad", "grad mode enabled"])
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_multi_output_views_of_plain_tensor_usable_after_update(device, spelling, op, mode, run):
    x = _vector("plain", device)
    outs = MULTI_OUTPUT[op](x)
    run(_multi_update_grad_mode, outs[0], spelling, mode != "no_grad")
    assert x._version > 0
    for o in outs:
        assert (o.is_leaf, o.requires_grad, o.grad_fn, (o * 2).requires_grad) == (True, False, None, False)


# > VIEW-95 (compile, until 2.4): Inside a compiled function, before 2.4, the updates under `torch.no_grad()` that
# > VIEW-6 and VIEW-17 accept are refused when the view belongs to a tensor `x` that requires grad: on a view of a leaf
# > (every spelling of `VIEW_UPDATES` on `x[1:]`, and on the view of every operation of `WRITABLE_VIEW_OPS`) and on an
# > output of `unbind`, `split` or `chunk` of a leaf or of a non-leaf (every operation and spelling of VIEW-17). The
# > `RuntimeError` is eager's refusal with grad mode enabled: "a view of a leaf Variable that requires grad is being
# > used in an in-place operation" (VIEW-3), and for an output of `unbind`, `split` or `chunk` "This view is the output
# > of a function that returns multiple views" (VIEW-15). Nothing is written: the `_version` of `x` and of the view stay
# > 0, `x` keeps its `grad_fn` and, on devices with values, its values. (Observed, not checked by its tests: a view of a
# > non-leaf by a single-output operation is updated as eagerly. AOTAutograd runs the update on a copy and writes the
# > result back into the view after its graph, with grad mode enabled unless the input is a leaf itself: the epilogue in
# > `torch/_functorch/_aot_autograd/runtime_wrappers.py` of 2.3; pytorch/pytorch#110843 reports the same refusal for a
# > `set_` under `torch.no_grad()`; the 2.4 change that ends it is not located.) Layer: AOTAutograd.
def _check_no_grad_update_refused(x, v, update, fragment, run):
    before, fn = x.detach().clone(), x.grad_fn
    with raises(RuntimeError, fragment):
        run(_under_no_grad(update, run), v)
    assert (x._version, v._version, x.grad_fn, x.requires_grad) == (0, 0, fn, True)
    if x.device.type != "meta":
        assert_values(x, before.tolist(), "x after the refused update")


@pytest.mark.clause("VIEW-95")
@pytest.mark.parametrize("update", VIEW_UPDATES.params())
def test_compiled_no_grad_update_of_view_of_leaf_refused_before_2_4(device, update, run):
    x = leaf(device)
    _check_no_grad_update_refused(x, x[1:], update, VIEW_OF_LEAF, run)


@pytest.mark.clause("VIEW-95")
@pytest.mark.parametrize(("mid", "view"), [pytest.param(*m, id=m[0]) for m in WRITABLE_VIEW_OPS.available()])
def test_compiled_no_grad_update_of_views_of_leaf_refused_before_2_4(device, mid, view, run):
    fragment = MULTI if mid in MULTI_OUTPUT_VIEWS else VIEW_OF_LEAF

    def check(update):
        x = matrix(device)
        _check_no_grad_update_refused(x, view(x), update, fragment, run)

    check_each(VIEW_UPDATES, check)


@pytest.mark.clause("VIEW-95")
@pytest.mark.parametrize("spelling", MULTI_SPELLINGS)
@pytest.mark.parametrize("op", list(MULTI_OUTPUT))
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_compiled_no_grad_update_of_multi_output_view_refused_before_2_4(device, spelling, op, kind, run):
    x = _vector(kind, device)
    outs = MULTI_OUTPUT[op](x)
    _check_no_grad_update_refused(x, outs[0], lambda o: _multi_update(o, spelling), MULTI, run)


# Seeds, run as written (fixing only what stops them from running, as noted).


@pytest.mark.clause("INDEX-1", "VIEW-1", "VIEW-3")
def test_seed_en_correct_approach_slicing(device):
    # English seed, "Avoiding variable reassignment", "Correct approach", verbatim:
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    with raises(RuntimeError, LEAF):
        x[:] = torch.tensor([3.0, 4.0], device=device)  # Modifies existing variable using slicing
    # "slicing" gives a view of x; written as an in-place operation on that view, the refusal is VIEW-3's:
    v = x[:]
    assert v._is_view() and v._base is x
    with raises(RuntimeError, VIEW_OF_LEAF):
        v.copy_(torch.tensor([3.0, 4.0], device=device))


@pytest.mark.clause("VIEW-2")
def test_seed_ko_detach_copy_is_not_a_view(device):
    # Korean seed, "detach() 메서드 사용"; torch.Variable(t) (which does not exist) replaced by t.
    x = torch.randn(5, device=device)
    y = x.detach().copy_(torch.randn(5, device=device))
    # y shares the storage of x, but autograd does not treat it as a view of x:
    assert same_storage(y, x)
    assert (y._is_view(), y._base) == (False, None)
