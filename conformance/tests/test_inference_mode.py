"""Conformance tests for spec/inference_mode.md (`torch.inference_mode`). Each test quotes the clause it proves.

Inference mode and grad mode are global (thread-local) state: every test changes them through context
managers only, so they are restored even when an assertion fails.
"""

import pytest
import torch

from conformance.harness.checks import (
    SAVED_MODIFIED,
    assert_values,
    leaf,
    raises,
    same_storage,
    view_and_base_targets,
)
from conformance.harness.populations import INPLACE_SPELLINGS, MULTI_OUTPUT_VIEW_OPS, NON_VIEW_OPS, VIEW_OPS, check_each

DETACH_UPDATES = INPLACE_SPELLINGS.without(
    "t[0] = 5",
    "t[:] = v",
    name="INPLACE_SPELLINGS without d[0] = 5, d[:] = v",
    description="The updates INFER-41 speaks of.",
)

# Whether a refused update was written can be told from the values for every member but `t.add_(0)`.
WRITING_UPDATES = INPLACE_SPELLINGS.without(
    "t.add_(0)",
    name="INPLACE_SPELLINGS without t.add_(0)",
    description="The updates of INFER-9 that change the values of [1, 2].",
)

CANNOT_SAVE = "Inference tensors cannot be saved for backward"
NO_INPLACE = "Inplace update to inference tensor outside InferenceMode is not allowed"
NO_REQUIRES_GRAD = "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed"
NO_VERSION = "Inference tensors do not track version counter"


def inference_tensor(device, values=(1.0, 2.0)):
    with torch.inference_mode():
        return torch.tensor(list(values), device=device) * 1


# > INFER-1: Inside `with torch.inference_mode():` `torch.is_inference_mode_enabled()` is True and
# > `torch.is_grad_enabled()` is False; on leaving the block, also by an exception, both are what they were
# > before. A function decorated with `@torch.inference_mode()` runs with the mode enabled, and after the
# > call both are what they were.
@pytest.mark.clause("INFER-1")
@pytest.mark.parametrize("outer_grad", [True, False])
def test_mode_inside_and_after(device, outer_grad):
    with torch.set_grad_enabled(outer_grad):
        assert torch.is_inference_mode_enabled() is False
        with torch.inference_mode():
            assert (torch.is_inference_mode_enabled(), torch.is_grad_enabled()) == (True, False)
        assert (torch.is_inference_mode_enabled(), torch.is_grad_enabled()) == (False, outer_grad)
        with pytest.raises(ValueError):
            with torch.inference_mode():
                raise ValueError
        assert (torch.is_inference_mode_enabled(), torch.is_grad_enabled()) == (False, outer_grad)

        @torch.inference_mode()
        def f():
            return torch.is_inference_mode_enabled(), torch.is_grad_enabled()

        assert (torch.is_inference_mode_enabled(), torch.is_grad_enabled()) == (False, outer_grad)
        assert f() == (True, False)
        assert (torch.is_inference_mode_enabled(), torch.is_grad_enabled()) == (False, outer_grad)


def matrix(device, requires_grad=True):
    """The input of NON_VIEW_OPS and VIEW_OPS: a float tensor of shape (2, 2), a leaf."""
    return torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=requires_grad)


def _normal(device, kind):
    """A normal tensor: a leaf that requires grad, a non-leaf, or a plain tensor."""
    if kind == "plain":
        return matrix(device, requires_grad=False)
    x = matrix(device)
    return x if kind == "leaf" else x * 1


def _inference_matrix(device):
    with torch.inference_mode():
        return torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device) * 1


# > INFER-2: Inside inference mode, the result of every operation of the population `NON_VIEW_OPS` (listed below) is an
# > inference tensor (`t.is_inference()` and `torch.is_inference(t)` are True) that does not require grad, is a leaf and
# > has no `grad_fn`, even when its inputs require grad (leaves or non-leaves). Tensors created by factory functions
# > inside the mode are inference tensors too. Views are the exception: a view of a normal tensor made inside the mode
# > is a normal tensor (INFER-3) that requires grad when its base does (INFER-40).
@pytest.mark.clause("INFER-2")
@pytest.mark.parametrize("op", NON_VIEW_OPS.params())
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_results_inside_are_inference_tensors(device, op, kind):
    x = _normal(device, kind)
    with torch.inference_mode():
        y = op(x)
    assert (y.is_inference(), torch.is_inference(y)) == (True, True)
    assert (y.requires_grad, y.is_leaf, y.grad_fn) == (False, True, None)


@pytest.mark.clause("INFER-2")
@pytest.mark.parametrize(
    "factory",
    ["torch.zeros(2)", "torch.ones(2)", "torch.tensor([1.0, 2.0])", "torch.empty(2)", "torch.arange(2.0)"],
)
def test_factories_inside_are_inference_tensors(device, factory):
    makers = {
        "torch.zeros(2)": lambda: torch.zeros(2, device=device),
        "torch.ones(2)": lambda: torch.ones(2, device=device),
        "torch.tensor([1.0, 2.0])": lambda: torch.tensor([1.0, 2.0], device=device),
        "torch.empty(2)": lambda: torch.empty(2, device=device),
        "torch.arange(2.0)": lambda: torch.arange(2.0, device=device),
    }
    with torch.inference_mode():
        t = makers[factory]()
    assert t.is_inference()
    assert (t.requires_grad, t.is_leaf) == (False, True)


# > INFER-3: A view (the result of an operation of the population `VIEW_OPS`, listed below) made inside inference mode
# > of a normal tensor is a normal tensor: `is_inference()` is False. A view of an inference tensor, made inside the
# > mode, outside it, or under `torch.no_grad()`, is an inference tensor.
@pytest.mark.clause("INFER-3")
@pytest.mark.parametrize("kind", ["leaf", "non-leaf", "plain"])
def test_view_of_normal_tensor_inside_is_normal(device, kind):
    def check(view):
        x = _normal(device, kind)
        with torch.inference_mode():
            v = view(x)
        assert (v.is_inference(), torch.is_inference(v)) == (False, False)

    check_each(VIEW_OPS, check)


@pytest.mark.clause("INFER-3")
@pytest.mark.parametrize("where", ["inside", "outside", "under no_grad"])
def test_view_of_inference_tensor_is_inference_tensor(device, where):
    def check(view):
        t = _inference_matrix(device)
        mode = {"inside": torch.inference_mode, "outside": torch.enable_grad, "under no_grad": torch.no_grad}[where]
        with mode():
            v = view(t)
        assert (v.is_inference(), torch.is_inference(v)) == (True, True)

    check_each(VIEW_OPS, check)


# > INFER-40: Inside inference mode, the result of every operation of VIEW_OPS applied to a normal tensor `x` (a
# > leaf or a non-leaf) is a view of `x` (`_is_view()` True, `_base` is `x`) that requires grad exactly when `x`
# > does, is a leaf and has no `grad_fn`.
@pytest.mark.clause("INFER-40")
@pytest.mark.parametrize("kind", ["leaf", "non-leaf", "plain"])
def test_view_of_normal_tensor_inside_requires_grad_like_its_base(device, kind):
    def check(view):
        x = _normal(device, kind)
        with torch.inference_mode():
            v = view(x)
        assert (v._is_view(), v._base is x) == (True, True)
        assert (v.requires_grad, v.is_leaf, v.grad_fn) == (kind != "plain", True, None)

    check_each(VIEW_OPS, check)


# > INFER-4: Outside inference mode, with grad mode enabled or under `torch.no_grad()`, tensors made by factory
# > functions and the result of every operation of NON_VIEW_OPS and VIEW_OPS applied to a normal tensor are
# > normal tensors: `is_inference()` is False; inside `torch.no_grad()` `torch.is_inference_mode_enabled()` is
# > False.
@pytest.mark.clause("INFER-4")
@pytest.mark.parametrize("grad", ["enabled", "no_grad"])
def test_results_outside_are_normal_tensors(device, grad):
    def check(op):
        x = matrix(device)
        assert x.is_inference() is False
        with torch.set_grad_enabled(grad == "enabled"):
            assert torch.is_inference_mode_enabled() is False
            y = op(x)
            z = torch.zeros(2, device=device)
        assert (y.is_inference(), torch.is_inference(y), z.is_inference()) == (False, False, False)
        y._version  # noqa: B018 - a normal tensor has a version counter: reading it raises no error

    check_each(NON_VIEW_OPS, check)
    check_each(VIEW_OPS, check)


# > INFER-41: Outside inference mode (with grad mode enabled or under `torch.no_grad()`), `d = t.detach()` of an
# > inference tensor `t` is an inference tensor (`d.is_inference()` is True) that nonetheless has a version counter:
# > `d._version` reads 0 instead of raising (INFER-5), and every update of the population `INPLACE_SPELLINGS` (listed
# > below) other than the index assignments `d[0] = 5` and `d[:] = v` is accepted instead of refused (INFER-9),
# > increases `d._version` and writes into the memory of `t`. The two index assignments: INFER-23 (`d[0] = 5`), INFER-24
# > and INFER-25 (`d[:] = v`).
@pytest.mark.clause("INFER-41")
@pytest.mark.compiled_since("2.8", before="INFER-90")  # older releases refuse the update
@pytest.mark.parametrize("update", DETACH_UPDATES.params())
@pytest.mark.parametrize("grad", ["enabled", "no_grad"])
def test_detach_of_inference_tensor_has_a_version_counter(device, update, grad, run):
    t = inference_tensor(device)
    with torch.set_grad_enabled(grad == "enabled"):
        d = t.detach()
        assert (d.is_inference(), d._version) == (True, 0)
        run(update, d)
    assert d._version > 0
    assert same_storage(d, t)


# > INFER-90 (2.1, and 2.4 to 2.8): Inside a compiled function called outside inference mode (with grad mode enabled or
# > under `torch.no_grad()`), each update of INFER-41 of `d = t.detach()` of an inference tensor `t` raises
# > `RuntimeError` whose message contains "Inplace update to inference tensor outside InferenceMode is not allowed",
# > instead of being accepted. (2.2.2 and 2.3.1 refuse the others but accept `d[m] = 5` and `d[[0]] = 5` on cpu: not
# > specified.) Layer: Dynamo.
@pytest.mark.clause("INFER-90")
@pytest.mark.parametrize("update", DETACH_UPDATES.params())
@pytest.mark.parametrize("grad", ["enabled", "no_grad"])
def test_compiled_update_of_detached_inference_tensor_raises(device, update, grad, run):
    def refused(d):
        with raises(RuntimeError, NO_INPLACE):
            run(update, d)

    _update_detached(device, grad, refused)


def _update_detached(device, grad: str, step):
    """``step(d)`` for ``d = t.detach()`` of an inference tensor ``t``, outside inference mode (grad mode enabled or
    under no_grad); ``(t, d)`` after."""
    t = inference_tensor(device)
    with torch.set_grad_enabled(grad == "enabled"):
        d = t.detach()
        step(d)
    return t, d


DETACH_INDEX_ASSIGNMENTS = {
    "d[0] = 5": lambda d: d.__setitem__(0, 5.0),
    "d[:] = v": lambda d: d.__setitem__(slice(None), torch.full_like(d, 0.5)),
}


def _refused_detach_index_assignment(device, spelling, grad):
    t = inference_tensor(device)
    with torch.set_grad_enabled(grad == "enabled"):
        d = t.detach()
        with raises(RuntimeError, NO_INPLACE):
            DETACH_INDEX_ASSIGNMENTS[spelling](d)
        assert d._version == 0


# > INFER-23: Outside inference mode (with grad mode enabled or under `torch.no_grad()`), `d[0] = 5` into
# > `d = t.detach()` of an inference tensor `t` raises `RuntimeError` whose message contains "Inplace update to
# > inference tensor outside InferenceMode is not allowed" (the write goes through the view `d[0]`, which is an
# > inference tensor, INFER-3), and `d._version` is still 0.
@pytest.mark.clause("INFER-23")
@pytest.mark.parametrize("grad", ["enabled", "no_grad"])
def test_detach_of_inference_tensor_refuses_index_assignment(device, grad):
    _refused_detach_index_assignment(device, "d[0] = 5", grad)


# > INFER-24 (until 2.9): `d[:] = v` into `d` of INFER-23 is refused likewise: it raises `RuntimeError` whose message
# > contains "Inplace update to inference tensor outside InferenceMode is not allowed", and `d._version` is still 0.
@pytest.mark.clause("INFER-24")
@pytest.mark.parametrize("grad", ["enabled", "no_grad"])
def test_detach_of_inference_tensor_refuses_full_slice_assignment_before_2_9(device, grad):
    _refused_detach_index_assignment(device, "d[:] = v", grad)


# > INFER-25 (since 2.9): `d[:] = v` into `d` of INFER-23 is accepted, as the updates of INFER-41 are: it increases
# > `d._version` and writes into the memory of `t`.
@pytest.mark.clause("INFER-25")
@pytest.mark.parametrize("grad", ["enabled", "no_grad"])
def test_detach_of_inference_tensor_accepts_full_slice_assignment_since_2_9(device, grad):
    t = inference_tensor(device)
    with torch.set_grad_enabled(grad == "enabled"):
        d = t.detach()
        DETACH_INDEX_ASSIGNMENTS["d[:] = v"](d)
    assert (d.is_inference(), d._version > 0, same_storage(d, t)) == (True, True, True)


# > INFER-5: Reading `_version` of an inference tensor made inside inference mode, or of a view of one, inside or
# > outside the mode, raises `RuntimeError` whose message contains "Inference tensors do not track version counter".
# > (Not so for `t.detach()` made outside the mode, INFER-41.)
@pytest.mark.clause("INFER-5")
@pytest.mark.parametrize("where", ["outside", "inside"])
def test_inference_tensor_has_no_version(device, where):
    t = inference_tensor(device)
    if where == "inside":
        with torch.inference_mode():
            with raises(RuntimeError, NO_VERSION):
                _ = t._version
    else:
        with raises(RuntimeError, NO_VERSION):
            _ = t._version


SAVING = {
    "inf * x": lambda inf, x: inf * x,
    "x * inf": lambda inf, x: x * inf,
    "x.sin() * inf": lambda inf, x: x.sin() * inf,
    "torch.mul(x, inf)": lambda inf, x: torch.mul(x, inf),
    "x / inf": lambda inf, x: x / inf,
}


# > INFER-6: Outside inference mode, an operation that autograd records and that must save an inference
# > tensor for backward (`inf * x`, `x * inf`, `x.sin() * inf`, `torch.mul(x, inf)`, `x / inf`, where `x`
# > requires grad) raises `RuntimeError` whose message contains "Inference tensors cannot be saved for
# > backward"; also inside `torch.inference_mode(False)`.
@pytest.mark.clause("INFER-6")
@pytest.mark.parametrize("op", list(SAVING))
@pytest.mark.parametrize("where", ["outside", "inference_mode(False)"])
def test_saving_an_inference_tensor_raises(device, op, where):
    inf = inference_tensor(device)
    x = leaf(device)
    if where == "outside":
        with raises(RuntimeError, CANNOT_SAVE):
            SAVING[op](inf, x)
    else:
        with torch.inference_mode():
            with torch.inference_mode(False):
                with raises(RuntimeError, CANNOT_SAVE):
                    SAVING[op](inf, x)


NOT_SAVING = {
    "inf + x": lambda inf, x: inf + x,
    "x - inf": lambda inf, x: x - inf,
    "x.exp() + inf": lambda inf, x: x.exp() + inf,
}


# > INFER-7: An operation that autograd records without saving the inference tensor (`inf + x`, `x - inf`,
# > `x.exp() + inf`) is accepted: its result requires grad, has a `grad_fn`, and is a normal tensor.
@pytest.mark.clause("INFER-7")
@pytest.mark.parametrize("op", list(NOT_SAVING))
def test_recorded_op_not_saving_inference_tensor_is_accepted(device, op):
    inf = inference_tensor(device)
    x = leaf(device)
    y = NOT_SAVING[op](inf, x)
    assert (y.requires_grad, y.grad_fn is not None, y.is_inference()) == (True, True, False)
    y.sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape


# > INFER-8: Gradients flow through such an operation to the normal inputs: for `(inf + x).sum()` the
# > gradient of `x` is all ones, and for `(x - inf).sum()` too.
@pytest.mark.clause("INFER-8")
@pytest.mark.parametrize("op", ["inf + x", "x - inf"])
def test_gradient_through_op_with_inference_tensor(device, op):
    inf = inference_tensor(device, (5.0, 7.0))
    x = leaf(device)
    NOT_SAVING[op](inf, x).sum().backward()
    assert_values(x.grad, [1.0, 1.0], f"x.grad of ({op}).sum()")


def run_inside(run, update, t):
    """The update `update(t)` inside `with torch.inference_mode():`; in compile mode the compiled step is called
    inside the block. (A compiled function that enters inference mode itself is another scenario, not specified
    here: on torch 2.13 several of these updates fail to compile in it, and the failure leaves inference mode
    enabled.)"""
    with torch.inference_mode():
        run(update, t)


def plain_result(update):
    """The values of a normal cpu tensor [1, 2] after ``update``: the result of the operation."""
    p = torch.tensor([1.0, 2.0])
    update(p)
    return p.tolist()


# > INFER-9: Outside inference mode, with grad mode enabled or disabled, every in-place update of an inference tensor
# > made inside the mode (every spelling of the population `INPLACE_SPELLINGS`, listed above: `t.add_(1)`, `t += 1`,
# > `t[0] = 5`, `t[:] = v`, `t.copy_(v)`, `torch.add(t, 1, out=t)`, ...) raises `RuntimeError` whose message contains
# > "Inplace update to inference tensor outside InferenceMode is not allowed".
@pytest.mark.clause("INFER-9")
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
@pytest.mark.parametrize("grad", ["enabled", "no_grad"])
def test_inplace_on_inference_tensor_outside_raises(device, update, grad, run):
    t = inference_tensor(device)
    with torch.set_grad_enabled(grad == "enabled"):
        with raises(RuntimeError, NO_INPLACE):
            run(update, t)


# The values of `t = [1, 2]` after each member of INPLACE_SPELLINGS (`v` is [0.5, 0.5], `m` [True, False], `i` [0]),
# written out; `t.exp_()` is checked against `plain_result` only.
EXPECTED = {
    "t.add_(1)": [2.0, 3.0],
    "t.add_(0)": [1.0, 2.0],
    "t.sub_(1)": [0.0, 1.0],
    "t.mul_(2)": [2.0, 4.0],
    "t.div_(2)": [0.5, 1.0],
    "t += 1": [2.0, 3.0],
    "t -= 1": [0.0, 1.0],
    "t *= 2": [2.0, 4.0],
    "t /= 2": [0.5, 1.0],
    "t.zero_()": [0.0, 0.0],
    "t.fill_(7)": [7.0, 7.0],
    "t.clamp_(0, 1)": [1.0, 1.0],
    "t.neg_()": [-1.0, -2.0],
    "t.pow_(2)": [1.0, 4.0],
    "t.addcmul_(v, v)": [1.25, 2.25],
    "t.lerp_(v, 0.5)": [0.75, 1.25],
    "t.masked_fill_(m, 0)": [0.0, 2.0],
    "t.index_fill_(0, i, 0)": [0.0, 2.0],
    "t.copy_(v)": [0.5, 0.5],
    "t[0] = 5": [5.0, 2.0],
    "t[:] = v": [0.5, 0.5],
    "t[[0]] = 5": [5.0, 2.0],
    "t[m] = 5": [5.0, 2.0],
    "torch.add(t, 1, out=t)": [2.0, 3.0],
    "torch.mul(t, 2, out=t)": [2.0, 4.0],
}
MEMBER_ID = {fn: mid for mid, fn in INPLACE_SPELLINGS.members}


def assert_result(t, update, what):
    """`t` (which held [1, 2]) holds the result of the update: the written-out values, and those of a normal tensor."""
    mid = MEMBER_ID[update]
    if mid in EXPECTED:
        assert_values(t, EXPECTED[mid], f"{what} after {mid}")
    assert_values(t, plain_result(update), f"{what} after {mid} (as on a normal tensor)")


# > INFER-20: An update refused by INFER-9 has nonetheless been carried out: after the `RuntimeError`, the
# > tensor holds the result of the operation.
# > INFER-91 (until 2.8): Inside a compiled function called outside inference mode, an update refused by INFER-9 is not
# > carried out: after the `RuntimeError` the tensor keeps its values (not INFER-20). (Before 2.4 the index assignments
# > `t[0] = 5` and `t[:] = v`, and on 2.2 and 2.3 also `t[m] = 5` and `t[[0]] = 5`, are written as eagerly.) Layer:
# > Dynamo.
@pytest.mark.parametrize(
    "written",
    [
        # compiled, older releases do not write
        pytest.param(
            True,
            marks=[pytest.mark.clause("INFER-20"), pytest.mark.compiled_since("2.8", before="INFER-91")],
            id="INFER-20",
        ),
        pytest.param(False, marks=pytest.mark.clause("INFER-91"), id="INFER-91"),
    ],
)
@pytest.mark.parametrize("update", WRITING_UPDATES.params())
@pytest.mark.parametrize("grad", ["enabled", "no_grad"])
def test_refused_inplace_on_inference_tensor(device, update, grad, written, run):
    t = inference_tensor(device)
    with torch.set_grad_enabled(grad == "enabled"):
        with raises(RuntimeError, NO_INPLACE):
            run(update, t)
    if written:
        assert_result(t, update, "inference tensor, refused update")
    else:
        assert_values(t, [1.0, 2.0], f"inference tensor after a compiled, refused {MEMBER_ID[update]}")


# > INFER-92: Compiled with inductor, the default backend, from 2.8, called outside inference mode (with grad mode
# > enabled or under `torch.no_grad()`), every update of the population `INPLACE_SPELLINGS` of an inference tensor made
# > inside the mode is accepted, where eagerly and with `aot_eager` it raises (INFER-9): afterwards the tensor holds the
# > result of the operation and is still an inference tensor. Before 2.8 Dynamo refuses the update while it traces the
# > step, as with `aot_eager`. Layer: Inductor (with `backend="aot_eager"` the update raises, INFER-9). The updates of
# > `t.detach()`: INFER-93. Not specified: `meta`, where only some spellings are accepted.
@pytest.mark.clause("INFER-92")
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
@pytest.mark.parametrize("grad", ["enabled", "no_grad"])
def test_inductor_writes_update_of_inference_tensor_outside(device, update, grad, run):
    t = inference_tensor(device)
    with torch.set_grad_enabled(grad == "enabled"):
        run(update, t)
    assert t.is_inference()
    assert_result(t, update, "inference tensor, compiled with inductor")


# > INFER-93: Compiled with inductor, from 2.8, called outside inference mode (with grad mode enabled or under
# > `torch.no_grad()`), the updates of INFER-41 of `d = t.detach()` of an inference tensor `t` are accepted and written
# > into the memory of `t`, as eagerly, but `d._version` stays 0, where eagerly it increases. Layer: Inductor.
@pytest.mark.clause("INFER-93")
@pytest.mark.parametrize("update", DETACH_UPDATES.params())
@pytest.mark.parametrize("grad", ["enabled", "no_grad"])
def test_inductor_update_of_detached_inference_tensor_not_counted(device, update, grad, run):
    t, d = _update_detached(device, grad, lambda d: run(update, d))
    assert d._version == 0
    assert_result(t, update, "inference tensor, updated through its detach() compiled with inductor")


INDEX_SPELLINGS = [p for p in INPLACE_SPELLINGS.params() if p.id in {"t[0] = 5", "t[:] = v", "t[[0]] = 5", "t[m] = 5"}]
DETACH_INDEX_SPELLINGS = [p for p in DETACH_UPDATES.params() if p.id in {"t[[0]] = 5", "t[m] = 5"}]


# > INFER-94: Compiled with inductor on 2.7, the first release whose AOTAutograd cache is on by default
# > (pytorch/pytorch#141981), an index assignment of an inference tensor (`t[0] = 5`, `t[:] = v`, `t[[0]] = 5`,
# > `t[m] = 5`) called outside inference mode under `torch.no_grad()` is refused as INFER-9 says while nothing is
# > cached; once the same function has been compiled for an inference tensor inside inference mode, the graph is served
# > from that cache, not traced again, and the update is accepted and written. So are `d[[0]] = 5` and `d[m] = 5` into
# > `d = t.detach()` made outside the mode (refused by INFER-90 while nothing is cached): written into the memory of
# > `t`, with `d._version` still 0. With grad mode enabled they are still refused. From 2.8 inductor accepts these
# > updates anyway (INFER-92, INFER-93); before 2.7 the cache is off by default. Not tested: a graph cached by an
# > earlier process (the cache lives on disk, in `TORCHINDUCTOR_CACHE_DIR`; that is how the suite met it). Layer:
# > Inductor (`aot_eager` caches nothing).
@pytest.mark.clause("INFER-94")
@pytest.mark.parametrize(
    "update, through",
    [pytest.param(p.values[0], "t", id=p.id) for p in INDEX_SPELLINGS]
    + [
        pytest.param(p.values[0], "t.detach()", id=f"d = t.detach(); {p.id.replace('t[', 'd[')}")
        for p in DETACH_INDEX_SPELLINGS
    ],
)
def test_inductor_cached_graph_accepts_index_assignment(device, update, through, run):
    from torch._inductor.utils import fresh_inductor_cache

    def target(t):  # what the step updates: the inference tensor, or its detach() made outside the mode
        return t.detach() if through == "t.detach()" else t

    run.aot_autograd_cache = None  # as released (the harness turns it off for every other test)
    with fresh_inductor_cache():  # an empty cache directory: what is cached is this test's doing
        with torch.no_grad(), raises(RuntimeError, NO_INPLACE):
            run(update, target(inference_tensor(device)))  # nothing cached: traced, refused
        run_inside(run, update, inference_tensor(device))  # traced inside the mode, where it is allowed: cached
        t = inference_tensor(device)
        with torch.no_grad():
            updated = target(t)
            run(update, updated)
        assert_result(t, update, f"inference tensor, {through} updated by a graph from the cache")
        if through == "t.detach()":
            assert updated._version == 0
        with raises(RuntimeError, NO_INPLACE):
            run(update, target(inference_tensor(device)))  # grad mode enabled: another graph, traced, refused


# > INFER-10: Inside inference mode the same updates of an inference tensor are accepted, and it stays an
# > inference tensor.
@pytest.mark.clause("INFER-10")
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
def test_inplace_on_inference_tensor_inside_is_accepted(device, update, run):
    t = inference_tensor(device)
    run_inside(run, update, t)
    assert t.is_inference()


# > INFER-17: The values of a tensor after an update of INFER-10 or INFER-13 are the result of the operation.
@pytest.mark.clause("INFER-17")
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
def test_inplace_on_inference_tensor_inside_values(device, update, run):
    t = inference_tensor(device)
    run_inside(run, update, t)
    assert_result(t, update, "inference tensor")


def _require_grad(t, spelling):
    if spelling == "t.requires_grad_()":
        t.requires_grad_()
    else:
        t.requires_grad = True


# > INFER-11: Outside inference mode, `t.requires_grad_()` (or `t.requires_grad = True`) on an inference
# > tensor raises `RuntimeError` whose message contains "Setting requires_grad=True on inference tensor
# > outside InferenceMode is not allowed".
@pytest.mark.clause("INFER-11")
@pytest.mark.parametrize("spelling", ["t.requires_grad_()", "t.requires_grad = True"])
def test_requires_grad_on_inference_tensor_raises(device, spelling, run):
    t = inference_tensor(device)
    with raises(RuntimeError, NO_REQUIRES_GRAD):
        run(_require_grad, t, spelling)
    assert t.requires_grad is False


# > INFER-12: Outside inference mode, the result of every operation of the population `NON_VIEW_OPS` (listed above;
# > `t.clone()`, `t * 2` and `t.sin()` among them) applied to an inference tensor `t` is a normal tensor: it has a
# > version counter (reading `_version` raises no error, and an in-place update increases it), accepts in-place updates,
# > and can be saved for backward (`n * x` is recorded, where `n` is that result). (`t.contiguous()` of a contiguous `t`
# > is not a member: it returns `t` itself, INFER-42.)
@pytest.mark.clause("INFER-12")
@pytest.mark.parametrize("op", ["t.clone()", "t * 2", "t.sin()"])
def test_clone_outside_gives_normal_tensor(device, op):
    t = inference_tensor(device)
    n = {"t.clone()": lambda: t.clone(), "t * 2": lambda: t * 2, "t.sin()": lambda: t.sin()}[op]()
    assert n.is_inference() is False
    before = n._version  # readable; its value is UNSPECIFIED (VERSION-45)
    n.add_(1)
    assert n._version > before
    x = leaf(device)
    y = n * x
    assert (y.requires_grad, y.grad_fn is not None) == (True, True)


@pytest.mark.clause("INFER-12")
@pytest.mark.parametrize("op", NON_VIEW_OPS.params())
def test_non_view_ops_outside_give_normal_tensor(device, op):
    with torch.inference_mode():
        t = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device) * 1
    n = op(t)
    assert n.is_inference() is False
    before = n._version  # readable; its value is UNSPECIFIED (VERSION-45)
    n.add_(1)
    assert n._version > before
    x = torch.tensor(1.0, device=device, requires_grad=True)
    y = n * x
    assert (y.requires_grad, y.grad_fn is not None) == (True, True)


# > INFER-42: Outside inference mode, `t.contiguous()` of an inference tensor `t` that is already contiguous returns `t`
# > itself (`t.contiguous() is t`), so, unlike the results of INFER-12 (`t.t().contiguous()`, which copies, is a member
# > of `NON_VIEW_OPS`), it is an inference tensor: `is_inference()` is True, reading its `_version` raises
# > `RuntimeError` whose message contains "Inference tensors do not track version counter", an in-place update
# > (`c.add_(1)`) raises `RuntimeError` whose message contains "Inplace update to inference tensor outside InferenceMode
# > is not allowed", and `c * x` for `x` that requires grad raises `RuntimeError` whose message contains "Inference
# > tensors cannot be saved for backward". To get a normal tensor, use `t.clone()`.
@pytest.mark.clause("INFER-42")
@pytest.mark.parametrize("mode", ["grad mode enabled", "no_grad"])
def test_contiguous_of_contiguous_inference_tensor_is_itself(device, mode):
    t = inference_tensor(device)
    assert t.is_contiguous()
    with torch.set_grad_enabled(mode == "grad mode enabled"):
        c = t.contiguous()
        assert c is t
        assert c.is_inference() is True
        with raises(RuntimeError, NO_VERSION):
            _ = c._version
        with raises(RuntimeError, NO_INPLACE):
            c.add_(1)
    x = leaf(device)
    with raises(RuntimeError, CANNOT_SAVE):
        c * x


# > INFER-13: Inside inference mode, an in-place update of a normal tensor that is not a view is accepted and increases
# > its `_version`, by every spelling of INFER-9: a leaf that requires grad stays a leaf that requires grad and has no
# > `grad_fn`; a non-leaf (`a * 1`) keeps the same `grad_fn` object (the update is not recorded); a tensor that does not
# > require grad stays so; none becomes an inference tensor. A view that has a `grad_fn` does not keep its `grad_fn`
# > object (INFER-21, INFER-22).
@pytest.mark.clause("INFER-13")
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
@pytest.mark.parametrize("kind", ["leaf requiring grad", "non-leaf", "plain"])
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_inplace_on_normal_tensor_inside_bumps_version(device, update, kind, run):
    base = leaf(device)
    t = {"leaf requiring grad": base, "non-leaf": base * 1, "plain": torch.tensor([1.0, 2.0], device=device)}[kind]
    fn = t.grad_fn
    before = t._version
    run_inside(run, update, t)
    assert t._version > before
    assert t.grad_fn is fn
    assert (t.is_inference(), t.requires_grad, t.is_leaf) == (False, kind != "plain", kind != "non-leaf")


REGENERATED_VIEW = "is a view and its base or another view of its base has been modified inplace"
VIEW_TARGETS = view_and_base_targets(VIEW_OPS)  # the members with one output, through `y` and `b`


def _view_of(device, kind):
    """`(b, y)`, made outside the mode: `b` a (2, 2) leaf that requires grad or the non-leaf `a * 1`, and `y = b[1]`;
    or the counterexample `b = a * 1` of a 4-element leaf `a`, `y = b[1:3]`."""
    if kind == "(a * 1)[1:3]":
        b = torch.tensor([1.0, 2.0, 3.0, 4.0], device=device, requires_grad=True) * 1
        return b, b[1:3]
    b = _normal(device, kind)
    return b, b[1]


def _assert_regenerated(y, fn):
    new = y.grad_fn
    assert (y.is_inference(), y.requires_grad, y.is_leaf, y._version > 0) == (False, True, False, True)
    assert (new is fn, type(new).__name__, y.grad_fn is new) == (False, "AsStridedBackward0", True)


# > INFER-21: Inside inference mode, an in-place update of a view `y` that has a `grad_fn`, made outside the mode with
# > grad mode enabled by an operation of `VIEW_OPS` with one output from a tensor `b` that requires grad (a leaf or a
# > non-leaf; for instance `(a * 1)[1:3]`), or of its base `b` (every spelling of `INPLACE_SPELLINGS` on `y = b[1]` or
# > on `b`; `y.add_(1)` or `b.add_(1)` for every such operation, but `y.add_(1)` of `b.expand(3, 2, 2)`, which torch
# > refuses, the elements of the view overlapping), is accepted; afterwards `y` is still a normal non-leaf that requires
# > grad and `y._version` has increased, but `y.grad_fn` is a new node object of class `AsStridedBackward0`, not the
# > node it had before (autograd regenerates the node of a view whose version changed when it is next read; later reads
# > return the new object), as under `torch.no_grad()` (NOGRAD-18).
@pytest.mark.clause("INFER-21")
@pytest.mark.parametrize(
    "kind, target",
    [("non-leaf", "y"), ("non-leaf", "b"), ("leaf", "y"), ("leaf", "b"), ("(a * 1)[1:3]", "y")],
)
def test_inplace_on_view_inside_regenerates_grad_fn(device, kind, target):
    def check(update):
        b, y = _view_of(device, kind)
        fn = y.grad_fn
        assert (fn is not None, y._is_view(), y.is_leaf) == (True, True, False)
        with torch.inference_mode():  # eager only: INFER-21 is about eager mode
            update(y if target == "y" else b)
        _assert_regenerated(y, fn)

    check_each(INPLACE_SPELLINGS, check)


def _add_one(t):
    t.add_(1)


@pytest.mark.clause("INFER-21")
@pytest.mark.parametrize("view, target", VIEW_TARGETS)
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_inplace_on_views_inside_regenerates_grad_fn(device, view, target, kind):
    b = _normal(device, kind)
    y = view(b)
    fn = y.grad_fn
    assert (fn is not None, y._is_view(), y.is_leaf) == (True, True, False)
    with torch.inference_mode():
        _add_one(y if target == "y" else b)
    _assert_regenerated(y, fn)


# > INFER-22: For a view `y` that is the first output of `b.split(1)`, `b.split([1, 1])`, `b.chunk(2)` or
# > `b.unbind()` (made outside the mode with grad mode enabled, from a tensor `b` that requires grad, a leaf or a
# > non-leaf), `y.add_(1)` or `b.add_(1)` inside inference mode is accepted, but reading `y.grad_fn` afterwards raises
# > RuntimeError whose message contains "is a view and its base or another view of its base has been modified
# > inplace".
@pytest.mark.clause("INFER-22")
@pytest.mark.parametrize("view", MULTI_OUTPUT_VIEW_OPS.params())
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
@pytest.mark.parametrize("target", ["y", "b"])
def test_inplace_on_multi_output_view_inside_then_grad_fn_raises(device, view, kind, target):
    b = _normal(device, kind)
    y = view(b)
    assert y.grad_fn is not None
    with torch.inference_mode():
        _add_one(y if target == "y" else b)
    with raises(RuntimeError, REGENERATED_VIEW):
        y.grad_fn  # noqa: B018 - reading it is the operation


# > INFER-17: The values of a tensor after an update of INFER-10 or INFER-13 are the result of the operation.
@pytest.mark.clause("INFER-17")
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
def test_inplace_on_normal_tensor_inside_values(device, update, run):
    t = leaf(device)
    run_inside(run, update, t)
    assert_result(t, update, "leaf, updated inside inference_mode")


# > INFER-14: So the version check still applies: when a graph saved `x` (`(x * x).sum()`) and `x` is then
# > updated in place inside inference mode, `backward()` of that graph raises `RuntimeError` whose message
# > contains "one of the variables needed for gradient computation has been modified by an inplace operation".
@pytest.mark.clause("INFER-14")
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_inplace_inside_on_saved_tensor_raises(device, update, run):
    x = leaf(device)
    loss = (x * x).sum()
    run_inside(run, update, x)
    with raises(RuntimeError, SAVED_MODIFIED):
        loss.backward()


# > INFER-15: `torch.inference_mode(False)` inside inference mode disables it: `is_inference_mode_enabled()` is False,
# > grad mode is enabled, operations on tensors that require grad are recorded and give normal tensors, and new tensors
# > are normal; on leaving it, inference mode is enabled again. Outside inference mode, `torch.inference_mode(False)`
# > leaves inference mode disabled and enables grad mode, also inside `torch.no_grad()` (operations there are recorded);
# > on leaving it, grad mode is what it was.
@pytest.mark.clause("INFER-15")
@pytest.mark.parametrize("outer_grad", [True, False])
def test_inference_mode_false(device, outer_grad):
    x = leaf(device)
    with torch.inference_mode():
        with torch.inference_mode(False):
            assert (torch.is_inference_mode_enabled(), torch.is_grad_enabled()) == (False, True)
            y = x * 2
            z = torch.zeros(2, device=device)
        assert (torch.is_inference_mode_enabled(), torch.is_grad_enabled()) == (True, False)
    assert (y.requires_grad, y.grad_fn is not None, y.is_inference(), z.is_inference()) == (True, True, False, False)
    with torch.set_grad_enabled(outer_grad):
        with torch.inference_mode(False):
            assert (torch.is_inference_mode_enabled(), torch.is_grad_enabled()) == (False, True)
            assert (x * 2).requires_grad is True
        assert (torch.is_inference_mode_enabled(), torch.is_grad_enabled()) == (False, outer_grad)


# > INFER-16: `torch.enable_grad` inside inference mode makes `torch.is_grad_enabled()` True, but inference mode stays
# > enabled: results of operations on tensors that require grad still do not require grad, have no `grad_fn`, and are
# > inference tensors.
@pytest.mark.clause("INFER-16")
def test_enable_grad_inside_inference_mode(device):
    x = leaf(device)
    with torch.inference_mode():
        with torch.enable_grad():
            assert (torch.is_grad_enabled(), torch.is_inference_mode_enabled()) == (True, True)
            y = x * 2
    assert (y.requires_grad, y.grad_fn, y.is_inference()) == (False, None, True)


# > INFER-18: `backward()` of a graph recorded outside inference mode runs inside it, and computes the same
# > gradient values as outside it.
@pytest.mark.clause("INFER-18")
def test_backward_inside_inference_mode(device):
    x = leaf(device)
    loss = (x * x).sum()
    with torch.inference_mode():
        loss.backward()
    assert_values(x.grad, [2.0, 4.0], "x.grad of (x * x).sum() at [1, 2]")


# > INFER-19: A gradient that `backward()` run inside inference mode stores into an empty `.grad` is an
# > inference tensor; a later `backward()` outside the mode, which would accumulate into it in place, raises
# > `RuntimeError` whose message contains "Inplace update to inference tensor outside InferenceMode is not
# > allowed", and so does `x.grad.zero_()` under `torch.no_grad()`. After `x.grad = None` a `backward()` outside
# > the mode stores a normal tensor.
@pytest.mark.clause("INFER-19")
def test_grad_stored_inside_inference_mode_is_inference_tensor(device):
    x = leaf(device)
    loss = (x * x).sum()
    with torch.inference_mode():
        loss.backward()
    assert x.grad.is_inference() is True
    with raises(RuntimeError, NO_INPLACE):
        (x * x).sum().backward()
    with torch.no_grad():
        with raises(RuntimeError, NO_INPLACE):
            x.grad.zero_()
    x.grad = None
    (x * x).sum().backward()
    assert x.grad.is_inference() is False
