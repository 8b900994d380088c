"""Conformance tests for spec/version_counter.md (the version counter and saved tensors).

Each test quotes the clause it proves.
"""

import copy

import pytest
import torch

try:
    import numpy
except ImportError:  # only the tests of VERSION-64 and VERSION-95 use it
    numpy = None

from conformance.harness.checks import SAVED_MODIFIED, assert_values, compiled_since, leaf, raises, same_storage
from conformance.harness.kinds import TENSOR_KINDS
from conformance.harness.populations import INPLACE_SPELLINGS, NON_VIEW_OPS, SAVES_INPUT, SAVES_OUTPUT, VIEW_OPS

VIEW_ID = {fn: mid for mid, fn in VIEW_OPS.members}

SECOND_TIME = "Trying to backward through the graph a second time"


def plain(device, values=(1.0, 2.0)):
    return torch.tensor(list(values), device=device)


NEW = {
    "torch.tensor(...)": lambda d: plain(d),
    "torch.tensor(..., requires_grad=True)": lambda d: leaf(d),
    "torch.zeros(2)": lambda d: torch.zeros(2, device=d),
    "torch.empty(2)": lambda d: torch.empty(2, device=d),
    "x * 2 (x requires grad)": lambda d: leaf(d) * 2,
    "x + 1 (x at version 2)": None,
    "x.clone() (x at version 2)": None,
}


def _bumped_twice(device):
    x = plain(device)
    x.add_(1)
    x.mul_(2)
    assert x._version >= 2
    return x


# > VERSION-1: A newly created tensor has `_version` 0: one made by a factory function (`torch.tensor`, `torch.zeros`,
# > `torch.empty`), with or without `requires_grad=True`, and the result of every operation of the population
# > `NON_VIEW_OPS` (listed below), `Tensor.clone` included, applied to normal tensors (not inference tensors), whatever
# > the version of its inputs. Not so for a result computed from an inference tensor, nor for `copy.deepcopy(t)`
# > (VERSION-45).
@pytest.mark.clause("VERSION-1")
@pytest.mark.parametrize("how", list(NEW))
def test_new_tensor_starts_at_version_0(device, how):
    if how == "x + 1 (x at version 2)":
        t = _bumped_twice(device) + 1
    elif how == "x.clone() (x at version 2)":
        t = _bumped_twice(device).clone()
    else:
        t = NEW[how](device)
    assert t._version == 0


@pytest.mark.clause("VERSION-1")
@pytest.mark.parametrize("op", NON_VIEW_OPS.params())
@pytest.mark.parametrize("requires_grad", [False, True])
def test_results_of_non_view_ops_start_at_version_0(device, op, requires_grad):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    x.add_(1)
    x.mul_(2)
    x.requires_grad_(requires_grad)
    assert op(x)._version == 0


# > VERSION-2: Every in-place update by a member of the population INPLACE_SPELLINGS increases `_version`, also
# > one that leaves the values as they were (`t.add_(0)`), and each of `k` successive updates increases it again.
def _check_each_update_increases_the_version(device, update, run):
    t = plain(device)
    step = run.function(update)
    for _ in range(3):
        before = t._version
        step(t)
        assert t._version > before


@pytest.mark.clause("VERSION-2")
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
def test_each_update_increases_the_version(device, update, run):
    _check_each_update_increases_the_version(device, update, run)


# > VERSION-90 (compile; not on meta): Run as one compiled step (`torch.compile(update, backend="aot_eager")`, called
# > `k` times on the same tensor), every member of the population `INPLACE_SPELLINGS` increases `_version` at each call,
# > as in VERSION-2. The compiled step mutates its input in the graph and AOTAutograd applies the mutation back to the
# > input with a counted in-place copy (issue pytorch/pytorch#135441, where a mutation the tracer missed was neither
# > applied nor counted). On meta see VERSION-91.
@pytest.mark.clause("VERSION-90")
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
def test_each_compiled_update_increases_the_version(device, update, run):
    _check_each_update_increases_the_version(device, update, run)


# > VERSION-91 (UNSPECIFIED; compile, meta): What a compiled step of a member of `INPLACE_SPELLINGS` does to a meta
# > tensor. Recorded per member: the increase of `_version`, or the exception. (Observed: every member increases it on
# > every release run, by 2; `t[[0]] = 5` cannot be compiled on `meta` before 2.15, COMPILE-9.)
@pytest.mark.clause("VERSION-91")
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
def test_compiled_update_on_meta(device, update, run, observe):
    t = plain(device)
    try:
        run(update, t)
    except Exception as exc:  # noqa: BLE001 (recorded, not asserted)
        observe("exception", f"{type(exc).__module__}.{type(exc).__name__}")
    else:
        observe("increase of _version", t._version)


# > VERSION-40 (OBSERVED: version-count; eager): One update by a member of INPLACE_SPELLINGS increases `_version` by
# > exactly 1.
@pytest.mark.clause("VERSION-40")
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
def test_one_update_adds_one(device, update, run):
    t = plain(device)
    run(update, t)
    assert t._version == 1


# > VERSION-100 (UNSPECIFIED; compile): By how much one update of INPLACE_SPELLINGS, run as a compiled step, increases
# > `_version`. Recorded for every member.
@pytest.mark.clause("VERSION-100")
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
def test_size_of_the_compiled_increase(device, update, observe, run):
    t = plain(device)
    try:
        run(update, t)
    except Exception as exc:  # noqa: BLE001 (compiled on meta, some releases: VERSION-91)
        observe("exception", f"{type(exc).__module__}.{type(exc).__name__}")
        return
    observe("increase of _version by one update", t._version)


RESIZES = {  # spelling -> whether the shape changes (t has shape (2,))
    "t.resize_(3)": (lambda t: t.resize_(3), True),
    "t.resize_(1)": (lambda t: t.resize_(1), True),
    "t.resize_(2, 1)": (lambda t: t.resize_(2, 1), True),
    "t.resize_as_(torch.zeros(3))": (lambda t: t.resize_as_(torch.zeros(3, device=t.device)), True),
    "t.resize_(2)": (lambda t: t.resize_(2), False),
    "t.resize_as_(torch.zeros(2))": (lambda t: t.resize_as_(torch.zeros(2, device=t.device)), False),
}
NEW_SHAPE = [k for k, (_, changes) in RESIZES.items() if changes]
SAME_SHAPE = [k for k, (_, changes) in RESIZES.items() if not changes]


# > VERSION-41 (until 2.1): `t.resize_(shape)` and `t.resize_as_(o)` leave `t._version` unchanged, also when the
# > shape changes.
@pytest.mark.clause("VERSION-41")
@pytest.mark.parametrize("spelling", NEW_SHAPE)
def test_resize_to_new_shape_keeps_version_before_2_1(device, spelling, run):
    t = plain(device)
    run(RESIZES[spelling][0], t)
    assert t.shape != (2,)
    assert t._version == 0


# > VERSION-42 (since 2.1): `t.resize_(shape)` and `t.resize_as_(o)` to a shape other than that of `t` (`t.resize_(3)`,
# > `t.resize_(1)`, `t.resize_(2, 1)`, `t.resize_as_(torch.zeros(3))` on a tensor of shape `(2,)`) increase
# > `t._version`.
@pytest.mark.clause("VERSION-42")
@pytest.mark.parametrize("spelling", NEW_SHAPE)
def test_resize_to_new_shape_increases_version_since_2_1(device, spelling, run):
    t = plain(device)
    run(RESIZES[spelling][0], t)
    assert t.shape != (2,)
    assert t._version > 0


# > VERSION-43 (UNSPECIFIED): Whether `t.resize_(shape)` or `t.resize_as_(o)` to the shape `t` already has
# > increases `_version`.
@pytest.mark.clause("VERSION-43")
@pytest.mark.parametrize("spelling", SAME_SHAPE)
def test_resize_to_same_shape(device, spelling, observe, run):
    t = plain(device)
    run(RESIZES[spelling][0], t)
    observe("_version after resizing to the same shape", t._version)


APPLY = {
    "t.apply_(f)": lambda t: t.apply_(lambda v: v * 10),
    "t.map_(o, f)": lambda t: t.map_(torch.ones(2), lambda v, _: v * 10),
}


# > VERSION-44: `t.apply_(f)` and `t.map_(o, f)` (cpu tensors only) write the values computed by `f` into `t` and leave
# > `t._version` unchanged, so a graph that saved `t` (as `x * t` does when `x` requires grad; `apply_` refuses a `t`
# > that requires grad) backpropagates afterwards without error, from the new values: for `(x * t).sum()` with
# > `t = [1, 2]`, after `t.apply_(lambda v: v * 10)` the gradient of `x` is `[10, 20]` (the correct one is `[1, 2]`).
@pytest.mark.clause("VERSION-44")
@pytest.mark.parametrize("spelling", list(APPLY))
def test_apply_and_map_are_not_counted(device, spelling, run):
    x = leaf(device)
    t = plain(device)
    loss = (x * t).sum()
    run(APPLY[spelling], t)
    assert_values(t, [10.0, 20.0], f"t after {spelling}")
    assert t._version == 0
    loss.backward()
    assert_values(x.grad, [10.0, 20.0], "x.grad (correct: [1, 2])")


def _inference(device):
    with torch.inference_mode():
        return torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device) * 1


# > VERSION-45 (UNSPECIFIED): The `_version` of a new tensor made by `copy.deepcopy(t)`, or computed outside inference
# > mode by an operation of `NON_VIEW_OPS` from an inference tensor (the results that are normal tensors, INFER-12).
# > Recorded for each. (Observed on 2.0.1, 2.6.0, 2.13.0 and 2.14.1: 1 after `copy.deepcopy(t)` (it calls `set_`), and
# > from an inference tensor 0, 1 or 2 depending on the operation: 1 after `clone()`, `to(torch.float64)`, `sum()`,
# > `abs()`, 2 after `mean(0)`, 0 after `x * 2` and `sin()`.)
@pytest.mark.clause("VERSION-45")
@pytest.mark.parametrize("op", NON_VIEW_OPS.params())
def test_version_of_results_from_inference_tensor(device, op, observe):
    r = op(_inference(device))
    assert r.is_inference() is False
    observe("_version", r._version)


@pytest.mark.clause("VERSION-45")
@pytest.mark.parametrize("kind", ["plain", "leaf that requires grad"])
def test_version_of_deepcopy(device, kind, observe):
    t = leaf(device) if kind == "leaf that requires grad" else plain(device)
    observe("_version of copy.deepcopy(t)", copy.deepcopy(t)._version)


# > VERSION-3: Operations that do not write into a tensor leave its `_version` as it was: reading it, an
# > out-of-place operation on it, `clone()`, making a view of it, `requires_grad_()`; `torch.add(x, 1, out=o)`
# > increases the `_version` of `o` only.
def _non_writing(x, y, o):
    _ = x + 1, x * 2, x.sin(), x.sum(), x.clone(), x[0], x.view(2)
    x.requires_grad_()
    torch.add(y, 1, out=o)


@pytest.mark.clause("VERSION-3")
@pytest.mark.compiled_since("2.2", before="VERSION-98")  # x.requires_grad_() does not stick
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_non_writing_operations_keep_version(device, run):
    x = plain(device)
    x.add_(1)
    before = x._version
    _ = x.tolist() if device != "meta" else None
    y = plain(device)
    o = torch.empty(2, device=device)
    run(_non_writing, x, y, o)
    assert x.requires_grad
    assert x._version == before
    assert y._version == 0 and o._version > 0


# > VERSION-98 (compile, until 2.2): On 2.1, the compiled step of VERSION-3 (on a tensor `x` that does not require grad,
# > whose `_version` is 1: `x + 1`, `x * 2`, `x.sin()`, `x.sum()`, `x.clone()`, `x[0]`, `x.view(2)`, then
# > `x.requires_grad_()`, then `torch.add(y, 1, out=o)`) counts as VERSION-3 says: `x._version` stays 1, `y._version`
# > stays 0 and `o._version` increases; but `x.requires_grad_()` inside it leaves `x` not requiring grad, as REQGRAD-90
# > says of a compiled `requires_grad_()` on 2.1. Layer: AOTAutograd (with `backend="eager"` `x` requires grad
# > afterwards).
@pytest.mark.clause("VERSION-98")
def test_non_writing_operations_keep_version_compiled_on_2_1(device, run):
    x = plain(device)
    x.add_(1)
    before = x._version
    y = plain(device)
    o = torch.empty(2, device=device)
    run(_non_writing, x, y, o)
    assert not x.requires_grad
    assert x._version == before
    assert y._version == 0 and o._version > 0


def _add1(t):
    return t.add_(1)


def _mul2(t):
    return t.mul_(2)


VIEWS = {
    "x[0]": lambda x: x[0],
    "x[1:]": lambda x: x[1:],
    "x.view(2)": lambda x: x.view(2),
    "x.unsqueeze(0)": lambda x: x.unsqueeze(0),
    "x.reshape(2)": lambda x: x.reshape(2),
    "x[0:][0:]": lambda x: x[0:][0:],
}


# > VERSION-4: A view (made by any operation of the population `VIEW_OPS`, listed below, of a contiguous `x` of shape
# > (2, 2); and `x[0]`, `x[1:]`, `x.view(2)`, `x.unsqueeze(0)`, `x.reshape(2)` of a contiguous `x` of shape (2,), and a
# > view of a view) shares one counter with its base and with every other view of that base (every other member of
# > `VIEW_OPS`): a view made after updates of the base reads the same `_version` as the base, and after an in-place
# > update of the base or through any of them all read the same, increased value. (An in-place update through
# > `x.expand(3, 2, 2)` is refused on cpu, as its elements overlap in memory.) (So `x[0].add_(1)` increases
# > `x._version`; compare INPLACE-10.)
def _check_views_share_the_counter(device, view, run):
    x = plain(device)
    x.add_(1)
    x.add_(1)
    v = VIEWS[view](x)
    other = x[0:1]
    assert x._version == v._version == other._version > 0
    for update, t in ((_mul2, v), (lambda t: t.zero_(), other), (_add1, x)):
        before = x._version
        run(update, t)
        assert x._version == v._version == other._version > before


@pytest.mark.clause("VERSION-4")
@pytest.mark.parametrize("view", list(VIEWS))
def test_views_share_the_counter(device, view, run):
    _check_views_share_the_counter(device, view, run)


# > VERSION-4: A view (made by any operation of the population `VIEW_OPS`, listed below, of a contiguous `x` of shape
# > (2, 2); and `x[0]`, `x[1:]`, `x.view(2)`, `x.unsqueeze(0)`, `x.reshape(2)` of a contiguous `x` of shape (2,), and a
# > view of a view) shares one counter with its base and with every other view of that base (every other member of
# > `VIEW_OPS`): a view made after updates of the base reads the same `_version` as the base, and after an in-place
# > update of the base or through any of them all read the same, increased value. (An in-place update through
# > `x.expand(3, 2, 2)` is refused on cpu, as its elements overlap in memory.) (So `x[0].add_(1)` increases
# > `x._version`; compare INPLACE-10.)
def _check_every_view_shares_the_counter(device, view, run, refused_on):
    x = torch.ones(2, 2, device=device)
    x.add_(1)
    x.add_(1)
    v = view(x)
    others = [fn(x) for _, fn in VIEW_OPS.available()]
    assert x._version == v._version > 0
    assert [o._version for o in others] == [x._version] * len(others)
    updates = [(_add1, x)]
    if VIEW_ID[view] == "x.expand(3, 2, 2)" and device in refused_on:
        with raises(RuntimeError, "more than one element of the written-to tensor refers to a single memory location"):
            run(_mul2, v)
    else:
        updates.append((_mul2, v))
    for update, t in updates:
        before = x._version
        run(update, t)
        assert x._version == v._version > before
        assert [o._version for o in others] == [x._version] * len(others)


@pytest.mark.clause("VERSION-4")
@pytest.mark.parametrize("view", VIEW_OPS.params())
def test_every_view_shares_the_counter(device, view, run):
    _check_every_view_shares_the_counter(device, view, run, refused_on=("cpu",))


# > VERSION-92 (compile, until 2.4): With each in-place update (of the base, or through a view) run as a compiled step,
# > VERSION-4 holds as stated, for the same views (every member of the population `VIEW_OPS`): on meta, the update
# > through `x.expand(3, 2, 2)` is accepted and counted.
@pytest.mark.clause("VERSION-92")
@pytest.mark.parametrize("view", list(VIEWS))
def test_views_share_the_counter_compiled_until_2_4(device, view, run):
    _check_views_share_the_counter(device, view, run)


@pytest.mark.clause("VERSION-92")
@pytest.mark.parametrize("view", VIEW_OPS.params())
def test_every_view_shares_the_counter_compiled_until_2_4(device, view, run):
    _check_every_view_shares_the_counter(device, view, run, refused_on=("cpu",))


# > VERSION-93 (compile, since 2.4): With each in-place update (of the base, or through a view) run as a compiled step,
# > VERSION-4 holds for the same views (every member of the population `VIEW_OPS`), except that the update through
# > `x.expand(3, 2, 2)` is refused on meta too: AOTAutograd, applying the mutation of the input back during tracing,
# > raises `torch._dynamo.exc.BackendCompilerFailed` (a `RuntimeError`) whose message contains "more than one element of
# > the written-to tensor refers to a single memory location", and no `_version` changes. Found by running 2.1.2 to
# > 2.4.1: accepted on 2.3.1, refused on 2.4.1.
@pytest.mark.clause("VERSION-93")
@pytest.mark.parametrize("view", list(VIEWS))
def test_views_share_the_counter_compiled_since_2_4(device, view, run):
    _check_views_share_the_counter(device, view, run)


@pytest.mark.clause("VERSION-93")
@pytest.mark.parametrize("view", VIEW_OPS.params())
def test_every_view_shares_the_counter_compiled_since_2_4(device, view, run):
    _check_every_view_shares_the_counter(device, view, run, refused_on=("cpu", "meta"))


# > VERSION-5: `_version` cannot be assigned: `x._version = n` raises `AttributeError` whose message
# > contains "'_version' of" and "is not writable".
@pytest.mark.clause("VERSION-5")
def test_version_is_read_only(device):
    x = plain(device)
    with pytest.raises(AttributeError) as info:
        x._version = 5
    assert "'_version' of" in str(info.value) and "is not writable" in str(info.value), str(info.value)
    assert x._version == 0


# > VERSION-5: `_version` cannot be assigned: `x._version = n` raises `AttributeError` whose message contains
# > "'_version' of" and "is not writable", for every kind of tensor of the population `TENSOR_KINDS` (listed below),
# > whose `_version` stays 0.
@pytest.mark.clause("VERSION-5")
@pytest.mark.parametrize("make", TENSOR_KINDS.params())
def test_version_of_every_kind_is_read_only(device, make):
    x = make(device)
    with pytest.raises(AttributeError) as info:
        x._version = 5
    assert "'_version' of" in str(info.value) and "is not writable" in str(info.value), str(info.value)
    assert x._version == 0


def _bump_under_no_grad(t):
    with torch.no_grad():
        t.add_(1)


# > VERSION-6: `x * y` (both tensors) saves `y` when `x` requires grad and `x` when `y` requires grad: updating
# > a saved input in place after the forward makes `backward()` raise `RuntimeError` whose message contains
# > "one of the variables needed for gradient computation has been modified by an inplace operation"; when `y`
# > does not require grad, `x` is not saved and updating it does not make `backward()` raise.
@pytest.mark.clause("VERSION-6")
@pytest.mark.parametrize(
    ("y_requires_grad", "modified", "raises_"),
    [(True, "x", True), (True, "y", True), (False, "y", True), (False, "x", False)],
)
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_mul_saves_the_other_input(device, y_requires_grad, modified, raises_, run):
    x = leaf(device)
    y = torch.tensor([3.0, 4.0], device=device, requires_grad=y_requires_grad)
    loss = (x * y).sum()
    run(_bump_under_no_grad, x if modified == "x" else y)
    if raises_:
        with raises(RuntimeError, SAVED_MODIFIED):
            loss.backward()
    else:
        loss.backward()
        assert x.grad is not None


NOTHING_SAVED = {
    "x + y": lambda x, y: x + y,
    "x - y": lambda x, y: x - y,
    "torch.add(x, y)": lambda x, y: torch.add(x, y),
    "x * 3": lambda x, y: x * 3 + y,
    "x / 2": lambda x, y: x / 2 + y,
}


# > VERSION-7: `x + y`, `x - y`, `torch.add(x, y)`, and `x * c`, `x / c` with a Python number `c` save no
# > input: updating `x` and `y` in place after the forward, and updating the result in place (`z.add_(1)`),
# > does not make `backward()` raise.
@pytest.mark.clause("VERSION-7")
@pytest.mark.parametrize("op", list(NOTHING_SAVED))
@pytest.mark.parametrize("modified", ["inputs", "output"])
def test_ops_that_save_nothing(device, op, modified, run):
    x, y = leaf(device), leaf(device, (3.0, 4.0))
    z = NOTHING_SAVED[op](x, y)
    if modified == "inputs":
        step = run.function(_bump_under_no_grad)
        step(x)
        step(y)
    else:
        run(_add1, z)
    z.sum().backward()
    assert x.grad is not None and y.grad is not None


def _mul10_under_no_grad(*tensors):
    with torch.no_grad():
        for t in tensors:
            t.mul_(10)


# > VERSION-10: The gradients are then those of the values at the time of the forward (they do not depend on the inputs'
# > values at all): for `(x + y).sum()` all ones for both, for `(x - y).sum()` ones and minus ones, for
# > `(x * 3 + y).sum()` threes and ones.
@pytest.mark.clause("VERSION-10")
@pytest.mark.parametrize(
    ("op", "gx", "gy"),
    [("x + y", [1.0, 1.0], [1.0, 1.0]), ("x - y", [1.0, 1.0], [-1.0, -1.0]), ("x * 3", [3.0, 3.0], [1.0, 1.0])],
)
def test_gradients_after_updating_unsaved_inputs(device, op, gx, gy, run):
    x, y = leaf(device), leaf(device, (3.0, 4.0))
    z = NOTHING_SAVED[op](x, y)
    run(_mul10_under_no_grad, x, y)
    z.sum().backward()
    assert_values(x.grad, gx, f"x.grad of ({op}).sum()")
    assert_values(y.grad, gy, f"y.grad of ({op}).sum()")


def _mul1_under_no_grad(out):
    with torch.no_grad():
        out.mul_(1)


OUTPUT_UPDATES = {"out.mul_(1) (recorded)": lambda out: out.mul_(1), "out.mul_(1) under no_grad": _mul1_under_no_grad}


def _modify_output(out, how, run):
    """Update `out` in place as `how` says; returns the tensor whose `backward()` goes through the graph of `out`."""
    final = out if how == "out.mul_(1) (recorded)" else out * 1  # under no_grad: change `out` behind a later node
    run(OUTPUT_UPDATES[how], out)
    return final


# > VERSION-8: Every operation of the population `SAVES_OUTPUT` (listed below: `exp`, `sigmoid`, `tanh`, `relu`, `sqrt`
# > and others) saves its result, not its input: updating the input in place after the forward does not make
# > `backward()` raise, and updating the result in place (recorded, or under `torch.no_grad()`) makes it raise the error
# > of VERSION-6.
@pytest.mark.clause("VERSION-8")
@pytest.mark.parametrize("op", SAVES_OUTPUT.params())
@pytest.mark.parametrize("how", ["input", "out.mul_(1) (recorded)", "out.mul_(1) under no_grad"])
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_ops_that_save_their_result(device, op, how, run):
    x = leaf(device)
    out = op(x)
    if how == "input":
        run(_bump_under_no_grad, x)
        out.sum().backward()
        assert x.grad is not None
    else:
        final = _modify_output(out, how, run)
        with raises(RuntimeError, SAVED_MODIFIED):
            final.sum().backward()


# > VERSION-9: Every operation of the population `SAVES_INPUT` (listed below: `x * x`, `sin`, `cos`, `log`, `pow(2)` and
# > others) saves its input, not its result: updating the input in place after the forward makes `backward()` raise the
# > error of VERSION-6, and updating the result in place does not.
@pytest.mark.clause("VERSION-9")
@pytest.mark.parametrize("op", SAVES_INPUT.params())
@pytest.mark.parametrize("how", ["input", "out.mul_(1) (recorded)", "out.mul_(1) under no_grad"])
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_ops_that_save_their_input(device, op, how, run):
    x = leaf(device)
    out = op(x)
    if how == "input":
        run(_bump_under_no_grad, x)
        with raises(RuntimeError, SAVED_MODIFIED):
            out.sum().backward()
    else:
        _modify_output(out, how, run).sum().backward()
        assert x.grad is not None


# > VERSION-11: After `backward()` without `retain_graph=True` (or `torch.autograd.grad` without it), a second
# > `backward()` through a graph whose nodes saved tensors (`(x * x).sum()`, `x.exp().sum()`, `x.sin().sum()`) raises
# > `RuntimeError` whose message contains "Trying to backward through the graph a second time".
@pytest.mark.clause("VERSION-11")
@pytest.mark.parametrize("op", ["(x * x).sum()", "x.exp().sum()", "x.sin().sum()"])
@pytest.mark.parametrize("first", ["loss.backward()", "torch.autograd.grad(loss, x)"])
def test_second_backward_raises(device, op, first):
    x = leaf(device)
    loss = {
        "(x * x).sum()": lambda: (x * x).sum(),
        "x.exp().sum()": lambda: x.exp().sum(),
        "x.sin().sum()": lambda: x.sin().sum(),
    }[op]()
    if first == "loss.backward()":
        loss.backward()
    else:
        torch.autograd.grad(loss, x)
    with raises(RuntimeError, SECOND_TIME):
        loss.backward()


# > VERSION-12: With `retain_graph=True` the next `backward()` through the same graph is accepted; one without it after
# > that frees the graph, and a further one raises the error of VERSION-11.
@pytest.mark.clause("VERSION-12")
def test_retain_graph_allows_one_more(device):
    x = leaf(device)
    loss = (x * x).sum()
    loss.backward(retain_graph=True)
    loss.backward(retain_graph=True)
    loss.backward()
    with raises(RuntimeError, SECOND_TIME):
        loss.backward()


# > VERSION-13: Gradients of repeated `backward()` calls accumulate: after two `backward()` of
# > `(x * x).sum()` at `x = [1, 2]` (the first with `retain_graph=True`) `x.grad` is `[4, 8]`.
@pytest.mark.clause("VERSION-13")
def test_retain_graph_accumulates(device):
    x = leaf(device)
    loss = (x * x).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    assert_values(x.grad, [4.0, 8.0], "x.grad after two backward() of (x * x).sum()")


# > VERSION-14: A graph of additions and subtractions of tensors and numbers (`(x + x).sum()`, `(x - y).sum()`,
# > `(x + 3).sum()`) can be differentiated again without `retain_graph=True`: the second `backward()` raises no
# > error.
@pytest.mark.clause("VERSION-14")
@pytest.mark.parametrize("op", ["(x + x).sum()", "(x - y).sum()", "(x + 3).sum()"])
def test_second_backward_without_saved_tensors(device, op):
    x, y = leaf(device), leaf(device, (3.0, 4.0))
    loss = {
        "(x + x).sum()": lambda: (x + x).sum(),
        "(x - y).sum()": lambda: (x - y).sum(),
        "(x + 3).sum()": lambda: (x + 3).sum(),
    }[op]()
    loss.backward()
    loss.backward()
    assert x.grad is not None


PACKED = {
    "x * y": (lambda x, y: x * y, 2),
    "x * x": (lambda x, y: x * x, 2),
    "x.exp()": (lambda x, y: x.exp(), 1),
    "x.sin()": (lambda x, y: x.sin(), 1),
    "x + y": (lambda x, y: x + y, 0),
    "x * 3": (lambda x, y: x * 3, 0),
}


# > VERSION-15: Inside `torch.autograd.graph.saved_tensors_hooks(pack, unpack)`, `pack` is called once for each
# > tensor an operation saves, during the forward (`x * y` with both requiring grad: 2 calls; `x * x`: 2;
# > `x.exp()`: 1; `x.sin()`: 1; `x + y` and `x * 3`: none), and `unpack` once for each of them during
# > `backward()`.
@pytest.mark.clause("VERSION-15")
@pytest.mark.parametrize("op", list(PACKED))
def test_saved_tensor_hooks_calls(device, op):
    calls = []

    def pack(t):
        calls.append("pack")
        return t

    def unpack(t):
        calls.append("unpack")
        return t

    f, n = PACKED[op]
    x, y = leaf(device), leaf(device, (3.0, 4.0))
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = f(x, y).sum()
    assert calls == ["pack"] * n
    out.backward()
    assert calls == ["pack"] * n + ["unpack"] * n


# > VERSION-16: When `pack` returns a clone (`pack = lambda t: t.clone()`, `unpack = lambda t: t`), updating
# > the saved input in place after the forward does not make `backward()` raise.
@pytest.mark.clause("VERSION-16")
@pytest.mark.parametrize("op", ["(x * x).sum()", "x.sin().sum()"])
def test_packing_a_clone_makes_update_harmless(device, op, run):
    x = leaf(device)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        loss = (x * x).sum() if op == "(x * x).sum()" else x.sin().sum()
    run(_mul10_under_no_grad, x)
    loss.backward()
    assert x.grad is not None


# > VERSION-46: With identity hooks (`pack = lambda t: t`, `unpack = lambda t: t`) around the forward, the
# > version check is off for the tensors they saved: updating a saved tensor in place before `backward()`
# > (`with torch.no_grad(): x.mul_(10)` after `(x * x).sum()` at `x = [1, 2]`) makes `backward()` raise no
# > error, and it silently uses the new values: the gradient is `[20, 40]` instead of `[2, 4]`.
@pytest.mark.clause("VERSION-46")
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_identity_hooks_turn_off_the_version_check(device, run):
    x = leaf(device)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        loss = (x * x).sum()
    run(_mul10_under_no_grad, x)
    assert x._version > 0  # by how much: VERSION-40 (1 eager; 2 compiled on some releases)
    loss.backward()
    assert_values(x.grad, [20.0, 40.0], "x.grad from the updated x (x at forward time was [1, 2])")


# > VERSION-17: The gradient is then that of the values at the time of the forward: `[2, 4]` for
# > `(x * x).sum()` at `x = [1, 2]` after `x.mul_(10)`.
@pytest.mark.clause("VERSION-17")
def test_packing_a_clone_gives_forward_time_gradient(device, run):
    x = leaf(device)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        loss = (x * x).sum()
    run(_mul10_under_no_grad, x)
    loss.backward()
    assert_values(x.grad, [2.0, 4.0], "x.grad from the packed clone (x at forward time was [1, 2])")


# > VERSION-18: That sentence does not hold for in-place functions applied through `.data`: with `x = [0, 0]` and
# > `o = x.exp()`, `o.data.zero_()` raises no error and the gradient of `o.sum()` is `[0, 0]` instead of `[1, 1]`;
# > `x.data.mul_(10)` after `(x * x).sum()` at `x = [1, 2]` gives `[20, 40]` instead of `[2, 4]` (DATA-6).
def _write_through_data(device, case, run):
    """(x, the written tensor, its loss) after the `.data` write of VERSION-18's `case`."""
    if case == "exp result":
        x = leaf(device, (0.0, 0.0))
        o = x.exp()
        run(lambda o: o.data.zero_(), o)
        return x, o, o.sum()
    x = leaf(device)
    loss = (x * x).sum()
    run(lambda x: x.data.mul_(10), x)
    return x, x, loss


@pytest.mark.clause("VERSION-18")
@pytest.mark.parametrize("case", ["exp result", "mul input"])
def test_docs_sentence_counterexample(device, case, run):
    x, _, loss = _write_through_data(device, case, run)
    loss.backward()
    if case == "exp result":
        assert_values(x.grad, [0.0, 0.0], "x.grad (correct: exp(0) = [1, 1])")
    else:
        assert_values(x.grad, [20.0, 40.0], "x.grad (correct: [2, 4])")


# > VERSION-94 (compile): A write through `.data` run as a compiled step (`o.data.zero_()` on `o = x.exp()`,
# > `x.data.mul_(10)` on a leaf `x`) is counted: the `_version` of the written tensor increases (to 1), a non-leaf
# > written so gets `grad_fn` `CopyBackwards`, and the `backward()` of a graph that saved it raises the error of
# > VERSION-6 instead of computing a wrong gradient. The compiled graph applies its mutation of the input back with an
# > in-place copy of the input itself, not of its `.data` (pytorch/pytorch#135441 describes that epilogue). Layer:
# > AOTAutograd on 2.9.1, 2.13.0 and 2.15.0 (with Dynamo alone, `backend="eager"`, the write is not counted, as in
# > eager); on 2.1.2 and 2.4.1 Dynamo alone already counts it.
@pytest.mark.clause("VERSION-94")
@pytest.mark.parametrize("case", ["exp result", "mul input"])
def test_compiled_write_through_data_is_counted(device, case, run):
    x, written, loss = _write_through_data(device, case, run)
    assert written._version > 0
    if written is not x:
        assert type(written.grad_fn).__name__ == "CopyBackwards"
    with raises(RuntimeError, SAVED_MODIFIED):
        loss.backward()


# > VERSION-63: `x.numpy()` of a tensor that requires grad raises `RuntimeError` whose message contains "Can't call
# > numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.".
@pytest.mark.clause("VERSION-63")
def test_numpy_of_tensor_requiring_grad_raises(device):
    x = leaf(device)
    with raises(RuntimeError, "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."):
        x.numpy()


def _numpy_alias(device, alias):
    """(x, a): a leaf `x` that requires grad at [1, 2] and a NumPy array `a` sharing its memory."""
    import numpy

    if alias == "torch.from_numpy(a)":
        a = numpy.array([1.0, 2.0], dtype=numpy.float32)
        return torch.from_numpy(a).requires_grad_(), a
    x = leaf(device)
    return x, (x.detach().numpy() if alias == "x.detach().numpy()" else x.numpy(force=True))


def _imul10(a):
    a *= 10


def _copyto(a):
    numpy.copyto(a, [10.0, 20.0])


NUMPY_WRITES = {  # spelling -> (write, values of x afterwards)
    "a[:] = v": (lambda a: a.__setitem__(slice(None), [10.0, 20.0]), [10.0, 20.0]),
    "a[0] = v": (lambda a: a.__setitem__(0, 10.0), [10.0, 2.0]),
    "a *= 10": (_imul10, [10.0, 20.0]),
    "numpy.copyto(a, v)": (_copyto, [10.0, 20.0]),
}


# > VERSION-64: `a = x.detach().numpy()` and `a = x.numpy(force=True)` of a leaf `x` that requires grad are NumPy arrays
# > that share the memory of `x`, and `x = torch.from_numpy(a)` is a tensor that shares the memory of `a`. Each write
# > into such an array (`a[:] = v`, `a[0] = v`, `a *= 10`, `numpy.copyto(a, v)`) changes the values of `x` and leaves
# > `x._version` unchanged, so a graph that saved `x` backpropagates afterwards without error, from the new values: for
# > `(x * x).sum()` at `x = [1, 2]`, after writing `[10, 20]` the gradient is `[20, 40]` (the correct one is `[2, 4]`).
def _check_write_through_numpy_alias(device, alias, write, run):
    x, a = _numpy_alias(device, alias)
    loss = (x * x).sum()  # saves x
    version = x._version
    spelled, values = NUMPY_WRITES[write]
    run(spelled, a)
    assert x._version == version, f"x._version: expected {version}, observed {x._version}"
    assert_values(x, values, f"x after {write}")
    loss.backward()  # no error: the counter saw nothing
    assert_values(x.grad, [2 * v for v in values], "x.grad (computed from the new values)")


@pytest.mark.clause("VERSION-64")
@pytest.mark.parametrize("write", list(NUMPY_WRITES))
@pytest.mark.parametrize("alias", ["x.detach().numpy()", "x.numpy(force=True)", "torch.from_numpy(a)"])
def test_write_through_numpy_alias_is_not_counted(device, alias, write, run):
    _check_write_through_numpy_alias(device, alias, write, run)


# > VERSION-95 (compile): Run as a compiled step, the writes of VERSION-64 into such an array (`a[:] = v`, `a[0] = v`,
# > `a *= 10`) do what VERSION-64 says, while `numpy.copyto(a, v)` raises `torch._dynamo.exc.TorchRuntimeError` whose
# > message contains "'dst' must be an array" and writes nothing: Dynamo traces NumPy code as torch operations on
# > tensors (the array becomes a tensor), and its `copyto` refuses a tensor as destination. Layer: Dynamo.
@pytest.mark.clause("VERSION-95")
@pytest.mark.parametrize("write", list(NUMPY_WRITES))
@pytest.mark.parametrize("alias", ["x.detach().numpy()", "x.numpy(force=True)", "torch.from_numpy(a)"])
def test_compiled_write_through_numpy_alias(device, alias, write, run):
    if write != "numpy.copyto(a, v)":
        return _check_write_through_numpy_alias(device, alias, write, run)
    x, a = _numpy_alias(device, alias)
    with raises(torch._dynamo.exc.TorchRuntimeError, "'dst' must be an array"):
        run(NUMPY_WRITES[write][0], a)
    assert_values(x, [1.0, 2.0], "x after the refused numpy.copyto")


DLPACK = {
    "torch.from_dlpack(x.detach())": lambda x: torch.from_dlpack(x.detach()),
    "from_dlpack(to_dlpack(x.detach()))": lambda x: torch.utils.dlpack.from_dlpack(
        torch.utils.dlpack.to_dlpack(x.detach())
    ),
}
DLPACK_WRITES = {  # spelling -> (write, values of x afterwards)
    "d.mul_(10)": (lambda d: d.mul_(10), [10.0, 20.0]),
    "d[0] = v": (lambda d: d.__setitem__(0, 10.0), [10.0, 2.0]),
    "d.copy_(v)": (lambda d: d.copy_(torch.tensor([10.0, 20.0], device=d.device)), [10.0, 20.0]),
}


# > VERSION-65: `d = torch.from_dlpack(x.detach())` and
# > `d = torch.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(x.detach()))` share the memory of `x`
# > (`d.data_ptr() == x.data_ptr()`) but neither its storage object nor its version counter: `d._version` is 0 also when
# > `x._version` is not (2 at the export), an in-place update of `d` (`d.mul_(10)`, `d[0] = v`, `d.copy_(v)`) increases
# > `d._version` and leaves `x._version` as it was, and an update of `x` under `torch.no_grad()` leaves `d._version` as
# > it was. The values written through `d` are the values of `x`, and a graph that saved `x` backpropagates afterwards
# > without error, from the new values (`[20, 40]` for `(x * x).sum()` at `x = [1, 2]` after `d.mul_(10)`).
@pytest.mark.clause("VERSION-65")
@pytest.mark.parametrize("write", list(DLPACK_WRITES))
@pytest.mark.parametrize("spelling", list(DLPACK))
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_write_through_dlpack_alias_is_not_counted(device, spelling, write, run):
    x = leaf(device)
    with torch.no_grad():
        x.add_(0)
        x.add_(0)
    d = DLPACK[spelling](x)
    assert d.data_ptr() == x.data_ptr(), "d shares the memory of x"
    assert not same_storage(d, x), "d has a storage object of its own (around the same memory)"
    before = x._version
    assert before > 0 and d._version == 0, (d._version, before)
    with torch.no_grad():
        x.add_(0)
    assert x._version > before and d._version == 0, "an update of x is not counted on d"
    saved = x._version
    loss = (x * x).sum()  # saves x at its current version
    update, values = DLPACK_WRITES[write]
    run(update, d)
    assert d._version > 0 and x._version == saved, "an update through d is counted on d only"
    assert_values(x, values, f"x after {write}")
    loss.backward()
    assert_values(x.grad, [2 * v for v in values], "x.grad (computed from the new values)")


# > VERSION-66: `torch.from_dlpack(x)` and `x.__dlpack__()` where `x` requires grad raise `RuntimeError` whose message
# > contains "Can't export tensors that require gradient, use tensor.detach()".
@pytest.mark.clause("VERSION-66")
@pytest.mark.parametrize("spelling", ["torch.from_dlpack(x)", "x.__dlpack__()"])
def test_dlpack_export_of_tensor_requiring_grad_runtime_error(device, spelling):
    x = leaf(device)
    with raises(RuntimeError, "Can't export tensors that require gradient, use tensor.detach()"):
        torch.from_dlpack(x) if spelling == "torch.from_dlpack(x)" else x.__dlpack__()


# > VERSION-67: `torch.from_dlpack(x)` and `x.__dlpack__()` where `x` requires grad raise `BufferError` (not a
# > `RuntimeError`) whose message contains "Can't export tensors that require gradient, use tensor.detach()".
@pytest.mark.clause("VERSION-67")
@pytest.mark.parametrize("spelling", ["torch.from_dlpack(x)", "x.__dlpack__()"])
def test_dlpack_export_of_tensor_requiring_grad_buffer_error(device, spelling):
    x = leaf(device)
    with raises(BufferError, "Can't export tensors that require gradient, use tensor.detach()") as info:
        torch.from_dlpack(x) if spelling == "torch.from_dlpack(x)" else x.__dlpack__()
    assert not isinstance(info.value, RuntimeError)


# > VERSION-70: The legacy `torch.utils.dlpack.to_dlpack(x)` does not refuse a tensor that requires grad, unlike
# > `x.__dlpack__()` (VERSION-66, VERSION-67): for a leaf `x` that requires grad, and for a non-leaf that requires grad,
# > it returns a capsule, and `d = torch.utils.dlpack.from_dlpack(capsule)` shares the memory of `x`
# > (`d.data_ptr() == x.data_ptr()`), does not require grad, is a leaf without `grad_fn` and has `_version` 0. Evidence:
# > the refusal is in `Tensor.__dlpack__` (`torch/_tensor.py`, "so we prohibit exporting tensors that would lose their
# > properties like requires_grad"), while `to_dlpack` is `torch._C._to_dlpack`, which has no such check; run on the
# > releases 2.0.1 to 2.15.0.
@pytest.mark.clause("VERSION-70")
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_legacy_to_dlpack_accepts_tensor_requiring_grad(device, kind):
    x = leaf(device) if kind == "leaf" else leaf(device) * 1
    assert x.requires_grad
    with pytest.raises((RuntimeError, BufferError), match="Can't export tensors that require gradient"):
        x.__dlpack__()
    capsule = torch.utils.dlpack.to_dlpack(x)
    d = torch.utils.dlpack.from_dlpack(capsule)
    assert d.data_ptr() == x.data_ptr(), "d shares the memory of x"
    assert (d.requires_grad, d.is_leaf, d.grad_fn, d._version) == (False, True, None, 0)


# spelling -> (write into s from t's storage, values of x afterwards). t's storage is made outside the step and handed
# in: on torch 2.1 a storage a compiled step made, freed after Dynamo's reset, crashes the interpreter at exit
# (harness/modes.py keeps the storages handed to compiled steps).
STORAGE_WRITES = {
    "s.fill_(0)": (lambda s, ts: s.fill_(0), [0.0, 0.0]),
    "s.copy_(t.untyped_storage())": (lambda s, ts: s.copy_(ts), [10.0, 20.0]),
}


# > VERSION-68: `s = x.untyped_storage()` is the storage of `x` (`s.data_ptr() == x.data_ptr()` for `x` at offset 0).
# > Writing into it with `s.fill_(0)` or `s.copy_(t.untyped_storage())` changes the values of `x` and leaves
# > `x._version` unchanged, so a graph that saved `x` backpropagates afterwards without error, from the new values
# > (`[20, 40]` for `(x * x).sum()` at `x = [1, 2]` after copying `[10, 20]` in; `[0, 0]` after `fill_(0)`).
@pytest.mark.clause("VERSION-68")
@pytest.mark.parametrize("write", list(STORAGE_WRITES))
def test_write_through_storage_is_not_counted(device, write, run):
    x = leaf(device)
    s = x.untyped_storage()
    assert s.data_ptr() == x.data_ptr()
    loss = (x * x).sum()
    update, values = STORAGE_WRITES[write]
    run(update, s, torch.tensor([10.0, 20.0], device=device).untyped_storage())
    assert x._version == 0
    assert_values(x, values, f"x after {write}")
    loss.backward()
    assert_values(x.grad, [2 * v for v in values], "x.grad (computed from the new values)")


SAVING = {  # op -> (result, {attribute of grad_fn: the tensor it saved})
    "x.pow(2)": lambda x: (x.pow(2), {"_saved_self": x}),
    "x * x": lambda x: (x * x, {"_saved_self": x, "_saved_other": x}),
    "x.exp()": lambda x: (y := x.exp(), {"_saved_result": y}),
}


# > VERSION-60: A saved tensor is not copied: the tensor read back from the node (`y.grad_fn._saved_self` for
# > `y = x.pow(2)`, `_saved_result` for `y = x.exp()`, `_saved_self` and `_saved_other` for `y = x * x`) shares the
# > storage of the tensor that was saved and has its `_version`.
@pytest.mark.clause("VERSION-60")
@pytest.mark.parametrize("op", list(SAVING))
def test_saved_tensor_shares_storage(device, op):
    x = leaf(device)
    with torch.no_grad():
        x.add_(0)  # version 1, so that "has its _version" is not 0 == 0 for a saved input
    y, saved = SAVING[op](x)
    for attr, original in saved.items():
        read = getattr(y.grad_fn, attr)
        assert same_storage(read, original), attr
        assert read._version == original._version, attr


# > VERSION-61: Reading a saved tensor back (`y.grad_fn._saved_self` for `y = x.pow(2)`, `y.grad_fn._saved_result` for
# > `y = x.exp()`) after that tensor was updated in place raises `RuntimeError` whose message contains "one of the
# > variables needed for gradient computation has been modified by an inplace operation" (the check of VERSION-6, made
# > at access, not only during `backward()`). (Before 2.4, when `y = x.exp()` is updated inside a compiled function,
# > `y.grad_fn` is another node: VERSION-99.)
@pytest.mark.clause("VERSION-61")
# x.exp() saves its result y: compiled before 2.4 the update of y replaces y.grad_fn (VERSION-99)
@pytest.mark.parametrize("op", compiled_since("2.4", ["x.pow(2)", "x.exp()"], ["x.exp()"], "VERSION-99"))
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_reading_modified_saved_tensor_raises(device, op, run):
    x = leaf(device)
    y, saved = SAVING[op](x)
    ((attr, original),) = saved.items()
    run(_mul10_under_no_grad, original)
    with raises(RuntimeError, SAVED_MODIFIED):
        getattr(y.grad_fn, attr)


# > VERSION-99 (compile, until 2.4): Before 2.4, when `y = x.exp()` (`x` a leaf that requires grad; the node saves its
# > result `y`) is updated in place under `torch.no_grad()` inside a compiled function (`y.mul_(10)`), `y.grad_fn` is
# > afterwards a new node of type `CopyBackwards` (as NOGRAD-92 says of a non-leaf updated so), which saves nothing:
# > reading `y.grad_fn._saved_result` raises `AttributeError` whose message contains "'CopyBackwards' object has no
# > attribute '_saved_result'", not the `RuntimeError` of VERSION-61. Reading `_saved_result` from the `ExpBackward0`
# > node that was `y.grad_fn` before the update raises the error of VERSION-61. Layer: AOTAutograd (with
# > `backend="eager"`, `y.grad_fn` stays the `ExpBackward0` node). From 2.4 VERSION-61 holds compiled.
@pytest.mark.clause("VERSION-99")
@pytest.mark.parametrize("op", ["x.exp()"])
def test_compiled_update_of_saved_output_replaces_its_node_before_2_4(device, op, run):
    x = leaf(device)
    y, saved = SAVING[op](x)
    ((attr, original),) = saved.items()
    node = y.grad_fn
    run(_mul10_under_no_grad, original)
    assert type(y.grad_fn).__name__ == "CopyBackwards"
    with raises(AttributeError, f"'CopyBackwards' object has no attribute '{attr}'"):
        getattr(y.grad_fn, attr)
    with raises(RuntimeError, SAVED_MODIFIED):
        getattr(node, attr)


# > VERSION-62 (UNSPECIFIED): Whether the tensor read back is the same Python object as the tensor that was saved.
@pytest.mark.clause("VERSION-62")
@pytest.mark.parametrize("op", list(SAVING))
def test_saved_tensor_identity(device, op, observe):
    x = leaf(device)
    y, saved = SAVING[op](x)
    for attr, original in saved.items():
        observe(f"{op}: {attr} is the saved tensor", getattr(y.grad_fn, attr) is original)


# > VERSION-69: With the forward and `backward()` both inside
# > `with torch.autograd.graph.allow_mutation_on_saved_tensors():`, an in-place update of a tensor the graph saved (a
# > leaf updated under `torch.no_grad()`, `x.mul_(10)`; a non-leaf `y = x * 1` updated with grad mode on, `y.mul_(10)`)
# > does not make `backward()` raise, and the gradient is that of the values at the time of the forward: `[2, 4]` for
# > `(x * x).sum()` (or `(y * y).sum()`) at `x = [1, 2]`. The updated tensor keeps its new values, `[10, 20]`.
@pytest.mark.clause("VERSION-69")
@pytest.mark.parametrize("saved", ["leaf under no_grad", "non-leaf"])
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_allow_mutation_on_saved_tensors(device, saved, run):
    with torch.autograd.graph.allow_mutation_on_saved_tensors():
        x = leaf(device)
        t = x if saved == "leaf under no_grad" else x * 1
        loss = (t * t).sum()
        run(_mul10_under_no_grad if saved == "leaf under no_grad" else lambda t: t.mul_(10), t)
        loss.backward()
    assert_values(x.grad, [2.0, 4.0], "x.grad (at the forward-time values)")
    assert_values(t, [10.0, 20.0], "the updated tensor")


# Seeds, run as written (fixing only what stops them from running, as noted).


@pytest.mark.clause("VERSION-2")
@pytest.mark.parametrize("method", ["add_", "copy_"])
def test_seed_ko_inplace_metadata_is_the_version(device, method, run):
    # Korean seed, methods 2 and 3. As written they call torch.Variable, which does not exist:
    with raises(AttributeError, "has no attribute 'Variable'"):
        torch.Variable(torch.randn(5))
    # Fixed to run with torch.autograd.Variable (a plain tensor that does not require grad). The "metadata"
    # that the in-place operation updates is the version counter; backward() still cannot run, because x
    # never required grad.
    x = torch.autograd.Variable(torch.randn(5, device=device))
    if method == "add_":
        run(lambda x: x.add_(1), x)
    else:
        run(lambda x, new: x.copy_(new), x, torch.randn(5, device=device))
    assert x._version > 0
    y = x.sum()
    with raises(RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn"):
        y.backward()


def _under_no_grad(x):
    with torch.no_grad():
        x.mul_(2)


def _three_updates(x):
    x.add_(1)
    x.mul_(2)
    x.sub_(1)


# Steps of VERSION-101 and VERSION-102: (make x, step, eager count, values after).
INDUCTOR_STEPS = {
    "x.mul_(2) under no_grad, x a leaf": (lambda d: leaf(d), _under_no_grad, 1, [2.0, 4.0]),
    "x.add_(1); x.mul_(2); x.sub_(1)": (lambda d: torch.tensor([1.0, 2.0], device=d), _three_updates, 3, [3.0, 5.0]),
    "x.copy_(float64 src)": (
        lambda d: torch.zeros(2, device=d),
        lambda x: x.copy_(torch.ones(2, dtype=torch.float64, device=x.device)),
        1,
        [1.0, 1.0],
    ),
    "x[0] = 5.0": (lambda d: torch.tensor([1.0, 2.0], device=d), lambda x: x.__setitem__(0, 5.0), 1, [5.0, 2.0]),
}


def _inductor_count_params():
    for clause, bump in ((pytest.mark.clause("VERSION-101"), 0), (pytest.mark.clause("VERSION-102"), 1)):
        for case in INDUCTOR_STEPS:
            yield pytest.param(case, bump, marks=clause, id=f"{case}-{clause.args[0]}")


# > VERSION-101: Compiled with inductor, the default backend, from 2.2 to 2.4, on `cpu`, the in-place updates of an
# > input inside the step are written but leave its `_version` as it was (0 here): `x.mul_(2)` under `torch.no_grad()`
# > on a leaf that requires grad, `x.add_(1); x.mul_(2); x.sub_(1)`, `x.copy_(src)` from a float64 `src` into a float32
# > `x`, and `x[0] = 5.0`; eagerly their counts are 1, 3, 1 and 1. With `aot_eager` each update counts 1 there
# > (VERSION-96). On 2.1 the steps count 0, 0 and 0 but the update under `torch.no_grad()` counts 1: not specified.
# > Layer: Inductor.
# > VERSION-102: Compiled with inductor from 2.5, on `cpu`, each step of VERSION-101 increases the input's `_version` by
# > exactly 1: once per input the step mutates, however many updates it makes (the three updates count 1, eagerly 3),
# > where with `aot_eager` a step counts 2 from 2.5 (VERSION-96). On `meta` (inductor runs there from 2.8) the counts
# > are those of `aot_eager`: not specified. Layer: Inductor.
@pytest.mark.parametrize(("case", "bump"), list(_inductor_count_params()))
def test_inductor_counts_mutated_inputs(device, case, bump, run):
    make, step, eager_count, values = INDUCTOR_STEPS[case]
    eagerly = make(device)
    step(eagerly)
    assert eagerly._version == eager_count  # what the clause says eager code does, checked beside it
    x = make(device)
    run(step, x)
    assert x._version == bump
    assert_values(x, values, f"{case}, compiled with inductor")


def _double(t):
    t.mul_(2)


# > VERSION-103 (inductor, cpu, until 2.5): Before 2.5, compiled with inductor, an in-place update inside the step of a
# > tensor that a graph saved goes undetected, and the gradient is silently wrong: for `z = (x * 1).exp()` (`exp` saves
# > its result; `x` a leaf `[1., 2.]` that requires grad) and the step `z.mul_(2)` run under `torch.no_grad()`,
# > `z._version` stays 0, and `z.sum().backward()` does not raise: it reads the updated `z`, and `x.grad` is
# > `2 * exp(x)` (`[5.4366, 14.7781]`), twice the gradient of the graph as built. Eagerly and with `aot_eager`, that
# > backward raises the error of VERSION-6 ("one of the variables needed for gradient computation has been modified by
# > an inplace operation"), and so it does with inductor from 2.5, where the step bumps the counter (VERSION-102).
# > Layer: Inductor. Run with `backend="eager"`, `aot_eager` and inductor on 2.1.2 to 2.5.1.
@pytest.mark.clause("VERSION-103")
def test_saved_result_updated_by_inductor_step_goes_undetected_before_2_5(device, run):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    z = (x * 1).exp()
    with torch.no_grad():
        run(_double, z)
    assert z._version == 0
    z.sum().backward()
    assert x.grad.tolist() == pytest.approx((2 * torch.tensor([1.0, 2.0]).exp()).tolist())
