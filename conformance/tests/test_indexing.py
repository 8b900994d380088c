"""Conformance tests for spec/indexing.md (indexed and sliced assignment). Each test quotes the clause it proves."""

import pytest
import torch

from conformance.harness.checks import SAVED_MODIFIED, assert_values, by_mode, compiled_since, raises, same_storage
from conformance.harness.checks import leaf as make_leaf
from conformance.harness.populations import INDEX_ASSIGNMENTS, _ia_idx, _ia_mask

LEAF = "leaf Variable that requires grad is being used in an in-place operation."
LEAF_ERROR = "a " + LEAF
VIEW_ERROR = "a view of a " + LEAF
W = [1.0, 10.0, 100.0]  # weights of the loss (x * W).sum(), so that each position's gradient is visible


def leaf(device, values=(1.0, 2.0, 3.0)):
    return make_leaf(device, values)


def t(x, *values):
    return torch.tensor(list(values), device=x.device)


# `mask` [True, False, True] and `idx` [0, 2], made as INDEX_ASSIGNMENTS makes them (they trace on `meta`)
mask, idx = _ia_mask, _ia_idx


def call(step, *args):
    """The update step called as written: the tests of clauses about eager mode only."""
    return step(*args)


def no_grad(update):
    """The update step `with torch.no_grad(): update(x)`, as one function (for the `run` fixture)."""

    def step(*args):
        with torch.no_grad():
            return update(*args)

    return step


# The spellings of INDEX-1 are the population INDEX_ASSIGNMENTS; per spelling: values of x afterwards, and
# the gradient of (x * W).sum() for x = a * 2 with respect to a.
EFFECTS = {
    "x[:] = t": ([7.0, 8.0, 9.0], [0.0, 0.0, 0.0]),
    "x[...] = t": ([7.0, 8.0, 9.0], [0.0, 0.0, 0.0]),
    "x[0] = 5.0": ([5.0, 2.0, 3.0], [0.0, 20.0, 200.0]),
    "x[1:] = t": ([1.0, 8.0, 9.0], [2.0, 0.0, 0.0]),
    "x[mask] = 5.0": ([5.0, 2.0, 5.0], [0.0, 20.0, 0.0]),
    "x[mask] = t": ([5.0, 2.0, 6.0], [0.0, 20.0, 0.0]),
    "x[idx] = 5.0": ([5.0, 2.0, 5.0], [0.0, 20.0, 0.0]),
    "x[idx] = t": ([5.0, 2.0, 6.0], [0.0, 20.0, 0.0]),
}
assert list(EFFECTS) == INDEX_ASSIGNMENTS.ids()
SETS = {mid: (fn, *EFFECTS[mid]) for mid, fn in INDEX_ASSIGNMENTS.members}
SPELLING = {fn: mid for mid, fn in INDEX_ASSIGNMENTS.members}
VIEW_SPELLINGS = ["x[0] = 5.0", "x[1:] = t"]
NON_VIEW_SPELLINGS = ["x[...] = t", "x[mask] = 5.0", "x[mask] = t", "x[idx] = 5.0", "x[idx] = t"]
# The members that assign a Python number: a compiled function refuses them only from 2.11 (INDEX-94).
NUMBER_SPELLINGS = ["x[0] = 5.0", "x[mask] = 5.0", "x[idx] = 5.0"]
# The members that assign a tensor: a compiled function refuses them only from 2.9 (INDEX-96).
TENSOR_SPELLINGS = [s for s in INDEX_ASSIGNMENTS.ids() if s not in NUMBER_SPELLINGS]


def refusals(params):
    """The members whose refusal a test checks; compiled, the refusal starts at 2.9 for TENSOR_SPELLINGS
    (INDEX-96) and at 2.11 for NUMBER_SPELLINGS (INDEX-94)."""
    return compiled_since(
        "2.9", compiled_since("2.11", params, NUMBER_SPELLINGS, "INDEX-94"), TENSOR_SPELLINGS, "INDEX-96"
    )


# > INDEX-1: With grad mode enabled, an indexed or sliced assignment to a leaf that requires grad (each member of the
# > population `INDEX_ASSIGNMENTS`, listed below: `x[:] = t`, `x[...] = t`, `x[0] = 5.0`, `x[1:] = t`, `x[mask] = 5.0`,
# > `x[mask] = t`, `x[idx] = 5.0`, `x[idx] = t`) raises `RuntimeError` whose message contains "leaf Variable that
# > requires grad is being used in an in-place operation.", whether or not the assigned value requires grad. (Inside a
# > compiled function before torch 2.11, the three that assign a Python number are not refused: INDEX-94; before 2.9,
# > neither are those that assign a tensor: INDEX-96.)
@pytest.mark.clause("INDEX-1")
@pytest.mark.parametrize("spelling", refusals(INDEX_ASSIGNMENTS.params()))
def test_assignment_to_leaf_requiring_grad_raises(device, spelling, run):
    x = leaf(device)
    with raises(RuntimeError, LEAF):
        run(spelling, x)


def _set_all(x, v):
    x[:] = v


def _set_first(x, v):
    x[0] = v[0]


def _set_masked(x, v):
    x[mask(x)] = v[:2]


VALUE_INTO_LEAF = {"x[:] = v": _set_all, "x[0] = v": _set_first, "x[mask] = v": _set_masked}
# Those a compiled function does not refuse before 2.9 (INDEX-96); it refuses `x[mask] = v` as eagerly.
VALUE_INTO_LEAF_ACCEPTED = ["x[:] = v", "x[0] = v"]


@pytest.mark.clause("INDEX-1")
@pytest.mark.parametrize(  # compiled, older releases accept two of them (INDEX-96)
    "spelling", compiled_since("2.9", list(VALUE_INTO_LEAF), VALUE_INTO_LEAF_ACCEPTED, "INDEX-96")
)
def test_assignment_of_value_requiring_grad_to_leaf_raises(device, spelling, run):
    x = leaf(device)
    v = torch.tensor([5.0, 6.0, 7.0], device=device, requires_grad=True)
    with raises(RuntimeError, LEAF):
        run(VALUE_INTO_LEAF[spelling], x, v)


# > INDEX-2: When the index selects a view of `x` (an integer, `x[0] = 5.0`, or a partial slice, `x[1:] = t`), the
# > message is "a view of a leaf Variable that requires grad is being used in an in-place operation.".
@pytest.mark.clause("INDEX-2")
@pytest.mark.parametrize("spelling", VIEW_SPELLINGS)
def test_view_assignment_to_leaf_message(device, spelling):
    x = leaf(device)
    with raises(RuntimeError, LEAF) as info:
        SETS[spelling][0](x)
    assert str(info.value) == VIEW_ERROR


# > INDEX-3: For `x[...] = t` and for an advanced index (a boolean mask or an integer tensor, with a number or a tensor
# > as value), the message is "a leaf Variable that requires grad is being used in an in-place operation.".
@pytest.mark.clause("INDEX-3")
@pytest.mark.parametrize("spelling", NON_VIEW_SPELLINGS)
def test_non_view_assignment_to_leaf_message(device, spelling):
    x = leaf(device)
    with raises(RuntimeError, LEAF) as info:
        SETS[spelling][0](x)
    assert str(info.value) == LEAF_ERROR


# > INDEX-4 (until 2.9): For `x[:] = t` the message is "a view of a leaf Variable that requires grad ...".
@pytest.mark.clause("INDEX-4")
def test_full_slice_assignment_to_leaf_message_before_2_9(device):
    x = leaf(device)
    with raises(RuntimeError, LEAF) as info:
        SETS["x[:] = t"][0](x)
    assert str(info.value) == VIEW_ERROR


# > INDEX-5 (since 2.9): For `x[:] = t` the message is "a leaf Variable that requires grad ...".
@pytest.mark.clause("INDEX-5")
def test_full_slice_assignment_to_leaf_message_since_2_9(device):
    x = leaf(device)
    with raises(RuntimeError, LEAF) as info:
        SETS["x[:] = t"][0](x)
    assert str(info.value) == LEAF_ERROR


# > INDEX-90 (compile, since 2.9): From 2.9, inside a compiled function, each assignment refused by INDEX-1 raises while
# > Dynamo traces it: a `RuntimeError` (`torch._dynamo.exc.TorchRuntimeError`) whose message contains "leaf Variable
# > that requires grad is being used in an in-place operation." inside a longer text, so it is never exactly the message
# > of INDEX-2 to INDEX-5. Layer: Dynamo. (The assignments of a Python number are refused so from 2.11, INDEX-94; before
# > 2.9 a compiled function accepts these assignments, INDEX-96.)
@pytest.mark.clause("INDEX-90")
@pytest.mark.parametrize("spelling", refusals(INDEX_ASSIGNMENTS.params()))
def test_compiled_refusal_message_is_longer(device, spelling, run):
    x = leaf(device)
    with raises(RuntimeError, LEAF) as info:
        run(spelling, x)
    assert str(info.value) not in (LEAF_ERROR, VIEW_ERROR)


# > INDEX-6: An assignment refused by INDEX-1 changes no metadata: `x` is still a leaf that requires grad, has no
# > `grad_fn` and keeps its `_version`.
@pytest.mark.clause("INDEX-6")
@pytest.mark.parametrize("spelling", refusals(list(SETS)))
def test_refused_assignment_changes_no_metadata(device, spelling, run):
    x = leaf(device)
    with pytest.raises(RuntimeError):
        run(SETS[spelling][0], x)
    assert (x.is_leaf, x.requires_grad, x.grad_fn, x._version) == (True, True, None, 0)


# > INDEX-7: An assignment refused by INDEX-1 leaves the values of `x` as they were.
@pytest.mark.clause("INDEX-7")
@pytest.mark.parametrize("spelling", refusals(list(SETS)))
def test_refused_assignment_changes_no_values(device, spelling, run):
    x = leaf(device)
    with pytest.raises(RuntimeError):
        run(SETS[spelling][0], x)
    assert_values(x, [1.0, 2.0, 3.0], f"x after refused {spelling}")


# > INDEX-94 (until 2.11): Inside a compiled function, an assignment of a Python number through an index (`x[0] = 5.0`,
# > `x[mask] = 5.0`, `x[idx] = 5.0`: the members of `INDEX_ASSIGNMENTS` that assign a number) to a leaf that requires
# > grad, with grad mode enabled, is not refused: no error is raised, `x` stays a leaf that requires grad with no
# > `grad_fn`, and `x._version` is 1. Layer: AOTAutograd.
@pytest.mark.clause("INDEX-94")
@pytest.mark.parametrize("spelling", NUMBER_SPELLINGS)
def test_compiled_number_assignment_to_leaf_accepted(device, spelling, run):
    x = leaf(device)
    run(SETS[spelling][0], x)
    assert (x.is_leaf, x.requires_grad, x.grad_fn, x._version) == (True, True, None, 1)


# > INDEX-95 (until 2.11): In the case of INDEX-94 the number is written: the values of `x` afterwards are those INDEX-9
# > gives for the same assignment. Layer: AOTAutograd.
@pytest.mark.clause("INDEX-95")
@pytest.mark.parametrize("spelling", NUMBER_SPELLINGS)
def test_compiled_number_assignment_to_leaf_writes(device, spelling, run):
    x = leaf(device)
    run(SETS[spelling][0], x)
    assert_values(x, SETS[spelling][1], f"x after compiled {spelling}")


# > INDEX-8: Inside `torch.no_grad()` every member of INDEX_ASSIGNMENTS is accepted on a leaf that requires grad:
# > `x` stays a leaf that requires grad, with no `grad_fn`, and `x._version` goes up by 1.
# > INDEX-91 (compile, since 2.4): Inside a function compiled with `aot_eager`, INDEX-8 and INDEX-10 hold, except that
# > `_version` goes up by 2. Layer: AOTAutograd. For INDEX-10 this holds from 2.5; before, the assignment counts once,
# > as eagerly (VERSION-96); before 2.4 so do those of INDEX-8 (VERSION-97). With inductor the counts are those of
# > VERSION-101 and VERSION-102.
@pytest.mark.parametrize("bump", by_mode("INDEX-8", "INDEX-91", 1, 2, as_eager="VERSION-97"))
@pytest.mark.parametrize("spelling", INDEX_ASSIGNMENTS.params())
def test_assignment_to_leaf_under_no_grad(device, spelling, bump, run):
    x = leaf(device)
    run(no_grad(spelling), x)
    assert (x.is_leaf, x.requires_grad, x.grad_fn, x._version) == (True, True, None, bump)


# > INDEX-9: The values written by an accepted assignment (under `torch.no_grad()`, on a tensor that does not require
# > grad, or on a non-leaf) are the values of `x` afterwards, at the positions the index selects, and the other
# > positions keep theirs.
@pytest.mark.clause("INDEX-9")
@pytest.mark.parametrize("spelling", list(SETS))
@pytest.mark.parametrize("kind", ["leaf under no_grad", "no grad required", "non-leaf"])
def test_assignment_values(device, spelling, kind, run):
    if kind == "leaf under no_grad":
        x = leaf(device)
        run(no_grad(SETS[spelling][0]), x)
    elif kind == "no grad required":
        x = torch.tensor([1.0, 2.0, 3.0], device=device)
        run(SETS[spelling][0], x)
    else:
        x = leaf(device).clone()
        run(SETS[spelling][0], x)
    assert_values(x, SETS[spelling][1], f"x after {spelling}")


# > INDEX-10: On a tensor that does not require grad, with grad mode enabled and a value that does not require grad,
# > every member of `INDEX_ASSIGNMENTS` is accepted; the tensor stays a leaf that does not require grad, with no
# > `grad_fn`, and `_version` goes up by 1.
# > VERSION-96 (compile, until 2.5): From 2.2 to 2.4, these compiled steps do what their eager clauses say, `_version`
# > included: it increases by 1 for each in-place update, where from 2.5 it increases by 2 (the compiled clause named
# > after each eager one): - `c.add_(1)` on `c = x.clone().detach()` or `c = x.detach().clone()`, then
# > `c.requires_grad_()`: CLONE-10 (CLONE-91); - `t.copy_(src)` from a `src` that requires grad into a float tensor and
# > into an int64 tensor: COPY-7 (COPY-91); - `x.copy_(src)` between the dtypes of COPY-11 (COPY-94); - `x.copy_(src)`
# > into a `meta` tensor from a `cpu` one, and the refused copy into a `cpu` tensor from a `meta` one: COPY-15
# > (COPY-96); - `d.add_(1)` on `d = x.data`, then `x.add_(1)` under `torch.no_grad()`: DATA-3 (DATA-90); - `d.add_(1)`
# > on `d = x.detach()`, `x` a leaf or a non-leaf, then `x.add_(1)` under `torch.no_grad()`: DETACH-3 (DETACH-90); - the
# > indexed assignments of INDEX-10 to a tensor that does not require grad (INDEX-91). The change in 2.5 is
# > pytorch/pytorch#131665 ("AOTDispatcher: properly bump version counter on input mutations in inference graphs"):
# > AOTAutograd increases the counter of an input the graph mutates itself, besides the in-place copy that applies the
# > mutation back. Layer: AOTAutograd. Run on 2.2.2, 2.3.1 and 2.4.1 (as said here) and 2.5.1 (as the compiled clauses
# > say), cpu and meta. On 2.1.2 the counts are those of 2.2 too, but a compiled `c.requires_grad_()` leaves `c` not
# > requiring grad (REQGRAD-90), so CLONE-10 does not hold compiled there.
@pytest.mark.parametrize(
    "bump",
    compiled_since("2.5", by_mode("INDEX-10", "INDEX-91", 1, 2, as_eager="VERSION-96"), ["INDEX-91"], "VERSION-96"),
)
@pytest.mark.parametrize("spelling", INDEX_ASSIGNMENTS.params())
def test_assignment_to_tensor_not_requiring_grad(device, spelling, bump, run):
    x = torch.tensor([1.0, 2.0, 3.0], device=device)
    run(spelling, x)
    assert (x.is_leaf, x.requires_grad, x.grad_fn, x._version) == (True, False, None, bump)


# > INDEX-11: On a non-leaf that requires grad, every member of `INDEX_ASSIGNMENTS` is accepted with grad mode enabled:
# > the tensor stays a non-leaf that requires grad, its `grad_fn` is replaced by a new node, and `_version` goes up by
# > 1. The node is `CopySlices` for `x[0] = 5.0` and `x[1:] = t`, `CopyBackwards` for `x[...] = t`, and
# > `IndexPutBackward0` for a mask or an index tensor with a tensor value (`x[mask] = t`, `x[idx] = t`).
GRAD_FN = {
    "x[0] = 5.0": "CopySlices",
    "x[1:] = t": "CopySlices",
    "x[...] = t": "CopyBackwards",
    "x[mask] = t": "IndexPutBackward0",
    "x[idx] = t": "IndexPutBackward0",
}


def _non_leaf_after(device, spelling, run):
    a = leaf(device)
    x = a * 2
    old = x.grad_fn
    run(SETS[spelling][0], x)
    assert (x.is_leaf, x.requires_grad, x._version) == (False, True, 1)
    assert x.grad_fn is not old
    return type(x.grad_fn).__name__


# > INDEX-92: Inside a compiled function, INDEX-11 holds, except that the new `grad_fn` is `CopyBackwards` for every
# > member of INDEX_ASSIGNMENTS.
COMPILED_GRAD_FN = dict.fromkeys(INDEX_ASSIGNMENTS.ids(), "CopyBackwards")


@pytest.mark.parametrize("names", by_mode("INDEX-11", "INDEX-92", GRAD_FN, COMPILED_GRAD_FN))
@pytest.mark.parametrize("spelling", INDEX_ASSIGNMENTS.params())
def test_assignment_to_non_leaf_is_recorded(device, spelling, names, run):
    name = _non_leaf_after(device, SPELLING[spelling], run)
    if SPELLING[spelling] in names:
        assert name == names[SPELLING[spelling]]


# > INDEX-12 (until 2.9): On a non-leaf, `x[:] = t` gives `grad_fn` `CopySlices`.
@pytest.mark.clause("INDEX-12")
def test_full_slice_grad_fn_before_2_9(device):
    assert _non_leaf_after(device, "x[:] = t", call) == "CopySlices"


# > INDEX-13 (since 2.9): On a non-leaf, `x[:] = t` gives `grad_fn` `CopyBackwards`.
@pytest.mark.clause("INDEX-13")
def test_full_slice_grad_fn_since_2_9(device):
    assert _non_leaf_after(device, "x[:] = t", call) == "CopyBackwards"


# > INDEX-14 (until 2.15): On a non-leaf, `x[mask] = 5.0` and `x[idx] = 5.0` (a Python number as value) give `grad_fn`
# > `IndexPutBackward0`.
@pytest.mark.clause("INDEX-14")
@pytest.mark.parametrize("spelling", ["x[mask] = 5.0", "x[idx] = 5.0"])
def test_number_into_advanced_index_grad_fn_before_2_15(device, spelling):
    assert _non_leaf_after(device, spelling, call) == "IndexPutBackward0"


# > INDEX-15 (since 2.15): On a non-leaf, `x[mask] = 5.0` gives `grad_fn` `MaskedFillBackward0` and `x[idx] = 5.0` gives
# > `IndexFillBackward0`.
@pytest.mark.clause("INDEX-15")
@pytest.mark.parametrize("spelling", ["x[mask] = 5.0", "x[idx] = 5.0"])
def test_number_into_advanced_index_grad_fn_since_2_15(device, spelling):
    expected = {"x[mask] = 5.0": "MaskedFillBackward0", "x[idx] = 5.0": "IndexFillBackward0"}[spelling]
    assert _non_leaf_after(device, spelling, call) == expected


# > INDEX-16: The gradient that flows back through an assignment (each member of INDEX_ASSIGNMENTS) to the tensor
# > assigned into is zero at the overwritten positions and unchanged at the others.
@pytest.mark.clause("INDEX-16")
@pytest.mark.parametrize("spelling", list(SETS))
def test_gradient_to_overwritten_tensor(device, spelling, run):
    a = leaf(device)
    x = a * 2
    run(SETS[spelling][0], x)
    (x * torch.tensor(W, device=device)).sum().backward()
    assert_values(a.grad, SETS[spelling][2], f"a.grad through {spelling} (d(2a)/da = 2, times W)")


# > INDEX-17: When the assigned value requires grad, it receives the gradient of the positions it was written to; a
# > value broadcast to several positions (a 0-d tensor through a mask or an index tensor) receives their sum: with the
# > loss `(x * [1, 10, 100]).sum()`, `x[1:] = v` gives `v.grad == [10, 100]` and `x[mask] = v` with the mask
# > `[True, False, True]` and a 0-d `v` gives `v.grad == 101`.
VALUE_CASES = {  # spelling -> (value, gradient of the value)
    "x[:] = v": ([7.0, 8.0, 9.0], [1.0, 10.0, 100.0]),
    "x[...] = v": ([7.0, 8.0, 9.0], [1.0, 10.0, 100.0]),
    "x[0] = v": (5.0, 1.0),
    "x[1:] = v": ([8.0, 9.0], [10.0, 100.0]),
    "x[mask] = v": ([5.0, 6.0], [1.0, 100.0]),
    "x[mask] = v (0-d)": (5.0, 101.0),
    "x[idx] = v": ([5.0, 6.0], [1.0, 100.0]),
    "x[idx] = v (0-d)": (5.0, 101.0),
}
# Compiled on 2.2 and 2.3 these lose the value's gradient (INDEX-99); the mask spellings do not, nor does 2.1.
GRADIENT_LOST_ON_2_2_AND_2_3 = [s for s in VALUE_CASES if not s.startswith("x[mask]")]
VALUE_SPELLINGS = compiled_since("2.4", list(VALUE_CASES), GRADIENT_LOST_ON_2_2_AND_2_3, "INDEX-99", also_on="2.1")


def _assign_value(x, spelling, v):
    if spelling == "x[:] = v":
        x[:] = v
    elif spelling == "x[...] = v":
        x[...] = v
    elif spelling == "x[0] = v":
        x[0] = v
    elif spelling == "x[1:] = v":
        x[1:] = v
    elif spelling.startswith("x[mask]"):
        x[mask(x)] = v
    else:
        x[idx(x)] = v


def _assigned_value_requiring_grad(device, spelling, run, into):
    """``x`` (a non-leaf requiring grad, or a plain tensor) after the compiled or eager assignment of ``v``."""
    value, _ = VALUE_CASES[spelling]
    v = torch.tensor(value, device=device, requires_grad=True)
    x = leaf(device) * 2 if into == "non-leaf" else torch.zeros(3, device=device)
    run(_assign_value, x, spelling, v)
    return x, v


def _backward_through(x):
    (x * torch.tensor(W, device=x.device)).sum().backward()


@pytest.mark.clause("INDEX-17")
@pytest.mark.parametrize("spelling", VALUE_SPELLINGS)
def test_gradient_to_assigned_value(device, spelling, run):
    x, v = _assigned_value_requiring_grad(device, spelling, run, into="non-leaf")
    _backward_through(x)
    assert_values(v.grad, VALUE_CASES[spelling][1], f"v.grad through {spelling}")


# > INDEX-18: Assigning a value that requires grad into a tensor that does not require grad is accepted with grad mode
# > enabled and makes that tensor a non-leaf that requires grad, with a `grad_fn`; `_version` goes up by 1.
@pytest.mark.clause("INDEX-18")
@pytest.mark.parametrize("spelling", VALUE_SPELLINGS)
def test_value_requiring_grad_into_plain_tensor(device, spelling, run):
    x, _ = _assigned_value_requiring_grad(device, spelling, run, into="plain")
    assert (x.is_leaf, x.requires_grad, x._version) == (False, True, 1)
    assert x.grad_fn is not None


@pytest.mark.clause("INDEX-19")
@pytest.mark.parametrize("spelling", VALUE_SPELLINGS)
def test_value_requiring_grad_into_plain_tensor_gradient(device, spelling, run):
    x, v = _assigned_value_requiring_grad(device, spelling, run, into="plain")
    _backward_through(x)
    assert_values(v.grad, VALUE_CASES[spelling][1], f"v.grad through {spelling}")


# > INDEX-99 (compile, 2.2 to 2.3): Inside a compiled function, on 2.2 and 2.3, assigning a value `v` that requires grad
# > with grad mode enabled (`x[:] = v`, `x[...] = v`, `x[0] = v`, `x[1:] = v`, `x[idx] = v` with `v` of one or of
# > several elements; not `x[mask] = v`, which holds as in eager code) loses the gradient of `v`, silently: into a
# > tensor that does not require grad, the values are written and `x._version` is 1, but `x` stays a leaf that does not
# > require grad, with no `grad_fn` (not the non-leaf of INDEX-18); into a non-leaf that requires grad, `backward()`
# > leaves `v.grad` `None` (not the gradient of INDEX-17). On 2.1 and from 2.4 INDEX-17 to INDEX-19 hold compiled.
@pytest.mark.clause("INDEX-99")
@pytest.mark.parametrize("spelling", GRADIENT_LOST_ON_2_2_AND_2_3)
def test_compiled_value_requiring_grad_into_plain_tensor_2_2_to_2_3(device, spelling, run):
    x, _ = _assigned_value_requiring_grad(device, spelling, run, into="plain")
    assert (x.is_leaf, x.requires_grad, x.grad_fn, x._version) == (True, False, None, 1)


@pytest.mark.clause("INDEX-99")
@pytest.mark.parametrize("spelling", GRADIENT_LOST_ON_2_2_AND_2_3)
def test_compiled_gradient_to_assigned_value_2_2_to_2_3(device, spelling, run):
    x, v = _assigned_value_requiring_grad(device, spelling, run, into="non-leaf")
    _backward_through(x)
    assert v.grad is None


# > INDEX-20: An assignment (any member of `INDEX_ASSIGNMENTS`) bumps the version like any in-place operation (inplace),
# > so assigning into a tensor that a graph saved for backward (a non-leaf with grad mode on, or a leaf under
# > `torch.no_grad()`) makes that `backward()` raise `RuntimeError` whose message contains "one of the variables needed
# > for gradient computation has been modified by an inplace operation".
@pytest.mark.clause("INDEX-20")
@pytest.mark.parametrize("spelling", INDEX_ASSIGNMENTS.params())
@pytest.mark.parametrize("kind", ["non-leaf", "leaf under no_grad"])
def test_assignment_into_saved_tensor_breaks_backward(device, spelling, kind, run):
    if kind == "non-leaf":
        x = leaf(device).clone()
        loss = (x * x).sum()
        run(spelling, x)
    else:
        x = leaf(device)
        loss = (x * x).sum()
        run(no_grad(spelling), x)
    assert x._version >= 1
    with raises(RuntimeError, SAVED_MODIFIED):
        loss.backward()


WHERE = {  # spelling -> (value v or None, result, grad_fn name, values of the result, gradient of v)
    "torch.where(mask, v, x)": (
        lambda x: make_leaf(x.device, (10.0, 20.0, 30.0)),
        lambda x, v: torch.where(mask(x), v, x),
        "WhereBackward0",
        [10.0, 2.0, 30.0],
        [1.0, 0.0, 100.0],
    ),
    "torch.where(mask, v0, x) (0-d v0)": (
        lambda x: torch.tensor(7.0, device=x.device, requires_grad=True),
        lambda x, v: torch.where(mask(x), v, x),
        "WhereBackward0",
        [7.0, 2.0, 7.0],
        101.0,
    ),
    "torch.where(mask, 5.0, x)": (
        None,
        lambda x, v: torch.where(mask(x), 5.0, x),
        "WhereBackward0",
        [5.0, 2.0, 5.0],
        None,
    ),
    "x.masked_fill(mask, 5.0)": (
        None,
        lambda x, v: x.masked_fill(mask(x), 5.0),
        "MaskedFillBackward0",
        [5.0, 2.0, 5.0],
        None,
    ),
}


def _where(device, spelling, run):
    x = leaf(device)
    make_v, compute, *_ = WHERE[spelling]
    v = make_v(x) if make_v else None
    return x, v, run(compute, x, v)


# > INDEX-60: With grad mode enabled, `torch.where(mask, v, x)` (where `v` is a tensor of the shape of `x`, a
# > 0-dimensional tensor, or a Python number) and `x.masked_fill(mask, 5.0)`, for a leaf `x` that requires grad, raise
# > no error and leave `x` as it was (a leaf that requires grad, no `grad_fn`, the same `_version`); the result is a new
# > tensor that shares storage with neither `x` nor `v`, is not a leaf, requires grad, and has `grad_fn`
# > `WhereBackward0` (for `torch.where`) or `MaskedFillBackward0` (for `masked_fill`).
# > INDEX-93: Inside a compiled function, INDEX-60 holds, except that the result's `grad_fn` is
# > `CompiledFunctionBackward`.
@pytest.mark.parametrize("grad_fn", by_mode("INDEX-60", "INDEX-93", None, "CompiledFunctionBackward"))
@pytest.mark.parametrize("spelling", list(WHERE))
def test_where_replaces_masked_assignment(device, spelling, grad_fn, run):
    x, v, y = _where(device, spelling, run)
    assert (x.is_leaf, x.requires_grad, x.grad_fn, x._version) == (True, True, None, 0)
    assert not same_storage(y, x) and (v is None or not same_storage(y, v))
    assert (y.is_leaf, y.requires_grad, type(y.grad_fn).__name__) == (False, True, grad_fn or WHERE[spelling][2])


# > INDEX-98 (compile, meta, 2.2-2.4): On the `meta` device, from 2.2 to 2.4, a compiled `torch.where(mask, 5.0, x)` (a
# > Python number as the value), for a leaf `x` that requires grad, returns a leaf that does not require grad, with no
# > `grad_fn`; `x` is left as it was. On 2.4 the other spellings of INDEX-60 do what INDEX-93 says, and on `cpu` this
# > one does too. Layer: AOTAutograd (with Dynamo alone, `backend="eager"`, the result requires grad, `grad_fn`
# > `WhereBackward0`). Run on 2.2.2, 2.3.1 and 2.4.1 (as said here) and on 2.1.2 and 2.5.1, where the result requires
# > grad; in compile mode on `meta` the tests of that spelling are `not-applicable` on 2.2-2.4, naming this clause.
@pytest.mark.clause("INDEX-98")
def test_compiled_where_with_a_number_on_meta_before_2_5(device, run):
    x, _, y = _where(device, "torch.where(mask, 5.0, x)", run)
    assert (x.is_leaf, x.requires_grad, x.grad_fn, x._version) == (True, True, None, 0)
    assert (y.is_leaf, y.requires_grad, y.grad_fn) == (True, False, None)


# > INDEX-61: The result holds `v` where `mask` is True and `x` elsewhere, and the gradient is split by the mask: with
# > `x = [1, 2, 3]`, the mask `[True, False, True]` and the loss `(result * [1, 10, 100]).sum()`, `x.grad` is
# > `[0, 10, 0]` for each spelling of INDEX-60; a `v` that requires grad receives `[1, 0, 100]`, or `101` when it is
# > 0-dimensional (the sum over the positions it fills).
@pytest.mark.clause("INDEX-61")
@pytest.mark.parametrize("spelling", list(WHERE))
def test_where_gradient_follows_the_mask(device, spelling, run):
    x, v, y = _where(device, spelling, run)
    *_, values, v_grad = WHERE[spelling]
    assert_values(y, values, f"{spelling}")
    (y * t(x, 1.0, 10.0, 100.0)).sum().backward()
    assert_values(x.grad, [0.0, 10.0, 0.0], "x.grad")
    if v is not None:
        assert_values(v.grad, v_grad, "v.grad")


# Seeds, run as written (fixing only what stops them from running, as noted).


@pytest.mark.clause("INDEX-1", "INDEX-6")
def test_seed_en_correct_approach_slice_assign(device):
    # English seed, "Avoiding variable reassignment", the "Correct approach", verbatim (device added):
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    with raises(RuntimeError, LEAF):
        x[:] = torch.tensor([3.0, 4.0], device=device)  # "Modifies existing variable using slicing": it raises
    assert (x.is_leaf, x._version) == (True, 0)


@pytest.mark.clause("INDEX-7", "INDEX-9")
def test_seed_en_correct_approach_fixed(device):
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    with pytest.raises(RuntimeError):
        x[:] = torch.tensor([3.0, 4.0], device=device)
    assert_values(x, [1.0, 2.0], "x after the refused assignment")
    with torch.no_grad():  # the way that runs
        x[:] = torch.tensor([3.0, 4.0], device=device)
    assert_values(x, [3.0, 4.0], "x after the assignment under no_grad")


@pytest.mark.clause("INDEX-11", "INDEX-16")
@pytest.mark.only_devices("cpu")  # the seed snippet as written: values, on the default device
def test_seed_en_clone_then_slice_assign(device):
    # English seed, "Cloning the variable", verbatim (device added): it runs.
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = x.clone()
    y[:] = torch.tensor([3.0, 4.0], device=device)
    # "Backpropagation will still work on the original x": through y, x gets a zero gradient everywhere,
    # since every position of y was overwritten.
    assert (y.is_leaf, y.requires_grad, y._version) == (False, True, 1)
    y.sum().backward()
    assert_values(x.grad, [0.0, 0.0], "x.grad through the overwritten clone")
    assert_values(x, [1.0, 2.0], "x itself is unchanged")


# > INDEX-96 (until 2.9): Inside a compiled function, an assignment of a tensor through an index to a leaf that requires
# > grad, with grad mode enabled, is not refused: the members of `INDEX_ASSIGNMENTS` that assign a tensor (`x[:] = t`,
# > `x[...] = t`, `x[1:] = t`, `x[mask] = t`, `x[idx] = t`), and `x[:] = v`, `x[0] = v[0]` with a `v` that requires
# > grad. No error is raised, `x` stays a leaf that requires grad with no `grad_fn`, and `x._version` is 1: a gradient
# > never reaches `v`. (`x[mask] = v[:2]` with such a `v` is refused as eagerly, measured on 2.8.0.) Layer: AOTAutograd.
@pytest.mark.clause("INDEX-96")
@pytest.mark.parametrize("spelling", TENSOR_SPELLINGS + VALUE_INTO_LEAF_ACCEPTED)
def test_compiled_tensor_assignment_to_leaf_accepted(device, spelling, run):
    x = leaf(device)
    run(*_tensor_assignment(spelling, x))
    assert (x.is_leaf, x.requires_grad, x.grad_fn, x._version) == (True, True, None, 1)


# > INDEX-97 (until 2.9): In the case of INDEX-96 the tensor is written: the values of `x` afterwards are those INDEX-9
# > gives for the same assignment (for `v` = [5, 6, 7]: [5, 6, 7] and [5, 2, 3]). Layer: AOTAutograd.
@pytest.mark.clause("INDEX-97")
@pytest.mark.parametrize("spelling", TENSOR_SPELLINGS + VALUE_INTO_LEAF_ACCEPTED)
def test_compiled_tensor_assignment_to_leaf_writes(device, spelling, run):
    x = leaf(device)
    run(*_tensor_assignment(spelling, x))
    expected = SETS[spelling][1] if spelling in SETS else VALUE_WRITTEN[spelling]
    assert_values(x, expected, f"x after compiled {spelling}")


# The values of x = [1, 2, 3] after each of VALUE_INTO_LEAF with v = [5, 6, 7]
VALUE_WRITTEN = {"x[:] = v": [5.0, 6.0, 7.0], "x[0] = v": [5.0, 2.0, 3.0]}


def _tensor_assignment(spelling, x):
    """The step and its arguments: a member of INDEX_ASSIGNMENTS, or of VALUE_INTO_LEAF with a `v` requiring grad."""
    if spelling in SETS:
        return SETS[spelling][0], x
    return VALUE_INTO_LEAF[spelling], x, torch.tensor([5.0, 6.0, 7.0], device=x.device, requires_grad=True)
