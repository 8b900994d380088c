"""Conformance tests for spec/swap_tensors.md (`torch.utils.swap_tensors`, swapping module conversion)."""

import weakref
from contextlib import contextmanager

import pytest
import torch
import torch.__future__ as future
from torch import nn

from conformance.harness.checks import assert_values, raises, same_storage
from conformance.harness.populations import MODULES


@contextmanager
def swap_flag(value):
    """Set torch.__future__'s swap flag and always put the old value back."""
    old = future.get_swap_module_params_on_conversion()
    future.set_swap_module_params_on_conversion(value)
    try:
        yield
    finally:
        future.set_swap_module_params_on_conversion(old)


@contextmanager
def overwrite_flag(value):
    old = future.get_overwrite_module_params_on_conversion()
    future.set_overwrite_module_params_on_conversion(value)
    try:
        yield
    finally:
        future.set_overwrite_module_params_on_conversion(old)


OTHER = {"cpu": "meta", "cuda": "meta", "mps": "meta"}


# The update steps of this page, each run as written or compiled (the `run` fixture).
def swap(a, b):
    torch.utils.swap_tensors(a, b)


def to_double(m):
    m.double()


def to_float64(m):
    m.to(torch.float64)


def to_device(device):
    def step(m):
        m.to(device)

    return step


CONVERSIONS = {"double()": to_double, "to(torch.float64)": to_float64}


# > SWAP-1: After `torch.utils.swap_tensors(a, b)` both Python objects keep their identity (`id`); `a` has the shape,
# > dtype and storage that `b` had, and `b` those that `a` had.
@pytest.mark.clause("SWAP-1")
def test_swap_exchanges_metadata_keeps_identity(device, run):
    a = torch.tensor([1.0, 2.0], device=device)
    b = torch.tensor([3.0, 4.0, 5.0], device=device, dtype=torch.float64)
    ia, ib, sa, sb = id(a), id(b), a.untyped_storage()._cdata, b.untyped_storage()._cdata
    run(swap, a, b)
    assert (id(a), id(b)) == (ia, ib)
    assert (a.shape, a.dtype, b.shape, b.dtype) == (torch.Size([3]), torch.float64, torch.Size([2]), torch.float32)
    assert (a.untyped_storage()._cdata, b.untyped_storage()._cdata) == (sb, sa)


# > SWAP-2: The values are exchanged.
@pytest.mark.clause("SWAP-2")
def test_swap_exchanges_values(device, run):
    a = torch.tensor([1.0, 2.0], device=device)
    b = torch.tensor([3.0, 4.0, 5.0], device=device)
    run(swap, a, b)
    assert_values(a, [3.0, 4.0, 5.0], "a")
    assert_values(b, [1.0, 2.0], "b")


# > SWAP-3: The autograd state, the Python class and the instance `__dict__` are exchanged too: `requires_grad` and
# > `.grad` go with the contents, and an `nn.Parameter` swapped with a plain tensor becomes a plain `torch.Tensor` while
# > the tensor becomes the `nn.Parameter`.
@pytest.mark.clause("SWAP-3")
def test_swap_exchanges_autograd_state_and_class(device, run):
    p = nn.Parameter(torch.tensor([1.0, 2.0], device=device))
    (p * 2).sum().backward()
    grad = p.grad
    t = torch.tensor([5.0], device=device)
    t.note = "t"
    run(swap, p, t)
    assert (type(p), type(t)) == (torch.Tensor, nn.Parameter)
    assert (p.requires_grad, t.requires_grad) == (False, True)
    assert p.grad is None and t.grad is grad
    assert getattr(p, "note", None) == "t" and not hasattr(t, "note")


# > SWAP-4: A tensor that has a weak reference cannot be swapped: `RuntimeError` whose message contains "Cannot swap t1
# > because it has weakref associated with it" (or "t2" for the second argument), and both tensors are left as they
# > were.
@pytest.mark.clause("SWAP-4")
@pytest.mark.parametrize("which", ["t1", "t2"])
def test_swap_with_weakref_raises(device, which, run):
    a = torch.zeros(1, device=device)
    b = torch.zeros(2, device=device)
    ref = weakref.ref(a if which == "t1" else b)
    with raises(RuntimeError, f"Cannot swap {which} because it has weakref associated with it"):
        run(swap, a, b)
    assert (a.shape, b.shape) == (torch.Size([1]), torch.Size([2]))
    del ref


# > SWAP-5: A leaf that requires grad and that a graph has saved for backward cannot be swapped: `RuntimeError` whose
# > message contains "Expected use_count of t1 to be 1 or 2". A leaf used by a graph that saved none of it can be
# > swapped. (Run on every release of the window: this holds from 2.4.1 on; on 2.3.1 the test fails, the check of 2.3
# > differs.)
@pytest.mark.clause("SWAP-5")
def test_swap_of_saved_leaf_raises(device, run):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = (x * x).sum()  # saves x
    with raises(RuntimeError, "Expected use_count of t1 to be 1 or 2"):
        run(swap, x, torch.zeros(2, device=device))
    assert x.shape == torch.Size([2]) and y.requires_grad
    z = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    w = (z * 2).sum()  # saves no tensor of z
    run(swap, z, torch.zeros(3, device=device))
    assert z.shape == torch.Size([3]) and w.requires_grad


# > SWAP-90: When `torch.utils.swap_tensors(a, b)` is the update step of a function run under `torch.compile`, with `a`
# > and `b` inputs of that function, it raises `RuntimeError` whose message contains "Cannot swap t1 because it has
# > weakref associated with it", and both tensors are left as they were: Dynamo keeps weak references to the tensors it
# > traced (its guards and fake-tensor metadata), and `swap_tensors` refuses a tensor that has one. The same error comes
# > where eager raises another (a weak reference on `t2`, SWAP-4; a leaf saved by a graph, SWAP-5). The layer is Dynamo
# > (the same with `backend="eager"`). Evidence: pytorch/pytorch#145529 and its fix #185953 ("Clear Dynamo weakrefs
# > before graph-break resumes": "`swap_tensors` rejects tensors with live weakrefs"), and #186796 (the same weak
# > references on the parameters of a live compiled module). Run on the releases 2.3.1 to 2.15.0: raises on 2.3.1 to
# > 2.10.0, not on 2.11.0 and later.
@pytest.mark.clause("SWAP-90")
@pytest.mark.parametrize("case", ["plain tensors", "weakref on t2", "leaf saved by a graph"])
def test_compiled_swap_refused_for_weakref(device, case, run):
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=case == "leaf saved by a graph")
    b = torch.zeros(3, device=device)
    keep = weakref.ref(b) if case == "weakref on t2" else (a * a).sum()
    with raises(RuntimeError, "Cannot swap t1 because it has weakref associated with it"):
        run(swap, a, b)
    assert (a.shape, b.shape) == (torch.Size([2]), torch.Size([3]))
    del keep


# The tests of SWAP-1 to SWAP-5, whose step is `swap_tensors(a, b)`, by clause.
SWAP_TESTS = {
    "SWAP-1": test_swap_exchanges_metadata_keeps_identity,
    "SWAP-2": test_swap_exchanges_values,
    "SWAP-3": test_swap_exchanges_autograd_state_and_class,
    "SWAP-4 (t1)": lambda device, run: test_swap_with_weakref_raises(device, "t1", run),
    "SWAP-4 (t2)": lambda device, run: test_swap_with_weakref_raises(device, "t2", run),
    "SWAP-5": test_swap_of_saved_leaf_raises,
}


# > SWAP-91: From 2.11, the same compiled step behaves as in eager: SWAP-1 to SWAP-5 hold for it.
@pytest.mark.clause("SWAP-91")
@pytest.mark.parametrize("clause", list(SWAP_TESTS))
def test_compiled_swap_as_in_eager(device, clause, run):
    SWAP_TESTS[clause](device, run)


def _called_once(device, run):
    """nn.Linear(2, 1, bias=False), its step (the module) as the mode runs it, called once on [[1, 1]]."""
    m = nn.Linear(2, 1, bias=False).to(device)
    f = run.function(m)
    f(torch.ones(1, 2, device=device))
    return m, f


def _swap_in_threes(m) -> None:
    torch.utils.swap_tensors(m.weight, nn.Parameter(torch.full((1, 2), 3.0, device=m.weight.device)))


def _swap_parameter_between_calls(device, run):
    """The module of _called_once, its weight swapped with a parameter holding [[3, 3]], then called again: the second
    output."""
    m, f = _called_once(device, run)
    _swap_in_threes(m)
    return f(torch.ones(1, 2, device=device))


# > SWAP-13: A parameter of a compiled module swapped between two calls (`torch.utils.swap_tensors(m.weight,
# > nn.Parameter(w))`) takes part in the next call with its new values: for `nn.Linear(2, 1, bias=False)`, called once
# > on the input `[[1, 1]]`, then swapped with a parameter holding `[[3, 3]]`, the next call gives `6`. Compiled, from
# > 2.11 (SWAP-92 before).
@pytest.mark.clause("SWAP-13")
@pytest.mark.compiled_since("2.11", before="SWAP-92")
def test_parameter_swapped_between_calls_takes_part(device, run):
    assert_values(_swap_parameter_between_calls(device, run), [[6.0]], "output")


# > SWAP-92 (compile, 2.3-2.11): From 2.3 to 2.10, in the setting of SWAP-13, the swap between the calls raises
# > `RuntimeError` whose message contains "Cannot swap t1 because it has weakref associated with it", and the parameter
# > keeps its values: the compiled module holds weak references to its parameters (pytorch/pytorch#186796). Layer:
# > AOTAutograd on 2.3 and 2.4 (Dynamo alone, `backend="eager"`, leaves the swap possible there), Dynamo from 2.5 (the
# > same with `backend="eager"`). Run with `aot_eager`, inductor and `backend="eager"` on 2.3.1 to 2.15.0.
@pytest.mark.clause("SWAP-92")
def test_parameter_swap_between_compiled_calls_refused(device, run):
    m, _ = _called_once(device, run)
    before = m.weight.detach().clone()
    with raises(RuntimeError, "Cannot swap t1 because it has weakref associated with it"):
        _swap_in_threes(m)
    if device != "meta":
        assert_values(m.weight, before.tolist(), "weight")


# > SWAP-6: Before 2.3, `torch.utils` has no `swap_tensors` and `torch.__future__` has no
# > `set_swap_module_params_on_conversion`.
@pytest.mark.clause("SWAP-6")
def test_swap_absent_before_2_3(device):
    assert not hasattr(torch.utils, "swap_tensors")
    assert not hasattr(future, "set_swap_module_params_on_conversion")


# > SWAP-7: `torch.__future__.get_swap_module_params_on_conversion` returns `False` by default.
@pytest.mark.clause("SWAP-7")
def test_swap_flag_default_false(device):
    assert future.get_swap_module_params_on_conversion() is False


# > SWAP-8: By default, `module.double()` and `module.to(torch.float64)` keep each parameter object and change its dtype
# > in place (an optimizer built before holds the converted parameter), and `.grad` stays the same object, converted
# > too; the parameter stays a leaf `nn.Parameter` that requires grad (every parameter of every module of MODULES).
@pytest.mark.clause("SWAP-8")
@pytest.mark.parametrize("spelling", ["double()", "to(torch.float64)"])
@pytest.mark.parametrize("make", MODULES.params())
def test_default_dtype_conversion_keeps_identity(device, make, spelling, run):
    m = make(device)
    sum((p * p).sum() for p in m.parameters()).backward()
    old = {name: (p, p.grad) for name, p in m.named_parameters()}
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    run(CONVERSIONS[spelling], m)
    assert all(a is b for a, b in zip(opt.param_groups[0]["params"], [p for p, _ in old.values()], strict=True))
    for name, (w, g) in old.items():
        assert m.get_parameter(name) is w, name
        assert (w.dtype, type(w), w.requires_grad, w.is_leaf) == (torch.float64, nn.Parameter, True, True), name
        assert w.grad is g and g.dtype == torch.float64, name


# > SWAP-9: By default, `Module.to` to a device of another tensor type (`meta` here) replaces each parameter by a new
# > `nn.Parameter` object on that device; an optimizer built before keeps the old parameter on the old device (every
# > module of MODULES).
@pytest.mark.clause("SWAP-9")
@pytest.mark.parametrize("make", MODULES.params())
def test_default_device_conversion_replaces_parameter(device, make, run):
    m = make(device)
    old = dict(m.named_parameters())
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    run(to_device(OTHER[device]), m)
    for name, w in old.items():
        new = m.get_parameter(name)
        assert new is not w and type(new) is nn.Parameter, name
        assert new.device.type == OTHER[device] and w.device.type == device, name
    assert all(a is b for a, b in zip(opt.param_groups[0]["params"], old.values(), strict=True))


# > SWAP-10: With `torch.__future__.set_swap_module_params_on_conversion(True)`, `module.double()`,
# > `module.to(torch.float64)` and `module.to(device)` keep each parameter object (its contents are swapped), so an
# > optimizer built before holds the converted parameter; it stays a leaf `nn.Parameter` that requires grad (every
# > module of MODULES).
@pytest.mark.clause("SWAP-10")
@pytest.mark.parametrize("spelling", ["double()", "to(torch.float64)", "to(other device)"])
@pytest.mark.parametrize("make", MODULES.params())
def test_swap_flag_conversion_keeps_identity(device, make, spelling, run):
    with swap_flag(True):
        m = make(device)
        old = dict(m.named_parameters())
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        run(CONVERSIONS.get(spelling) or to_device(OTHER.get(device, device)), m)
        assert all(a is b for a, b in zip(opt.param_groups[0]["params"], old.values(), strict=True))
        for name, w in old.items():
            assert m.get_parameter(name) is w, name
            assert (type(w), w.requires_grad, w.is_leaf) == (nn.Parameter, True, True), name
            if spelling == "to(other device)":
                assert w.device.type == OTHER.get(device, device), name
            else:
                assert w.dtype == torch.float64, name


# > SWAP-11: With that flag set, converting a module one of whose parameters has a weak reference or was saved by a
# > graph raises `RuntimeError` whose message contains "Couldn't swap Linear.weight" (for an `nn.Linear`), and the
# > parameter keeps its dtype. (Holds from 2.3.1, the first release with the flag.)
@pytest.mark.clause("SWAP-11")
@pytest.mark.parametrize("holder", ["weakref", "saved by a graph"])
def test_swap_flag_conversion_refused(device, holder, run):
    m = nn.Linear(2, 1, device=device)
    if holder == "weakref":
        keep = weakref.ref(m.weight)
    else:
        keep = m(torch.ones(1, 2, device=device, requires_grad=True)).sum()
    with swap_flag(True):
        with raises(RuntimeError, "Couldn't swap Linear.weight"):
            run(to_double, m)
    assert m.weight.dtype == torch.float32
    del keep


# > SWAP-12: With `torch.__future__.set_overwrite_module_params_on_conversion` set to `True` (and the swap flag off),
# > `module.double()` replaces each parameter by a new `nn.Parameter` object, leaving the old one as it was (every
# > module of MODULES).
@pytest.mark.clause("SWAP-12")
@pytest.mark.parametrize("make", MODULES.params())
def test_overwrite_flag_replaces_parameter(device, make, run):
    with overwrite_flag(True):
        m = make(device)
        old = dict(m.named_parameters())
        run(to_double, m)
        for name, w in old.items():
            new = m.get_parameter(name)
            assert new is not w and type(new) is nn.Parameter, name
            observed = (new.dtype, w.dtype, new.is_leaf, new.requires_grad)
            assert observed == (torch.float64, torch.float32, True, True), name


# Seeds: neither source mentions swap_tensors. The English claim about reassignment, against swap_tensors.


@pytest.mark.clause("SWAP-1", "SWAP-3")
def test_seed_en_reassignment_vs_swap(device, run):
    # English seed: "Directly reassigning a new value to a variable (e.g., x = something_new) creates a new variable
    # and breaks the connection". swap_tensors gives x new contents while every reference keeps the same object.
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    holder = [x]
    new = torch.tensor([3.0, 4.0, 5.0], device=device, requires_grad=True)
    run(swap, x, new)
    assert holder[0] is x and x.shape == torch.Size([3]) and x.requires_grad
    assert not same_storage(x, new)
