"""Conformance tests for spec/custom_function.md (in-place updates inside a custom autograd.Function,
`ctx.mark_dirty`). Each test quotes the clause it proves."""

import pytest
import torch

from conformance.harness.checks import SAVED_MODIFIED, assert_values, leaf, raises

LEAF_ERROR = "a leaf Variable that requires grad has been used in an in-place operation."
NOT_RETURNED = "Some elements marked as dirty during the forward method were not returned as output."


class Double(torch.autograd.Function):
    """Doubles its input in place and says so (mark_dirty); its backward doubles the gradient."""

    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class DoubleUnmarked(torch.autograd.Function):
    """The same update without mark_dirty."""

    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class DoubleUnseen(torch.autograd.Function):
    """Doubles its input through memory autograd does not watch (numpy), then says so (mark_dirty)."""

    @staticmethod
    def forward(ctx, x):
        x.detach().numpy().__imul__(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class DoubleUnseenUnmarked(torch.autograd.Function):
    """Doubles its input through numpy, without mark_dirty."""

    @staticmethod
    def forward(ctx, x):
        x.detach().numpy().__imul__(2)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class DirtyNotReturned(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x * 1

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


# > CUSTOMFN-1: A custom Function whose `forward` updates its input `x` in place, passes it to `ctx.mark_dirty(x)` and
# > returns it: applied to a non-leaf `y` that requires grad, with grad mode on, it returns `y` itself, which stays a
# > non-leaf that requires grad, with a new `grad_fn`, a node of that Function (an instance of its `_backward_cls`), and
# > a larger `_version`. Applied to a tensor that does not require grad it returns that tensor, which still does not
# > require grad and has no `grad_fn`.
@pytest.mark.clause("CUSTOMFN-1")
def test_marked_update_makes_the_function_the_node(device):
    a = leaf(device)
    y = a * 1
    before, version = y.grad_fn, y._version
    assert Double.apply(y) is y
    assert (y.is_leaf, y.requires_grad) == (False, True)
    assert y.grad_fn is not before and type(y.grad_fn) is Double._backward_cls, type(y.grad_fn).__name__
    assert y._version > version
    plain = torch.tensor([1.0, 2.0], device=device)
    assert Double.apply(plain) is plain
    assert (plain.requires_grad, plain.grad_fn) == (False, None)


# > CUSTOMFN-2: Gradients then flow through that Function's `backward`: with `y = a * 1` (`a` a leaf that requires
# > grad), `Double.apply(y)` (a `forward` that doubles `x` in place, a `backward` that returns twice the gradient) and
# > `y.sum().backward()`, `a.grad` is `[2., 2.]`; `y` holds the doubled values.
@pytest.mark.clause("CUSTOMFN-2")
def test_marked_update_gradient_goes_through_the_function(device):
    a = leaf(device)
    y = a * 1
    Double.apply(y)
    y.sum().backward()
    assert_values(a.grad, [2.0, 2.0], "a.grad")
    assert_values(y, [2.0, 4.0], "y")


# > CUSTOMFN-3: `ctx.mark_dirty(x)` of a leaf `x` that requires grad, with grad mode on, raises `RuntimeError` whose
# > message contains "a leaf Variable that requires grad has been used in an in-place operation."; `ctx.mark_dirty` of
# > an input that `forward` does not return raises `RuntimeError` whose message contains "Some elements marked as dirty
# > during the forward method were not returned as output."
@pytest.mark.clause("CUSTOMFN-3")
def test_marking_a_leaf_or_an_input_not_returned_is_refused(device):
    with raises(RuntimeError, LEAF_ERROR):
        Double.apply(leaf(device))
    with raises(RuntimeError, NOT_RETURNED):
        DirtyNotReturned.apply(leaf(device) * 1)


# > CUSTOMFN-4: Without `ctx.mark_dirty`, the same forward applied to a non-leaf `y` returns a new tensor, a view of `y`
# > (its `_base` is `y`), whose `grad_fn` is a node of the Function; `y` keeps its `grad_fn` object: its own graph
# > does not record the update. Applied to a leaf that requires grad it raises nothing, and the result is a view of
# > the leaf.
@pytest.mark.clause("CUSTOMFN-4")
def test_unmarked_update_returns_a_view(device):
    y = leaf(device) * 1
    before = y.grad_fn
    out = DoubleUnmarked.apply(y)
    assert out is not y and out._base is y
    assert type(out.grad_fn) is DoubleUnmarked._backward_cls, type(out.grad_fn).__name__
    assert y.grad_fn is before
    a = leaf(device)
    out = DoubleUnmarked.apply(a)
    assert out._base is a and a.is_leaf and a.requires_grad


# > CUSTOMFN-5: That leaf holds the updated values afterwards (`[2., 4.]` for `[1., 2.]` doubled): a leaf that requires
# > grad is changed in place with no error.
@pytest.mark.clause("CUSTOMFN-5")
def test_unmarked_update_changes_a_leaf_silently(device):
    a = leaf(device)
    DoubleUnmarked.apply(a)
    assert_values(a, [2.0, 4.0], "the leaf after the Function's update")


# > CUSTOMFN-6: An in-place torch operation inside `forward` increases `_version` with or without `ctx.mark_dirty`, so
# > a graph that saved `y` before (`b = y * y`) raises RuntimeError at `b.sum().backward()` whose message contains "one
# > of the variables needed for gradient computation has been modified by an inplace operation" either way.
@pytest.mark.clause("CUSTOMFN-6")
@pytest.mark.parametrize("function", [Double, DoubleUnmarked], ids=["marked", "unmarked"])
def test_torch_update_inside_forward_is_seen_by_saved_graphs(device, function):
    y = leaf(device) * 1
    b = y * y
    function.apply(y)
    with raises(RuntimeError, SAVED_MODIFIED):
        b.sum().backward()


# > CUSTOMFN-7: An update autograd does not see (through the NumPy view of the tensor's memory) is caught only with
# > `ctx.mark_dirty`: with it, `_version` increases and the backward of a graph that saved `y` raises as in CUSTOMFN-6;
# > without it, `_version` stays and that backward runs and gives a wrong gradient (`y = a * 1`, `b = y * y`, `y`
# > doubled: `a.grad` is `[4., 8.]`, where the gradient at the values `b` was computed from is `[2., 4.]`).
@pytest.mark.clause("CUSTOMFN-7")
def test_mark_dirty_is_what_catches_an_unseen_update(device):
    y = leaf(device) * 1
    b = y * y
    version = y._version
    DoubleUnseen.apply(y)
    assert y._version > version
    with raises(RuntimeError, SAVED_MODIFIED):
        b.sum().backward()
    a = leaf(device)
    y = a * 1
    b = y * y
    version = y._version
    DoubleUnseenUnmarked.apply(y)
    assert y._version == version
    b.sum().backward()
    assert_values(a.grad, [4.0, 8.0], "a.grad after an unmarked update autograd did not see")
