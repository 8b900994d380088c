"""Conformance tests for spec/detach.md (`detach()` and `detach_()`). Each test quotes the clause it proves."""

import warnings

import pytest
import torch

from conformance.harness.checks import (
    NO_GRAD_FN,
    SAVED_MODIFIED,
    assert_values,
    by_mode,
    layout,
    leaf,
    raises,
    same_storage,
)
from conformance.harness.kinds import TENSOR_KINDS, VIEW_KINDS
from conformance.harness.populations import INPLACE_SPELLINGS


def source(device, kind):
    """The tensor to detach: a leaf that requires grad, a non-leaf, or a plain tensor."""
    if kind == "leaf":
        return leaf(device)
    if kind == "non-leaf":
        return leaf(device) * 1
    return torch.tensor([1.0, 2.0], device=device)


KINDS = ["leaf", "non-leaf", "plain"]


# > DETACH-1: `x.detach()` returns a tensor object other than `x` (a new one at every call) that shares
# > the storage of `x` and has the same shape, strides, storage offset, dtype and device, for every kind of tensor
# > of the population TENSOR_KINDS.
@pytest.mark.clause("DETACH-1")
@pytest.mark.parametrize("make", TENSOR_KINDS.params())
def test_detach_is_new_object_sharing_storage(device, make):
    x = make(device)
    calls = [x.detach(), x.detach(), x.detach()]  # kept alive, so that no id is reused
    assert all(d is not x for d in calls)
    assert len({id(d) for d in calls}) == 3, "each call returns a new object"
    for d in calls:
        assert same_storage(d, x)
        assert layout(d) == layout(x)


# > DETACH-2: `x.detach()` does not require grad, is a leaf and has no `grad_fn`, for every kind of tensor of
# > TENSOR_KINDS.
@pytest.mark.clause("DETACH-2")
@pytest.mark.parametrize("make", TENSOR_KINDS.params())
def test_detach_is_leaf_without_grad(device, make):
    d = make(device).detach()
    assert (d.requires_grad, d.is_leaf, d.grad_fn) == (False, True, None)


def _add_one(t):
    t.add_(1)


def _add_one_no_grad(t):
    with torch.no_grad():
        t.add_(1)


# > DETACH-3: `x.detach()` shares the version counter of `x`: an in-place operation through the detached
# > tensor increments `x._version`, and an in-place operation on `x` increments the `_version` of a
# > tensor detached from it earlier.
# > VERSION-96 (compile, until 2.5): these compiled steps do what their eager clauses say, `_version` included.
@pytest.mark.parametrize("bump", by_mode("DETACH-3", "DETACH-90", 1, 2, as_eager="VERSION-96"))
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_detach_shares_version_counter(device, kind, bump, run):
    x = source(device, kind)
    start = x._version
    d = x.detach()
    assert d._version == start
    run(_add_one, d)
    assert (d._version, x._version) == (start + bump, start + bump)
    run(_add_one_no_grad, x)
    assert (d._version, x._version) == (start + 2 * bump, start + 2 * bump)


# > DETACH-3: `x.detach()` shares the version counter of `x`: an in-place operation through the detached tensor
# > increments `x._version`, and an in-place operation on `x` increments the `_version` of a tensor detached from
# > it earlier, for every kind of tensor of `TENSOR_KINDS` (the update of `x` made under `torch.no_grad()`).
# > (Compare DATA-3: `x.data` has a counter of its own.)
@pytest.mark.clause("DETACH-3")
@pytest.mark.parametrize("make", TENSOR_KINDS.params())
def test_detach_shares_version_counter_of_every_kind(device, make):
    x = make(device)
    d, start = x.detach(), x._version
    d.zero_()
    assert d._version == x._version > start
    earlier, version = x.detach(), x._version
    with torch.no_grad():
        x.zero_()
    assert earlier._version == x._version > version


# Member of INPLACE_SPELLINGS -> values of `x = [1, 2]` after it is applied to `t = x.detach()`, for the members the
# page names (`v` is [0.5, 0.5]). Every other member: the values of the update on a normal tensor.
EXPECTED = {
    "t[:] = v": [0.5, 0.5],
    "t[0] = 5": [5.0, 2.0],
    "t.add_(1)": [2.0, 3.0],
    "t += 1": [2.0, 3.0],
    "torch.add(t, 1, out=t)": [2.0, 3.0],
    "t.copy_(v)": [0.5, 0.5],
    "t.zero_()": [0.0, 0.0],
    "t.fill_(7)": [7.0, 7.0],
}
MEMBER_ID = {fn: mid for mid, fn in INPLACE_SPELLINGS.members}


def _write(run, x, update) -> None:
    """Write through a fresh `x.detach()`, outside any no_grad block (the update step: `update(x.detach())`)."""
    run(lambda x: update(x.detach()), x)


# > DETACH-4: Every in-place write through `x.detach()` of a leaf `x` that requires grad (every spelling of the
# > population `INPLACE_SPELLINGS`, listed below, applied to `t = x.detach()`: `t[:] = v`, `t[0] = 5`, `t.add_(1)`,
# > `t += 1`, `torch.add(t, 1, out=t)`, `t.copy_(v)`, `t.zero_()`, `t.fill_(7)`, ...) raises no error, also outside
# > `torch.no_grad`; afterwards `x` is still a leaf that requires grad and has no `grad_fn`, and `x._version` has grown
# > by one.
@pytest.mark.clause("DETACH-4")
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
def test_write_through_detach_is_allowed(device, update, run):
    x = leaf(device)
    _write(run, x, update)
    assert (x.is_leaf, x.requires_grad, x.grad_fn, x._version) == (True, True, None, 1)


# > DETACH-5: The values written through `x.detach()`, by any of the spellings of DETACH-4, are the values
# > of `x` afterwards.
@pytest.mark.clause("DETACH-5")
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
def test_write_through_detach_changes_values(device, update, run):
    x = leaf(device)
    _write(run, x, update)
    mid = MEMBER_ID[update]
    if mid in EXPECTED:
        assert_values(x, EXPECTED[mid], f"x after {mid}")
    plain = torch.tensor([1.0, 2.0])
    update(plain)
    assert_values(x, plain.tolist(), f"x after {mid} (as on a normal tensor)")


# > DETACH-6: When a graph has saved `x` for backward (a leaf, or a non-leaf result of an operation; for example
# > `y = (x * x).sum()`) and `x` is then modified in place through `x.detach()`, by any of the spellings of DETACH-4,
# > `backward()` of that graph raises `RuntimeError` whose message contains "one of the variables needed for gradient
# > computation has been modified by an inplace operation" and "is at version 1; expected version 0 instead". (For three
# > spellings on a leaf this is also DATA-7.)
@pytest.mark.clause("DETACH-6")
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
def test_write_through_detach_to_saved_tensor_raises(device, kind, update, run):
    x = source(device, kind)
    y = (x * x).sum()  # MulBackward0 saves x
    _write(run, x, update)
    with raises(RuntimeError, SAVED_MODIFIED) as info:
        y.backward()
    assert "is at version 1; expected version 0 instead" in str(info.value)


# > DETACH-7: When no graph has saved `x` (for example `y = (x + 1).sum()`, whose backward needs no values), a write
# > through `x.detach()` (any spelling of DETACH-4) does not make `backward()` raise, and the gradient is that of the
# > recorded operations.
@pytest.mark.clause("DETACH-7")
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
def test_write_through_detach_to_unsaved_tensor_is_fine(device, update, run):
    x = leaf(device)
    y = (x + 1).sum()  # AddBackward0 and SumBackward0 save no tensor
    _write(run, x, update)
    y.backward()
    assert_values(x.grad, [1.0, 1.0], "x.grad of (x + 1).sum()")


# > DETACH-8: `x.detach().requires_grad_()` is a new leaf that requires grad: a backward through it
# > accumulates into its own `.grad` and leaves `x.grad` as `None`.
@pytest.mark.clause("DETACH-8")
@pytest.mark.compiled_since("2.2", before="DETACH-91")  # a non-leaf whose backward reaches x
def test_detach_then_requires_grad_is_new_leaf(device, run):
    x = leaf(device)
    d = run(lambda x: x.detach().requires_grad_(), x)
    assert (d.is_leaf, d.requires_grad, d.grad_fn) == (True, True, None)
    (d * d).sum().backward()
    assert x.grad is None
    assert_values(d.grad, [2.0, 4.0], "d.grad = 2 * d")


# > DETACH-91 (compile, until 2.2): Before 2.2, the compiled step `x.detach().requires_grad_()` (on a leaf `x` that
# > requires grad) returns not a new leaf but a non-leaf `d` that requires grad, whose `grad_fn` is an
# > `AsStridedBackward0` node leading to `x`: a backward of `(d * d).sum()` accumulates `2 * d` into `x.grad` (`[2, 4]`
# > for `x = [1, 2]`) and leaves `d.grad` as `None`. Layer: AOTAutograd (Dynamo alone, `backend="eager"`, gives the new
# > leaf of DETACH-8).
@pytest.mark.clause("DETACH-91")
def test_compiled_detach_then_requires_grad_reaches_x_before_2_2(device, run):
    x = leaf(device)
    d = run(lambda x: x.detach().requires_grad_(), x)
    assert (d.is_leaf, d.requires_grad, type(d.grad_fn).__name__) == (False, True, "AsStridedBackward0")
    assert d.grad_fn.next_functions[0][0].variable is x
    (d * d).sum().backward()
    assert_values(x.grad, [2.0, 4.0], "x.grad = 2 * d")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reading .grad of a non-leaf warns
        assert d.grad is None


# > DETACH-9: `x.detach_()` on a tensor that is not a view (every kind of tensor of `TENSOR_KINDS` that is not a view:
# > leaves of every dtype, shape and layout, with or without grad, a non-leaf, an `nn.Parameter`) returns `x` itself,
# > and afterwards `x` does not require grad, is a leaf, has no `grad_fn`, and keeps its storage and `_version`.
@pytest.mark.clause("DETACH-9")
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_detach_in_place(device, kind, run):
    x = source(device, kind)
    storage, version = x.untyped_storage()._cdata, x._version
    assert run(_detach_, x) is x
    assert (x.requires_grad, x.is_leaf, x.grad_fn) == (False, True, None)
    assert (x.untyped_storage()._cdata, x._version) == (storage, version)


def _detach_(x):
    return x.detach_()


def _detach_then_read(x):
    y = x * 2
    y.detach_()
    return y, y.requires_grad


# > DETACH-12: Code that calls `y.detach_()` on a non-leaf `y = x * 2` it made (`x` a leaf that requires grad) and then
# > reads `y.requires_grad` reads False, and the `y` it returns is a leaf that does not require grad.
@pytest.mark.clause("DETACH-12")
@pytest.mark.compiled_since("2.12", before="DETACH-92")  # compiled, the read gave True before
def test_requires_grad_read_after_detach_(device, run):
    y, read = run(_detach_then_read, leaf(device))
    assert read is False
    assert (y.requires_grad, y.is_leaf) == (False, True)


# > DETACH-92 (compile, until 2.12): Before 2.12, inside a compiled function, `y.requires_grad` read right after
# > `y.detach_()` on a non-leaf `y = x * 2` made there (`x` a leaf that requires grad) is True, where eager code reads
# > False (DETACH-12); the `y` the function returns is a leaf that does not require grad, as eagerly. Layer: Dynamo (the
# > same with `backend="eager"`), which answered the attribute from what it had traced before the call; from 2.12 it
# > reads False.
@pytest.mark.clause("DETACH-92")
def test_requires_grad_read_after_detach_compiled_before_2_12(device, run):
    y, read = run(_detach_then_read, leaf(device))
    assert read is True
    assert (y.requires_grad, y.is_leaf) == (False, True)


VIEWS = {
    "leaf[:1]": lambda x: x[:1],
    "leaf.view(2)": lambda x: x.view(2),
    "(leaf * 2)[:1]": lambda x: (x * 2)[:1],
    "plain[:1]": lambda x: x.detach()[:1],
}


# > DETACH-10: `v.detach_()` where `v` is a view (`x[:1]`, `x.view(2)`, of a tensor that requires grad or not, and every
# > kind of tensor of `TENSOR_KINDS` that is a view: expanded, a view of a leaf, of a non-leaf, of a view, an output of
# > `split`, a view taken under `torch.no_grad()`) raises `RuntimeError` whose message contains "Can't detach views
# > in-place. Use detach() instead".
@pytest.mark.clause("DETACH-10")
@pytest.mark.parametrize("view", list(VIEWS))
def test_detach_in_place_of_view_raises(device, view, run):
    v = VIEWS[view](leaf(device))
    with raises(RuntimeError, "Can't detach views in-place. Use detach() instead"):
        run(_detach_, v)


# > DETACH-9: `x.detach_()` on a tensor that is not a view (every kind of tensor of `TENSOR_KINDS` that is not a view:
# > leaves of every dtype, shape and layout, with or without grad, a non-leaf, an `nn.Parameter`) returns `x` itself,
# > and afterwards `x` does not require grad, is a leaf, has no `grad_fn`, and keeps its storage and `_version`.
@pytest.mark.clause("DETACH-9")
@pytest.mark.parametrize("make", [p for p in TENSOR_KINDS.params() if p.id not in VIEW_KINDS])
def test_detach_in_place_of_every_kind(device, make):
    x = make(device)
    storage, version = x.untyped_storage()._cdata, x._version
    assert x.detach_() is x
    assert (x.requires_grad, x.is_leaf, x.grad_fn) == (False, True, None)
    assert (x.untyped_storage()._cdata, x._version) == (storage, version)


# > DETACH-10: `v.detach_()` where `v` is a view (`x[:1]`, `x.view(2)`, of a tensor that requires grad or not, and every
# > kind of tensor of `TENSOR_KINDS` that is a view: expanded, a view of a leaf, of a non-leaf, of a view, an output of
# > `split`, a view taken under `torch.no_grad()`) raises `RuntimeError` whose message contains "Can't detach views
# > in-place. Use detach() instead".
@pytest.mark.clause("DETACH-10")
@pytest.mark.parametrize("make", [p for p in TENSOR_KINDS.params() if p.id in VIEW_KINDS])
def test_detach_in_place_of_every_view_kind_raises(device, make):
    v = make(device)
    with raises(RuntimeError, "Can't detach views in-place. Use detach() instead"):
        v.detach_()


# > DETACH-11: When a graph has saved a non-leaf `y` and `y.detach_()` is then called, `backward()` of
# > that graph raises `RuntimeError` whose message contains "Trying to use a saved tensor that has been
# > detached in-place".
@pytest.mark.clause("DETACH-11")
def test_detach_in_place_of_saved_tensor_breaks_backward(device, run):
    a = leaf(device)
    y = a * 2
    z = (y * y).sum()  # saves y
    run(_detach_, y)
    with raises(RuntimeError, "Trying to use a saved tensor that has been detached in-place"):
        z.backward()


# Seeds, run as written (fixing only what stops them from running, as noted).


@pytest.mark.clause("DETACH-2", "REQGRAD-11")
@pytest.mark.parametrize("x_requires_grad", [False, True])
def test_seed_ko_detach_copy_backward(device, x_requires_grad):
    # Korean seed, "detach() 메서드 사용". As written it calls torch.Variable, which does not exist:
    with raises(AttributeError, "has no attribute 'Variable'"):
        torch.Variable(torch.randn(5))
    # Fixed to run: torch.Variable(t) -> t (torch.autograd.Variable(t) gives the same tensor, requires_grad=False);
    # the result does not depend on whether x requires grad.
    x = torch.randn(5, device=device, requires_grad=x_requires_grad)
    y = x.detach().copy_(torch.randn(5, device=device))
    assert (y.requires_grad, y.grad_fn) == (False, None)
    with raises(RuntimeError, NO_GRAD_FN):
        y.backward()
    # print(y.grad) is never reached.


@pytest.mark.clause("DETACH-3", "DETACH-6")
def test_seed_ko_detach_copy_bumps_version_of_x(device):
    # The same seed line, `x.detach().copy_(v)`, does change x (shared storage and version counter): a graph
    # that saved x can no longer be differentiated.
    x = torch.randn(5, device=device, requires_grad=True)
    y = (x * x).sum()
    x.detach().copy_(torch.randn(5, device=device))
    assert x._version > 0
    with raises(RuntimeError, SAVED_MODIFIED):
        y.backward()
