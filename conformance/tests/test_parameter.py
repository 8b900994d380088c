"""Conformance tests for spec/parameter.md (`nn.Parameter` and module attributes)."""

import pytest
import torch
from torch import nn

from conformance.harness.checks import assert_values, raises, same_storage
from conformance.harness.populations import INPLACE_SPELLINGS, PARAM_NON_PARAMETER_VALUES


def linear(device):
    """nn.Linear(2, 1) with weight [[1, 2]] and bias [0] (values set on devices that have them)."""
    m = nn.Linear(2, 1, device=device)
    if device != "meta":
        with torch.no_grad():
            m.weight.copy_(torch.tensor([[1.0, 2.0]]))
            m.bias.zero_()
    return m


# The update steps of this page, each run as written or compiled (the `run` fixture).
def assign_weight(m, value):
    m.weight = value


def assign_buf(m, value):
    m.buf = value


def update_under_no_grad(spelling):
    """The step `with torch.no_grad(): <spelling>(t)` for a member of INPLACE_SPELLINGS."""

    def step(t):
        with torch.no_grad():
            spelling(t)

    return step


def add_one_under_no_grad(t):
    with torch.no_grad():
        t.add_(1)


# > PARAM-1: After `module.weight = p` with `p` an `nn.Parameter`, `module.weight is p`, `p` is what
# > `Module.named_parameters` yields under that name, and the old parameter object is left as it was (shape,
# > `requires_grad`, class).
@pytest.mark.clause("PARAM-1")
def test_assign_parameter_registers_new_object(device, run):
    m = linear(device)
    old = m.weight
    new = nn.Parameter(torch.tensor([[10.0, 20.0]], device=device))
    run(assign_weight, m, new)
    assert m.weight is new
    assert dict(m.named_parameters())["weight"] is new
    assert all(p is not old for p in m.parameters())
    assert (old.shape, old.requires_grad, type(old)) == (torch.Size([1, 2]), True, nn.Parameter)


# > PARAM-2: An optimizer (for example `torch.optim.SGD`, `torch.optim.Adam`) built before `module.weight = p` still
# > holds the old parameter object in its `param_groups`, and not `p`.
@pytest.mark.clause("PARAM-2")
@pytest.mark.parametrize("opt_cls", [torch.optim.SGD, torch.optim.Adam])
def test_optimizer_keeps_old_parameter(device, opt_cls, run):
    m = linear(device)
    old = m.weight
    opt = opt_cls(m.parameters(), lr=0.1)
    run(assign_weight, m, nn.Parameter(torch.tensor([[10.0, 20.0]], device=device)))
    held = opt.param_groups[0]["params"]
    assert any(p is old for p in held)
    assert all(p is not m.weight for p in held)


# > PARAM-3: After such an assignment, `backward()` fills `module.weight.grad` of the new parameter, while the old
# > parameter gets no gradient; `optimizer.step()` then leaves the module's weight unchanged, without error or warning
# > (other parameters the optimizer holds are updated as usual).
@pytest.mark.clause("PARAM-3")
def test_optimizer_silently_stops_updating_reassigned_weight(device, run):
    m = linear(device)
    old = m.weight
    opt = torch.optim.SGD(m.parameters(), lr=0.5)
    run(assign_weight, m, nn.Parameter(torch.tensor([[10.0, 20.0]], device=device)))
    m(torch.tensor([[1.0, 1.0]], device=device)).sum().backward()
    opt.step()
    assert_values(m.weight, [[10.0, 20.0]], "module weight after step (not updated)")
    assert_values(m.weight.grad, [[1.0, 1.0]], "gradient of the new weight")
    assert old.grad is None
    assert_values(old, [[1.0, 2.0]], "old parameter (no gradient, so SGD skipped it)")
    assert_values(m.bias, [-0.5], "bias, still registered with the optimizer, is updated")


# > PARAM-4: Assigning to a parameter name any value of `PARAM_NON_PARAMETER_VALUES` (listed below: values that are
# > neither an `nn.Parameter` nor `None`: plain tensors of the dtypes float32, float64, float16, int64 and bool, a
# > tensor that requires grad, the result of an operation on the parameter, `w.detach()`, a list) raises `TypeError`
# > whose message contains "cannot assign" and "(torch.nn.Parameter or None expected)"; the old parameter stays
# > registered.
@pytest.mark.clause("PARAM-4")
@pytest.mark.parametrize("value", PARAM_NON_PARAMETER_VALUES.params())
def test_assign_plain_value_to_parameter_raises(device, value, run):
    m = linear(device)
    old = m.weight
    v = value(old)
    with raises(TypeError, "cannot assign") as info:
        run(assign_weight, m, v)
    assert "(torch.nn.Parameter or None expected)" in str(info.value), str(info.value)
    assert m.weight is old


# > PARAM-5: `module.weight = None` is accepted: `module.weight` is `None` and `named_parameters()` no longer yields it.
# > The name remains a parameter name: a plain tensor assigned later raises as in PARAM-4, an `nn.Parameter` is
# > registered again.
@pytest.mark.clause("PARAM-5")
def test_assign_none_to_parameter(device, run):
    m = linear(device)
    assign = run.function(assign_weight)
    assign(m, None)
    assert m.weight is None
    assert [n for n, _ in m.named_parameters()] == ["bias"]
    with raises(TypeError, "cannot assign"):
        assign(m, torch.zeros(1, 2, device=device))
    assign(m, nn.Parameter(torch.zeros(1, 2, device=device)))
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]


# > PARAM-6: A plain tensor assigned to the name of a registered buffer replaces the buffer and stays a buffer (yielded
# > by `Module.named_buffers`, not by `parameters()`), with the `requires_grad` it had.
@pytest.mark.clause("PARAM-6")
@pytest.mark.parametrize("requires_grad", [False, True])
def test_assign_tensor_to_buffer_stays_buffer(device, requires_grad, run):
    m = linear(device)
    m.register_buffer("buf", torch.zeros(2, device=device))
    t = torch.ones(2, device=device, requires_grad=requires_grad)
    run(assign_buf, m, t)
    assert m.buf is t
    assert dict(m.named_buffers())["buf"] is t
    assert all(p is not t for p in m.parameters())
    assert m.buf.requires_grad is requires_grad


# > PARAM-7: `register_buffer(name, t)` registers `t` itself and does not change its `requires_grad`: a buffer made from
# > a tensor that requires grad still requires grad.
@pytest.mark.clause("PARAM-7")
@pytest.mark.parametrize("requires_grad", [False, True])
def test_register_buffer_keeps_requires_grad(device, requires_grad):
    m = linear(device)
    t = torch.zeros(2, device=device, requires_grad=requires_grad)
    m.register_buffer("buf", t)
    assert m.buf is t
    assert m.buf.requires_grad is requires_grad
    assert [n for n, _ in m.named_buffers()] == ["buf"]


# > PARAM-8: An `nn.Parameter` assigned to the name of a registered buffer becomes a parameter of that name, and the
# > buffer of that name is gone.
@pytest.mark.clause("PARAM-8")
def test_assign_parameter_to_buffer_name_makes_parameter(device, run):
    m = linear(device)
    m.register_buffer("buf", torch.zeros(2, device=device))
    p = nn.Parameter(torch.ones(2, device=device))
    run(assign_buf, m, p)
    assert dict(m.named_parameters())["buf"] is p
    assert "buf" not in dict(m.named_buffers())


# > PARAM-9: Assigning an `int` to a buffer name raises `TypeError` whose message contains "cannot assign 'int' as
# > buffer".
@pytest.mark.clause("PARAM-9")
def test_assign_int_to_buffer_raises(device, run):
    m = linear(device)
    m.register_buffer("buf", torch.zeros(2, device=device))
    with raises(TypeError, "cannot assign 'int' as buffer"):
        run(assign_buf, m, 3)
    assert m.buf.shape == torch.Size([2])


# > PARAM-10: `nn.Parameter(t)` returns an object other than `t` that is an instance of both `nn.Parameter` and
# > `torch.Tensor`, requires grad, is a leaf without `grad_fn` (also when `t` is a non-leaf result of an operation), and
# > shares the storage of `t`.
@pytest.mark.clause("PARAM-10")
@pytest.mark.parametrize("kind", ["plain", "non-leaf"])
def test_parameter_of_tensor(device, kind):
    t = torch.tensor([1.0, 2.0], device=device)
    if kind == "non-leaf":
        t = torch.tensor([1.0, 2.0], device=device, requires_grad=True) * 2
        assert t.grad_fn is not None
    p = nn.Parameter(t)
    assert p is not t
    assert isinstance(p, nn.Parameter) and isinstance(p, torch.Tensor)
    assert (p.requires_grad, p.is_leaf, p.grad_fn) == (True, True, None)
    assert same_storage(p, t)


# > PARAM-11: `p = nn.Parameter(t)` shares the version counter of `t`: an in-place update of `t` under `no_grad` (every
# > spelling of `INPLACE_SPELLINGS`, listed below, such as `t.add_(1)`, `t += 1`, `t[:] = v`, `t.copy_(v)`) bumps
# > `p._version`, and the same update of `p` bumps `t._version`; both read the same value afterwards. (Compare DATA-3:
# > `.data` has a counter of its own; `detach()` shares it, DATA-7.)
@pytest.mark.clause("PARAM-11")
@pytest.mark.parametrize("spelling", INPLACE_SPELLINGS.params())
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_parameter_shares_version_counter(device, spelling, run):
    t = torch.tensor([1.0, 2.0], device=device)
    p = nn.Parameter(t)
    assert (t._version, p._version) == (0, 0)
    update = run.function(update_under_no_grad(spelling))
    for target, other in ((t, p), (p, t)):
        version = other._version
        update(target)
        assert other._version > version, f"_version of the other tensor did not grow ({version} -> {other._version})"
        assert t._version == p._version, (t._version, p._version)


# > PARAM-12: Values written into `t` after `p = nn.Parameter(t)` are the values of `p`.
@pytest.mark.clause("PARAM-12")
def test_parameter_of_tensor_sees_writes_to_t(device, run):
    t = torch.tensor([1.0, 2.0], device=device)
    p = nn.Parameter(t)
    run(add_one_under_no_grad, t)
    assert_values(p, [2.0, 3.0], "p after t.add_(1)")


# > PARAM-13: `nn.Parameter(t, requires_grad=False)` is an `nn.Parameter` that does not require grad and shares the
# > storage of `t`. It accepts an integer tensor, which `nn.Parameter(t)` rejects with `RuntimeError` whose message
# > contains "Only Tensors of floating point and complex dtype can require gradients".
@pytest.mark.clause("PARAM-13")
def test_parameter_without_grad(device):
    t = torch.tensor([1.0, 2.0], device=device)
    p = nn.Parameter(t, requires_grad=False)
    assert (type(p), p.requires_grad, same_storage(p, t)) == (nn.Parameter, False, True)
    i = torch.tensor([1, 2], device=device)
    with raises(RuntimeError, "Only Tensors of floating point and complex dtype can require gradients"):
        nn.Parameter(i)
    assert nn.Parameter(i, requires_grad=False).dtype == torch.int64


# Seeds: neither source mentions nn.Parameter. The English claim about reassignment, applied to a module.


@pytest.mark.clause("PARAM-3")
def test_seed_en_reassignment_of_module_weight(device, run):
    # English seed, "Avoiding variable reassignment": "Directly reassigning a new value to a variable
    # (e.g., x = something_new) creates a new variable and breaks the connection to the computational graph."
    # Applied to a module attribute, backprop into the new parameter works; what breaks is the optimizer.
    m = linear(device)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    run(assign_weight, m, nn.Parameter(torch.tensor([[3.0, 4.0]], device=device)))  # x = something_new
    m(torch.tensor([[1.0, 1.0]], device=device)).sum().backward()
    assert_values(m.weight.grad, [[1.0, 1.0]], "backprop reaches the new parameter")
    opt.step()
    assert_values(m.weight, [[3.0, 4.0]], "but the optimizer does not update it")
