"""Conformance tests for spec/functional.md (functional_call and parametrizations). Each test quotes its clause."""

import pytest
import torch
from torch import nn
from torch.nn.utils import parametrize

from conformance.harness.checks import assert_values, raises

# Compile mode of this page is specified on every release that has torch.compile (2.1 on): where a compiled update
# differs before a release, its test says from which (compiled_since) and a clause of its own says how.


def linear(device):
    """nn.Linear(2, 1) with weight [[1, 2]] and bias [0.5]."""
    m = nn.Linear(2, 1).to(device)
    with torch.no_grad():
        m.weight.copy_(torch.tensor([[1.0, 2.0]], device=device))
        m.bias.fill_(0.5)
    return m


def inputs(device):
    return torch.tensor([[1.0, 10.0]], device=device)


def replacement(device):
    return torch.tensor([[3.0, 4.0]], device=device, requires_grad=True)


# The update steps of this page, each run as written or compiled (the `run` fixture).
def functional_call(m, params, x):
    return torch.func.functional_call(m, params, (x,))


def functional_call_single(m, params, x):
    return torch.func.functional_call(m, params, x)


def call(run, m, params, x, spelling):
    return run(functional_call if spelling == "args tuple" else functional_call_single, m, params, x)


# > FUNC-1: `torch.func.functional_call(module, {name: tensor}, args)` runs the module's forward with each named
# > parameter replaced by the given tensor; `args` is a tuple of positional arguments or a single tensor. For
# > `nn.Linear(2, 1)` with weight `[[1, 2]]` and bias `[0.5]`, the replacement weight `[[3, 4]]` and the input
# > `[[1, 10]]`, the output is `[[43.5]]`; replacing the bias by `[1.]` as well gives `[[44.]]`.
@pytest.mark.clause("FUNC-1")
@pytest.mark.parametrize("spelling", ["args tuple", "single tensor"])
def test_functional_call_uses_replacements(device, spelling, run):
    m = linear(device)
    out = call(run, m, {"weight": replacement(device)}, inputs(device), spelling)
    assert_values(out, [[43.5]], "output with weight [[3, 4]]")
    both = {"weight": replacement(device), "bias": torch.tensor([1.0], device=device, requires_grad=True)}
    assert_values(call(run, m, both, inputs(device), spelling), [[44.0]], "output with weight and bias replaced")


# > FUNC-2: During the call the module's attribute (`module.weight`) is the replacement tensor itself.
@pytest.mark.clause("FUNC-2")
def test_module_attribute_is_replacement_during_call(device, run):
    m = linear(device)
    w = replacement(device)
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append(mod.weight is w))
    run(functional_call, m, {"weight": w}, inputs(device))
    assert seen == [True]


# > FUNC-3: After the call, and after `backward()` from its output, the module's own parameters are as before: the same
# > `nn.Parameter` objects, leaves that require grad, with unchanged `_version`; a replaced parameter has no `.grad`.
@pytest.mark.clause("FUNC-3")
@pytest.mark.parametrize("backward", [False, True])
def test_module_parameters_untouched(device, backward, run):
    m = linear(device)
    weight, bias = m.weight, m.bias
    versions = (weight._version, bias._version)
    replacements = {"weight": replacement(device), "bias": torch.zeros(1, device=device)}
    out = run(functional_call_single, m, replacements, inputs(device))
    if backward:
        out.sum().backward()
    assert m.weight is weight and m.bias is bias
    assert type(m.weight) is nn.Parameter
    assert (m.weight.is_leaf, m.weight.requires_grad, m.weight.grad) == (True, True, None)
    assert (m.weight._version, m.bias._version) == versions
    assert m.bias.grad is None


# > FUNC-4: ... and hold the same values.
@pytest.mark.clause("FUNC-4")
def test_module_parameter_values_untouched(device, run):
    m = linear(device)
    out = run(functional_call, m, {"weight": replacement(device)}, inputs(device))
    out.sum().backward()
    assert_values(m.weight, [[1.0, 2.0]], "m.weight")
    assert_values(m.bias, [0.5], "m.bias")


# > FUNC-5: `backward()` from the output gives gradients to the replacement tensors that require grad (for the
# > input [[1, 10]]: [[1., 10.]] for the weight, [1.] for the bias), none to the parameters they replaced, and
# > their usual gradient to the parameters not replaced.
@pytest.mark.clause("FUNC-5")
def test_gradients_flow_to_replacements(device, run):
    m = linear(device)
    w = replacement(device)
    run(functional_call, m, {"weight": w}, inputs(device)).sum().backward()
    assert_values(w.grad, [[1.0, 10.0]], "replacement weight .grad")
    assert m.weight.grad is None
    assert_values(m.bias.grad, [1.0], "m.bias.grad (not replaced)")
    m2 = linear(device)
    b = torch.tensor([1.0], device=device, requires_grad=True)
    run(functional_call, m2, {"weight": replacement(device), "bias": b}, inputs(device)).sum().backward()
    assert_values(b.grad, [1.0], "replacement bias .grad")
    assert (m2.weight.grad, m2.bias.grad) == (None, None)


# > FUNC-6: A key that names no parameter or buffer of the module (a misspelling such as `"wieght"`) is not an error:
# > the module's own parameters are used.
@pytest.mark.clause("FUNC-6")
def test_unknown_key_is_ignored(device, run):
    m = linear(device)
    out = run(functional_call, m, {"wieght": replacement(device)}, inputs(device))
    assert_values(out, [[21.5]], "output with the module's own weight [[1, 2]]")


def functional_call_strict(m, params, x):
    return torch.func.functional_call(m, params, (x,), strict=True)


# > FUNC-33: With `strict=True` the call raises `RuntimeError` without running the module's forward: for a key that
# > names no parameter or buffer of the module (the message contains `Unexpected key(s): 'wieght'`), and for a
# > parameter of the module that the dictionary leaves out (`Missing key(s): 'bias'`). The module keeps its
# > parameters: the same objects, with the same values.
@pytest.mark.clause("FUNC-33")
@pytest.mark.parametrize(
    ("keys", "message"),
    [(("weight", "bias", "wieght"), "Unexpected key(s): 'wieght'"), (("weight",), "Missing key(s): 'bias'")],
    ids=["unexpected", "missing"],
)
def test_strict_refuses_unexpected_and_missing_keys(device, keys, message, run):
    m = linear(device)
    weight, bias = m.weight, m.bias
    forwards = []
    m.register_forward_pre_hook(lambda mod, args: forwards.append(1))
    params = {key: torch.zeros_like(m.bias if key == "bias" else m.weight) for key in keys}
    with raises(RuntimeError, message):
        run(functional_call_strict, m, params, inputs(device))
    assert forwards == [], "the module's forward ran"
    assert m.weight is weight and m.bias is bias
    assert_values(m.weight, [[1.0, 2.0]], "m.weight")
    assert_values(m.bias, [0.5], "m.bias")
    full = {"weight": replacement(device), "bias": torch.tensor([1.0], device=device)}
    assert_values(run(functional_call_strict, m, full, inputs(device)), [[44.0]], "output with both replaced")


# Parametrizations


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


def symmetric_linear(device):
    """nn.Linear(2, 2) with weight [[1, 2], [3, 4]], bias 0, then the weight parametrized as symmetric."""
    m = nn.Linear(2, 2).to(device)
    with torch.no_grad():
        m.weight.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device))
        m.bias.zero_()
    parametrize.register_parametrization(m, "weight", Symmetric())
    return m


# > FUNC-7: After `torch.nn.utils.parametrize.register_parametrization(module, "weight", p)`, the module's parameter is
# > `module.parametrizations.weight.original`, an `nn.Parameter` (a leaf that requires grad);
# > `module.named_parameters()` lists `parametrizations.weight.original` and no longer `weight`, and
# > `is_parametrized(module, "weight")` is True.
@pytest.mark.clause("FUNC-7")
def test_parametrization_moves_parameter_to_original(device):
    m = symmetric_linear(device)
    original = m.parametrizations.weight.original
    assert type(original) is nn.Parameter
    assert (original.is_leaf, original.requires_grad) == (True, True)
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "parametrizations.weight.original"]
    assert parametrize.is_parametrized(m, "weight") is True


# > FUNC-8: `original` holds the values the weight had before registration, and `module.weight` is `p(original)`.
@pytest.mark.clause("FUNC-8")
def test_parametrized_weight_values(device):
    m = symmetric_linear(device)
    assert_values(m.parametrizations.weight.original, [[1.0, 2.0], [3.0, 4.0]], "original")
    assert_values(m.weight, [[1.0, 2.0], [2.0, 4.0]], "m.weight = Symmetric(original)")


# > FUNC-9: `module.weight` is recomputed from `original` at every access: a new tensor each time (three accesses in a
# > row give three distinct tensors), not a leaf, with a `grad_fn`, that requires grad. Inside
# > `torch.nn.utils.parametrize.cached()` repeated accesses return the same tensor.
@pytest.mark.clause("FUNC-9")
def test_parametrized_weight_is_recomputed(device):
    m = symmetric_linear(device)
    accesses = [m.weight for _ in range(3)]
    assert len({id(w) for w in accesses}) == len(accesses)
    for w in accesses:
        assert (w.is_leaf, w.requires_grad, w.grad_fn is not None) == (False, True, True)
    with parametrize.cached():
        c1, c2 = m.weight, m.weight
    assert c1 is c2


# > FUNC-10: Gradients flow to `original` through the parametrization: for `nn.Linear(2, 2)` with weight
# > `[[1, 2], [3, 4]]` made symmetric (`X.triu() + X.triu(1).T`) and the input `[[1, 10]]`, the gradient of
# > `module(x).sum()` with respect to `original` is `[[1., 11.], [0., 10.]]`.
@pytest.mark.clause("FUNC-10")
def test_gradient_reaches_original(device):
    m = symmetric_linear(device)
    m(inputs(device)).sum().backward()
    assert_values(m.parametrizations.weight.original.grad, [[1.0, 11.0], [0.0, 10.0]], "original.grad")


# > FUNC-11: Updates go to `original` and `module.weight` follows them, still satisfying the constraint: after
# > `original.add_(1)` under `torch.no_grad()` the weight of FUNC-10 is `[[2., 3.], [3., 5.]]`; an optimizer step over
# > `module.parameters()` updates `original`, and the weight stays symmetric.
@pytest.mark.clause("FUNC-11")
def test_updates_go_to_original(device, run):
    m = symmetric_linear(device)
    original = m.parametrizations.weight.original
    m(inputs(device)).sum().backward()
    run(add_one_under_no_grad, original)
    assert_values(m.weight, [[2.0, 3.0], [3.0, 5.0]], "m.weight after original.add_(1)")
    run(sgd_step, torch.optim.SGD(m.parameters(), lr=1.0))
    assert_values(original, [[1.0, -8.0], [4.0, -5.0]], "original after SGD step")
    assert_values(m.weight, [[1.0, -8.0], [-8.0, -5.0]], "m.weight after SGD step")


def add_one_under_no_grad(t):
    with torch.no_grad():
        t.add_(1.0)


def sgd_step(opt):
    opt.step()


def _weight_add_under_no_grad(m):
    with torch.no_grad():
        m.weight.add_(1.0)


def _weight_copy_under_no_grad(m):
    with torch.no_grad():
        m.weight.copy_(torch.zeros(2, 2, device=m.weight.device))


def _weight_add(m):
    m.weight.add_(1.0)


WEIGHT_UPDATES = {
    "no_grad add_": _weight_add_under_no_grad,
    "no_grad copy_": _weight_copy_under_no_grad,
    "grad mode add_": _weight_add,
}


# > FUNC-12: An in-place update of `module.weight` itself (`add_` or `copy_` under `torch.no_grad()`, or `add_` with
# > grad mode on, where `module.weight` is a non-leaf) raises no error and leaves `original` (the same object) and its
# > `_version` unchanged.
@pytest.mark.compiled_since("2.4", before="FUNC-90")
@pytest.mark.clause("FUNC-12")
@pytest.mark.parametrize("spelling", list(WEIGHT_UPDATES))
def test_inplace_on_parametrized_weight_is_lost(device, spelling, run):
    m = symmetric_linear(device)
    original = m.parametrizations.weight.original
    version = original._version
    run(WEIGHT_UPDATES[spelling], m)
    assert m.parametrizations.weight.original is original
    assert original._version == version


# > FUNC-13: The update of FUNC-12 is lost: `original` and the next `module.weight` have the values they had before it.
@pytest.mark.compiled_since("2.4", before="FUNC-90")
@pytest.mark.clause("FUNC-13")
@pytest.mark.parametrize("spelling", list(WEIGHT_UPDATES))
def test_inplace_on_parametrized_weight_values_lost(device, spelling, run):
    m = symmetric_linear(device)
    run(WEIGHT_UPDATES[spelling], m)
    assert_values(m.parametrizations.weight.original, [[1.0, 2.0], [3.0, 4.0]], "original")
    assert_values(m.weight, [[1.0, 2.0], [2.0, 4.0]], "m.weight")


class Identity(nn.Module):
    def forward(self, X):
        return X


def _identity_parametrized(device):
    """nn.Linear(2, 2) with weight [[1, 2], [3, 4]], parametrized by Identity; and its `original`."""
    m = nn.Linear(2, 2).to(device)
    with torch.no_grad():
        m.weight.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device))
    parametrize.register_parametrization(m, "weight", Identity())
    return m, m.parametrizations.weight.original


# > FUNC-15: When the parametrization returns its input (`forward(self, X): return X`), `module.weight` is `original`
# > itself, the `nn.Parameter` (a leaf), access after access, and an in-place update of `module.weight` under
# > `torch.no_grad()` updates `original` and bumps its `_version` (not lost, unlike FUNC-13).
@pytest.mark.compiled_since("2.4", before="FUNC-92")
@pytest.mark.clause("FUNC-15")
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_identity_parametrization_gives_original(device, run):
    m, original = _identity_parametrized(device)
    assert m.weight is original and m.weight is original
    version = original._version
    run(_weight_add_under_no_grad, m)
    assert original._version > version
    assert_values(original, [[2.0, 3.0], [4.0, 5.0]], "original after m.weight.add_(1) under no_grad")


# torch.func transforms


def _batch(device):
    """A batch of three rows [1, 2], [3, 4], [5, 6]: the input of vmap."""
    return torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], device=device)


def _setitem0(t):
    t[0] = 5
    return t


BATCHED_UPDATES = {
    "t.add_(1)": (lambda t: t.add_(1), [[2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]),
    "t[0] = 5": (_setitem0, [[5.0, 2.0], [5.0, 4.0], [5.0, 6.0]]),
    "t.zero_()": (lambda t: t.zero_(), [[0.0, 0.0]] * 3),
    "t.copy_(v)": (lambda t: t.copy_(torch.full_like(t, 0.5)), [[0.5, 0.5]] * 3),
}


# > FUNC-16: Inside `torch.func.vmap(f)(x)`, an in-place update of the batched input (`t.add_(1)`, `t[0] = 5`,
# > `t.zero_()`, `t.copy_(v)` in `f`) writes into the caller's `x`: afterwards `x` holds the updated values,
# > `x._version` has increased, and the result of `vmap` has the same values.
@pytest.mark.clause("FUNC-16")
@pytest.mark.parametrize("spelling", list(BATCHED_UPDATES))
def test_vmap_update_of_batched_input_writes_caller(device, spelling):
    update, expected = BATCHED_UPDATES[spelling]
    x = _batch(device)
    version = x._version
    out = torch.func.vmap(update)(x)
    assert_values(x, expected, f"x after vmap({spelling})")
    assert_values(out, expected, f"vmap({spelling})")
    assert x._version > version


def _y_setitem(y, t):
    y[0] = t[0]


UNBATCHED_UPDATES = {
    "y.add_(t)": (lambda y, t: y.add_(t), "output with shape [2] doesn't match the broadcast shape [3, 2]"),
    "y.mul_(t)": (lambda y, t: y.mul_(t), "vmap: inplace arithmetic(self, *extra_args) is not possible"),
    "y.copy_(t)": (lambda y, t: y.copy_(t), "vmap: inplace arithmetic(self, *extra_args) is not possible"),
    "y[0] = t[0]": (_y_setitem, "vmap: inplace arithmetic(self, *extra_args) is not possible"),
}


def _update_unbatched(device, spelling):
    """vmap of an update of the unbatched `y = [0, 0]` by the batched input; returns `y`, its `_version` before, and
    the RuntimeError raised."""
    y = torch.zeros(2, device=device)
    version = y._version
    with pytest.raises(RuntimeError) as info:
        torch.func.vmap(lambda t: UNBATCHED_UPDATES[spelling][0](y, t))(_batch(device))
    return y, version, info.value


# > FUNC-17: Inside `vmap`, an in-place update of a tensor that is not batched (`y`, made outside the function) with
# > a batched operand (`y.add_(t)`, `y.mul_(t)`, `y.copy_(t)`, `y[0] = t[0]`, where `t` is the batched input) raises
# > `RuntimeError`, and `y` keeps its values and its `_version`.
@pytest.mark.clause("FUNC-17")
@pytest.mark.parametrize("spelling", list(UNBATCHED_UPDATES))
def test_vmap_update_of_unbatched_tensor_refused(device, spelling):
    y, version, _ = _update_unbatched(device, spelling)
    assert_values(y, [0.0, 0.0], f"y after the refused {spelling}")
    assert y._version == version


# > FUNC-18: In the case of FUNC-17, `y.mul_(t)`, `y.copy_(t)` and `y[0] = t[0]` raise with a message that starts
# > "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args
# > that has more elements than `self`" (pytorch/pytorch#103329), while `y.add_(t)` raises the broadcast error of a
# > plain shape mismatch: "output with shape [2] doesn't match the broadcast shape [3, 2]" for `y` of shape `(2,)`
# > and a batch of 3.
@pytest.mark.clause("FUNC-18")
@pytest.mark.parametrize("spelling", list(UNBATCHED_UPDATES))
def test_vmap_update_of_unbatched_tensor_message(device, spelling):
    _, _, error = _update_unbatched(device, spelling)
    assert str(error).startswith(UNBATCHED_UPDATES[spelling][1]), str(error)


BATCHED_FACTORIES = {
    "torch.zeros_like(t)": torch.zeros_like,
    "t.new_zeros(t.shape)": lambda t: t.new_zeros(t.shape),
}
WRITES_INTO = {"z.copy_(t)": lambda z, t: z.copy_(t), "z += t": lambda z, t: z.__iadd__(t)}


# > FUNC-19: Inside `vmap`, a tensor made from the batched input `t` by `torch.zeros_like(t)` or `t.new_zeros(t.shape)`
# > is batched like `t`: `z.copy_(t)` and `z += t` are accepted and give `t`'s values, row for row.
# > One made by `torch.zeros(t.shape)` is not batched: `z.copy_(t)` and `z += t` into it raise `RuntimeError`
# > (FUNC-17).
@pytest.mark.clause("FUNC-19")
@pytest.mark.parametrize("write", list(WRITES_INTO))
@pytest.mark.parametrize("factory", [*BATCHED_FACTORIES, "torch.zeros(t.shape)"])
def test_vmap_write_into_new_tensor(device, factory, write):
    x = _batch(device)
    if factory == "torch.zeros(t.shape)":
        with pytest.raises(RuntimeError):
            torch.func.vmap(lambda t: WRITES_INTO[write](torch.zeros(t.shape, device=t.device), t))(x)
        return
    out = torch.func.vmap(lambda t: WRITES_INTO[write](BATCHED_FACTORIES[factory](t), t))(x)
    assert_values(out, x.tolist(), f"vmap of {write} into {factory}")


def _assign_data(t):
    t.data = torch.zeros(2, device=t.device)
    return t


# > FUNC-20: Inside `vmap`, reading `t.data` of the batched input raises `RuntimeError` whose message contains
# > "accessing `data` under vmap transform is not allowed", and assigning `t.data = s` raises one whose message
# > contains "mutating directly with `.data` under vmap transform is not allowed."; the caller's `x` keeps its values.
@pytest.mark.clause("FUNC-20")
@pytest.mark.parametrize(
    ("use", "fragment"),
    [
        pytest.param(lambda t: t.data * 1, "accessing `data` under vmap transform is not allowed", id="read"),
        pytest.param(_assign_data, "mutating directly with `.data` under vmap transform is not allowed.", id="assign"),
    ],
)
def test_vmap_data_refused(device, use, fragment):
    x = _batch(device)
    with raises(RuntimeError, fragment):
        torch.func.vmap(use)(x)
    assert_values(x, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "x")


# > FUNC-21: Inside `torch.func.grad(f)(x)`, an in-place update of a tensor `c` that `f` captured (closed over; not an
# > input), such as `c.add_(1)`, raises `RuntimeError` whose message contains "that would mutate a captured Tensor";
# > `c` keeps its values and its `_version`.
@pytest.mark.clause("FUNC-21")
def test_grad_update_of_captured_tensor_refused(device):
    c = torch.zeros(2, device=device)

    def f(t):
        c.add_(1)
        return (t * 2).sum()

    with raises(RuntimeError, "that would mutate a captured Tensor"):
        torch.func.grad(f)(torch.ones(2, device=device))
    assert_values(c, [0.0, 0.0], "c")
    assert c._version == 0


def _add_one_times_two(t):
    return t.add_(1) * 2


GRAD_TRANSFORMS = {
    "grad": lambda x: torch.func.grad(lambda t: _add_one_times_two(t).sum())(x),
    "vjp": lambda x: torch.func.vjp(_add_one_times_two, x),
    "jacrev": lambda x: torch.func.jacrev(_add_one_times_two)(x),
}


# > FUNC-22: Inside `grad(f)(x)`, `vjp(f, x)` and `jacrev(f)(x)`, an in-place update of the input (`t.add_(1)` on the
# > tensor `f` receives) raises `RuntimeError` whose message is "a leaf Variable that requires grad is being used in an
# > in-place operation.", whether or not the caller's `x` requires grad; `x` keeps its values and its `_version`.
@pytest.mark.clause("FUNC-22")
@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("transform", list(GRAD_TRANSFORMS))
def test_grad_update_of_input_refused(device, transform, requires_grad):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=requires_grad)
    with raises(RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation."):
        GRAD_TRANSFORMS[transform](x)
    assert_values(x, [1.0, 2.0], "x")
    assert x._version == 0


# > FUNC-23: Under `torch.func.jvp(f, (x,), (v,))`, the update of FUNC-22 is accepted and writes into the caller's `x`:
# > for `f(t) = t.add_(1) * 2` at `x = [1, 2]` with tangent ones, `jvp` returns `[4, 6]` and the tangent `[2, 2]`, and
# > `x` is `[2, 3]` afterwards with a higher `_version`.
@pytest.mark.clause("FUNC-23")
def test_jvp_update_of_input_writes_caller(device):
    x = torch.tensor([1.0, 2.0], device=device)
    out, tangent = torch.func.jvp(_add_one_times_two, (x,), (torch.ones(2, device=device),))
    assert_values(out, [4.0, 6.0], "jvp output")
    assert_values(tangent, [2.0, 2.0], "jvp tangent")
    assert_values(x, [2.0, 3.0], "x after jvp")
    assert x._version > 0


def _square_sum_under_no_grad(t):
    with torch.no_grad():
        return (t * t).sum()


# > FUNC-24: `torch.no_grad()` inside the function given to `grad` is respected: for `f(t)` that computes
# > `(t * t).sum()` under it, `grad(f)(x)` is zeros (no error). Around the call, it is not:
# > `grad(lambda t: (t * t).sum())(x)` under `torch.no_grad()` is `2 * x`.
@pytest.mark.clause("FUNC-24")
def test_grad_respects_inner_no_grad_only(device):
    x = torch.tensor([1.0, 2.0], device=device)
    assert_values(torch.func.grad(_square_sum_under_no_grad)(x), [0.0, 0.0], "grad with no_grad inside")
    with torch.no_grad():
        outer = torch.func.grad(lambda t: (t * t).sum())(x)
    assert_values(outer, [2.0, 4.0], "grad under an outer no_grad")


def _triple_through_data(t):
    t.data.mul_(3)
    return (t * t).sum()


# > FUNC-25: Inside `grad(f)(x)`, `t.data` of the input reads the caller's tensor outside the transform: an in-place
# > update through it writes into `x` and is not seen by the transform. For `f(t)` that runs `t.data.mul_(3)` and
# > returns `(t * t).sum()` at `x = [1, 2]`, the gradient is `[6, 12]` (computed at the new values) and `x` is `[3, 6]`
# > afterwards.
@pytest.mark.clause("FUNC-25")
def test_grad_data_update_escapes(device):
    x = torch.tensor([1.0, 2.0], device=device)
    assert_values(torch.func.grad(_triple_through_data)(x), [6.0, 12.0], "grad")
    assert_values(x, [3.0, 6.0], "x after grad")


def _assign_data_then_square(t):
    t.data = torch.zeros(2, device=t.device)
    return (t * t).sum()


# > FUNC-26: Inside `grad(f)(x)`, assigning `t.data = s` to the input raises `RuntimeError` whose message contains
# > "mutating directly with `.data` inside functorch transform is not allowed.".
# > FUNC-27: On 2.0, the assignment of FUNC-26 raises `RuntimeError` whose message contains "INTERNAL ASSERT FAILED"
# > (TensorWrapper.cpp, "NYI"; pytorch/pytorch#94514).
@pytest.mark.parametrize(
    "fragment",
    [
        pytest.param(
            "mutating directly with `.data` inside functorch transform is not allowed.",
            marks=pytest.mark.clause("FUNC-26"),
            id="FUNC-26",
        ),
        pytest.param("INTERNAL ASSERT FAILED", marks=pytest.mark.clause("FUNC-27"), id="FUNC-27"),
    ],
)
def test_grad_data_assignment_refused(device, fragment):
    with raises(RuntimeError, fragment):
        torch.func.grad(_assign_data_then_square)(torch.tensor([1.0, 2.0], device=device))


def _add_one_under_no_grad_times_two(t):
    add_one_under_no_grad(t)
    return t * 2


# > FUNC-28: Inside `vmap(f)(x)`, where `x` is a leaf that requires grad, an in-place update of the batched input under
# > `torch.no_grad()` in `f` (`t.add_(1)`) is accepted and writes into `x`; without `torch.no_grad()` it raises
# > `RuntimeError` whose message contains "a leaf Variable that requires grad is being used in an in-place operation",
# > as outside `vmap`.
@pytest.mark.clause("FUNC-28")
def test_vmap_update_of_leaf_input_under_no_grad(device):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=True)
    torch.func.vmap(_add_one_under_no_grad_times_two)(x)
    assert_values(x, [[2.0, 3.0], [4.0, 5.0]], "x after vmap of an update under no_grad")
    with raises(RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation"):
        torch.func.vmap(lambda t: t.add_(1))(x)


# > FUNC-29: Inside `vmap(f)(x)`, a call with `out=` the batched input (`torch.add(t, 1, out=t)`) raises `RuntimeError`
# > whose message contains "Batching rule not implemented for aten::add.out; the fallback path doesn't work on out= or
# > view ops.", and `x` keeps its values.
@pytest.mark.clause("FUNC-29")
def test_vmap_out_argument_refused(device):
    x = _batch(device)
    before = x.tolist()
    fragment = "Batching rule not implemented for aten::add.out; the fallback path doesn't work on out= or view ops."
    with raises(RuntimeError, fragment):
        torch.func.vmap(lambda t: torch.add(t, 1, out=t))(x)
    assert x.tolist() == before


class _CountingBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(2))

    def forward(self, x):
        self.buf.add_(1)
        return x + self.buf


# > FUNC-30: When a module's forward updates a buffer in place (`self.buf.add_(1)`), `functional_call(module, {"buf":
# > b}, args)` writes the update into `b`, the tensor passed in (its values change and its `_version` increases), and
# > the module's own buffer keeps its values. For `nn.BatchNorm1d` in training mode, called with its running
# > statistics passed in (`{"running_mean": m, "running_var": v, "num_batches_tracked": n}`), the passed `m` and `v`
# > hold the updated statistics and the module's own `running_mean` and `running_var` keep theirs.
@pytest.mark.clause("FUNC-30")
def test_functional_call_writes_buffer_updates_into_the_passed_tensors(device):
    m = _CountingBuffer().to(device)
    b = torch.zeros(2, device=device)
    version = b._version
    torch.func.functional_call(m, {"buf": b}, (torch.ones(2, device=device),))
    assert_values(b, [1.0, 1.0], "the buffer passed in")
    assert b._version > version
    assert_values(m.buf, [0.0, 0.0], "the module's own buffer")
    bn = nn.BatchNorm1d(2).to(device)
    stats = {
        "running_mean": torch.zeros(2, device=device),
        "running_var": torch.ones(2, device=device),
        "num_batches_tracked": torch.tensor(0, device=device),
    }
    torch.func.functional_call(bn, stats, (torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device),))
    assert stats["running_mean"].tolist() != [0.0, 0.0] and stats["running_var"].tolist() != [1.0, 1.0]
    assert_values(bn.running_mean, [0.0, 0.0], "the module's running_mean")
    assert_values(bn.running_var, [1.0, 1.0], "the module's running_var")


class _TiedUpdate(nn.Module):
    """``b.weight`` is ``a.weight``; the forward adds 1 to ``b.weight`` under no_grad."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(2, 2, bias=False), nn.Linear(2, 2, bias=False)
        self.b.weight = self.a.weight

    def forward(self, x):
        with torch.no_grad():
            self.b.weight.add_(1)
        return x


# > FUNC-32: For a module whose `b.weight` is its `a.weight` (tied) and whose forward updates `self.b.weight` in place
# > under `torch.no_grad()`, `functional_call(m, {"a.weight": t}, args)` writes the update into `t`, the tensor passed
# > in, and the module's own weight keeps its values; with `tie_weights=False` the update goes into the module's own
# > weight instead, and `t` keeps its values. After either call `m.b.weight` is `m.a.weight` again.
@pytest.mark.clause("FUNC-32")
@pytest.mark.parametrize(("tie_weights", "t_after", "own_after"), [(True, 8.0, 0.0), (False, 7.0, 1.0)])
def test_functional_call_updates_tied_weights(device, tie_weights, t_after, own_after):
    m = _TiedUpdate().to(device)
    with torch.no_grad():
        m.a.weight.zero_()
    t = torch.full((2, 2), 7.0, device=device)
    torch.func.functional_call(m, {"a.weight": t}, (torch.ones(2, device=device),), tie_weights=tie_weights)
    assert_values(t, [[t_after] * 2] * 2, "the weight passed in")
    assert_values(m.a.weight, [[own_after] * 2] * 2, "the module's own weight")
    assert m.b.weight is m.a.weight


# > FUNC-31: `params, buffers = torch.func.stack_module_state(models)` gives, for a list of two `nn.Linear(2, 1)`,
# > stacked parameters that are leaves requiring grad, plain tensors rather than `nn.Parameter`, holding the models'
# > values stacked along a new first dimension, and sharing no memory with the models: an update of a stacked
# > parameter under `torch.no_grad()` leaves the models' parameters as they were, and an update of a model's parameter
# > leaves the stacked one as it was.
@pytest.mark.clause("FUNC-31")
def test_stack_module_state_makes_new_leaves(device):
    models = [linear(device), linear(device)]
    with torch.no_grad():
        models[1].weight.fill_(3.0)
    params, _ = torch.func.stack_module_state(models)
    w = params["weight"]
    assert w.is_leaf and w.requires_grad and not isinstance(w, nn.Parameter)
    assert_values(w, [[[1.0, 2.0]], [[3.0, 3.0]]], "the stacked weight")
    with torch.no_grad():
        w.zero_()
    assert_values(models[0].weight, [[1.0, 2.0]], "model 0's weight after the stacked one was zeroed")
    with torch.no_grad():
        models[1].weight.fill_(9.0)
    assert_values(w[1], [[0.0, 0.0]], "the stacked weight after model 1's was filled")


# > FUNC-90 (compile, until 2.4): Before 2.4, inside a compiled function, the in-place updates of FUNC-12
# > (`m.weight.add_(1.0)` and `m.weight.copy_(z)` under `torch.no_grad()`, `m.weight.add_(1.0)` with grad mode on) raise
# > `torch._dynamo.exc.InternalTorchDynamoError` (a `RuntimeError`) whose message contains "'Tensor' object has no
# > attribute '__closure__'", while Dynamo traces the parametrization's property; `original` keeps its `_version` and
# > its values. Layer: Dynamo. Run on 2.1.2, 2.2.2, 2.3.1 (as said here) and 2.4.1 (as FUNC-12 says).
@pytest.mark.clause("FUNC-90")
@pytest.mark.parametrize("spelling", list(WEIGHT_UPDATES))
def test_compiled_inplace_on_parametrized_weight_fails_before_2_4(device, spelling, run):
    m = symmetric_linear(device)
    original = m.parametrizations.weight.original
    version = original._version
    with raises(RuntimeError, "'Tensor' object has no attribute '__closure__'") as info:
        run(WEIGHT_UPDATES[spelling], m)
    assert type(info.value).__name__ == "InternalTorchDynamoError"
    assert m.parametrizations.weight.original is original and original._version == version
    if device != "meta":
        assert_values(original, [[1.0, 2.0], [3.0, 4.0]], "original")


def assign_weight(m, value):
    m.weight = value


# > FUNC-14: Assigning `module.weight = t` when the parametrization defines no `right_inverse` raises `RuntimeError`
# > whose message contains "does not implement right_inverse", and leaves `original` unchanged.
@pytest.mark.compiled_since("2.2", before="FUNC-91")
@pytest.mark.clause("FUNC-14")
def test_assign_parametrized_weight_without_right_inverse(device, run):
    m = symmetric_linear(device)
    version = m.parametrizations.weight.original._version
    with raises(RuntimeError, "does not implement right_inverse"):
        run(assign_weight, m, torch.zeros(2, 2, device=device))
    assert m.parametrizations.weight.original._version == version


# > FUNC-91 (compile, until 2.2): On 2.1, inside a compiled function, the assignment of FUNC-14 (`m.weight = t` when the
# > parametrization has no `right_inverse`) raises `AssertionError`, not the `RuntimeError` of FUNC-14, while Dynamo
# > traces it; `original` keeps its `_version`. Layer: Dynamo. Run on 2.1.2 (as said here) and 2.2.2 (as FUNC-14 says).
@pytest.mark.clause("FUNC-91")
def test_compiled_assign_parametrized_weight_without_right_inverse_before_2_2(device, run):
    m = symmetric_linear(device)
    version = m.parametrizations.weight.original._version
    with pytest.raises(AssertionError):
        run(assign_weight, m, torch.zeros(2, 2, device=device))
    assert m.parametrizations.weight.original._version == version


# > FUNC-92 (compile, until 2.4): Before 2.4, a compiled function that reads `module.weight` of FUNC-15 (a
# > parametrization that returns its input), as in `with torch.no_grad(): m.weight.add_(1)`, raises
# > `torch._dynamo.exc.InternalTorchDynamoError` (a `RuntimeError`) whose message contains "'Parameter' object has no
# > attribute '__closure__'" while Dynamo traces it; `original` keeps its values and its `_version`. Layer: Dynamo.
# > Run on 2.1.2, 2.2.2, 2.3.1 (as said here) and 2.4.1 (as FUNC-15 says).
@pytest.mark.clause("FUNC-92")
def test_compiled_identity_parametrized_weight_before_2_4(device, run):
    m, original = _identity_parametrized(device)
    version = original._version
    with raises(RuntimeError, "'Parameter' object has no attribute '__closure__'"):
        run(_weight_add_under_no_grad, m)
    assert original._version == version
    assert_values(original, [[1.0, 2.0], [3.0, 4.0]], "original after the refused step")
