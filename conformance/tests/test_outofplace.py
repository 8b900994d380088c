"""Conformance tests for spec/outofplace.md (a new tensor from an operation: `y = x + 2`)."""

import pytest
import torch

from conformance.harness.checks import assert_values, leaf, same_storage
from conformance.harness.populations import OUT_OF_PLACE_SPELLINGS

NON_LEAF_GRAD_WARNING = r"The \.grad attribute of a Tensor that is not a leaf Tensor is being accessed"


# The spellings of OOP-1 are the population OUT_OF_PLACE_SPELLINGS; spelling -> (operation, grad_fn type name,
# values of y for x = [1, 2], dy/dx)
EFFECTS = {
    "x + 2": ("AddBackward0", [3.0, 4.0], 1.0),
    "x + 2.0": ("AddBackward0", [3.0, 4.0], 1.0),
    "2 + x": ("AddBackward0", [3.0, 4.0], 1.0),
    "x.add(2)": ("AddBackward0", [3.0, 4.0], 1.0),
    "torch.add(x, 2)": ("AddBackward0", [3.0, 4.0], 1.0),
    "x + t": ("AddBackward0", [3.0, 4.0], 1.0),
    "x - 2": ("SubBackward0", [-1.0, 0.0], 1.0),
    "x * 2": ("MulBackward0", [2.0, 4.0], 2.0),
    "x / 2": ("DivBackward0", [0.5, 1.0], 0.5),
}
assert list(EFFECTS) == OUT_OF_PLACE_SPELLINGS.ids()
OPS = {mid: (fn, *EFFECTS[mid]) for mid, fn in OUT_OF_PLACE_SPELLINGS.members}
SPELLING = {fn: mid for mid, fn in OUT_OF_PLACE_SPELLINGS.members}


# > OOP-1: An out-of-place operation `y = op(x)` (each member of the population `OUT_OF_PLACE_SPELLINGS`, listed below:
# > `x + 2`, `x + 2.0`, `2 + x`, `x.add(2)`, `torch.add(x, 2)`, `x + t`, `x - 2`, `x * 2`, `x / 2`) returns a new tensor
# > object that does not share storage with `x`, and leaves `x` as it was: same `_version`, still a leaf that requires
# > grad with no `grad_fn`.
@pytest.mark.clause("OOP-1")
@pytest.mark.parametrize("spelling", OUT_OF_PLACE_SPELLINGS.params())
def test_out_of_place_leaves_x_alone(device, spelling, run):
    x = leaf(device)
    y = run(spelling, x)
    assert y is not x
    assert not same_storage(x, y)
    assert (x._version, x.is_leaf, x.requires_grad, x.grad_fn) == (0, True, True, None)


# > OOP-2: The values of `x` are unchanged by `y = op(x)` (any member of OUT_OF_PLACE_SPELLINGS), and `y` holds
# > the result.
@pytest.mark.clause("OOP-2")
@pytest.mark.parametrize("spelling", OUT_OF_PLACE_SPELLINGS.params())
def test_out_of_place_values(device, spelling, run):
    x = leaf(device)
    y = run(spelling, x)
    assert_values(x, [1.0, 2.0], "x after y = " + SPELLING[spelling])
    assert_values(y, OPS[SPELLING[spelling]][2], "y = " + SPELLING[spelling])


# > OOP-3: When `x` requires grad and grad mode is on, `y = op(x)` requires grad, is not a leaf, and has a `grad_fn`
# > named after the operation: `AddBackward0` for `x + 2`, `x + 2.0`, `2 + x`, `x.add(2)`, `torch.add(x, 2)` and
# > `x + t`; `SubBackward0` for `x - 2`; `MulBackward0` for `x * 2`; `DivBackward0` for `x / 2`. The only input of that
# > `grad_fn` that leads anywhere is the `AccumulateGrad` node of `x`.
@pytest.mark.clause("OOP-3")
@pytest.mark.parametrize("spelling", list(OPS))
def test_out_of_place_result_is_non_leaf(device, spelling, run):
    _check_result_node(device, spelling, run, OPS[spelling][1])


# > OOP-90: When `y = op(x)` (each member of `OUT_OF_PLACE_SPELLINGS`) is computed in a compiled function, with `x` a
# > leaf that requires grad and grad mode on, `y` requires grad and is not a leaf, but its `grad_fn` is
# > `CompiledFunctionBackward` (one node for the whole compiled graph), not the node of the operation; that node leads
# > to the `AccumulateGrad` node of `x`. The layer is AOTAutograd (Dynamo alone, `backend="eager"`, gives the nodes of
# > OOP-3). Evidence: the executed tests; `CompiledFunction` in `torch/_functorch/_aot_autograd/runtime_wrappers.py` (an
# > `autograd.Function` whose backward node is `CompiledFunctionBackward`).
@pytest.mark.clause("OOP-90")
@pytest.mark.parametrize("spelling", list(OPS))
def test_out_of_place_result_is_non_leaf_compiled(device, spelling, run):
    _check_result_node(device, spelling, run, "CompiledFunctionBackward")


def _check_result_node(device, spelling, run, node):
    x = leaf(device)
    y = run(OPS[spelling][0], x)
    assert (y.requires_grad, y.is_leaf) == (True, False)
    assert type(y.grad_fn).__name__ == node
    targets = [fn for fn, _ in y.grad_fn.next_functions if fn is not None]
    assert [type(fn).__name__ for fn in targets] == ["AccumulateGrad"]
    assert targets[0].variable is x


# > OOP-4: Gradients flow through `y` to `x`: backward of a function of `y` accumulates in `x.grad` the
# > chain-rule gradient (for `y = x + 2; z = y * y`, `x.grad` is `2 * (x + 2)`).
@pytest.mark.clause("OOP-4")
@pytest.mark.parametrize("spelling", list(OPS))
def test_gradient_reaches_x(device, spelling, run):
    x = leaf(device)
    op, _, values, slope = OPS[spelling]
    y = run(op, x)
    (y * y).sum().backward()
    assert_values(x.grad, [2.0 * v * slope for v in values], f"x.grad for z = ({spelling})**2")


def _no_grad(op):
    def step(x):
        with torch.no_grad():
            return op(x)

    return step


# > OOP-5: When `x` does not require grad, or the operation runs inside `torch.no_grad()`, `y` does not require grad, is
# > a leaf and has no `grad_fn`.
@pytest.mark.clause("OOP-5")
@pytest.mark.parametrize("spelling", list(OPS))
@pytest.mark.parametrize("how", ["x without grad", "under no_grad"])
def test_out_of_place_without_autograd(device, spelling, how, run):
    if how == "x without grad":
        y = run(OPS[spelling][0], torch.tensor([1.0, 2.0], device=device))
    else:
        y = run(_no_grad(OPS[spelling][0]), leaf(device))
    assert (y.requires_grad, y.is_leaf, y.grad_fn) == (False, True, None)


# > OOP-6: `y` is computed when the operation runs: a later in-place change of `x` (made under `torch.no_grad()`) does
# > not change the values of `y`, and an in-place change of `y` (`y.add_(1)`) changes neither the values of `x` nor
# > `x._version`.
@pytest.mark.clause("OOP-6")
def test_result_is_independent_of_later_changes(device, run):
    x = leaf(device)
    y = run(lambda x: x + 2, x)
    run(_no_grad(lambda x: x.mul_(10)), x)
    assert_values(y, [3.0, 4.0], "y after x.mul_(10)")
    x = leaf(device)
    y = run(lambda x: x + 2, x)
    run(lambda y: y.add_(1), y)
    assert (x._version, y._version > 0) == (0, True)
    assert_values(x, [1.0, 2.0], "x after y.add_(1)")


# > OOP-7: The gradient goes to the leaf `x`, not to `y`: after backward, `y.grad` is `None` and reading it emits a
# > `UserWarning` whose message contains "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed";
# > after `y.retain_grad()`, `y.grad` is the gradient with respect to `y`.
@pytest.mark.clause("OOP-7")
def test_non_leaf_result_grad(device, run):
    x = leaf(device)
    y = run(lambda x: x + 2, x)
    (y * y).sum().backward()
    with pytest.warns(UserWarning, match=NON_LEAF_GRAD_WARNING):
        assert y.grad is None
    assert_values(x.grad, [6.0, 8.0], "x.grad")
    x = leaf(device)
    y = run(lambda x: x + 2, x)
    y.retain_grad()
    (y * y).sum().backward()
    assert_values(y.grad, [6.0, 8.0], "y.grad with retain_grad()")


# Seeds, run as written.


@pytest.mark.clause("OOP-2", "OOP-4")
def test_seed_en_new_variable_from_operation(device):
    # English seed, "Creating a new variable with the desired operation", verbatim ...
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = x + 2.0  # This creates a new variable
    z = y * y
    # ... then, "backprop on x remains intact": it does.
    z.sum().backward()
    assert_values(x, [1.0, 2.0], "x (kept intact)")
    assert_values(x.grad, [6.0, 8.0], "x.grad = 2 * (x + 2)")


@pytest.mark.clause("OOP-1")
def test_seed_en_new_variable_metadata(device):
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = x + 2.0
    assert (y is not x, x._version, x.is_leaf, x.grad_fn) == (True, 0, True, None)


@pytest.mark.clause("OOP-3")
def test_seed_en_new_variable_node_names(device):
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = x + 2.0
    z = y * y
    assert (type(y.grad_fn).__name__, type(z.grad_fn).__name__) == ("AddBackward0", "MulBackward0")
