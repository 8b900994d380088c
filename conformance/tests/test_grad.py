"""Conformance tests for spec/grad.md (`.grad`). Each test quotes the clause it proves."""

import warnings

import pytest
import torch
from torch import nn

from conformance.harness.checks import assert_values, leaf, raises
from conformance.harness.populations import MODULES

NON_LEAF_WARNING = "is not a leaf Tensor is being accessed"


def with_grad(device):
    x = leaf(device)
    (x * x).sum().backward()  # x.grad = [2, 4]
    return x


def linear(device):
    lin = nn.Linear(2, 1, device=device)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.0, 2.0]], device=device))
        lin.bias.zero_()
    return lin


def set_grad(x, g):
    """The update step `x.grad = g`."""
    x.grad = g


def warnings_about_non_leaf(read):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = read()
    return value, [w for w in caught if NON_LEAF_WARNING in str(w.message)]


# > GRAD-1: A leaf that requires grad has `.grad` `None` until a backward pass reaches it. A tensor that does not
# > require grad has `.grad` `None`, also after `backward()` of a graph it took part in. Reading `.grad` of a leaf
# > emits no warning.
@pytest.mark.clause("GRAD-1")
def test_grad_is_none_until_backward(device):
    x = leaf(device)
    c = torch.tensor([3.0, 4.0], device=device)
    value, caught = warnings_about_non_leaf(lambda: (x.grad, c.grad))
    assert value == (None, None) and not caught
    (x * c).sum().backward()
    value, caught = warnings_about_non_leaf(lambda: (x.grad is not None, c.grad))
    assert value == (True, None) and not caught


# > GRAD-2: `backward()` adds the new gradient to `.grad`: at `x = [1., 2.]`, after `(x * x).sum().backward()` twice
# > (two graphs) `x.grad` is `[4., 8.]`; after `loss = (x * 3).sum()`, `loss.backward(retain_graph=True)` and
# > `loss.backward()` (one graph twice) it is `[6., 6.]`.
@pytest.mark.clause("GRAD-2")
@pytest.mark.parametrize("how", ["two graphs", "one graph twice"])
def test_backward_accumulates(device, how):
    x = leaf(device)
    if how == "two graphs":
        (x * x).sum().backward()
        assert_values(x.grad, [2.0, 4.0], "x.grad after one backward")
        (x * x).sum().backward()
        assert_values(x.grad, [4.0, 8.0], "x.grad after two backward calls")
    else:
        loss = (x * 3).sum()
        loss.backward(retain_graph=True)
        loss.backward()
        assert_values(x.grad, [6.0, 6.0], "x.grad after backward of one graph twice")


# > GRAD-3: A second `backward()` through a graph whose first `backward()` was called without `retain_graph=True` raises
# > `RuntimeError` whose message contains "Trying to backward through the graph a second time".
@pytest.mark.clause("GRAD-3")
def test_second_backward_without_retain_graph_raises(device):
    x = leaf(device)
    loss = (x * x).sum()
    loss.backward()
    with raises(RuntimeError, "Trying to backward through the graph a second time"):
        loss.backward()


def zero(run, owner, kind, **kwargs):
    """The update step `optimizer.zero_grad(...)` or `module.zero_grad(...)`, run by ``run``."""
    if kind == "optimizer":
        owner = torch.optim.SGD(owner.parameters(), lr=0.1)
    run(lambda o: o.zero_grad(**kwargs), owner)


def linear_with_grads(device):
    lin = linear(device)
    lin(torch.tensor([[2.0, 4.0]], device=device)).sum().backward()
    return lin


def module_with_grads(make, device):
    """A module of MODULES whose every parameter `p` has `.grad` = 2 * p (from the backward of sum(p * p))."""
    m = make(device)
    sum((p * p).sum() for p in m.parameters()).backward()
    return m


# > GRAD-4: `optimizer.zero_grad()` and `module.zero_grad()` called without arguments set `.grad` of every parameter
# > to `None`, for every module of MODULES.
@pytest.mark.clause("GRAD-4")
@pytest.mark.parametrize("kind", ["optimizer", "module"])
@pytest.mark.parametrize("make", MODULES.params())
def test_zero_grad_default_sets_none(device, kind, make, run):
    m = module_with_grads(make, device)
    assert all(p.grad is not None for p in m.parameters())
    zero(run, m, kind)
    assert {name: p.grad for name, p in m.named_parameters()} == dict.fromkeys(dict(m.named_parameters()))


# > GRAD-5: `zero_grad(set_to_none=False)` (of an optimizer or a module) keeps each `.grad` tensor object, which does
# > not require grad afterwards (every parameter of every module of MODULES).
@pytest.mark.clause("GRAD-5")
@pytest.mark.parametrize("kind", ["optimizer", "module"])
@pytest.mark.parametrize("make", MODULES.params())
def test_zero_grad_keep_tensor(device, kind, make, run):
    m = module_with_grads(make, device)
    grads = {name: p.grad for name, p in m.named_parameters()}
    zero(run, m, kind, set_to_none=False)
    for name, p in m.named_parameters():
        assert p.grad is grads[name] and not p.grad.requires_grad, name


# > GRAD-6: After `zero_grad(set_to_none=False)` the values of `.grad` are zero, and after either form of
# > `zero_grad()` the next `backward()` gives the new gradient alone.
@pytest.mark.clause("GRAD-6")
@pytest.mark.parametrize("kind", ["optimizer", "module"])
@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad_then_backward(device, kind, set_to_none, run):
    lin = linear_with_grads(device)
    zero(run, lin, kind, set_to_none=set_to_none)
    if not set_to_none:
        assert_values(lin.weight.grad, [[0.0, 0.0]], "weight.grad after zero_grad(set_to_none=False)")
        assert_values(lin.bias.grad, [0.0], "bias.grad after zero_grad(set_to_none=False)")
    lin(torch.tensor([[5.0, 6.0]], device=device)).sum().backward()
    assert_values(lin.weight.grad, [[5.0, 6.0]], "weight.grad of the next backward")
    assert_values(lin.bias.grad, [1.0], "bias.grad of the next backward")


# > GRAD-7: `x.grad = g` with a tensor `g` of the shape, dtype and device type of `x` is accepted, and afterwards
# > `x.grad is g` (also when `g` requires grad); `x.grad = None` is accepted and removes the gradient.
@pytest.mark.clause("GRAD-7")
@pytest.mark.parametrize("g_requires_grad", [False, True])
@pytest.mark.parametrize("had_grad", [False, True])
def test_assign_matching_grad(device, had_grad, g_requires_grad, run):
    x = with_grad(device) if had_grad else leaf(device)
    g = torch.tensor([10.0, 20.0], device=device, requires_grad=g_requires_grad)
    run(set_grad, x, g)
    assert x.grad is g
    run(set_grad, x, None)
    assert x.grad is None


# > GRAD-8: The next `backward()` adds to the assigned gradient: after `x.grad = [10., 20.]` at `x = [1., 2.]`,
# > `(x * x).sum().backward()` gives `x.grad` `[12., 24.]`.
@pytest.mark.clause("GRAD-8")
def test_backward_adds_to_assigned_grad(device, run):
    x = leaf(device)
    run(set_grad, x, torch.tensor([10.0, 20.0], device=device))
    (x * x).sum().backward()
    assert_values(x.grad, [12.0, 24.0], "x.grad")


# > GRAD-9: `x.grad = v` where `v` is neither a tensor nor `None` raises `TypeError` whose message contains "assigned
# > grad expected to be a Tensor or None"; `x.grad = x` raises `RuntimeError` whose message contains "can't assign
# > Variable as its own grad".
@pytest.mark.clause("GRAD-9")
@pytest.mark.parametrize("value", [[1.0, 2.0], 1.0, "grad"])
def test_assign_non_tensor_grad_raises(device, value, run):
    x = leaf(device)
    with raises(TypeError, "assigned grad expected to be a Tensor or None"):
        run(set_grad, x, value)
    assert x.grad is None


@pytest.mark.clause("GRAD-9")
def test_assign_self_as_grad_raises(device, run):
    x = leaf(device)
    with raises(RuntimeError, "can't assign Variable as its own grad"):
        run(set_grad, x, x)


MISMATCHES = ["shape (3,)", "shape (2, 1)", "dtype float64", "dtype int64", "other device type"]


def mismatching(device, kind):
    other = "cpu" if device == "meta" else "meta"
    return {
        "shape (3,)": lambda: torch.zeros(3, device=device),
        "shape (2, 1)": lambda: torch.zeros(2, 1, device=device),
        "dtype float64": lambda: torch.zeros(2, device=device, dtype=torch.float64),
        "dtype int64": lambda: torch.zeros(2, device=device, dtype=torch.int64),
        "other device type": lambda: torch.zeros(2, device=other),
    }[kind]()


# > GRAD-10: `x.grad = g` where `g` has another shape, another dtype, or another device type (a `meta` tensor for a
# > `cpu` one, or the reverse) raises `RuntimeError`, and `x.grad` is what it was before (the same object, or `None`).
@pytest.mark.clause("GRAD-10")
@pytest.mark.parametrize("had_grad", [False, True])
@pytest.mark.parametrize("kind", MISMATCHES)
def test_assign_mismatching_grad_raises(device, kind, had_grad, run):
    x = with_grad(device) if had_grad else leaf(device)
    before = x.grad
    g = mismatching(device, kind)
    with pytest.raises(RuntimeError):
        run(set_grad, x, g)
    assert x.grad is before


# > GRAD-11 (until 2.1): for another shape "assigned grad has data of a different size"; for another dtype, and for
# > another device type, "assigned grad has data of a different type".
@pytest.mark.clause("GRAD-11")
@pytest.mark.parametrize("kind", MISMATCHES)
def test_assign_mismatching_grad_messages_old(device, kind, run):
    x = leaf(device)
    fragment = "assigned grad has data of a different " + ("size" if kind.startswith("shape") else "type")
    g = mismatching(device, kind)
    with raises(RuntimeError, fragment):
        run(set_grad, x, g)


# > GRAD-12 (since 2.1): Those messages are: for another shape "attempting to assign a gradient of size '[3]' to a
# > tensor of size '[2]'" (the sizes of `g` and `x`); for another dtype they contain "attempting to assign a gradient
# > with dtype 'double' to a tensor with" (for a float64 `g`); for another device type "attempting to assign a gradient
# > with device type 'meta' to a tensor with device type 'cpu'" (the device types of `g` and `x`).
@pytest.mark.clause("GRAD-12")
@pytest.mark.parametrize("kind", ["shape (3,)", "shape (2, 1)", "dtype float64", "other device type"])
def test_assign_mismatching_grad_messages_new(device, kind, run):
    x = leaf(device)
    g = mismatching(device, kind)
    if kind.startswith("shape"):
        fragment = f"attempting to assign a gradient of size '{list(g.shape)}' to a tensor of size '[2]'"
    elif kind == "dtype float64":
        fragment = "attempting to assign a gradient with dtype 'double' to a tensor with"
    else:
        fragment = f"attempting to assign a gradient with device type '{g.device.type}' to a tensor with device type "
        fragment += f"'{x.device.type}'"
    with raises(RuntimeError, fragment):
        run(set_grad, x, g)


# > GRAD-13: A non-leaf does not retain its gradient by default (`retains_grad` is False). After `y.retain_grad()`,
# > `y.retains_grad` is True, and after a backward pass through `y`, `y.grad` is a tensor of the shape of `y`, read with
# > no warning.
@pytest.mark.clause("GRAD-13")
@pytest.mark.parametrize("op", ["x * 2", "x.clone()", "x.view(2)"])
def test_retain_grad_on_non_leaf(device, op):
    x = leaf(device)
    y = {"x * 2": lambda: x * 2, "x.clone()": x.clone, "x.view(2)": lambda: x.view(2)}[op]()
    assert (y.is_leaf, y.retains_grad) == (False, False)
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward()
    grad, caught = warnings_about_non_leaf(lambda: y.grad)
    assert not caught
    assert isinstance(grad, torch.Tensor) and grad.shape == y.shape


# > GRAD-14: That `y.grad` is the gradient with respect to `y`: for `y = x * 2` at `x = [1., 2.]` and
# > `(y * y).sum().backward()`, `y.grad` is `[4., 8.]`.
@pytest.mark.clause("GRAD-14")
def test_retained_grad_values(device):
    x = leaf(device)
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward()
    assert_values(y.grad, [4.0, 8.0], "y.grad")
    assert_values(x.grad, [8.0, 16.0], "x.grad")


# > GRAD-15: `retain_grad()` on a leaf that requires grad changes nothing (`retains_grad` stays False; the leaf gets its
# > `.grad` anyway); on a tensor that does not require grad it raises `RuntimeError` whose message contains "can't
# > retain_grad on Tensor that has requires_grad=False".
@pytest.mark.clause("GRAD-15")
def test_retain_grad_on_leaf_and_constant(device):
    x = leaf(device)
    x.retain_grad()
    assert x.retains_grad is False
    (x * x).sum().backward()
    assert x.grad is not None
    c = torch.tensor([1.0, 2.0], device=device)
    with raises(RuntimeError, "can't retain_grad on Tensor that has requires_grad=False"):
        c.retain_grad()


# > GRAD-16: Reading `.grad` of a non-leaf that does not retain its gradient (`x * 2`, `x.clone()`, `x[0]`, `x.view(2)`
# > of a leaf `x` that requires grad), before or after `backward()`, gives `None` and emits a `UserWarning` whose
# > message contains "is not a leaf Tensor is being accessed". (Also REBIND-8.)
@pytest.mark.clause("GRAD-16")
@pytest.mark.parametrize("after_backward", [False, True])
@pytest.mark.parametrize("op", ["x * 2", "x.clone()", "x[0]", "x.view(2)"])
def test_grad_of_non_leaf_warns(device, op, after_backward):
    x = leaf(device)
    y = {"x * 2": lambda: x * 2, "x.clone()": x.clone, "x[0]": lambda: x[0], "x.view(2)": lambda: x.view(2)}[op]()
    assert not y.is_leaf
    if after_backward:
        (y * y).sum().backward()
    with pytest.warns(UserWarning, match=NON_LEAF_WARNING):
        assert y.grad is None


UPDATES = ["x.mul_(10)", "x.add_(1)", "x -= 0.5 * x.grad", "x.copy_(v)", "x[:] = v", "x.zero_()"]


def update(x, spelling):
    """The update step: `with torch.no_grad(): <spelling>`."""
    v = torch.arange(7.0, 9.0, device=x.device)  # [7, 8]; not torch.tensor(data), see populations._mask
    with torch.no_grad():
        if spelling == "x.mul_(10)":
            x.mul_(10)
        elif spelling == "x.add_(1)":
            x.add_(1)
        elif spelling == "x -= 0.5 * x.grad":
            x -= 0.5 * x.grad
        elif spelling == "x.copy_(v)":
            x.copy_(v)
        elif spelling == "x[:] = v":
            x[:] = v
        else:
            x.zero_()


# > GRAD-17: An in-place update of a leaf under `torch.no_grad()` (`x.mul_(10)`, `x.add_(1)`, `x -= 0.5 * x.grad`,
# > `x.copy_(v)`, `x[:] = v`, `x.zero_()`) leaves `x.grad` the same tensor object with the same `_version`. (For
# > optimizer steps, PUPD-3.)
@pytest.mark.clause("GRAD-17")
@pytest.mark.parametrize("spelling", UPDATES)
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_update_keeps_grad_object(device, spelling, run):
    x = with_grad(device)
    g, gv, xv = x.grad, x.grad._version, x._version
    run(update, x, spelling)
    assert x._version > xv  # by how much: not promised (VERSION-40, VERSION-100)
    assert x.grad is g and g._version == gv


# > GRAD-18: The values of `x.grad` after such an update are those it had before.
@pytest.mark.clause("GRAD-18")
@pytest.mark.parametrize("spelling", UPDATES)
def test_update_keeps_grad_values(device, spelling, run):
    x = with_grad(device)
    run(update, x, spelling)
    assert_values(x.grad, [2.0, 4.0], f"x.grad after {spelling}")


# The leaves of GRAD-19: floating dtypes, requiring grad or not, and an nn.Parameter.
GRAD_DTYPE_LEAVES = {
    "float32 leaf": lambda device: torch.ones(2, device=device, requires_grad=True),
    "bfloat16 leaf": lambda device: torch.ones(2, device=device, dtype=torch.bfloat16, requires_grad=True),
    "float64 leaf": lambda device: torch.ones(2, device=device, dtype=torch.float64, requires_grad=True),
    "float32, no grad": lambda device: torch.ones(2, device=device),
    "bfloat16 Parameter": lambda device: nn.Parameter(torch.ones(2, device=device, dtype=torch.bfloat16)),
}
# The dtype GRAD-19 sets for a leaf of each dtype.
OTHER_GRAD_DTYPE = {torch.bfloat16: torch.float32, torch.float32: torch.float64, torch.float64: torch.float32}
ASSIGN_REFUSED = "attempting to assign a gradient with dtype"


def backward_through_float(x):
    """A backward pass whose gradient reaches `x` through a cast, in the dtype of `x`."""
    (x.float() * 3).sum().backward()


# > GRAD-19 (since 2.10): A leaf `x` of a floating-point dtype (float32, bfloat16, float64; one that requires grad, one
# > that does not, an `nn.Parameter`) reads `x.grad_dtype == x.dtype` until it is set. After `x.grad_dtype = D` (float32
# > for a bfloat16 leaf, float64 for a float32 one), `x.grad_dtype` is `D`, and a backward pass gives `x.grad` the dtype
# > `D` (for `(x.float() * 3).sum()`, whose gradient reaches `x` in the dtype of `x`), also when a second backward pass
# > accumulates into it; `x.grad = g` accepts a `g` of dtype `D` and refuses one of the dtype of `x` with `RuntimeError`
# > whose message contains "attempting to assign a gradient with dtype" and "to a tensor with grad_dtype".
@pytest.mark.clause("GRAD-19")
@pytest.mark.parametrize("kind", list(GRAD_DTYPE_LEAVES))
def test_grad_dtype_default_and_set(device, kind):
    x = GRAD_DTYPE_LEAVES[kind](device)
    assert x.grad_dtype == x.dtype
    other = OTHER_GRAD_DTYPE[x.dtype]
    x.grad_dtype = other
    assert x.grad_dtype == other
    if x.requires_grad:
        for _ in range(2):
            backward_through_float(x)
            assert (x.grad.dtype, x.grad.shape) == (other, x.shape)
    x.grad = torch.zeros(2, device=device, dtype=other)
    assert x.grad.dtype == other
    with raises(RuntimeError, ASSIGN_REFUSED) as refused:
        x.grad = torch.zeros(2, device=device, dtype=x.dtype)
    assert "to a tensor with grad_dtype" in str(refused.value)


class CastsGradientToFloat(torch.autograd.Function):
    """The identity, whose backward returns its gradient as float32."""

    @staticmethod
    def forward(ctx, a):
        return a * 1

    @staticmethod
    def backward(ctx, grad):
        return grad.float()


# > GRAD-20 (since 2.10): After `x.grad_dtype = None` on a leaf `x` that requires grad (bfloat16), `x.grad_dtype` is
# > `None` and no dtype is enforced: `x.grad = g` accepts a `g` of float32 or float64, and the gradient of a custom
# > `autograd.Function` whose `backward` returns float32 reaches `x.grad` as float32 (with `grad_dtype` left at its
# > default, it reaches `x.grad` cast to bfloat16).
@pytest.mark.clause("GRAD-20")
@pytest.mark.parametrize("grad_dtype", ["None", "default"])
def test_grad_dtype_none_enforces_nothing(device, grad_dtype):
    x = torch.ones(2, device=device, dtype=torch.bfloat16, requires_grad=True)
    if grad_dtype == "None":
        x.grad_dtype = None
        assert x.grad_dtype is None
        for dtype in (torch.float32, torch.float64):
            x.grad = torch.zeros(2, device=device, dtype=dtype)
            assert x.grad.dtype == dtype
        x.grad = None
    CastsGradientToFloat.apply(x).sum().backward()
    assert x.grad.dtype == (torch.float32 if grad_dtype == "None" else torch.bfloat16)


def _grad_dtype_after(device, update):
    """`update(x)` on a float32 leaf `x` that requires grad, whose `grad_dtype` is float64; what it returns."""
    x = torch.ones(2, device=device, requires_grad=True)
    x.grad_dtype = torch.float64
    return update(x)


def _under_no_grad(update):
    def run(x):
        with torch.no_grad():
            update(x)
        return x.grad_dtype

    return run


def _set_data(x, t):
    x.data = t
    return x


def _swap(device):
    def run(x):
        y = torch.ones(2, device=device, dtype=torch.float16, requires_grad=True)
        torch.utils.swap_tensors(x, y)
        return x.grad_dtype, y.grad_dtype

    return run


def _load_state_dict(device, assign):
    def run(x):
        module = nn.Module()
        module.w = nn.Parameter(torch.ones(2, device=device))
        module.w.grad_dtype = torch.float64
        module.load_state_dict({"w": torch.zeros(2, device=device)}, assign=assign)
        return module.w.grad_dtype

    return run


def _updates_of_grad_dtype(device):
    """GRAD-21's updates: name -> (update of `x`, the grad_dtype (or pair) it leaves)."""
    f16 = torch.zeros(2, device=device, dtype=torch.float16)
    v = torch.zeros(2, device=device)
    return {
        "x.add_(1)": (_under_no_grad(lambda x: x.add_(1)), torch.float64),
        "x.copy_(v)": (_under_no_grad(lambda x: x.copy_(v)), torch.float64),
        "x[:] = v": (_under_no_grad(lambda x: x.__setitem__(slice(None), v)), torch.float64),
        "x.zero_()": (_under_no_grad(lambda x: x.zero_()), torch.float64),
        "x.requires_grad_(False)": (lambda x: x.requires_grad_(False).grad_dtype, torch.float64),
        "x.data = float16": (lambda x: (_set_data(x, f16).dtype, x.grad_dtype), (torch.float16, torch.float64)),
        "x.detach()": (lambda x: x.detach().grad_dtype, torch.float32),
        "x.data": (lambda x: x.data.grad_dtype, torch.float32),
        "swap_tensors(x, y)": (_swap(device), (torch.float16, torch.float64)),
        "load_state_dict": (_load_state_dict(device, False), torch.float64),
        "load_state_dict(assign=True)": (_load_state_dict(device, True), torch.float32),
    }


# > GRAD-21 (since 2.10): `grad_dtype` belongs to the tensor object, not to its values, and the updates of this spec
# > treat it so. After `x.grad_dtype = torch.float64` on a float32 leaf `x` that requires grad: an in-place update under
# > `torch.no_grad()` (`x.add_(1)`, `x.copy_(v)`, `x[:] = v`, `x.zero_()`) and `x.requires_grad_(False)` leave it
# > float64; `x.data = t` with a float16 `t` leaves it float64 while `x.dtype` becomes float16 (a leaf on which
# > `grad_dtype` was not set follows its new dtype: float16); `x.detach()` and `x.data` read their own dtype (float32),
# > not the one set on `x`; `torch.utils.swap_tensors(x, y)` swaps it with `y`'s; `load_state_dict` into an
# > `nn.Parameter` whose `grad_dtype` was set keeps it when it copies (the default) and loses it with `assign=True`,
# > where the parameter takes the loaded tensor's default.
@pytest.mark.clause("GRAD-21")
@pytest.mark.parametrize("update", list(_updates_of_grad_dtype("cpu")))
def test_grad_dtype_through_updates(device, update):
    function, expected = _updates_of_grad_dtype(device)[update]
    assert _grad_dtype_after(device, function) == expected


@pytest.mark.clause("GRAD-21")
def test_grad_dtype_never_set_follows_data(device):
    x = torch.ones(2, device=device, requires_grad=True)
    x.data = torch.zeros(2, device=device, dtype=torch.float16)
    assert x.grad_dtype == torch.float16


# > GRAD-22 (since 2.10): Setting `grad_dtype` on a non-leaf (`y = x * 2` of a leaf `x` that requires grad) raises
# > `RuntimeError` whose message contains "grad_dtype can only be set on leaf tensors".
@pytest.mark.clause("GRAD-22")
def test_grad_dtype_set_on_non_leaf_raises(device):
    y = leaf(device) * 2
    with raises(RuntimeError, "grad_dtype can only be set on leaf tensors"):
        y.grad_dtype = torch.float64


NON_LEAVES = {"x * 2": lambda x: x * 2, "x.clone()": lambda x: x.clone()}


# > GRAD-23 (since 2.10, until 2.15): Reading `grad_dtype` of a non-leaf (`x * 2`, `x.clone()` of a leaf `x` that
# > requires grad) raises `RuntimeError` whose message contains "grad_dtype can only be accessed on leaf tensors".
@pytest.mark.clause("GRAD-23")
@pytest.mark.parametrize("op", list(NON_LEAVES))
def test_grad_dtype_read_on_non_leaf_raises(device, op):
    y = NON_LEAVES[op](leaf(device))
    with raises(RuntimeError, "grad_dtype can only be accessed on leaf tensors"):
        y.grad_dtype  # noqa: B018 - reading it is the operation


# > GRAD-24 (since 2.15): Reading `grad_dtype` of a non-leaf (`x * 2`, `x.clone()` of a leaf `x` that requires grad,
# > float32 or bfloat16) returns the dtype of `x`, the gradient dtype that the node which made it declares ("For a
# > non-leaf tensor, it reports the gradient dtype declared by the Function that produced the tensor", the attribute's
# > documentation from 2.15).
@pytest.mark.clause("GRAD-24")
@pytest.mark.parametrize("op", list(NON_LEAVES))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_grad_dtype_read_on_non_leaf(device, op, dtype):
    x = torch.ones(2, device=device, dtype=dtype, requires_grad=True)
    assert NON_LEAVES[op](x).grad_dtype == dtype


# > GRAD-25 (until 2.10): Tensors have no `grad_dtype`: reading it raises `AttributeError` whose message contains "has
# > no attribute 'grad_dtype'", and `x.grad_dtype = torch.float32` on a bfloat16 leaf `x` that requires grad raises no
# > error and changes nothing but a Python attribute of that object: the gradient of `(x.float() * 3).sum()` reaches
# > `x.grad` as bfloat16. Code written for 2.10 that sets it runs on older releases without the effect it asks for.
@pytest.mark.clause("GRAD-25")
def test_grad_dtype_absent(device):
    x = torch.ones(2, device=device, dtype=torch.bfloat16, requires_grad=True)
    with raises(AttributeError, "has no attribute 'grad_dtype'"):
        x.grad_dtype  # noqa: B018 - reading it is the operation
    x.grad_dtype = torch.float32
    assert x.__dict__.get("grad_dtype") is torch.float32
    backward_through_float(x)
    assert x.grad.dtype == torch.bfloat16


# > GRAD-64 (UNSPECIFIED): Whether a `backward()` that reaches a leaf whose `.grad` is already a tensor adds the new
# > gradient into that tensor in place (`x.grad` has the same storage afterwards and a `_version` one higher; a name
# > that referred to the old `.grad` refers to the new one) or stores a new tensor. torch documents only the sum
# > (GRAD-2); `AccumulateGrad` (`torch/csrc/autograd/functions/accumulate_grad.h`) "accumulates new_grad into
# > variable_grad if in place accumulation is possible. Otherwise, uses 'update_grad' to update the grad", by conditions
# > internal to it. Recorded for a second `backward()` of `(x * 2).sum()`: plain, while another name refers to the old
# > `.grad`, and with `create_graph=True`. (Observed on 2.0.1, 2.4.1, 2.9.1, 2.13.0 and 2.14.1: in place in the first
# > two cases, a new tensor with `create_graph=True`.)
@pytest.mark.clause("GRAD-64")
@pytest.mark.parametrize("case", ["plain", "another name refers to .grad", "create_graph=True"])
def test_accumulation_in_place_or_not(device, case, observe):
    x = leaf(device)
    (x * 2).sum().backward()
    # Only the "another name" case keeps a reference to the old .grad; the others compare its storage and version.
    storage, version = x.grad.untyped_storage()._cdata, x.grad._version
    other = x.grad if case == "another name refers to .grad" else None
    if case == "create_graph=True":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the reference-cycle warning of backward(create_graph=True)
            (x * 2).sum().backward(create_graph=True)
    else:
        (x * 2).sum().backward()
    in_place = x.grad.untyped_storage()._cdata == storage and x.grad._version == version + 1
    observe(f"{case}: added in place (same storage, _version + 1)", in_place)
    if other is not None:
        observe(f"{case}: same .grad object", x.grad is other)
    x.grad = None  # create_graph=True: break the cycle between x and its gradient


NON_LEAF_UPDATES = {"t.mul_(3)": lambda t: t.mul_(3), "t *= 3": None, "t.add_(1)": lambda t: t.add_(1)}


def _non_leaf_update(t, spelling):
    if spelling == "t *= 3":
        t *= 3
    else:
        NON_LEAF_UPDATES[spelling](t)


# > GRAD-60: A hook registered with `t.register_hook(h)` on a non-leaf `t` before `t` is modified in place receives the
# > gradient with respect to `t` as it was before the modification; one registered after it receives the gradient with
# > respect to the modified `t`: for `t = a * 1` at `a = [1, 2]`, a first hook, the update (`t.mul_(3)` or `t *= 3`), a
# > second hook and the loss `(t * [1, 10]).sum()`, the first hook receives `[3, 30]` and the second `[1, 10]`.
@pytest.mark.compiled_since("2.4", before="GRAD-92", also_on="2.1")
@pytest.mark.clause("GRAD-60")
@pytest.mark.parametrize("spelling", ["t.mul_(3)", "t *= 3"])
def test_hooks_before_and_after_inplace(device, spelling, run):
    assert _hooks_around_update(device, spelling, run) == {"before": [3.0, 30.0], "after": [1.0, 10.0]}


def _hooks_around_update(device, spelling, run):
    """The gradients that hooks registered on `t = a * 1` before and after the update of `t` receive."""
    a = leaf(device)
    t = a * 1
    got = {}
    t.register_hook(lambda g: got.__setitem__("before", g.tolist()))
    run(_non_leaf_update, t, spelling)
    t.register_hook(lambda g: got.__setitem__("after", g.tolist()))
    (t * torch.tensor([1.0, 10.0], device=device)).sum().backward()
    return got


# > GRAD-92 (compile, 2.2-2.3): On 2.2 and 2.3, when the in-place update of GRAD-60 (`t.mul_(3)` or `t *= 3` on
# > `t = a * 1`) is a compiled function, the hook registered on `t` before it receives zeros (`[0, 0]` for the loss
# > `(t * [1, 10]).sum()`), not the gradient with respect to `t` before the update (`[3, 30]`); the hook registered
# > after it receives `[1, 10]`, as GRAD-60 says. pytorch/pytorch#128035 reports the same loss of gradient for a
# > compiled update of an input that requires grad. Layer: AOTAutograd. Run on 2.2.2 and 2.3.1; on 2.1.2 and 2.4.1 its
# > test fails (there the earlier hook receives `[3, 30]`, as GRAD-60 says).
@pytest.mark.clause("GRAD-92")
@pytest.mark.parametrize("spelling", ["t.mul_(3)", "t *= 3"])
def test_compiled_update_gives_the_earlier_hook_zeros_on_2_2_and_2_3(device, spelling, run):
    assert _hooks_around_update(device, spelling, run) == {"before": [0.0, 0.0], "after": [1.0, 10.0]}


# > GRAD-61: After `t.retain_grad()` on a non-leaf `t` and then an in-place modification of `t` (`t.mul_(3)`, `t *= 3`,
# > `t.add_(1)`), `t.retains_grad` is still True, and after a backward pass `t.grad` is the gradient with respect to the
# > modified `t`, not to the value it had when `retain_grad()` was called: `[1, 10]` for the loss of GRAD-60.
@pytest.mark.clause("GRAD-61")
@pytest.mark.parametrize("spelling", list(NON_LEAF_UPDATES))
def test_retain_grad_follows_inplace(device, spelling, run):
    a = leaf(device)
    t = a * 1
    t.retain_grad()
    run(_non_leaf_update, t, spelling)
    assert t.retains_grad
    (t * torch.tensor([1.0, 10.0], device=device)).sum().backward()
    assert_values(t.grad, [1.0, 10.0], f"t.grad after {spelling} (with respect to the modified t)")


# > GRAD-62: A hook on a leaf that returns a tensor replaces the gradient that reaches `.grad`: after
# > `h = x.register_hook(lambda g: g * 100)`, `(x * 2).sum().backward()` gives `x.grad` `[200, 200]`; a hook that
# > returns `None` leaves the gradient as it is; after `h.remove()` the next `backward()` adds the gradient unchanged
# > (`[202, 202]`).
@pytest.mark.clause("GRAD-62")
def test_leaf_hook_replaces_gradient(device):
    x = leaf(device)
    seen = []
    x.register_hook(seen.append)  # returns None
    h = x.register_hook(lambda g: g * 100)
    (x * 2).sum().backward()
    assert_values(x.grad, [200.0, 200.0], "x.grad with the hook")
    assert_values(seen[0], [2.0, 2.0], "what the hook returning None saw")
    h.remove()
    (x * 2).sum().backward()
    assert_values(x.grad, [202.0, 202.0], "x.grad after h.remove()")


# > GRAD-63: `t.register_hook(h)` on a tensor that does not require grad raises `RuntimeError` whose message contains
# > "cannot register a hook on a tensor that doesn't require gradient".
@pytest.mark.clause("GRAD-63")
def test_hook_on_tensor_without_grad_raises(device):
    with raises(RuntimeError, "cannot register a hook on a tensor that doesn't require gradient"):
        torch.ones(2, device=device).register_hook(lambda g: g)


def fused_step(device, run):
    """GRAD-65's set-up: `p = [1, 2]`, the hook's update run by ``run``, two backward passes of `(p * p).sum()`.

    Returns what each pass leaves: (calls of the hook, p, p.grad, _version increase, is a leaf that requires grad).
    """
    p = leaf(device)
    calls = []

    def update(t):  # the update step: the hook's body
        with torch.no_grad():
            t -= 0.25 * t.grad
        t.grad = None

    compiled = run.function(update)

    def step(t):
        calls.append((t is p, t.grad.tolist()))
        compiled(t)

    p.register_post_accumulate_grad_hook(step)
    seen = []
    for _ in range(2):
        version = p._version
        (p * p).sum().backward()
        grad = None if p.grad is None else p.grad.tolist()
        seen.append((list(calls), p.tolist(), grad, p._version - version, (p.is_leaf, p.requires_grad)))
    return seen


# > GRAD-65: `p.register_post_accumulate_grad_hook(h)` on a leaf `p` makes each `backward()` that reaches `p` call
# > `h(p)` once, with `p` itself, after `p.grad` holds the accumulated gradient. The hook may update `p` in place under
# > `torch.no_grad()` and reset `p.grad = None` (an optimizer step fused into the backward pass): for `p = [1, 2]`, the
# > loss `(p * p).sum()` and `p -= 0.25 * p.grad` in the hook, after `backward()` `p` is `[0.5, 1.0]`, the same object,
# > a leaf that requires grad, its `_version` higher, and `p.grad` is `None`; a second `backward()` gives
# > `[0.25, 0.5]`.
@pytest.mark.clause("GRAD-65")
def test_post_accumulate_grad_hook_updates_parameter(device, run):
    first, second = fused_step(device, run)
    assert first[3] > 0 and second[3] > 0, (first, second)  # the `_version` went up (by how much: VERSION-40)
    assert first[:3] + first[4:] == ([(True, [2.0, 4.0])], [0.5, 1.0], None, (True, True)), first
    assert second[:3] + second[4:] == ([(True, [2.0, 4.0]), (True, [1.0, 2.0])], [0.25, 0.5], None, (True, True)), (
        second
    )


# > GRAD-90 (compile, 2.1 to 2.8): When the hook's update (`with torch.no_grad(): t -= 0.25 * t.grad`, then
# > `t.grad = None`) is a function compiled with `torch.compile`, GRAD-65 holds except for the size of the `_version`
# > increase, which is UNSPECIFIED (VERSION-100): one on 2.1 to 2.4, two on 2.5 to 2.7 (the second bump comes from
# > AOTAutograd: with `backend="eager"` it is one). Executed example:
# > `test_grad.py::test_post_accumulate_grad_hook_updates_parameter_compiled`, run on every release from 2.1.2 to
# > 2.15.0.
# > GRAD-91 (compile, since 2.8): When the hook's update of GRAD-65 is a compiled function, its `t.grad = None` is lost
# > (Dynamo: the same with `backend="eager"`): after the first `backward()` `p` is `[0.5, 1.0]` and its `_version`
# > higher, but `p.grad` is still `[2., 4.]`; the second `backward()` adds to it, the hook receives `p.grad` `[3., 6.]`,
# > and `p` becomes `[-0.25, -0.5]` with `p.grad` `[3., 6.]`. The same function called outside a hook, after
# > `backward()`, also leaves `.grad` set, while `t.grad = g` alone in a compiled function is kept (GRAD-7 holds
# > compiled). No torch issue found that describes it; the evidence is the executed example
# > `test_grad.py::test_post_accumulate_grad_hook_updates_parameter_compiled` (2.8.0 to 2.15.0 fail the GRAD-90 form;
# > 2.1.2 to 2.7.1 fail this one).
@pytest.mark.clause("GRAD-90")
def test_post_accumulate_grad_hook_updates_parameter_compiled(device, run):
    (c1, p1, g1, v1, k1), (c2, p2, g2, v2, k2) = fused_step(device, run)
    assert (c1, p1, g1, v1 > 0, k1) == ([(True, [2.0, 4.0])], [0.5, 1.0], None, True, (True, True))
    assert (c2, p2, g2, v2 > 0, k2) == ([(True, [2.0, 4.0]), (True, [1.0, 2.0])], [0.25, 0.5], None, True, (True, True))


@pytest.mark.clause("GRAD-91")
def test_post_accumulate_grad_hook_compiled_loses_grad_reset(device, run):
    (c1, p1, g1, v1, k1), (c2, p2, g2, v2, k2) = fused_step(device, run)
    assert (c1, p1, g1, v1 > 0, k1) == ([(True, [2.0, 4.0])], [0.5, 1.0], [2.0, 4.0], True, (True, True))
    assert (c2, p2, g2, v2 > 0) == ([(True, [2.0, 4.0]), (True, [3.0, 6.0])], [-0.25, -0.5], [3.0, 6.0], True)


# > GRAD-66: `t.register_post_accumulate_grad_hook(h)` on a non-leaf raises `RuntimeError` whose message contains "post
# > accumulate grad hooks cannot be registered on non-leaf tensors"; on a tensor that does not require grad it raises
# > `RuntimeError` whose message contains "cannot register a hook on a tensor that doesn't require gradient".
@pytest.mark.clause("GRAD-66")
def test_post_accumulate_grad_hook_needs_a_leaf_requiring_grad(device):
    with raises(RuntimeError, "post accumulate grad hooks cannot be registered on non-leaf tensors"):
        (leaf(device) * 1).register_post_accumulate_grad_hook(lambda t: None)
    with raises(RuntimeError, "cannot register a hook on a tensor that doesn't require gradient"):
        torch.ones(2, device=device).register_post_accumulate_grad_hook(lambda t: None)


# > GRAD-67: Before 2.1 tensors have no `register_post_accumulate_grad_hook`: calling it raises `AttributeError` whose
# > message contains "object has no attribute 'register_post_accumulate_grad_hook'".
@pytest.mark.clause("GRAD-67")
def test_post_accumulate_grad_hook_absent_before_2_1(device):
    with raises(AttributeError, "object has no attribute 'register_post_accumulate_grad_hook'"):
        leaf(device).register_post_accumulate_grad_hook(lambda t: None)


# Seeds, run as written (fixing only what stops them from running, as noted).


@pytest.mark.clause("GRAD-1", "GRAD-2")
@pytest.mark.only_devices("cpu")  # the seed snippet as written: values, on the default device
def test_seed_en_gradients_of_x(device):
    # English seed, second snippet, verbatim (device added).
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    assert x.grad is None
    x.data[:] = torch.tensor([3.0, 4.0], device=device)
    y = x * x
    loss = torch.mean((y - 5) ** 2)
    loss.backward()
    # print("Gradients of x:", x.grad)
    assert_values(x.grad, [24.0, 88.0], "Gradients of x")


@pytest.mark.clause("GRAD-2", "GRAD-17")
@pytest.mark.only_devices("cpu")  # the seed snippet as written: values, on the default device
def test_seed_ko_printed_grads(device):
    # Korean seed, example code, methods 2 and 3. torch.Variable does not exist:
    with raises(AttributeError, "has no attribute 'Variable'"):
        torch.Variable(torch.randn(5))
    # Fixed to run: a leaf that requires grad, updated under no_grad (as written the update raises, INPLACE-1).
    for method in ("x.add_(1)", "x.copy_(torch.randn(5))"):
        x = torch.randn(5, device=device, requires_grad=True)
        with torch.no_grad():
            x.add_(1) if method == "x.add_(1)" else x.copy_(torch.randn(5, device=device))
        y = x.sum()
        y.backward()
        assert_values(x.grad, [1.0] * 5, f"print(x.grad) after {method}")
        g = x.grad
        with torch.no_grad():
            x.add_(1)
        assert x.grad is g  # an update does not touch the gradient
        x.sum().backward()
        assert_values(x.grad, [2.0] * 5, "a second backward accumulates")


@pytest.mark.clause("GRAD-1")
def test_seed_ko_detach_grad(device):
    # Korean seed, "detach() 메서드 사용", torch.Variable fixed to a leaf that requires grad.
    x = torch.randn(5, device=device, requires_grad=True)
    y = x.detach().copy_(torch.randn(5, device=device))
    with raises(RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn"):
        y.backward()
    # print(y.grad): y does not require grad, its .grad is None (no warning: it is a leaf).
    value, caught = warnings_about_non_leaf(lambda: y.grad)
    assert value is None and not caught


@pytest.mark.clause("GRAD-1")
def test_seed_ko_requires_grad_false_grad(device):
    # Korean seed, "requires_grad 속성 사용", torch.Variable(..., requires_grad=False) fixed to a plain tensor.
    x = torch.randn(5, device=device, requires_grad=False)
    x.data = torch.randn(5, device=device)
    y = x.sum()
    with raises(RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn"):
        y.backward()
    assert x.grad is None
