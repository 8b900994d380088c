"""Conformance tests for spec/load_state_dict.md (`nn.Module.load_state_dict`)."""

import warnings

import pytest
import torch
from torch import nn

from conformance.harness.checks import assert_values, raises, same_storage
from conformance.harness.populations import LOADSD_MODULES


def linear(device):
    m = nn.Linear(2, 1, device=device)
    if device != "meta":
        with torch.no_grad():
            m.weight.copy_(torch.tensor([[1.0, 2.0]]))
            m.bias.zero_()
    return m


def sd(device, weight=((3.0, 4.0),), bias=(1.0,), **kw):
    return {"weight": torch.tensor(weight, device=device, **kw), "bias": torch.tensor(bias, device=device)}


# The update steps of this page, each run as written or compiled (the `run` fixture).
def load(m, state_dict, **kwargs):
    return m.load_state_dict(state_dict, **kwargs)


def add_one_under_no_grad(p):
    with torch.no_grad():
        p.add_(1)


def sgd_step(opt):
    opt.step()


def mul_two(t):
    t.mul_(2)


def write_first_element(t):
    t[0, 0] = 7.0


# > LOADSD-1: For every module of `LOADSD_MODULES` (listed below), `module.load_state_dict(sd)` keeps every parameter
# > object: `module.weight` is the object it was before (and the one an optimizer built before holds); it stays an
# > `nn.Parameter`, a leaf without `grad_fn`, with the `requires_grad` it had (True or False), and does not share
# > storage with the state dict's tensor, also when that tensor requires grad.
@pytest.mark.clause("LOADSD-1")
@pytest.mark.parametrize("requires_grad", [True, False])
@pytest.mark.parametrize("source_requires_grad", [False, True])
@pytest.mark.parametrize("make", LOADSD_MODULES.params())
def test_load_keeps_parameter_identity(device, make, requires_grad, source_requires_grad, run):
    m = make(device)
    m.weight.requires_grad_(requires_grad)
    params = dict(m.named_parameters())
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    src = {
        k: (v.detach().clone() + 1).requires_grad_(source_requires_grad) if v.is_floating_point() else v.clone()
        for k, v in m.state_dict().items()
    }
    run(load, m, src)
    assert list(dict(m.named_parameters())) == list(params)
    for name, p in params.items():
        assert getattr(m, name) is p, name
        rg = requires_grad if name == "weight" else True
        assert (type(p), p.is_leaf, p.grad_fn, p.requires_grad) == (nn.Parameter, True, None, rg), name
        assert not same_storage(p, src[name]), name
    held = opt.param_groups[0]["params"]
    assert len(held) == len(params) and all(a is b for a, b in zip(held, m.parameters(), strict=True))


# > LOADSD-2: The values of the state dict's tensors are copied into the parameters and buffers, converted to their
# > dtype (a float64 or int64 source into a float32 parameter gives float32 values).
@pytest.mark.clause("LOADSD-2")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
def test_load_copies_values(device, dtype, run):
    m = linear(device)
    src = {"weight": torch.tensor([[3, 4]], dtype=dtype, device=device), "bias": torch.tensor([1.0], device=device)}
    run(load, m, src)
    assert (m.weight.dtype, m.bias.dtype) == (torch.float32, torch.float32)
    assert_values(m.weight, [[3.0, 4.0]], "weight")
    assert_values(m.bias, [1.0], "bias")


# > LOADSD-3: For every module of `LOADSD_MODULES` (listed after LOADSD-1), each loaded parameter and buffer (for
# > example the running statistics of `nn.BatchNorm1d`) keeps its object and has its `_version` increased (by how much
# > is not promised, VERSION-40).
@pytest.mark.clause("LOADSD-3")
@pytest.mark.parametrize("make", LOADSD_MODULES.params())
def test_load_bumps_version(device, make, run):
    m = make(device)
    tensors = dict(m.named_parameters())
    tensors.update(m.named_buffers())
    before = {k: (t, t._version) for k, t in tensors.items()}
    run(load, m, {k: v.clone() for k, v in m.state_dict().items()})
    now = dict(m.named_parameters())
    now.update(m.named_buffers())
    for k, (t, version) in before.items():
        assert now[k] is t, k
        assert t._version > version, f"{k}: _version did not increase ({version} -> {t._version})"


# > LOADSD-4: When a graph saved a parameter for backward, loading a state dict into the module makes that graph's
# > `backward()` raise `RuntimeError` whose message contains "one of the variables needed for gradient computation has
# > been modified by an inplace operation" (the in-place rule of DATA-7).
@pytest.mark.clause("LOADSD-4")
def test_load_into_saved_parameter_breaks_backward(device, run):
    m = linear(device)
    out = m(torch.ones(1, 2, device=device, requires_grad=True)).sum()  # the input's gradient needs the weight
    run(load, m, sd(device))
    with raises(
        RuntimeError, "one of the variables needed for gradient computation has been modified by an inplace operation"
    ):
        out.backward()


# > LOADSD-5: It returns a named tuple with fields `missing_keys` and `unexpected_keys`: both `[]` when all keys match;
# > with `strict=False` they list the missing and unexpected keys, and no error is raised for them.
@pytest.mark.clause("LOADSD-5")
def test_load_return_value(device, run):
    m = linear(device)
    r = run(load, m, sd(device))
    assert (r.missing_keys, r.unexpected_keys, tuple(r)) == ([], [], ([], []))
    r = run(load, m, {"weight": torch.zeros(1, 2, device=device), "extra": torch.zeros(1)}, strict=False)
    assert (r.missing_keys, r.unexpected_keys) == (["bias"], ["extra"])


# > LOADSD-6: With `strict=True` (the default), a missing key raises `RuntimeError` whose message contains
# > `Missing key(s) in state_dict: "bias"` (for a missing `bias`), and an extra key raises `RuntimeError` whose message
# > contains `Unexpected key(s) in state_dict: "extra"`.
@pytest.mark.clause("LOADSD-6")
def test_load_strict_keys(device, run):
    m = linear(device)
    with raises(RuntimeError, 'Missing key(s) in state_dict: "bias"'):
        run(load, m, {"weight": torch.zeros(1, 2, device=device)})
    with raises(RuntimeError, 'Unexpected key(s) in state_dict: "extra"'):
        run(load, m, {**sd(device), "extra": torch.zeros(1)})


# > LOADSD-7: A tensor of another shape than the parameter raises `RuntimeError` whose message contains "size mismatch
# > for weight" (for `weight`), with `strict=True` and with `strict=False`; the parameter keeps its object and shape.
@pytest.mark.clause("LOADSD-7")
@pytest.mark.parametrize("strict", [True, False])
def test_load_size_mismatch(device, strict, run):
    m = linear(device)
    w = m.weight
    with raises(RuntimeError, "size mismatch for weight"):
        run(load, m, {"weight": torch.zeros(2, 2, device=device), "bias": torch.zeros(1, device=device)}, strict=strict)
    assert m.weight is w and w.shape == torch.Size([1, 2])


# > LOADSD-8: For every module of `LOADSD_MODULES` (listed after LOADSD-1), `module.load_state_dict(sd, assign=True)`
# > replaces each parameter by a new `nn.Parameter` object (neither the old parameter nor the state dict's tensor) that
# > shares the storage of the state dict's tensor and keeps its dtype, and is a leaf that requires grad (when the
# > module's parameter did). An optimizer built before still holds the old parameter (as after PARAM-2).
@pytest.mark.clause("LOADSD-8")
@pytest.mark.parametrize("make", LOADSD_MODULES.params())
def test_assign_replaces_parameter(device, make, run):
    m = make(device)
    old = dict(m.named_parameters())
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    src = {k: v.to(torch.float64) if v.is_floating_point() else v.clone() for k, v in m.state_dict().items()}
    run(load, m, src, assign=True)
    for name, w in old.items():
        new = getattr(m, name)
        assert new is not w and new is not src[name], name
        assert (type(new), new.is_leaf, new.requires_grad) == (nn.Parameter, True, True), name
        assert same_storage(new, src[name]) and new.dtype == torch.float64, name
    held = opt.param_groups[0]["params"]
    assert len(held) == len(old) and all(a is b for a, b in zip(held, old.values(), strict=True))


# > LOADSD-9: With `assign=True`, a tensor of another shape still raises `RuntimeError` whose message contains "size
# > mismatch for weight".
@pytest.mark.clause("LOADSD-9")
def test_assign_size_mismatch(device, run):
    m = linear(device)
    with raises(RuntimeError, "size mismatch for weight"):
        run(load, m, {"weight": torch.zeros(2, 2, device=device), "bias": torch.zeros(1, device=device)}, assign=True)


# > LOADSD-10: With `assign=True`, the loaded parameter takes the `requires_grad` of the module's parameter it replaces,
# > whatever the state dict's tensor had; an `nn.Parameter` in the state dict is used as is (`module.weight is` that
# > object), with its `requires_grad` set to the module's. (Run on every release of the window: the test fails on 2.2.2
# > and passes from 2.3.1 on; the change is PR #121157, merged in March 2024; on 2.1 and 2.2 the code wrapped a plain
# > tensor as `nn.Parameter(t)`, which always requires grad.)
@pytest.mark.clause("LOADSD-10")
@pytest.mark.parametrize("module_rg", [True, False])
@pytest.mark.parametrize("source", ["tensor", "tensor requiring grad", "Parameter", "Parameter without grad"])
def test_assign_requires_grad_follows_module(device, module_rg, source, run):
    m = linear(device)
    m.weight.requires_grad_(module_rg)
    t = torch.tensor([[3.0, 4.0]], device=device)
    src = {
        "tensor": lambda: t,
        "tensor requiring grad": lambda: t.requires_grad_(),
        "Parameter": lambda: nn.Parameter(t),
        "Parameter without grad": lambda: nn.Parameter(t, requires_grad=False),
    }[source]()
    run(load, m, {"weight": src, "bias": torch.zeros(1, device=device)}, assign=True)
    assert (type(m.weight), m.weight.requires_grad) == (nn.Parameter, module_rg)
    if isinstance(src, nn.Parameter):
        assert m.weight is src


# > LOADSD-11: Before 2.1, `load_state_dict` has no `assign` argument: passing it raises `TypeError` whose message
# > contains "unexpected keyword argument 'assign'".
@pytest.mark.clause("LOADSD-11")
def test_assign_absent_before_2_1(device):
    m = linear(device)
    with raises(TypeError, "unexpected keyword argument 'assign'"):
        m.load_state_dict(sd(device), assign=True)


def _state(module):
    """Every parameter and buffer of the module, by name."""
    return {**dict(module.named_parameters()), **dict(module.named_buffers())}


# > LOADSD-60: For every module of `LOADSD_MODULES` (listed after LOADSD-1), `module.state_dict()` maps each parameter
# > and buffer name to a tensor that shares its storage but is another object: a plain `torch.Tensor` (not an
# > `nn.Parameter`, a new object at every call) that does not require grad, is a leaf and has no `grad_fn`.
@pytest.mark.clause("LOADSD-60")
@pytest.mark.parametrize("make", LOADSD_MODULES.params())
def test_state_dict_holds_detached_aliases(device, make):
    m = make(device)
    sd, again, own = m.state_dict(), m.state_dict(), _state(m)
    assert sorted(sd) == sorted(own)
    for name, t in sd.items():
        assert type(t) is torch.Tensor and t is not own[name] and t is not again[name], name
        assert (t.requires_grad, t.is_leaf, t.grad_fn) == (False, True, None), name
        assert same_storage(t, own[name]), name


# > LOADSD-61: Those tensors share the version counter of the parameter or buffer (they are its `detach()`, DETACH-3):
# > an in-place update of the parameter under `torch.no_grad()` (`p.add_(1)`, or an `SGD.step()`) increases the
# > `_version` of a state-dict tensor taken before it, and an in-place update of the state-dict tensor
# > (`sd["weight"].mul_(2)`) increases the parameter's; both read the same value after either update.
@pytest.mark.clause("LOADSD-61")
@pytest.mark.parametrize("update", ["p.add_(1)", "SGD.step()", "sd['weight'].mul_(2)"])
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_state_dict_shares_version_counter(device, update, run):
    m = linear(device)
    sd = m.state_dict()
    w, version = sd["weight"], m.weight._version
    assert w._version == version
    if update == "p.add_(1)":
        run(add_one_under_no_grad, m.weight)
    elif update == "SGD.step()":
        opt = torch.optim.SGD(m.parameters(), lr=0.5)
        m(torch.ones(1, 2, device=device)).sum().backward()
        run(sgd_step, opt)
    else:
        run(mul_two, w)
    assert w._version > version, f"state-dict tensor: _version did not increase ({version} -> {w._version})"
    assert m.weight._version == w._version, (m.weight._version, w._version)


# > LOADSD-62: So a state dict taken before an update holds the values after it: after `opt.step()`, `sd["weight"]`
# > equals the new `module.weight`, and a value written into `sd["weight"]` is the value of `module.weight`. A copy made
# > at the time, `copy.deepcopy(module.state_dict())` or `{k: v.clone() for k, v in sd.items()}`, keeps the values of
# > that time.
@pytest.mark.clause("LOADSD-62")
def test_state_dict_follows_updates(device, run):
    import copy

    m = linear(device)  # weight [[1, 2]], bias [0]
    sd = m.state_dict()
    deep = copy.deepcopy(m.state_dict())
    cloned = {k: v.clone() for k, v in m.state_dict().items()}
    opt = torch.optim.SGD(m.parameters(), lr=0.5)
    m(torch.tensor([[1.0, 10.0]], device=device)).sum().backward()  # weight.grad [[1, 10]], bias.grad [1]
    run(sgd_step, opt)
    assert_values(sd["weight"], [[0.5, -3.0]], "state dict taken before the step")
    assert_values(sd["bias"], [-0.5], "state dict bias taken before the step")
    for copied in (deep, cloned):
        assert_values(copied["weight"], [[1.0, 2.0]], "copy made before the step")
    run(write_first_element, sd["weight"])
    assert_values(m.weight, [[7.0, -3.0]], "module.weight after writing into sd['weight']")


# > LOADSD-63: For every module of `LOADSD_MODULES` (listed after LOADSD-1), `module.state_dict(keep_vars=True)` maps
# > each parameter and buffer name to the module's object itself: `sd["weight"] is module.weight` (an `nn.Parameter`
# > that requires grad), `sd["running_mean"] is module.running_mean`.
@pytest.mark.clause("LOADSD-63")
@pytest.mark.parametrize("make", LOADSD_MODULES.params())
def test_state_dict_keep_vars_returns_the_objects(device, make):
    m = make(device)
    sd, own = m.state_dict(keep_vars=True), _state(m)
    assert sorted(sd) == sorted(own)
    for name, t in sd.items():
        assert t is own[name], name
    assert type(sd["weight"]) is nn.Parameter and sd["weight"].requires_grad


def _load_into_meta(device, run=None, **kwargs):
    m = nn.Linear(2, 1, device="meta")
    params = dict(m.named_parameters())
    src = sd(device)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(load, m, src, **kwargs) if run else m.load_state_dict(src, **kwargs)
    return m, params, src, result, [w for w in caught if issubclass(w.category, UserWarning)]


def _load_module_into_meta(make, device, run, **kwargs):
    """A module of LOADSD_MODULES built on meta, loaded from a state dict on `device` (values 1, 2, ... per tensor)."""
    m = make("meta")
    params = dict(m.named_parameters())
    src = {
        k: (torch.arange(v.numel(), dtype=v.dtype, device=device) + 1).reshape(v.shape)
        for k, v in m.state_dict().items()
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run(load, m, src, **kwargs)
    return m, params, src, result


# > LOADSD-64: `module.load_state_dict(sd)` (without `assign=True`) into a module whose parameters are on `meta` (every
# > module of LOADSD_MODULES, built there), from tensors on a device with data, raises no error, reports no missing
# > or unexpected keys, and loads nothing: each parameter is the object it was and is still on `meta`.
@pytest.mark.clause("LOADSD-64")
@pytest.mark.parametrize("make", LOADSD_MODULES.params())
def test_load_into_meta_module_is_a_no_op(device, make, run):
    m, params, _, result = _load_module_into_meta(make, device, run)
    assert (result.missing_keys, result.unexpected_keys) == ([], [])
    assert sorted(dict(m.named_parameters())) == sorted(params)
    for name, p in m.named_parameters():
        assert p is params[name] and p.device.type == "meta", name


META_NO_OP = (
    "copying from a non-meta parameter in the checkpoint to a meta parameter in the current model, which is a no-op"
)


# > LOADSD-65: That load emits one `UserWarning` per parameter, whose message contains "for weight: copying from a
# > non-meta parameter in the checkpoint to a meta parameter in the current model, which is a no-op" (for `weight`) and
# > suggests `assign=True`.
@pytest.mark.clause("LOADSD-65")
def test_load_into_meta_module_warns(device, run):
    *_, caught = _load_into_meta(device, run)
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2, messages
    assert messages[0].startswith(f"for bias: {META_NO_OP}") and messages[1].startswith(f"for weight: {META_NO_OP}")
    assert all("assign=True" in text for text in messages), messages


# > LOADSD-66: Before 2.1 that load emits no warning.
@pytest.mark.clause("LOADSD-66")
def test_load_into_meta_module_silent_before_2_1(device):
    *_, caught = _load_into_meta(device)
    assert caught == [], [str(w.message) for w in caught]


# > LOADSD-67: `module.load_state_dict(sd, assign=True)` into a module on `meta` (every module of LOADSD_MODULES,
# > built there) makes each parameter an `nn.Parameter` on the state dict's device that shares the storage of the
# > state dict's tensor, holds its values and requires grad; the module no longer has a parameter on `meta`.
@pytest.mark.clause("LOADSD-67")
@pytest.mark.parametrize("make", LOADSD_MODULES.params())
def test_assign_into_meta_module_materialises(device, make, run):
    m, params, src, _ = _load_module_into_meta(make, device, run, assign=True)
    assert sorted(dict(m.named_parameters())) == sorted(params)
    for name, p in m.named_parameters():
        assert p is not params[name] and type(p) is nn.Parameter, name
        assert (p.device.type, p.requires_grad) == (torch.device(device).type, True), name
        assert same_storage(p, src[name]), name
        assert p.tolist() == src[name].tolist(), name
    assert not any(p.is_meta for p in m.parameters())


# Seeds: neither source mentions load_state_dict. The Korean copy_() claim, applied to load_state_dict.


@pytest.mark.clause("LOADSD-1", "LOADSD-2")
@pytest.mark.only_devices("cpu")  # the seed snippet as written: values, on the default device
def test_seed_ko_copy_updates_metadata(device, run):
    # Korean seed: "copy_() 메서드는 새 값으로 Variable을 복사하며 메타데이터를 자동으로 업데이트합니다".
    # load_state_dict is copy_ under no_grad: values change, metadata (dtype, requires_grad, identity) does not.
    m = linear(device)
    w = m.weight
    src = {"weight": torch.tensor([[5, 6]], device=device), "bias": torch.zeros(1, dtype=torch.float64, device=device)}
    run(load, m, src)
    assert m.weight is w and (w.dtype, w.requires_grad) == (torch.float32, True)
    assert_values(w, [[5.0, 6.0]], "weight")
