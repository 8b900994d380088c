"""Conformance tests for spec/variable.md (`torch.autograd.Variable`). Each test quotes the clause it proves."""

import warnings

import pytest
import torch
from torch.autograd import Variable

from conformance.harness.checks import assert_values, raises, same_storage
from conformance.harness.populations import TENSORS


def _recording_warnings(func):
    """Call func() and return (result, list of warnings it emitted)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = func()
    return result, [(w.category, str(w.message)) for w in caught]


# > VAR-1: The module `torch` has no attribute `Variable`: `torch.Variable` (and therefore any call
# > `torch.Variable(...)`) raises `AttributeError` whose message contains "has no attribute 'Variable'", and
# > `hasattr(torch, "Variable")` is false.
@pytest.mark.clause("VAR-1")
@pytest.mark.parametrize("spelling", ["torch.Variable", "torch.Variable(t)", "torch.Variable(t, requires_grad=True)"])
def test_torch_variable_does_not_exist(device, spelling):
    t = torch.randn(5, device=device)
    assert not hasattr(torch, "Variable")
    with raises(AttributeError, "has no attribute 'Variable'"):
        if spelling == "torch.Variable":
            torch.Variable  # noqa: B018
        elif spelling == "torch.Variable(t)":
            torch.Variable(t)
        else:
            torch.Variable(t, requires_grad=True)


def _param(device):
    return torch.nn.Parameter(torch.ones(2, device=device))


INPUTS = {
    "plain tensor": lambda device: torch.tensor([1.0, 2.0], device=device),
    "leaf requiring grad": lambda device: torch.tensor([1.0, 2.0], device=device, requires_grad=True),
    "non-leaf": lambda device: torch.tensor([1.0, 2.0], device=device, requires_grad=True) * 2,
    "nn.Parameter": _param,
}


# > VAR-2: `torch.autograd.Variable(t)` and `torch.autograd.Variable(t, requires_grad=True)` return an object
# > whose type is exactly `torch.Tensor`, also when `t` is an `nn.Parameter`.
@pytest.mark.clause("VAR-2")
@pytest.mark.parametrize("kind", list(INPUTS))
@pytest.mark.parametrize("requires_grad", [False, True])
def test_legacy_constructor_returns_plain_tensor(device, kind, requires_grad):
    t = INPUTS[kind](device)
    v = Variable(t, requires_grad=requires_grad)
    assert type(v) is torch.Tensor, f"type is {type(v)}"
    assert type(v) is not Variable


# > VAR-3: `isinstance(obj, torch.autograd.Variable)` is true for every tensor (every member of TENSORS), including
# > tensors created without the constructor (`torch.tensor(...)`, factory results, `nn.Parameter`), and false for
# > objects that are not tensors (a Python list or number); yet `issubclass(torch.Tensor, torch.autograd.Variable)` is
# > false.
@pytest.mark.clause("VAR-3")
@pytest.mark.parametrize("make", TENSORS.params())
def test_isinstance_variable_is_true_for_every_tensor(device, make):
    t = make(device)
    assert isinstance(t, Variable), f"isinstance({type(t).__name__}, Variable)"
    for other in ([1.0, 2.0], 1.0, 3, None, "tensor"):
        assert not isinstance(other, Variable), f"isinstance({other!r}, Variable)"
    assert not issubclass(torch.Tensor, Variable)


# > VAR-4: `v = torch.autograd.Variable(t)` is a new tensor object that shares the storage and the version counter of
# > `t` (an in-place operation on `v` increments `t._version`), like `t.detach()`. Without `requires_grad=True`, `v`
# > does not require grad, is a leaf and has no `grad_fn`, even when `t` is a leaf that requires grad or a non-leaf
# > result of an operation.
@pytest.mark.clause("VAR-4")
@pytest.mark.parametrize("kind", list(INPUTS))
@pytest.mark.parametrize("spelling", ["Variable(t)", "Variable(t, requires_grad=False)", "Variable(t, False)"])
def test_legacy_constructor_detaches(device, kind, spelling):
    t = INPUTS[kind](device)
    if spelling == "Variable(t)":
        v = Variable(t)
    elif spelling == "Variable(t, requires_grad=False)":
        v = Variable(t, requires_grad=False)
    else:
        v = Variable(t, False)
    assert v is not t
    assert same_storage(v, t)
    assert (v.requires_grad, v.is_leaf, v.grad_fn) == (False, True, None)
    before = t._version
    v.add_(1)  # allowed: v does not require grad
    assert t._version == v._version > before, "shared version counter"


# > VAR-5: `v = torch.autograd.Variable(t, requires_grad=True)` (or with `True` as second positional argument)
# > is a leaf that requires grad and has no `grad_fn`; `t` is not changed: `t.requires_grad` stays false.
@pytest.mark.clause("VAR-5")
@pytest.mark.parametrize("spelling", ["requires_grad=True", "positional True"])
def test_legacy_constructor_requires_grad(device, spelling):
    t = torch.tensor([1.0, 2.0], device=device)
    v = Variable(t, requires_grad=True) if spelling == "requires_grad=True" else Variable(t, True)
    assert v is not t
    assert same_storage(v, t)
    assert (v.requires_grad, v.is_leaf, v.grad_fn) == (True, True, None)
    assert t.requires_grad is False


@pytest.mark.clause("VAR-5")
def test_legacy_constructor_requires_grad_on_non_leaf(device):
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    t = a * 2
    v = Variable(t, requires_grad=True)
    assert (v.requires_grad, v.is_leaf, v.grad_fn) == (True, True, None)
    assert (t.is_leaf, t.grad_fn is not None) == (False, True)


# > VAR-6: Gradients of operations on `v = torch.autograd.Variable(t, requires_grad=True)` are accumulated
# > into `v.grad`; `t.grad` stays `None`.
@pytest.mark.clause("VAR-6")
def test_gradient_goes_to_the_new_leaf(device):
    t = torch.tensor([1.0, 2.0], device=device)
    v = Variable(t, requires_grad=True)
    (v * v).sum().backward()
    assert_values(v.grad, [2.0, 4.0], "v.grad")
    assert t.grad is None


# > VAR-7: `torch.autograd.Variable(v)` where `v` is not a tensor (a list, a number) raises `TypeError` whose message
# > contains "Variable data has to be a tensor"; `torch.autograd.Variable(t, requires_grad=True)` where `t` has an
# > integer or bool dtype raises `RuntimeError` whose message contains "can require gradients".
@pytest.mark.clause("VAR-7")
@pytest.mark.parametrize("value", [[1.0, 2.0], 3.0, 3])
def test_legacy_constructor_rejects_non_tensor(device, value):
    with raises(TypeError, "Variable data has to be a tensor"):
        Variable(value)


@pytest.mark.clause("VAR-7")
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool])
def test_legacy_constructor_rejects_integer_requires_grad(device, dtype):
    t = torch.zeros(2, device=device, dtype=dtype)
    with raises(RuntimeError, "can require gradients"):
        Variable(t, requires_grad=True)
    assert Variable(t).dtype == dtype


VOLATILE_WARNING = "volatile was removed and now has no effect"


# > VAR-8: `torch.autograd.Variable(t, volatile=True)` emits a `UserWarning` whose message contains "volatile was
# > removed and now has no effect", and otherwise behaves as `torch.autograd.Variable(t)`: the result does not require
# > grad, grad mode stays enabled, and an operation that combines the result with a tensor that requires grad is
# > recorded (has a `grad_fn`). `volatile=False` emits no warning.
@pytest.mark.clause("VAR-8")
def test_volatile_only_warns(device):
    t = torch.tensor([1.0, 2.0], device=device)
    v, caught = _recording_warnings(lambda: Variable(t, volatile=True))
    assert any(cat is UserWarning and VOLATILE_WARNING in msg for cat, msg in caught), caught
    assert (v.requires_grad, v.is_leaf, v.grad_fn) == (False, True, None)
    assert same_storage(v, t)
    assert torch.is_grad_enabled()
    w = torch.ones(2, device=device, requires_grad=True)
    out = w * v
    assert out.requires_grad and out.grad_fn is not None


@pytest.mark.clause("VAR-8")
@pytest.mark.parametrize("spelling", ["volatile=False", "requires_grad=True, volatile=False"])
def test_volatile_false_is_silent(device, spelling):
    t = torch.tensor([1.0, 2.0], device=device)
    if spelling == "volatile=False":
        v, caught = _recording_warnings(lambda: Variable(t, volatile=False))
        assert not v.requires_grad
    else:
        v, caught = _recording_warnings(lambda: Variable(t, requires_grad=True, volatile=False))
        assert v.requires_grad
    assert caught == []


# > VAR-9: `torch.autograd.Variable(t, requires_grad=True, volatile=True)` raises `ValueError` whose message contains
# > "Variable can't be volatile and require_grad at the same time".
@pytest.mark.clause("VAR-9")
@pytest.mark.parametrize("positional", [False, True])
def test_volatile_with_requires_grad_raises(device, positional):
    t = torch.tensor([1.0, 2.0], device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with raises(ValueError, "Variable can't be volatile and require_grad at the same time"):
            if positional:
                Variable(t, True, True)
            else:
                Variable(t, requires_grad=True, volatile=True)


# > VAR-10: Every tensor (every member of TENSORS) has an attribute `volatile`: reading it returns `False` and emits a
# > `UserWarning` whose message contains "volatile was removed"; assigning `t.volatile = True` emits a `UserWarning`
# > containing "volatile was removed and now has no effect", and `t.volatile` still reads `False`.
@pytest.mark.clause("VAR-10")
@pytest.mark.parametrize("make", TENSORS.params())
def test_volatile_attribute(device, make):
    t = make(device)
    requires_grad = t.requires_grad
    value, caught = _recording_warnings(lambda: t.volatile)
    assert value is False
    assert [cat for cat, _ in caught] == [UserWarning] and "volatile was removed" in caught[0][1], caught

    def assign():
        t.volatile = True

    _, caught = _recording_warnings(assign)
    assert any(cat is UserWarning and VOLATILE_WARNING in msg for cat, msg in caught), caught
    value, _ = _recording_warnings(lambda: t.volatile)
    assert value is False
    assert t.requires_grad is requires_grad


# Seeds, run as written (fixing only what stops them from running, as noted).


@pytest.mark.clause("VAR-1")
def test_seed_ko_torch_variable_raises(device):
    # Korean seed, "예제 코드" (example code) block, methods 1 to 4, verbatim: it stops at its first line.
    with raises(AttributeError, "module 'torch' has no attribute 'Variable'"):
        # 1. `data` 속성을 사용하여 값을 직접 변경
        x = torch.Variable(torch.randn(5))
        x.data = torch.randn(5)
        y = x.sum()
        y.backward()
        print(x.grad)
        # 2. `in_place` 연산 사용
        x = torch.Variable(torch.randn(5))
        x.add_(1)
        y = x.sum()
        y.backward()
        print(x.grad)
        # 3. `copy_()` 메서드 사용
        x = torch.Variable(torch.randn(5))
        x.copy_(torch.randn(5))
        y = x.sum()
        y.backward()
        print(x.grad)
        # 4. 새 Variable 생성
        x = torch.Variable(torch.randn(5))
        y = torch.randn(5)
        y = y.sum()
        y.backward()
        print(y.grad)


@pytest.mark.clause("VAR-4", "NEW-5")
def test_seed_ko_requires_grad_false_alternative(device):
    # Korean seed, "requires_grad 속성 사용" alternative. As written it calls torch.Variable (VAR-1);
    # fixed to torch.autograd.Variable, the backward call raises instead of "not backpropagating".
    with raises(AttributeError, "has no attribute 'Variable'"):
        torch.Variable(torch.randn(5), requires_grad=False)
    x = torch.autograd.Variable(torch.randn(5, device=device), requires_grad=False)
    x.data = torch.randn(5, device=device)
    y = x.sum()
    assert (x.requires_grad, y.requires_grad, y.grad_fn) == (False, False, None)
    with raises(RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn"):
        y.backward()
    assert x.grad is None
