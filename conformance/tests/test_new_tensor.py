"""Conformance tests for spec/new_tensor.md (creating a new tensor). Each test quotes the clause it proves."""

import warnings

import pytest
import torch

from conformance.harness.checks import NO_GRAD_FN, assert_values, raises, same_storage
from conformance.harness.populations import FACTORIES

NOT_SCALAR = "grad can be implicitly created only for scalar outputs"
NOT_REAL_SCALAR = "grad can be implicitly created only for real scalar outputs"
NON_LEAF_GRAD = "is not a leaf Tensor is being accessed"


def _proto(device):
    return torch.tensor([1.0, 2.0], device=device, requires_grad=True)


def make(factory, device, **kwargs):
    """A factory result (a member of FACTORIES); the prototype of `*_like` / `new_*` is a leaf that requires grad."""
    return factory(device, _proto(device), **kwargs)


# > NEW-1: A tensor created by a factory function without `requires_grad=True` (every member of the population
# > `FACTORIES`, listed below: `torch.randn`, `torch.rand`, `torch.tensor`, `torch.zeros`, `torch.ones`, `torch.empty`,
# > `torch.full`, `torch.arange`, the `*_like` functions `zeros_like`, `ones_like`, `empty_like`, `randn_like`,
# > `full_like`, and the `Tensor.new_*` methods `new_zeros`, `new_ones`, `new_empty`, `new_full`, `new_tensor`) does not
# > require grad, is a leaf and has no `grad_fn`; for `*_like` and `new_*` this holds also when the prototype tensor
# > requires grad.
@pytest.mark.clause("NEW-1")
@pytest.mark.parametrize("factory", FACTORIES.params())
def test_factory_default_does_not_require_grad(device, factory):
    t = make(factory, device)
    assert (t.requires_grad, t.is_leaf, t.grad_fn) == (False, True, None)


# > NEW-2: The same factory functions called with `requires_grad=True` return a leaf that requires grad and
# > has no `grad_fn`, also inside `torch.no_grad()`.
@pytest.mark.clause("NEW-2")
@pytest.mark.parametrize("factory", FACTORIES.params())
@pytest.mark.parametrize("mode", ["grad enabled", "torch.no_grad()"])
def test_factory_requires_grad_true(device, factory, mode):
    if mode == "torch.no_grad()":
        with torch.no_grad():
            t = make(factory, device, requires_grad=True)
    else:
        t = make(factory, device, requires_grad=True)
    assert (t.requires_grad, t.is_leaf, t.grad_fn) == (True, True, None)


# > NEW-3: Asking an integer or bool tensor to require grad raises `RuntimeError` whose message contains "can require
# > gradients" (and "floating point"), whether through a factory's `requires_grad=True`, `t.requires_grad_()` or
# > `t.requires_grad = True`.
@pytest.mark.clause("NEW-3")
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool])
@pytest.mark.parametrize(
    "spelling",
    [
        "torch.zeros(requires_grad=True)",
        "torch.tensor(requires_grad=True)",
        "t.requires_grad_()",
        "t.requires_grad = True",
    ],
)
def test_integer_tensor_cannot_require_grad(device, dtype, spelling):
    t = torch.zeros(2, device=device, dtype=dtype)
    with raises(RuntimeError, "can require gradients") as info:
        if spelling == "torch.zeros(requires_grad=True)":
            torch.zeros(2, device=device, dtype=dtype, requires_grad=True)
        elif spelling == "torch.tensor(requires_grad=True)":
            torch.tensor([1, 0], device=device, dtype=dtype, requires_grad=True)
        elif spelling == "t.requires_grad_()":
            t.requires_grad_()
        else:
            t.requires_grad = True
    assert "floating point" in str(info.value)
    assert t.requires_grad is False


# > NEW-4: The result of every factory of FACTORIES has storage of its own: it shares storage neither with the
# > prototype `x` of `*_like` or `new_*`, nor with a result computed from `x` (`x * 2`), nor with another tensor
# > created before it; and creating it leaves the `_version`, `requires_grad` and `grad_fn` of those three unchanged.
@pytest.mark.clause("NEW-4")
@pytest.mark.parametrize("factory", FACTORIES.params())
def test_factory_result_has_own_storage(device, factory):
    x = torch.randn(5, device=device)
    p = _proto(device)
    q = p * 2
    state = [(t._version, t.requires_grad, t.grad_fn) for t in (x, p, q)]
    y = factory(device, p)
    for t in (x, p, q):
        assert not same_storage(y, t)
    assert [(t._version, t.requires_grad, t.grad_fn) for t in (x, p, q)] == state


# > NEW-5: `backward()` on a tensor that does not require grad (`y.sum().backward()` for a `y` that does not require
# > grad, also `torch.autograd.backward(s)`, `torch.autograd.grad(s, [y])`, and `y.backward(gradient)` on a non-scalar)
# > raises `RuntimeError` whose message contains "element 0 of tensors does not require grad and does not have a
# > grad_fn"; afterwards `y.grad` is `None`.
@pytest.mark.clause("NEW-5")
@pytest.mark.parametrize(
    "spelling",
    [
        "y.sum().backward()",
        "torch.autograd.backward(s)",
        "torch.autograd.grad(s, [y])",
        "y.backward(gradient)",
        "(y * 2).sum().backward()",
    ],
)
def test_backward_on_result_that_does_not_require_grad(device, spelling):
    y = torch.randn(5, device=device)
    with raises(RuntimeError, NO_GRAD_FN):
        if spelling == "y.sum().backward()":
            y.sum().backward()
        elif spelling == "torch.autograd.backward(s)":
            torch.autograd.backward(y.sum())
        elif spelling == "torch.autograd.grad(s, [y])":
            torch.autograd.grad(y.sum(), [y])
        elif spelling == "y.backward(gradient)":
            y.backward(torch.ones(5, device=device))
        else:
            (y * 2).sum().backward()
    assert y.grad is None


# > NEW-6: The result of an operation none of whose tensor inputs requires grad (`y.sum()`, `y * 2`, `y + z`, `y @ z`)
# > does not require grad, is a leaf and has no `grad_fn`.
@pytest.mark.clause("NEW-6")
@pytest.mark.parametrize("op", ["y.sum()", "y * 2", "y + z", "y @ z", "torch.exp(y)"])
def test_result_of_untracked_inputs_is_untracked(device, op):
    y = torch.randn(5, device=device)
    z = torch.ones(5, device=device)
    out = {
        "y.sum()": lambda: y.sum(),
        "y * 2": lambda: y * 2,
        "y + z": lambda: y + z,
        "y @ z": lambda: y @ z,
        "torch.exp(y)": lambda: torch.exp(y),
    }[op]()
    assert (out.requires_grad, out.is_leaf, out.grad_fn) == (False, True, None)


def _read_grad(t):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grad = t.grad
    return grad, [(w.category, str(w.message)) for w in caught]


# > NEW-7: Reading `.grad` of a leaf that has received no gradient returns `None` and emits no warning,
# > whether the leaf requires grad or not.
@pytest.mark.clause("NEW-7")
@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("kind", ["factory result", "sum of untracked tensor"])
def test_grad_of_leaf_without_gradient_is_none_silently(device, requires_grad, kind):
    t = torch.randn(5, device=device, requires_grad=requires_grad)
    if kind == "sum of untracked tensor":
        t = torch.randn(5, device=device).sum()
        if requires_grad:
            t.requires_grad_()
    assert t.is_leaf
    assert _read_grad(t) == (None, [])


# > NEW-8: Reading `.grad` of a non-leaf tensor (one with a `grad_fn`, on which `retain_grad()` was not called) returns
# > `None` and emits a `UserWarning` whose message contains "is not a leaf Tensor is being accessed", also after a
# > `backward()` through it succeeded.
@pytest.mark.clause("NEW-8")
@pytest.mark.parametrize("after_backward", [False, True])
@pytest.mark.parametrize("op", ["sum", "mul"])
def test_grad_of_non_leaf_warns(device, after_backward, op):
    x = torch.randn(5, device=device, requires_grad=True)
    z = x.sum() if op == "sum" else x * 2
    if after_backward:
        (z if op == "sum" else z.sum()).backward()
        assert x.grad is not None
    grad, caught = _read_grad(z)
    assert grad is None
    assert any(cat is UserWarning and NON_LEAF_GRAD in msg for cat, msg in caught), caught


# > NEW-9: `backward()` without a `gradient` argument on a tensor that requires grad and has more than one element
# > (`z.backward()`, `torch.autograd.backward(z)`, `torch.autograd.grad(z, [x])`, also on a leaf `x.backward()`) raises
# > `RuntimeError` whose message contains "grad can be implicitly created only for scalar outputs"; the leaves' `.grad`
# > stay `None`.
@pytest.mark.clause("NEW-9")
@pytest.mark.parametrize(
    "spelling", ["z.backward()", "torch.autograd.backward(z)", "torch.autograd.grad(z, [x])", "x.backward()"]
)
@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 1)])
def test_backward_on_non_scalar_needs_gradient(device, spelling, shape):
    x = torch.ones(shape, device=device, requires_grad=True)
    z = x * 2
    with raises(RuntimeError, NOT_SCALAR):
        if spelling == "z.backward()":
            z.backward()
        elif spelling == "torch.autograd.backward(z)":
            torch.autograd.backward(z)
        elif spelling == "torch.autograd.grad(z, [x])":
            torch.autograd.grad(z, [x])
        else:
            x.backward()
    assert x.grad is None


# > NEW-10: A real floating-point tensor (float16, bfloat16, float32, float64) with exactly one element counts as scalar
# > whatever its shape (`()`, `(1,)`, `(1, 1)`): `backward()` without a `gradient` argument uses the gradient 1. (A
# > complex one: NEW-16, NEW-17.)
@pytest.mark.clause("NEW-10")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("shape", [(), (1,), (1, 1), (1, 1, 1)])
def test_one_element_counts_as_scalar(device, shape, dtype):
    x = torch.full(shape, 3.0, device=device, dtype=dtype, requires_grad=True)
    (x * 2).backward()
    assert (x.grad.shape, x.grad.dtype) == (torch.Size(shape), dtype)
    assert_values(x.grad.reshape(-1), [2.0], "x.grad")
    y = torch.full(shape, 3.0, device=device, dtype=dtype, requires_grad=True)
    y.backward()
    assert_values(y.grad.reshape(-1), [1.0], "leaf backward: y.grad")


COMPLEX_DTYPES = [torch.complex64, torch.complex128]
# One-element complex tensors that require grad: `x * 2` of a leaf `x` of each shape, and the sum of a complex leaf
# made by a factory.
ONE_ELEMENT_COMPLEX = {
    "()": lambda d, dt: torch.full((), 3.0 + 1j, device=d, dtype=dt, requires_grad=True),
    "(1,)": lambda d, dt: torch.full((1,), 3.0 + 1j, device=d, dtype=dt, requires_grad=True),
    "(1, 1)": lambda d, dt: torch.full((1, 1), 3.0 + 1j, device=d, dtype=dt, requires_grad=True),
    "torch.zeros(5, dtype=dtype).sum()": lambda d, dt: torch.zeros(5, device=d, dtype=dt, requires_grad=True),
    "torch.tensor([1 + 1j, 2j]).sum()": lambda d, dt: torch.tensor(
        [1 + 1j, 2j], device=d, dtype=dt, requires_grad=True
    ),
}
BACKWARD_SPELLINGS = ["z.backward()", "torch.autograd.backward(z)", "torch.autograd.grad(z, [x])", "x.backward()"]
# (tensor, spelling): `x.backward()` on the leaf itself only where the leaf has one element.
COMPLEX_CASES = [
    pytest.param(kind, spelling, id=f"{kind}-{spelling}")
    for kind in ONE_ELEMENT_COMPLEX
    for spelling in BACKWARD_SPELLINGS
    if not (kind.endswith(".sum()") and spelling == "x.backward()")
]


def _complex_leaf_and_output(kind, device, dtype):
    """The complex leaf `x` and the one-element `z` computed from it: `x * 2`, or `x.sum()` for a factory's leaf."""
    x = ONE_ELEMENT_COMPLEX[kind](device, dtype)
    return x, (x.sum() if kind.endswith(".sum()") else x * 2)


def _implicit_backward(spelling, x, z):
    """`spelling` without a `gradient` argument; returns the gradient it gives `x`."""
    if spelling == "z.backward()":
        z.backward()
    elif spelling == "torch.autograd.backward(z)":
        torch.autograd.backward(z)
    elif spelling == "torch.autograd.grad(z, [x])":
        return torch.autograd.grad(z, [x])[0]
    else:
        x.backward()
    return x.grad


# > NEW-16 (since 2.1): `backward()` without a `gradient` argument on a complex tensor (complex64, complex128) that
# > requires grad and has exactly one element (`x * 2` of a leaf `x` of shape `()`, `(1,)` or `(1, 1)`, and such a
# > leaf itself; also `x.sum()` of a complex leaf made by `torch.zeros(5, dtype=..., requires_grad=True)` or
# > `torch.tensor([1 + 1j, 2j], ...)`) raises RuntimeError whose message contains "grad can be implicitly created
# > only for real scalar outputs", followed by "but got" and the dtype, for `z.backward()`,
# > `torch.autograd.backward(z)`, `torch.autograd.grad(z, [x])` and, on a one-element leaf, `x.backward()`; the
# > leaf's `.grad` stays `None`.
@pytest.mark.clause("NEW-16")
@pytest.mark.parametrize(("kind", "spelling"), COMPLEX_CASES)
@pytest.mark.parametrize("dtype", COMPLEX_DTYPES, ids=str)
def test_one_element_complex_needs_gradient(device, dtype, kind, spelling):
    x, z = _complex_leaf_and_output(kind, device, dtype)
    with raises(RuntimeError, f"{NOT_REAL_SCALAR} but got {dtype}"):
        _implicit_backward(spelling, x, z)
    assert x.grad is None


# > NEW-17 (until 2.1): `backward()` without a `gradient` argument on a one-element complex tensor that requires grad
# > (the tensors and spellings of NEW-16) uses the gradient 1 (`1+0j`): the gradient of the leaf (its `.grad`, or what
# > `torch.autograd.grad` returns) is `2+0j` for `x * 2`, `1+0j` for the leaf itself, and ones (`1+0j`) for the sum of
# > a factory's leaf, with the dtype of the leaf.
@pytest.mark.clause("NEW-17")
@pytest.mark.parametrize(("kind", "spelling"), COMPLEX_CASES)
@pytest.mark.parametrize("dtype", COMPLEX_DTYPES, ids=str)
def test_one_element_complex_uses_gradient_one(device, dtype, kind, spelling):
    x, z = _complex_leaf_and_output(kind, device, dtype)
    grad = _implicit_backward(spelling, x, z)
    factor = 1.0 if kind.endswith(".sum()") or spelling == "x.backward()" else 2.0
    assert (grad.shape, grad.dtype) == (x.shape, dtype)
    assert_values(grad.reshape(-1), [complex(factor)] * x.numel(), f"gradient ({spelling})")


# > NEW-11: For a leaf `x` created with `requires_grad=True` by any factory of the population `FACTORIES` (NEW-2), a
# > float32 tensor, `x.sum().backward()` makes `x.grad` a tensor of ones of the shape and dtype of `x`. (The sum of a
# > complex leaf: NEW-16, NEW-17.)
@pytest.mark.clause("NEW-11")
@pytest.mark.parametrize("factory", FACTORIES.params())
def test_gradient_of_sum_is_ones(device, factory):
    x = make(factory, device, requires_grad=True)
    assert x.dtype == torch.float32
    x.sum().backward()
    assert (x.grad.shape, x.grad.dtype) == (x.shape, x.dtype)
    assert_values(x.grad, [1.0] * x.numel(), "x.grad")


INTEGER_OPS = {
    "torch.argmax(x)": lambda x: torch.argmax(x),
    "torch.argmin(x)": lambda x: torch.argmin(x),
    "torch.argsort(x)": lambda x: torch.argsort(x),
    "x.topk(2).indices": lambda x: x.topk(2).indices,
    "x.max(0).indices": lambda x: x.max(0).indices,
    "x > 0": lambda x: x > 0,
    "torch.eq(x, 1.6)": lambda x: torch.eq(x, 1.6),
    "x.long()": lambda x: x.long(),
    "x.to(torch.int32)": lambda x: x.to(torch.int32),
}


# > NEW-12: Operations with an integer or bool result (`torch.argmax`, `torch.argmin`, `torch.argsort`, the indices of
# > `topk` and `max(dim)`, comparisons such as `x > 0` and `torch.eq`, `x.long()`, `x.to(torch.int32)`) return a tensor
# > that does not require grad and has no `grad_fn`, even when `x` requires grad; a `backward()` from it, also after
# > converting it back to a floating dtype, raises `RuntimeError` whose message contains "element 0 of tensors does not
# > require grad and does not have a grad_fn".
@pytest.mark.clause("NEW-12")
@pytest.mark.parametrize("op", list(INTEGER_OPS))
@pytest.mark.parametrize("then", ["sum", "float().sum()"])
def test_integer_results_cut_the_graph(device, op, then):
    x = torch.tensor([0.4, 1.6, -2.5], device=device, requires_grad=True)
    out = INTEGER_OPS[op](x)
    assert not out.dtype.is_floating_point
    assert (out.requires_grad, out.grad_fn) == (False, None)
    target = out.sum() if then == "sum" else out.float().sum()
    with raises(RuntimeError, NO_GRAD_FN):
        target.backward()
    assert x.grad is None


PIECEWISE_CONSTANT = {
    "torch.round": (torch.round, "RoundBackward0"),
    "x.round()": (lambda x: x.round(), "RoundBackward0"),
    "torch.floor": (torch.floor, "FloorBackward0"),
    "torch.ceil": (torch.ceil, "CeilBackward0"),
    "torch.trunc": (torch.trunc, "TruncBackward0"),
    "torch.sign": (torch.sign, "SignBackward0"),
}


# > NEW-13: Piecewise-constant operations with a floating result (`torch.round`, `torch.floor`, `torch.ceil`,
# > `torch.trunc`, `torch.sign`) are recorded: applied to a tensor that requires grad their result requires grad and has
# > a `grad_fn` (`RoundBackward0`, `FloorBackward0`, `CeilBackward0`, `TruncBackward0`, `SignBackward0`), and
# > `backward()` through them raises no error.
@pytest.mark.clause("NEW-13")
@pytest.mark.parametrize("op", list(PIECEWISE_CONSTANT))
def test_piecewise_constant_ops_are_recorded(device, op):
    fn, name = PIECEWISE_CONSTANT[op]
    x = torch.tensor([0.4, 1.6, -2.5], device=device, requires_grad=True)
    out = fn(x)
    assert out.requires_grad and type(out.grad_fn).__name__ == name
    out.sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape


# > NEW-14: The gradient through the operations of NEW-13 is zero everywhere (at integers and half-integers too).
@pytest.mark.clause("NEW-14")
@pytest.mark.parametrize("op", list(PIECEWISE_CONSTANT))
def test_piecewise_constant_ops_have_zero_gradient(device, op):
    fn, _ = PIECEWISE_CONSTANT[op]
    values = [0.4, 1.6, -2.5, 0.5, 0.0, 2.0, -1.0]
    x = torch.tensor(values, device=device, requires_grad=True)
    (fn(x) * 3).sum().backward()
    assert_values(x.grad, [0.0] * len(values), f"gradient of {op}")


# > NEW-15: Gradients flow through floating values selected with an integer index: `x[x.argmax()]`,
# > `torch.gather(x, 0, x.argmax().reshape(1))` and `x.max()` give a gradient that is 1 at the position of the
# > maximum and 0 elsewhere.
@pytest.mark.clause("NEW-15")
@pytest.mark.parametrize("spelling", ["x[x.argmax()]", "torch.gather", "x.max()"])
def test_selected_values_get_gradient(device, spelling):
    x = torch.tensor([0.5, 3.0, 1.0], device=device, requires_grad=True)
    if spelling == "x[x.argmax()]":
        out = x[x.argmax()]
    elif spelling == "torch.gather":
        out = torch.gather(x, 0, x.argmax().reshape(1)).sum()
    else:
        out = x.max()
    out.backward()
    assert_values(x.grad, [0.0, 1.0, 0.0], "x.grad")


# Seeds, run as written (fixing only what stops them from running, as noted).


@pytest.mark.clause("NEW-1", "NEW-4", "NEW-5", "NEW-6")
def test_seed_ko_method4_new_variable(device):
    # Korean seed, method 4 "새 Variable 생성". As written it calls torch.Variable (VAR-1):
    with raises(AttributeError, "has no attribute 'Variable'"):
        x = torch.Variable(torch.randn(5))
    # Fixed to run: torch.autograd.Variable (the legacy constructor), then the rest verbatim.
    x = torch.autograd.Variable(torch.randn(5, device=device))
    x_version = x._version
    y = torch.randn(5, device=device)
    assert not same_storage(x, y) and not y.requires_grad
    y = y.sum()
    assert (y.requires_grad, y.grad_fn) == (False, None)
    with raises(RuntimeError, NO_GRAD_FN):
        y.backward()
    # print(y.grad) is never reached; x was never involved
    assert (x._version, x.requires_grad, x.grad) == (x_version, False, None)


@pytest.mark.clause("NEW-8", "NEW-11")
@pytest.mark.only_devices("cpu")  # the seed snippet as written: values, on the default device
def test_seed_ko_method4_with_requires_grad_prints_none(device):
    # Method 4 with the new tensor made to require grad: print(y.grad) prints None (y is the non-leaf sum),
    # not the seed's "tensor([ 1.,  1.,  1.,  1.,  1.])"; the ones are in the leaf's .grad.
    leaf = torch.randn(5, device=device, requires_grad=True)
    y = leaf
    y = y.sum()
    y.backward()
    grad, caught = _read_grad(y)
    assert grad is None
    assert any(cat is UserWarning and NON_LEAF_GRAD in msg for cat, msg in caught), caught
    assert_values(leaf.grad, [1.0] * 5, "leaf.grad")


@pytest.mark.clause("NEW-1", "NEW-5")
def test_seed_ko_no_grad_alternative(device):
    # Korean seed, "no_grad() 블록 사용" alternative, verbatim (with device=).
    with torch.no_grad():
        # 변수 선언
        x = torch.randn(5, device=device)
        # 값 변경
        x = torch.randn(5, device=device)
    # 역전파 확인
    y = x.sum()
    with raises(RuntimeError, NO_GRAD_FN):
        y.backward()
    # print(x.grad) is never reached; it would print None
    assert x.grad is None
