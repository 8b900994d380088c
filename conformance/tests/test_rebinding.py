"""Conformance tests for spec/rebinding.md (rebinding a name: `x = something_new`)."""

import warnings

import pytest
import torch

from conformance.harness.checks import NO_GRAD_FN, assert_values, leaf, raises
from conformance.harness.populations import NON_VIEW_OPS, REBIND_TARGETS

NON_LEAF_GRAD_WARNING = "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"
LEAF_IN_PLACE = "leaf Variable that requires grad is being used in an in-place operation."


# > REBIND-1: Rebinding a name that refers to a tensor leaves the tensor it referred to unchanged: it is still the same
# > object, with the same `_version`, `requires_grad`, leafness and `grad_fn`, and the name now refers to another
# > object. This holds whatever the new object is: every member of the population `REBIND_TARGETS` (listed below; a
# > fresh tensor, `x + 1`, `x * 2`, `x.detach()`, `x.clone()`, a view of `x`, ...).
@pytest.mark.clause("REBIND-1")
@pytest.mark.parametrize("rebind", REBIND_TARGETS.params())
def test_rebinding_leaves_old_tensor_unchanged(device, rebind, run):
    x = leaf(device)
    old, ident = x, id(x)
    x = run(rebind, x)
    assert x is not old
    assert id(old) == ident
    assert (old._version, old.requires_grad, old.is_leaf, old.grad_fn) == (0, True, True, None)


@pytest.mark.clause("REBIND-2")
@pytest.mark.parametrize("rebind", REBIND_TARGETS.params())
def test_rebinding_leaves_old_values(device, rebind, run):
    # > REBIND-2: The values of the old tensor, after rebinding by any of the spellings of REBIND-1, are those it had
    # > before.
    x = leaf(device)
    old = x
    x = run(rebind, x)
    assert_values(old, [1.0, 2.0], "old tensor after rebinding the name")


# > REBIND-3: A graph built from the old tensor before the rebinding still backpropagates into the old
# > tensor: `backward()` raises no error and the gradient lands in the old tensor's `.grad`, whatever the
# > name is rebound to (every member of REBIND_TARGETS).
@pytest.mark.clause("REBIND-3")
@pytest.mark.parametrize("rebind", REBIND_TARGETS.params())
def test_graph_of_old_tensor_still_backpropagates(device, rebind, run):
    x = leaf(device)
    old = x
    loss = (x * x).sum()
    x = run(rebind, x)
    loss.backward()
    assert_values(old.grad, [2.0, 4.0], "old.grad = 2 * old")
    if x.is_leaf and x.requires_grad:
        assert x.grad is None, "the new leaf received no gradient from the old graph"


# > REBIND-4: A tensor made fresh by a factory function (`torch.tensor(v)`, `torch.zeros(...)`, `torch.randn(...)`) does
# > not require grad, is a leaf and has no `grad_fn`: after `x = torch.tensor(v)`, `x.sum().backward()` raises
# > `RuntimeError` whose message contains "element 0 of tensors does not require grad and does not have a grad_fn". The
# > same holds when the new tensor was created inside `torch.no_grad`.
@pytest.mark.clause("REBIND-4")
@pytest.mark.parametrize("factory", ["torch.tensor", "torch.zeros", "torch.randn", "torch.tensor under no_grad"])
def test_fresh_tensor_does_not_require_grad(device, factory):
    x = leaf(device)
    if factory == "torch.tensor":
        x = torch.tensor([3.0, 4.0], device=device)
    elif factory == "torch.zeros":
        x = torch.zeros(2, device=device)
    elif factory == "torch.randn":
        x = torch.randn(2, device=device)
    else:
        with torch.no_grad():
            x = torch.tensor([3.0, 4.0], device=device)
    assert (x.requires_grad, x.is_leaf, x.grad_fn) == (False, True, None)
    with raises(RuntimeError, NO_GRAD_FN):
        x.sum().backward()


# > REBIND-5: After `x = torch.tensor(v, requires_grad=True)` the name refers to a new leaf that requires
# > grad; backpropagation through it works and its gradient lands in the new tensor, not in the old one.
@pytest.mark.clause("REBIND-5")
def test_fresh_leaf_requiring_grad_backpropagates(device):
    x = leaf(device)
    old = x
    x = torch.tensor([3.0, 4.0], device=device, requires_grad=True)
    assert (x.requires_grad, x.is_leaf, x.grad_fn) == (True, True, None)
    (x * x).sum().backward()
    assert_values(x.grad, [6.0, 8.0], "new x.grad = 2 * new x")
    assert old.grad is None


# > REBIND-6: After `x = x + 1` (every operation of the population `NON_VIEW_OPS`, listed below, of a tensor that
# > requires grad, with grad mode on) the name refers to a non-leaf that requires grad and has a `grad_fn`:
# > `AddBackward0` for `x + 1`, `MulBackward0` for `x * 2`, `SubBackward0` for `x - 0.1 * g`. (See outofplace.)
REBIND_STEPS = {
    "x = x + 1": lambda x, g: x + 1,
    "x = x * 2": lambda x, g: x * 2,
    "x = x - 0.1 * g": lambda x, g: x - 0.1 * g,
}


@pytest.mark.clause("REBIND-6")
@pytest.mark.parametrize(
    ("spelling", "grad_fn"),
    [
        ("x = x + 1", "AddBackward0"),
        ("x = x * 2", "MulBackward0"),
        ("x = x - 0.1 * g", "SubBackward0"),
    ],
)
def test_rebinding_to_result_makes_non_leaf(device, spelling, grad_fn, run):
    x = leaf(device)
    g = torch.ones(2, device=device)
    x = run(REBIND_STEPS[spelling], x, g)
    assert (x.requires_grad, x.is_leaf, type(x.grad_fn).__name__) == (True, False, grad_fn)


# > REBIND-90: When the new object of REBIND-6 is computed in a compiled function (`x = f(x)` with `f` compiled, every
# > operation of `NON_VIEW_OPS`, and `x + 1`, `x * 2`, `x - 0.1 * g`), the name refers to a non-leaf that requires grad
# > and has a `grad_fn`, which is `CompiledFunctionBackward`, not `AddBackward0`, `MulBackward0` or `SubBackward0`. The
# > layer is AOTAutograd. Evidence: the executed tests; `CompiledFunction` in
# > `torch/_functorch/_aot_autograd/runtime_wrappers.py`.
@pytest.mark.clause("REBIND-90")
@pytest.mark.parametrize("spelling", ["x = x + 1", "x = x * 2", "x = x - 0.1 * g"])
def test_rebinding_to_result_makes_non_leaf_compiled(device, spelling, run):
    test_rebinding_to_result_makes_non_leaf(device, spelling, "CompiledFunctionBackward", run)


@pytest.mark.clause("REBIND-6")
@pytest.mark.parametrize("op", NON_VIEW_OPS.params())
def test_rebinding_to_any_non_view_result_makes_non_leaf(device, op, run):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=True)
    x = run(op, x)
    assert (x.requires_grad, x.is_leaf) == (True, False)
    assert x.grad_fn is not None


@pytest.mark.clause("REBIND-90")
@pytest.mark.parametrize("op", NON_VIEW_OPS.params())
def test_rebinding_to_any_non_view_result_makes_non_leaf_compiled(device, op, run):
    test_rebinding_to_any_non_view_result_makes_non_leaf(device, op, run)


# > REBIND-7: A graph built from the new `x` of REBIND-6 backpropagates through it into the old leaf: after `x = x + 1`,
# > the gradient of `(x * x).sum()` lands in the old tensor's `.grad` (`2 * (old + 1)`).
@pytest.mark.clause("REBIND-7")
def test_rebinding_to_result_backpropagates_into_old_leaf(device, run):
    x = leaf(device)
    old = x
    x = run(lambda x: x + 1, x)
    (x * x).sum().backward()
    assert_values(old.grad, [4.0, 6.0], "old.grad = 2 * (old + 1)")


# > REBIND-8: Reading `.grad` of the new non-leaf `x` of REBIND-6, before or after `backward()`, gives `None` and emits
# > a `UserWarning` whose message contains "The .grad attribute of a Tensor that is not a leaf Tensor is being
# > accessed".
@pytest.mark.clause("REBIND-8")
@pytest.mark.parametrize("when", ["before backward", "after backward"])
def test_grad_of_rebound_non_leaf_is_none_with_warning(device, when, run):
    x = leaf(device)
    x = run(lambda x: x + 1, x)
    if when == "after backward":
        (x * x).sum().backward()
    with pytest.warns(UserWarning, match=NON_LEAF_GRAD_WARNING.replace(".", r"\.")):
        grad = x.grad
    assert grad is None


# > REBIND-9: Other references to the old tensor are not updated by rebinding a name: a list, the `param_groups` of an
# > optimizer (`torch.optim.SGD` here), or a module's parameter (`torch.nn.Linear`'s `weight`, after
# > `w = lin.weight; w = torch.nn.Parameter(...)`) still hold the old object.
@pytest.mark.clause("REBIND-9")
def test_rebinding_does_not_update_other_references(device):
    x = leaf(device)
    old = x
    held = [x]
    opt = torch.optim.SGD([x], lr=0.1)
    x = torch.tensor([3.0, 4.0], device=device, requires_grad=True)
    assert held[0] is old
    assert opt.param_groups[0]["params"][0] is old
    lin = torch.nn.Linear(2, 1, device=device)
    weight = lin.weight
    weight = torch.nn.Parameter(torch.zeros(1, 2, device=device))
    assert lin.weight is not weight
    assert isinstance(lin.weight, torch.nn.Parameter)


@pytest.mark.clause("REBIND-10")
def test_optimizer_steps_old_tensor_after_rebinding(device):
    # > REBIND-10: Consequently an optimizer built with the old tensor updates the old tensor, not the one
    # > the name refers to after rebinding.
    x = leaf(device)
    old = x
    opt = torch.optim.SGD([x], lr=0.5)
    x = torch.tensor([3.0, 4.0], device=device, requires_grad=True)
    (x * x).sum().backward()
    old.grad = torch.ones(2, device=device)
    opt.step()
    assert_values(old, [0.5, 1.5], "old tensor after opt.step()")
    assert_values(x, [3.0, 4.0], "new tensor (not in the optimizer)")


def _step_under_no_grad(x):
    with torch.no_grad():
        return x - 0.1 * x.grad


# > REBIND-11: The update step `x = x - lr * x.grad` inside `torch.no_grad()` gives a leaf that does not require grad,
# > so the next `backward()` through it raises `RuntimeError` "element 0 of tensors does not require grad and does not
# > have a grad_fn". Outside no_grad it gives a non-leaf: after the next `backward()` its `.grad` is `None` and the
# > gradient went to the original leaf.
@pytest.mark.clause("REBIND-11")
def test_update_step_by_rebinding(device, run):
    x = leaf(device)
    (x * x).sum().backward()
    x = run(_step_under_no_grad, x)
    assert (x.requires_grad, x.is_leaf, x.grad_fn) == (False, True, None)
    with raises(RuntimeError, NO_GRAD_FN):
        (x * x).sum().backward()

    x = leaf(device)
    first = x
    (x * x).sum().backward()
    x = run(lambda x: x - 0.1 * x.grad, x)
    assert (x.requires_grad, x.is_leaf) == (True, False)
    first.grad = None
    (x * x).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert x.grad is None
    assert first.grad is not None


# Seeds, run as written (fixing only what stops them from running, as noted).


@pytest.mark.clause("REBIND-4", "REBIND-1")
def test_seed_en_avoiding_reassignment(device):
    # English seed, "Avoiding variable reassignment", third snippet: the "incorrect approach" (commented out
    # in the seed) and the "correct approach".
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    old = x
    x = torch.tensor([3.0, 4.0], device=device)  # "Incorrect approach": a new, unrelated tensor
    assert x is not old and not x.requires_grad and old.requires_grad
    with raises(RuntimeError, NO_GRAD_FN):
        x.sum().backward()
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    # "Correct approach (modifies existing variable)": raises on every version.
    with raises(RuntimeError, LEAF_IN_PLACE):
        x[:] = torch.tensor([3.0, 4.0], device=device)
    assert x._version == 0


@pytest.mark.clause("REBIND-6", "REBIND-7")
@pytest.mark.only_devices("cpu")  # the seed snippet as written: values, on the default device
def test_seed_en_add_equivalent_rebinding(device):
    # English seed, in-place snippet's comment "Equivalent to x = x + 2.0 (but in-place)": the rebinding
    # half runs and stays connected to the graph.
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    old = x
    x = x + 2.0
    assert type(x.grad_fn).__name__ == "AddBackward0"
    x.sum().backward()
    assert_values(old.grad, [1.0, 1.0], "old.grad")


@pytest.mark.clause("REBIND-4")
def test_seed_ko_new_variable(device):
    # Korean seed, "새 Variable 생성" (create a new Variable). As written it calls torch.Variable:
    with raises(AttributeError, "has no attribute 'Variable'"):
        torch.Variable(torch.randn(5))
    # Fixed to run with torch.autograd.Variable (a plain tensor, requires_grad False):
    x = torch.autograd.Variable(torch.randn(5, device=device))
    y = torch.randn(5, device=device)
    y = y.sum()
    with raises(RuntimeError, NO_GRAD_FN):
        y.backward()
    assert x.grad is None  # the seed printed tensor([1., 1., 1., 1., 1.]) for print(y.grad)
