"""Tests of spec/compile.md: updates between two calls of one compiled function (Dynamo's guards).

Each update step here is a whole call of a function compiled once (``run.function``): in eager mode the
plain function, in compile mode ``torch.compile(..., backend="aot_eager")``. The update between the two
calls is the user code the clause is about; the second call must see it.
"""

import pytest
import torch

from conformance.harness.checks import assert_values, raises


def _double(x):
    return x * 2


# > COMPILE-1: When `requires_grad` of an input changes between two calls of one compiled function
# > (`f = torch.compile(lambda x: x * 2)`), the next call follows it: after `x.requires_grad_(True)` the result requires
# > grad, has a `grad_fn`, and backpropagates into `x.grad`; after `x.requires_grad_(False)` it does not require grad
# > again. (Dynamo guards on `requires_grad` of the tensor inputs.)
@pytest.mark.clause("COMPILE-1")
def test_requires_grad_flip_between_calls(device, run):
    f = run.function(_double)
    x = torch.tensor([1.0, 2.0], device=device)
    assert not f(x).requires_grad
    x.requires_grad_(True)
    y = f(x)
    assert y.requires_grad and y.grad_fn is not None
    y.sum().backward()
    assert x.grad is not None and x.grad.shape == (2,)
    x.requires_grad_(False)
    assert not f(x).requires_grad


# > COMPILE-2: `x.data = t` between two calls of one compiled function: the next call computes with the values of `t`,
# > whether `t` has the shape of `x` (for `x + 1` with `x = [1, 2]` and `t = [10, 20]`: `[11, 21]`) or another
# > (`t = [1, 2, 3]`: `[2, 3, 4]`).
@pytest.mark.clause("COMPILE-2")
def test_data_assignment_between_calls(device, run):
    f = run.function(lambda x: x + 1)
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    assert_values(f(x), [2.0, 3.0], "first call")
    x.data = torch.tensor([10.0, 20.0], device=device)
    assert_values(f(x), [11.0, 21.0], "after x.data = [10, 20]")
    x.data = torch.tensor([1.0, 2.0, 3.0], device=device)
    assert_values(f(x), [2.0, 3.0, 4.0], "after x.data = [1, 2, 3]")


# > COMPILE-3: `x.set_(s)` between two calls of one compiled function (an `x` that does not require grad): the next call
# > computes with the storage and shape of `s` (for `x * 3` and `s = [5, 6, 7]`: `[15, 18, 21]`).
@pytest.mark.clause("COMPILE-3")
def test_set_between_calls(device, run):
    f = run.function(lambda x: x * 3)
    x = torch.tensor([1.0, 2.0], device=device)
    assert_values(f(x), [3.0, 6.0], "first call")
    x.set_(torch.tensor([5.0, 6.0, 7.0], device=device))
    assert_values(f(x), [15.0, 18.0, 21.0], "after x.set_(s)")


# > COMPILE-4: A leaf updated in place under `torch.no_grad()` between two calls of a compiled loss (a training loop:
# > `loss(w).backward()`, `with torch.no_grad(): w.sub_(lr * w.grad)`, `w.grad = None`) takes part in the next call at
# > its new values: for the loss `(w * w).sum()`, `w = [1, 2]` and `lr = 0.25`, the second call gives `1.25`, and its
# > gradient is `[1, 2]`, the gradient at the updated `w = [0.5, 1]`.
@pytest.mark.clause("COMPILE-4")
def test_training_step_between_calls(device, run):
    loss = run.function(lambda w: (w * w).sum())
    w = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    loss(w).backward()
    assert_values(w.grad, [2.0, 4.0], "first gradient")
    with torch.no_grad():
        w.sub_(0.25 * w.grad)
    w.grad = None
    second = loss(w)
    second.backward()
    assert_values(w, [0.5, 1.0], "w after the step")
    assert_values(w.grad, [1.0, 2.0], "gradient at the updated w")
    assert second.item() == 1.25


# > COMPILE-8: A module compiled once and called first under `torch.no_grad()`, then with grad mode enabled, runs
# > autograd on the second call: its result requires grad and `backward()` fills the parameters' `.grad` (for
# > `nn.Linear(2, 1)` and the input `[[1, 10]]`, `weight.grad` is `[[1, 10]]`). ...
@pytest.mark.clause("COMPILE-8")
def test_no_grad_call_then_grad_call(device, run):
    m = torch.nn.Linear(2, 1, device=device)
    f = run.function(m)
    x = torch.tensor([[1.0, 10.0]], device=device)
    with torch.no_grad():
        assert not f(x).requires_grad
    y = f(x)
    assert y.requires_grad
    y.sum().backward()
    assert_values(m.weight.grad, [[1.0, 10.0]], "weight.grad")


def _replace_parameter_between_calls(device, run):
    """nn.Linear(2, 1, bias=False), weight [[1, 1]], called once on [[1, 1]]; its weight replaced by a new parameter
    [[2, 2]]; called again and backpropagated: (output, the new weight's grad, the old weight's grad)."""
    m = torch.nn.Linear(2, 1, bias=False).to(device)
    with torch.no_grad():
        m.weight.fill_(1.0)
    f = run.function(m)
    x = torch.ones(1, 2, device=device)
    f(x)
    old = m.weight
    m.weight = torch.nn.Parameter(torch.full((1, 2), 2.0, device=device))
    out = f(x)
    out.sum().backward()
    return out, m.weight.grad, old.grad


# > COMPILE-11: A parameter of a compiled module replaced between two calls (`m.weight = nn.Parameter(w)`, which
# > registers the new parameter in place of the old) takes part in the next call: for `nn.Linear(2, 1, bias=False)` with
# > the weight `[[1, 1]]`, called once on the input `[[1, 1]]`, then given the weight `[[2, 2]]`, the next call gives
# > `4`, and its `backward()` fills the new parameter's `.grad` (`[[1, 1]]`) and leaves the old one's `None`. Compiled,
# > from 2.5 (COMPILE-90 before).
@pytest.mark.clause("COMPILE-11")
@pytest.mark.compiled_since("2.5", before="COMPILE-90")
def test_replaced_parameter_takes_part(device, run):
    out, new_grad, old_grad = _replace_parameter_between_calls(device, run)
    assert_values(out, [[4.0]], "output")
    assert new_grad is not None, "the new weight's grad is None"
    assert_values(new_grad, [[1.0, 1.0]], "new weight's grad")
    assert old_grad is None, f"the old weight's grad is {old_grad}"


# > COMPILE-90 (compile, until 2.5): Before 2.5, in the setting of COMPILE-11, the compiled module keeps computing with
# > the parameter it was first called with, silently: the next call gives `2` (the old weight), and its `backward()`
# > fills the old parameter's `.grad` (`[[1, 1]]`) and leaves the new one's `None`. Layer: AOTAutograd (Dynamo alone,
# > `backend="eager"`, computes with the new parameter). Run with `aot_eager` and inductor on 2.1.2 to 2.15.0: the old
# > parameter on 2.1.2 to 2.4.1, the new one from 2.5.1.
@pytest.mark.clause("COMPILE-90")
def test_replaced_parameter_ignored_compiled_before_2_5(device, run):
    out, new_grad, old_grad = _replace_parameter_between_calls(device, run)
    assert_values(out, [[2.0]], "output")
    assert new_grad is None, f"the new weight's grad is {new_grad}"
    assert old_grad is not None, "the old weight's grad is None"
    assert_values(old_grad, [[1.0, 1.0]], "old weight's grad")


def _unfreeze_between_calls(device, run):
    """A two-layer module, its second layer frozen for one call and unfrozen for the next: layer-2 weight grad."""
    m = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)).to(device)
    f = run.function(m)
    x = torch.tensor([[1.0, 10.0]], device=device)
    m[1].requires_grad_(False)
    f(x).sum().backward()
    assert m[1].weight.grad is None and m[0].weight.grad is not None
    m[1].requires_grad_(True)
    m.zero_grad()
    f(x).sum().backward()
    return m[1].weight.grad


# > COMPILE-5: Parameters of a module frozen with `requires_grad_(False)` for one call and unfrozen with
# > `requires_grad_(True)` before the next: the next `backward()` fills their `.grad` (the second layer of
# > `nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))`, frozen for the first call: its `weight.grad` has shape `(1, 2)`
# > after the second).
@pytest.mark.clause("COMPILE-5")
def test_unfrozen_parameter_gets_grad(device, run):
    grad = _unfreeze_between_calls(device, run)
    assert grad is not None and grad.shape == (1, 2), f"layer 2 weight.grad is {grad}"


# > COMPILE-6: Under `torch.compile`, the same as COMPILE-5: the compiled module is recompiled when a parameter's
# > `requires_grad` changes, and the unfrozen parameters get their `.grad`. (The fix: pytorch/pytorch#177158, "Check
# > requires_grad value on the fast path" of Dynamo's guards, merged in March 2026; 2.12 is the first release of the
# > window that behaves so.)
@pytest.mark.clause("COMPILE-6")
def test_unfrozen_parameter_gets_grad_compiled(device, run):
    grad = _unfreeze_between_calls(device, run)
    assert grad is not None and grad.shape == (1, 2), f"layer 2 weight.grad is {grad}"


# > COMPILE-7: Under `torch.compile`, before 2.12, the compiled module keeps running the code built while the parameters
# > were frozen: after they are unfrozen, `backward()` leaves their `.grad` `None`, silently, with no recompilation and
# > no warning (the setting of COMPILE-5). Dynamo's guards skipped a parameter whose module's parameter dict had not
# > changed, and `requires_grad_()` changes no dict (pytorch/pytorch#139476); the gradient goes missing in the autograd
# > graph AOTAutograd traced while the parameters were frozen (with Dynamo alone, `backend="eager"`, the reused graph
# > runs eagerly and the gradient is there: the recorded layer is AOTAutograd).
@pytest.mark.clause("COMPILE-7")
def test_unfrozen_parameter_keeps_no_grad_compiled(device, run):
    grad = _unfreeze_between_calls(device, run)
    assert grad is None, f"layer 2 weight.grad is {grad}, not None"


def _tensor_from_python_data(x, requires_grad):
    return torch.tensor([3.0, 4.0], device=x.device, requires_grad=requires_grad)


# > COMPILE-10 (meta, 2.2-2.4): From 2.2 to 2.4, on the `meta` device, a compiled step that makes a tensor from Python
# > data (`torch.tensor([3.0, 4.0], device=x.device)`, also with `requires_grad=True`) fails while it is traced: it
# > raises `torch._dynamo.exc.InternalTorchDynamoError` (a `RuntimeError`) whose message contains "`example_value` needs
# > to be a `FakeTensor`". Such a tensor is a real meta tensor, not a fake tensor of the graph, and the check that
# > Dynamo's values are its own fake tensors refuses it (pytorch/pytorch#111954, first in 2.2.0); from 2.5 the check
# > lets meta tensors through: 2.1.2 and 2.5.1 compile it (its test, run there, fails). In compile mode on `meta`, the
# > tests that rebind a name to such a tensor (the members `torch.tensor(v)` and `torch.tensor(v, requires_grad=True)`
# > of `REBIND_TARGETS`) are therefore `not-applicable` on 2.2-2.4, naming this clause. Layer: Dynamo.
@pytest.mark.clause("COMPILE-10")
@pytest.mark.parametrize("requires_grad", [False, True], ids=["no grad", "requires grad"])
def test_tensor_from_python_data_on_meta_cannot_be_traced(device, requires_grad, run):
    x = torch.ones(2, device=device)
    with raises(RuntimeError, "`example_value` needs to be a `FakeTensor`") as info:
        run(_tensor_from_python_data, x, requires_grad)
    assert type(info.value).__name__ == "InternalTorchDynamoError"


def _index_with_list(t):
    t[[0]] = 5.0


# > COMPILE-9: Before 2.15, on the `meta` device, a compiled step that indexes with a Python list (`t[[0]] = 5`) fails
# > while it is traced: it raises a `RuntimeError` (`torch._dynamo.exc.BackendCompilerFailed` up to 2.10,
# > `TorchRuntimeError` from 2.11) whose message contains "Please convert all Tensors to FakeTensors first", and the
# > tensor is left unchanged (`_version` 0). The list becomes an index tensor made from Python data, which on `meta` is
# > a real meta tensor, not a fake one (`FakeTensorMode.may_turn_const` in `torch/_subclasses/fake_tensor.py` excludes
# > `meta`), and fake-tensor propagation refuses it. From 2.15 it compiles. In compile mode on `meta`, the tests that
# > run the spelling `t[[0]] = 5` are therefore `not-applicable` before 2.15, naming this clause; index and mask tensors
# > the suite's steps need are made with `torch.arange`, which Dynamo traces on `meta`. Layer: AOTAutograd up to 2.10,
# > where the error is `BackendCompilerFailed`, raised by the backend (Dynamo alone, `backend="eager"`, compiles the
# > step); Dynamo from 2.11, where it is raised while Dynamo traces (`TorchRuntimeError`).
@pytest.mark.clause("COMPILE-9")
def test_list_index_on_meta_cannot_be_traced(device, run):
    t = torch.ones(2, device=device)
    with raises(RuntimeError, "Please convert all Tensors to FakeTensors first"):
        run(_index_with_list, t)
    assert t._version == 0
