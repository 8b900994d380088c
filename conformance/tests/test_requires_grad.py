"""Conformance tests for spec/requires_grad.md (`requires_grad`). Each test quotes the clause it proves."""

import pytest
import torch

from conformance.harness.checks import NO_GRAD_FN, assert_values, compiled_since, leaf, raises
from conformance.harness.kinds import GRAD_LEAF_KINDS, TENSOR_KINDS
from conformance.harness.populations import BINARY_OPS, NON_DIFFERENTIABLE_RESULTS, NON_VIEW_OPS, VIEW_OPS, check_each

# Compile mode of this page is specified on every release that has torch.compile (2.1 on); on 2.1 the method
# `requires_grad_()` differs compiled (REQGRAD-90): the tests that change a leaf's flag with it say so with
# compiled_since("2.2") on the method's parameters only; the assignment `t.requires_grad = b` (the setter) holds
# compiled on 2.1 too (REQGRAD-5, REQGRAD-6, REQGRAD-13 run it there), so it needs no clause of its own.

LEAF_ONLY = "you can only change requires_grad flags of leaf variables"

FACTORIES = {
    "torch.tensor": lambda device, **kw: torch.tensor([1.0, 2.0], device=device, **kw),
    "torch.zeros": lambda device, **kw: torch.zeros(2, device=device, **kw),
    "torch.ones": lambda device, **kw: torch.ones(2, device=device, **kw),
    "torch.empty": lambda device, **kw: torch.empty(2, device=device, **kw),
    "torch.full": lambda device, **kw: torch.full((2,), 1.0, device=device, **kw),
    "torch.arange": lambda device, **kw: torch.arange(2.0, device=device, **kw),
    "torch.randn": lambda device, **kw: torch.randn(2, device=device, **kw),
}
INT_DTYPES = [torch.int64, torch.int32, torch.int8, torch.uint8, torch.bool]


def _set_attr(flag):
    def step(t):
        t.requires_grad = flag

    return step


# The update steps of the requires_grad clauses: the method returns its tensor, the attribute assignment nothing.
SET = {
    "requires_grad_()": lambda t: t.requires_grad_(),
    "requires_grad_(True)": lambda t: t.requires_grad_(True),
    "requires_grad_(False)": lambda t: t.requires_grad_(False),
    "requires_grad = True": _set_attr(True),
    "requires_grad = False": _set_attr(False),
}
GRAD_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128]


# > REQGRAD-1: A tensor made by a factory function (`torch.tensor`, `torch.zeros`, `torch.ones`, `torch.empty`,
# > `torch.full`, `torch.arange`, `torch.randn`) without `requires_grad=True` does not require grad and is a leaf
# > without `grad_fn`; `torch.zeros_like` of a tensor that requires grad does not require grad either.
@pytest.mark.clause("REQGRAD-1")
@pytest.mark.parametrize("factory", [*FACTORIES, "torch.zeros_like(leaf)"])
def test_new_tensors_do_not_require_grad(device, factory):
    if factory == "torch.zeros_like(leaf)":
        t = torch.zeros_like(leaf(device))
    else:
        t = FACTORIES[factory](device)
    assert (t.requires_grad, t.is_leaf, t.grad_fn) == (False, True, None)


# > REQGRAD-2: A factory function called with `requires_grad=True` and an integer or bool dtype raises `RuntimeError`
# > whose message contains "Only Tensors of floating point and complex dtype can require gradients".
@pytest.mark.clause("REQGRAD-2")
@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("factory", ["torch.tensor", "torch.zeros", "torch.ones", "torch.empty"])
def test_factory_integer_requires_grad_raises(device, factory, dtype):
    with raises(RuntimeError, "Only Tensors of floating point and complex dtype can require gradients"):
        FACTORIES[factory](device, dtype=dtype, requires_grad=True)


# > REQGRAD-3: `t.requires_grad_()` (or `t.requires_grad_(True)`) on an integer or bool tensor raises `RuntimeError`
# > whose message contains "only Tensors of floating point dtype can require gradients" (the message does not mention
# > complex dtypes, which are accepted, REQGRAD-5); `t` still does not require grad.
@pytest.mark.clause("REQGRAD-3")
@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("spelling", ["requires_grad_()", "requires_grad_(True)"])
def test_requires_grad_method_integer_raises(device, spelling, dtype, run):
    t = torch.zeros(2, device=device, dtype=dtype)
    with raises(RuntimeError, "only Tensors of floating point dtype can require gradients"):
        run(SET[spelling], t)
    assert not t.requires_grad


# > REQGRAD-4: `t.requires_grad = True` on an integer or bool tensor raises `RuntimeError` whose message contains "only
# > Tensors of floating point and complex dtype can require gradients"; `t` still does not require grad.
@pytest.mark.clause("REQGRAD-4")
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_requires_grad_setter_integer_raises(device, dtype, run):
    t = torch.zeros(2, device=device, dtype=dtype)
    with raises(RuntimeError, "only Tensors of floating point and complex dtype can require gradients"):
        run(SET["requires_grad = True"], t)
    assert not t.requires_grad


# > REQGRAD-5: A tensor of a floating point dtype (`float16`, `bfloat16`, `float32`, `float64`) or a complex dtype
# > (`complex64`, `complex128`) can be made to require grad by each of the three spellings (`requires_grad=True` of a
# > factory, `t.requires_grad_()`, `t.requires_grad = True`), and is then a leaf. Setting `requires_grad` to False
# > (`requires_grad_(False)`, `t.requires_grad = False`) is accepted on a leaf of each of these dtypes and of `int64`,
# > `int32`, `int8`, `uint8` and `bool`.
@pytest.mark.clause("REQGRAD-5")
@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize(
    "spelling", compiled_since("2.2", ["requires_grad_()", "requires_grad = True"], ["requires_grad_()"], "REQGRAD-90")
)  # compiled, before 2.2: the method, REQGRAD-90 (the assignment holds compiled on 2.1)
def test_floating_and_complex_can_require_grad(device, spelling, dtype, run):
    t = torch.zeros(2, device=device, dtype=dtype)
    run(SET[spelling], t)
    assert (t.requires_grad, t.is_leaf) == (True, True)


@pytest.mark.clause("REQGRAD-5")
@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_floating_and_complex_factory_can_require_grad(device, dtype):  # a constructor: eager-only
    t = torch.zeros(2, device=device, dtype=dtype, requires_grad=True)
    assert (t.requires_grad, t.is_leaf) == (True, True)


@pytest.mark.clause("REQGRAD-5")
@pytest.mark.parametrize("dtype", INT_DTYPES + GRAD_DTYPES)
def test_requires_grad_false_accepted_on_any_dtype(device, dtype, run):
    t = torch.zeros(2, device=device, dtype=dtype)
    assert run(SET["requires_grad_(False)"], t) is t
    run(SET["requires_grad = False"], t)
    assert not t.requires_grad


def _toggle(t, flag, spelling):
    if spelling == "requires_grad_":
        return t.requires_grad_(flag)
    t.requires_grad = flag


# > REQGRAD-6: On a leaf that is not a view, of a floating-point or complex dtype (every kind of tensor of the
# > population `TENSOR_KINDS`, listed below, that is such a leaf: the float32 leaf without grad and the leaves that
# > require grad of INPLACE-1), `t.requires_grad_(b)` returns `t` itself and `t.requires_grad = b` sets the flag; in
# > both directions `t` stays a leaf without `grad_fn`. (An integer or bool tensor refuses `True`: REQGRAD-3, REQGRAD-4;
# > a view taken under `torch.no_grad()` ignores `False`: REQGRAD-14.)
@pytest.mark.clause("REQGRAD-6")
@pytest.mark.parametrize(
    "spelling", compiled_since("2.2", ["requires_grad_", "setter"], ["requires_grad_"], "REQGRAD-90")
)  # compiled, before 2.2: the method, REQGRAD-90 (the setter holds compiled on 2.1)
def test_leaf_toggle(device, spelling, run):
    t = torch.tensor([1.0, 2.0], device=device)
    step = run.function(_toggle)
    for flag in (True, False, True):
        r = step(t, flag, spelling)
        assert r is (t if spelling == "requires_grad_" else None)
        assert (t.requires_grad, t.is_leaf, t.grad_fn) == (flag, True, None)


# > REQGRAD-6: On a leaf that is not a view, of a floating-point or complex dtype (every kind of tensor of the
# > population `TENSOR_KINDS`, listed below, that is such a leaf: the float32 leaf without grad and the leaves that
# > require grad of INPLACE-1), `t.requires_grad_(b)` returns `t` itself and `t.requires_grad = b` sets the flag; in
# > both directions `t` stays a leaf without `grad_fn`. (An integer or bool tensor refuses `True`: REQGRAD-3, REQGRAD-4;
# > a view taken under `torch.no_grad()` ignores `False`: REQGRAD-14.)
@pytest.mark.clause("REQGRAD-6")
@pytest.mark.parametrize("make", [p for p in TENSOR_KINDS.params() if p.id in (*GRAD_LEAF_KINDS, "leaf without grad")])
@pytest.mark.parametrize("spelling", ["requires_grad_", "setter"])
def test_leaf_toggle_of_every_kind(device, make, spelling):
    t = make(device)
    for flag in (False, True, False, True):
        r = _toggle(t, flag, spelling)
        assert r is (t if spelling == "requires_grad_" else None)
        assert (t.requires_grad, t.is_leaf, t.grad_fn) == (flag, True, None)


# > REQGRAD-14: A view taken under `torch.no_grad()` of a tensor that requires grad (`x[:, 1:]` of a leaf `x` that
# > requires grad) is a leaf that requires grad, and its flag cannot be turned off: `v.requires_grad_(False)` returns
# > `v` and `v.requires_grad = False` raises no error, but afterwards `v.requires_grad` is still True (a view's flag
# > follows its base). Observed the same on 2.0.1, 2.8.0 and 2.15.0.
@pytest.mark.clause("REQGRAD-14")
@pytest.mark.parametrize("spelling", ["requires_grad_", "setter"])
def test_no_grad_view_keeps_requires_grad(device, spelling):
    x = leaf(device, (1.0, 2.0, 3.0))
    with torch.no_grad():
        v = x[1:]
    assert (v.is_leaf, v.requires_grad, v.grad_fn, v._is_view()) == (True, True, None, True)
    assert _toggle(v, False, spelling) is (v if spelling == "requires_grad_" else None)
    assert (v.requires_grad, v.is_leaf) == (True, True)


# > REQGRAD-7: On a non-leaf `y` (the result of an operation recorded by autograd), `y.requires_grad = False`,
# > `y.requires_grad_(False)` and `y.requires_grad = True` raise `RuntimeError` whose message contains "you can only
# > change requires_grad flags of leaf variables"; for False the message goes on to suggest "var_no_grad =
# > var.detach()". `y` is unchanged.
@pytest.mark.clause("REQGRAD-7")
@pytest.mark.parametrize("spelling", ["y.requires_grad = False", "y.requires_grad_(False)", "y.requires_grad = True"])
def test_non_leaf_requires_grad_change_raises(device, spelling, run):
    y = leaf(device) * 2
    fn = y.grad_fn
    with raises(RuntimeError, LEAF_ONLY) as info:
        run(SET[spelling[2:]], y)
    if "False" in spelling:
        assert "var_no_grad = var.detach()" in str(info.value)
    assert (y.requires_grad, y.is_leaf, y.grad_fn is fn) == (True, False, True)


# > REQGRAD-8: On a non-leaf `y`, `y.requires_grad_()` and `y.requires_grad_(True)` raise no error, return `y` and
# > change nothing: `y` still requires grad, is not a leaf and keeps its `grad_fn`. (Unlike the attribute assignment of
# > REQGRAD-7.)
@pytest.mark.clause("REQGRAD-8")
@pytest.mark.parametrize("spelling", ["requires_grad_()", "requires_grad_(True)"])
def test_non_leaf_requires_grad_true_is_no_op(device, spelling, run):
    y = leaf(device) * 2
    fn = y.grad_fn
    r = run(SET[spelling], y)
    assert r is y
    assert (y.requires_grad, y.is_leaf, y.grad_fn is fn) == (True, False, True)


# > REQGRAD-9: With grad mode enabled, the result of every operation of the populations `BINARY_OPS`, `NON_VIEW_OPS` and
# > `VIEW_OPS` (listed below) requires grad (and has a `grad_fn`) when at least one of its tensor inputs requires grad;
# > when none does, the result does not require grad, is a leaf and has no `grad_fn`. Operations whose result never
# > requires grad are the exception (REQGRAD-40).
@pytest.mark.clause("REQGRAD-9")
@pytest.mark.parametrize("flags", [(True, False), (False, True), (True, True), (False, False)])
def test_result_requires_grad_if_any_input_does(device, flags):
    def check(op):
        a = torch.tensor([1.0, 2.0], device=device, requires_grad=flags[0])
        c = torch.tensor([3.0, 0.5], device=device, requires_grad=flags[1])
        r = op(a, c)
        assert r.requires_grad == any(flags)
        assert (r.grad_fn is not None) == any(flags)
        assert r.is_leaf == (not any(flags))

    check_each(BINARY_OPS, check)


@pytest.mark.clause("REQGRAD-9")
@pytest.mark.parametrize("kind", ["leaf that requires grad", "non-leaf", "does not require grad"])
def test_result_of_one_input_requires_grad_if_it_does(device, kind):
    def check(op):
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=kind != "does not require grad")
        if kind == "non-leaf":
            x = x * 1
        r = op(x)
        tracked = kind != "does not require grad"
        assert (r.requires_grad, r.grad_fn is not None, r.is_leaf) == (tracked, tracked, not tracked)

    check_each(NON_VIEW_OPS, check)
    check_each(VIEW_OPS, check)


# > REQGRAD-40: With grad mode enabled, the result of every operation of the population `NON_DIFFERENTIABLE_RESULTS`
# > (listed below: results of an integer or bool dtype, `x.detach()`, and new tensors such as `torch.zeros_like(x)` that
# > take only the shape, dtype and device of `x`) does not require grad, is a leaf and has no `grad_fn`, even when its
# > input requires grad (a leaf or a non-leaf). (For integer results, NEW-12 states what `backward()` from them does.)
@pytest.mark.clause("REQGRAD-40")
@pytest.mark.parametrize("op", NON_DIFFERENTIABLE_RESULTS.params())
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_non_differentiable_results_do_not_require_grad(device, op, kind):
    x = leaf(device)
    if kind == "non-leaf":
        x = x * 1
    r = op(x)
    assert (r.requires_grad, r.is_leaf, r.grad_fn) == (False, True, None)


# > REQGRAD-10: After `backward()`, a leaf that does not require grad and took part in the graph has
# > `.grad` None, while a leaf that requires grad gets its gradient.
@pytest.mark.clause("REQGRAD-10")
def test_non_requiring_leaf_gets_no_grad(device):
    a = leaf(device)
    c = torch.tensor([3.0, 4.0], device=device)
    (a * c).sum().backward()
    assert c.grad is None
    assert_values(a.grad, [3.0, 4.0], "a.grad = c")


# > REQGRAD-11: `t.backward()` where `t` does not require grad (a plain tensor, a detached one, or a result computed
# > only from tensors that do not require grad) raises `RuntimeError` whose message contains "element 0 of tensors does
# > not require grad and does not have a grad_fn", also when `t` has more than one element: this check comes before the
# > one that gives "grad can be implicitly created only for scalar outputs".
@pytest.mark.clause("REQGRAD-11")
@pytest.mark.parametrize("shape", [(), (5,)])
@pytest.mark.parametrize("kind", ["plain", "detached", "from plain inputs"])
def test_backward_of_tensor_without_grad_raises(device, kind, shape):
    t = torch.ones(shape, device=device)
    if kind == "detached":
        t = (leaf(device).sum() * t).detach()
    elif kind == "from plain inputs":
        t = t * 2
    with raises(RuntimeError, NO_GRAD_FN):
        t.backward()


@pytest.mark.clause("REQGRAD-11")
def test_backward_non_scalar_requiring_grad_raises_other_error(device):
    # The contrast that shows the order of the checks.
    with raises(RuntimeError, "grad can be implicitly created only for scalar outputs"):
        (leaf(device) * 2).backward()


# > REQGRAD-12: `torch.autograd.grad` with respect to a tensor that does not require grad raises `RuntimeError` whose
# > message contains "One of the differentiated Tensors does not require grad".
@pytest.mark.clause("REQGRAD-12")
def test_autograd_grad_wrt_non_requiring_raises(device):
    a = leaf(device)
    c = torch.tensor([3.0, 4.0], device=device)
    y = (a * c).sum()
    with raises(RuntimeError, "One of the differentiated Tensors does not require grad"):
        torch.autograd.grad(y, [c])


# > REQGRAD-13: When a leaf's `requires_grad` is set to False after a graph has used it, `backward()` of that graph
# > raises no error and that leaf's `.grad` stays `None` (the other leaves get their gradients).
@pytest.mark.clause("REQGRAD-13")
@pytest.mark.parametrize(
    "spelling",
    compiled_since("2.2", ["requires_grad_(False)", "requires_grad = False"], ["requires_grad_(False)"], "REQGRAD-90"),
)  # compiled, before 2.2: the method, REQGRAD-90 (the assignment holds compiled on 2.1)
def test_turning_off_after_graph_skips_accumulation(device, spelling, run):
    a = leaf(device)
    b = leaf(device)
    y = (a * b).sum()
    run(SET[spelling], a)
    y.backward()
    assert a.grad is None
    assert b.grad is not None


# > REQGRAD-90 (compile, until 2.2): On 2.1, inside a compiled function, `t.requires_grad_(b)` on a leaf `t`
# > returns `t` but leaves `t.requires_grad` as it was, in both directions and for each floating point and complex
# > dtype of REQGRAD-5: a tensor made without `requires_grad` still does not require grad after
# > `t.requires_grad_()`, and a leaf that requires grad still does after `t.requires_grad_(False)`, so a graph
# > built before it still accumulates into its `.grad` (REQGRAD-13 does not hold). With Dynamo alone
# > (`backend="eager"`) the flag is set, so AOTAutograd does not apply this mutation of a graph input
# > (pytorch/pytorch#113291 discusses `requires_grad` mutations in AOTAutograd). Layer: AOTAutograd. Run on 2.1.2
# > (as said here) and 2.2.2, where REQGRAD-90's tests fail (REQGRAD-5, REQGRAD-6 and REQGRAD-13 hold compiled
# > there).
@pytest.mark.clause("REQGRAD-90")
@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_compiled_requires_grad_method_leaves_the_flag_on_2_1(device, dtype, run):
    t = torch.zeros(2, device=device, dtype=dtype)
    step = run.function(_toggle)
    for flag in (True, False, True):
        assert step(t, flag, "requires_grad_") is t
        assert (t.requires_grad, t.is_leaf, t.grad_fn) == (False, True, None)
    t = torch.zeros(2, device=device, dtype=dtype, requires_grad=True)
    assert step(t, False, "requires_grad_") is t
    assert (t.requires_grad, t.is_leaf, t.grad_fn) == (True, True, None)


@pytest.mark.clause("REQGRAD-90")
def test_compiled_requires_grad_false_does_not_stop_accumulation_on_2_1(device, run):
    a = leaf(device)
    b = leaf(device)
    y = (a * b).sum()
    run(SET["requires_grad_(False)"], a)
    y.backward()
    assert a.grad is not None and b.grad is not None
    if device != "meta":
        assert_values(a.grad, [1.0, 2.0], "a.grad")


# Seeds, run as written (fixing only what stops them from running, as noted).


@pytest.mark.clause("REQGRAD-1", "REQGRAD-11")
@pytest.mark.parametrize("fix", ["torch.randn(5, requires_grad=False)", "torch.autograd.Variable"])
def test_seed_ko_requires_grad_false(device, fix):
    # Korean seed, "requires_grad 속성 사용". As written it calls torch.Variable, which does not exist:
    with raises(AttributeError, "has no attribute 'Variable'"):
        torch.Variable(torch.randn(5), requires_grad=False)
    # Fixed to run, two ways that give the same tensor.
    if fix == "torch.autograd.Variable":
        x = torch.autograd.Variable(torch.randn(5, device=device), requires_grad=False)
    else:
        x = torch.randn(5, device=device, requires_grad=False)
    x.data = torch.randn(5, device=device)
    y = x.sum()
    assert (x.requires_grad, y.requires_grad) == (False, False)
    with raises(RuntimeError, NO_GRAD_FN):
        y.backward()
    # print(x.grad) is never reached; x.grad is None.
    assert x.grad is None


@pytest.mark.clause("REQGRAD-10")
def test_seed_ko_requires_grad_false_in_a_graph(device):
    # The seed's claim "requires_grad 속성을 False로 설정하면 Variable에 대한 역전파가 수행되지 않습니다" holds
    # for x only when something else in the graph requires grad: then backward runs and x.grad stays None.
    x = torch.randn(5, device=device, requires_grad=False)
    w = torch.ones(5, device=device, requires_grad=True)
    x.data = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0], device=device)
    (w * x).sum().backward()
    assert x.grad is None
    assert_values(w.grad, [1.0, 2.0, 3.0, 4.0, 5.0], "w.grad = x")
