"""Conformance tests for spec/parameter_update.md (updating parameters). Each test quotes the clause it proves."""

import pytest
import torch
from torch import nn

from conformance.harness.checks import SAVED_MODIFIED, assert_values, compiled_since, raises
from conformance.harness.populations import MODULES, PARAM_UPDATE_SPELLINGS

# Compile mode of this page is specified on every release that has torch.compile (2.1 on); before 2.3 a compiled
# SGD step with momentum fails (PUPD-92): the tests of those options say so with compiled_since("2.3").

LR = 0.25


def linear(device):
    """nn.Linear(2, 1) with weight [[1, 2]], bias [0], and weight.grad [[2, 4]], bias.grad [1]."""
    lin = nn.Linear(2, 1, device=device)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.0, 2.0]], device=device))
        lin.bias.zero_()
    lin(torch.tensor([[2.0, 4.0]], device=device)).sum().backward()
    return lin


def parameter(device, target):
    """(holder, p): p has values [1, 2] (shape (1, 2) for the module) and p.grad [2, 4]."""
    if target == "nn.Linear.weight":
        lin = linear(device)
        return lin, lin.weight
    p = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    (p * p).sum().backward()
    return None, p


SPELLINGS = PARAM_UPDATE_SPELLINGS.params()
MODES = {"no_grad": torch.no_grad, "set_grad_enabled(False)": lambda: torch.set_grad_enabled(False)}


def name(spelling):
    """The id of a member of PARAM_UPDATE_SPELLINGS."""
    return next(mid for mid, fn in PARAM_UPDATE_SPELLINGS.members if fn is spelling)


def update_step(spelling, mode):
    """The update step `with <mode>: <spelling>` for a member of PARAM_UPDATE_SPELLINGS; returns `p`."""

    def step(p, lr):
        with MODES[mode]():
            spelling(p, lr)
        return p

    return step


def update(run, p, spelling, mode, lr=LR):
    """Run the member `spelling` of PARAM_UPDATE_SPELLINGS on `p` under grad mode `mode` (in the test's mode)."""
    return run(update_step(spelling, mode), p, lr)


# The other update steps of this page, each run as written or compiled (the `run` fixture).
def sgd_step(opt):
    opt.step()


def sgd_loop_step(opt):
    opt.step()
    opt.zero_grad()


def manual_loop_step(v):
    with torch.no_grad():
        v -= 0.25 * v.grad
    v.grad = None


def rebinding_step(grad_mode):
    def step(p):
        with torch.set_grad_enabled(grad_mode):
            p = p - LR * p.grad
        return p

    return step


def assign_weight(m, value):
    m.weight = value


def flat(t):
    return t.detach().reshape(-1)


# > PUPD-1: Inside `torch.no_grad()` or `torch.set_grad_enabled(False)`, each update spelling of
# > `PARAM_UPDATE_SPELLINGS` (listed below: `p.add_(p.grad, alpha=-lr)`, `p -= lr * p.grad`, `p.sub_(lr * p.grad)`,
# > `p.copy_(p - lr * p.grad)` and `p[:] = p - lr * p.grad`) of a parameter `p` (an `nn.Parameter` of a module, or a
# > plain leaf that requires grad) raises no error; afterwards `p` is the same object (the module attribute is still
# > `p`), of the same type (`nn.Parameter` stays `nn.Parameter`), a leaf that requires grad with no `grad_fn`, and
# > `p._version` has grown (by how much is not promised, VERSION-40). (Outside no_grad the same spellings raise,
# > INPLACE-1.)
@pytest.mark.clause("PUPD-1")
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("target", ["nn.Linear.weight", "leaf"])
@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.compiled_since("2.4", before="INPLACE-102", also_on="2.1 2.2", modes="inductor")  # returns from no_grad
def test_in_place_update_keeps_parameter(device, spelling, target, mode, run):
    holder, p = parameter(device, target)
    ident, kind, version = id(p), type(p), p._version
    q = update(run, p, spelling, mode)
    assert q is p and id(p) == ident
    if holder is not None:
        assert holder.weight is p
    assert type(p) is kind
    assert (p.is_leaf, p.requires_grad, p.grad_fn) == (True, True, None)
    assert p._version > version, f"_version did not grow: {version} -> {p._version}"


# > PUPD-2: The values of `p` after each update of PUPD-1 are `p - lr * p.grad`.
@pytest.mark.clause("PUPD-2")
@pytest.mark.parametrize("target", ["nn.Linear.weight", "leaf"])
@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.compiled_since("2.4", before="INPLACE-102", also_on="2.1 2.2", modes="inductor")  # returns from no_grad
def test_in_place_update_values(device, spelling, target, run):
    _, p = parameter(device, target)
    update(run, p, spelling, "no_grad")
    assert_values(flat(p), [0.5, 1.0], f"p after {name(spelling)} (lr={LR})")


# > PUPD-3: The updates of PUPD-1 leave `p.grad` alone: it is the same tensor object, with the same `_version`.
@pytest.mark.clause("PUPD-3")
@pytest.mark.parametrize("target", ["nn.Linear.weight", "leaf"])
@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.compiled_since("2.4", before="INPLACE-102", also_on="2.1 2.2", modes="inductor")  # returns from no_grad
def test_in_place_update_keeps_grad_object(device, spelling, target, run):
    _, p = parameter(device, target)
    g, gv = p.grad, p.grad._version
    update(run, p, spelling, "no_grad")
    assert p.grad is g
    assert g._version == gv


# > PUPD-4: The values of `p.grad` after the updates of PUPD-1 are those it had before.
@pytest.mark.clause("PUPD-4")
@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.compiled_since("2.4", before="INPLACE-102", also_on="2.1 2.2", modes="inductor")  # returns from no_grad
def test_in_place_update_keeps_grad_values(device, spelling, run):
    _, p = parameter(device, "nn.Linear.weight")
    update(run, p, spelling, "no_grad")
    assert_values(flat(p.grad), [2.0, 4.0], f"p.grad after {name(spelling)}")


SGD_OPTIONS = {
    "plain": {},
    "momentum": {"momentum": 0.5},
    "weight_decay": {"weight_decay": 0.5},
    "nesterov": {"momentum": 0.5, "nesterov": True, "weight_decay": 0.1},
    "maximize": {"maximize": True},
}
WITH_MOMENTUM = ["momentum", "nesterov"]  # compiled, a step with these fails before 2.3 (PUPD-92)


# > PUPD-5: `torch.optim.SGD(params, lr=...).step()` (plain, or with `momentum`, `weight_decay`, `nesterov` or
# > `maximize`) updates every parameter that has a `.grad` in place (tested: every parameter of every module of
# > MODULES): afterwards each is the same object, of the same type, a leaf that requires grad with no `grad_fn`, and its
# > `_version` has grown; its `.grad` is the same tensor object with the same `_version`; and grad mode is enabled again
# > after `step()` returns.
@pytest.mark.clause("PUPD-5")
@pytest.mark.parametrize("options", compiled_since("2.3", list(SGD_OPTIONS), WITH_MOMENTUM, "PUPD-92"))
@pytest.mark.parametrize("make", MODULES.params())
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_sgd_step_updates_in_place(device, make, options, run):
    m = make(device)
    sum((p * p).sum() for p in m.parameters()).backward()
    params = dict(m.named_parameters())
    before = {name: (id(p), p._version, p.grad, p.grad._version) for name, p in params.items()}
    opt = torch.optim.SGD(m.parameters(), lr=0.5, **SGD_OPTIONS[options])
    step = run.function(sgd_step)
    for _ in range(2):
        step(opt)
        assert torch.is_grad_enabled()
    for name, (ident, version, g, gv) in before.items():
        p = m.get_parameter(name)
        assert p is params[name] and id(p) == ident and type(p) is nn.Parameter, name
        assert (p.is_leaf, p.requires_grad, p.grad_fn) == (True, True, None), name
        assert p._version > version, f"{name}: _version did not grow: {version} -> {p._version}"
        assert p.grad is g and g._version == gv, name


# > PUPD-6: The values after `SGD.step()` are those of the SGD rule, and `.grad` keeps its values.
@pytest.mark.clause("PUPD-6")
@pytest.mark.parametrize(
    ("options", "steps", "expected"),
    [
        ({"lr": 0.25}, 1, [0.5, 1.0]),
        ({"lr": 0.5, "weight_decay": 0.5}, 1, [-0.25, -0.5]),
        pytest.param(
            {"lr": 0.5, "momentum": 0.5}, 2, [-1.5, -3.0], marks=pytest.mark.compiled_since("2.3", before="PUPD-92")
        ),
    ],
)
def test_sgd_step_values(device, options, steps, expected, run):
    w = nn.Parameter(torch.tensor([1.0, 2.0], device=device))
    (w * w).sum().backward()
    opt = torch.optim.SGD([w], **options)
    step = run.function(sgd_step)
    for _ in range(steps):
        step(opt)
        assert_values(w.grad, [2.0, 4.0], f"w.grad after step with {options}")
    assert_values(w, expected, f"w after {steps} step(s) with {options}")


# > PUPD-7: `step()` skips a parameter whose `.grad` is `None`: its `_version` is unchanged and its `.grad`
# > stays `None`.
@pytest.mark.clause("PUPD-7")
@pytest.mark.parametrize("options", compiled_since("2.3", list(SGD_OPTIONS), WITH_MOMENTUM, "PUPD-92"))
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_sgd_step_skips_parameter_without_grad(device, options, run):
    used = nn.Parameter(torch.tensor([1.0, 2.0], device=device))
    unused = nn.Parameter(torch.tensor([1.0, 2.0], device=device))
    (used * used).sum().backward()
    version = unused._version
    opt = torch.optim.SGD([used, unused], lr=0.5, **SGD_OPTIONS[options])
    run(sgd_step, opt)
    assert unused.grad is None
    assert unused._version == version
    assert used._version > 0


# > PUPD-92 (compile, until 2.3): Before 2.3, a compiled `opt.step()` of `torch.optim.SGD` with momentum
# > (`momentum=0.5`, also with `nesterov=True` and `weight_decay=0.1`) raises
# > `torch._dynamo.exc.InternalTorchDynamoError` (a `RuntimeError`) whose message contains "list index out of range",
# > for the parameters of every module of the population `MODULES`. The parameters keep their `_version` and values, and
# > none has a momentum buffer in the optimizer's state. The issue is pytorch/pytorch#116061 ("dynamo'ing SGD w/
# > momentum errors for CPU params with empty grads"). Layer: Dynamo (the same with `backend="eager"`). Run on 2.1.2,
# > 2.2.2 (as said here) and 2.3.1, where PUPD-92's test fails (PUPD-5 holds compiled there), cpu and meta.
@pytest.mark.clause("PUPD-92")
@pytest.mark.parametrize("options", WITH_MOMENTUM)
@pytest.mark.parametrize("make", MODULES.params())
def test_compiled_sgd_step_with_momentum_fails_before_2_3(device, make, options, run):
    m = make(device)
    sum((p * p).sum() for p in m.parameters()).backward()
    before = {name: (p._version, p.detach().clone()) for name, p in m.named_parameters()}
    opt = torch.optim.SGD(m.parameters(), lr=0.5, **SGD_OPTIONS[options])
    with raises(RuntimeError, "list index out of range") as info:
        run(sgd_step, opt)
    assert type(info.value).__name__ == "InternalTorchDynamoError"
    assert not any("momentum_buffer" in state for state in opt.state.values())
    for name, (version, values) in before.items():
        p = m.get_parameter(name)
        assert p._version == version, name
        if device != "meta":
            assert_values(p, values.tolist(), name)


# > PUPD-12: A loop of forward, `loss.backward()`, `opt.step()`, `opt.zero_grad()` with `torch.optim.SGD` gives the same
# > parameter values as the manual update `with torch.no_grad(): p -= lr * p.grad` followed by `p.grad = None`: for
# > `loss = (w * w).sum()`, `w = [1., -2.]` and `lr=0.25`, two steps give `[0.25, -0.5]`. (The manual loop is
# > NOGRAD-17.)
def sgd_and_manual_loops(device, run):
    """Two steps of the SGD loop on `w` and of the manual loop on `v` (both [1., -2.], lr 0.25); returns
    (w, v, whether `v.grad` was None after each manual step)."""
    w = nn.Parameter(torch.tensor([1.0, -2.0], device=device))
    opt = torch.optim.SGD([w], lr=0.25)
    v = torch.tensor([1.0, -2.0], device=device, requires_grad=True)
    sgd, manual = run.function(sgd_loop_step), run.function(manual_loop_step)
    cleared = []
    for _ in range(2):
        (w * w).sum().backward()
        sgd(opt)
        (v * v).sum().backward()
        manual(v)
        cleared.append(v.grad is None)
    return w, v, cleared


@pytest.mark.clause("PUPD-12")
def test_sgd_loop_equals_manual_update(device, run):
    w, v, cleared = sgd_and_manual_loops(device, run)
    assert_values(w, [0.25, -0.5], "w after two SGD steps")
    assert_values(v, [0.25, -0.5], "v after two manual steps")
    assert cleared == [True, True], cleared


# > PUPD-91: Before 2.8, PUPD-12 holds when its two update steps run under `torch.compile`
# > (`opt.step(); opt.zero_grad()` as one compiled function, the manual step with its `p.grad = None` as another): both
# > loops give `[0.25, -0.5]`, and `p.grad` is `None` after both compiled manual steps.
@pytest.mark.clause("PUPD-91")
def test_compiled_loops_equal_before_2_8(device, run):
    test_sgd_loop_equals_manual_update(device, run)


# > PUPD-90: When the two update steps of PUPD-12 run under `torch.compile` (`opt.step(); opt.zero_grad()` as one
# > compiled function, and the manual step `with torch.no_grad(): p -= lr * p.grad` followed by `p.grad = None` as
# > another), the SGD loop still gives `[0.25, -0.5]`, but the `p.grad = None` of the compiled manual step is lost:
# > after the step `p.grad` is still the gradient tensor, the next `backward()` accumulates into it, and two steps give
# > `[-0.25, 0.5]` instead of `[0.25, -0.5]`. The layer is Dynamo (the same with `backend="eager"`): the augmented
# > assignment `p -= ...` rebinds `p` to a new variable of Dynamo's whose attribute writes are not replayed on the input
# > (pytorch/pytorch#113160, "self-assigning operation causes `TensorVariable` to lose `mutable_local`, thus causing its
# > attribute mutations to be untracked"). Run on the releases 2.1.2 to 2.15.0: the `.grad` is cleared on 2.1.2 to 2.7.1
# > (PUPD-91), kept from 2.8.0 on. `p.sub_(lr * p.grad)` followed by `p.grad = None` does clear `.grad` on them. Write
# > the update with an in-place method, or set `.grad` outside the compiled function.
@pytest.mark.clause("PUPD-90")
def test_compiled_manual_step_keeps_grad(device, run):
    w, v, cleared = sgd_and_manual_loops(device, run)
    assert_values(w, [0.25, -0.5], "w after two compiled SGD steps")
    assert_values(v, [-0.25, 0.5], "v after two compiled manual steps (gradients accumulated: [2, -4] + [1, -2])")
    assert cleared == [False, False], cleared


# > PUPD-8: `p = p - lr * p.grad` updates nothing: the module attribute and the optimizer's `param_groups` still
# > hold the old parameter, whose `_version` is unchanged. The name `p` now refers to a plain `torch.Tensor`, not
# > an `nn.Parameter`: with grad mode enabled a non-leaf that requires grad and has a `grad_fn`; inside
# > `torch.no_grad()` a leaf that does not require grad.
@pytest.mark.clause("PUPD-8")
@pytest.mark.parametrize("grad_mode", [True, False])
def test_rebinding_step_updates_nothing(device, grad_mode, run):
    lin = linear(device)
    opt = torch.optim.SGD(lin.parameters(), lr=LR)
    old = p = lin.weight
    version = old._version
    p = run(rebinding_step(grad_mode), p)
    assert lin.weight is old and opt.param_groups[0]["params"][0] is old
    assert old._version == version
    assert type(p) is torch.Tensor
    if grad_mode:
        assert (p.is_leaf, p.requires_grad, p.grad_fn is not None) == (False, True, True)
    else:
        assert (p.is_leaf, p.requires_grad, p.grad_fn) == (True, False, None)


# > PUPD-9: Assigning that result to the module's attribute, `model.weight = p - lr * p.grad` (with grad mode enabled or
# > disabled), or another tensor that is not an `nn.Parameter` (tested: `p.detach().clone()` and a float64 tensor; more
# > values in PARAM-4), raises `TypeError` whose message is "cannot assign 'TYPE' as parameter 'weight'
# > (torch.nn.Parameter or None expected)", TYPE being `torch.typename` of the value (`torch.FloatTensor` on cpu,
# > `torch.meta.FloatTensor` on meta); `model.weight` is still the old parameter.
@pytest.mark.clause("PUPD-9")
@pytest.mark.parametrize("value", ["p - lr * p.grad", "same under no_grad", "p.detach().clone()", "float64 tensor"])
def test_assigning_tensor_to_parameter_attribute_raises(device, value, run):
    lin = linear(device)
    p = lin.weight
    if value == "p - lr * p.grad":
        new = p - LR * p.grad
    elif value == "same under no_grad":
        with torch.no_grad():
            new = p - LR * p.grad
    elif value == "p.detach().clone()":
        new = p.detach().clone()
    else:
        new = torch.zeros(1, 2, device=device, dtype=torch.float64)
    name = torch.typename(new)
    if device in ("cpu", "meta"):
        kind = "DoubleTensor" if new.dtype == torch.float64 else "FloatTensor"
        assert name == ("torch.meta." if device == "meta" else "torch.") + kind
    expected = f"cannot assign '{name}' as parameter 'weight' (torch.nn.Parameter or None expected)"
    with raises(TypeError, expected):
        run(assign_weight, lin, new)
    assert lin.weight is p


# > PUPD-10: Assigning a new `nn.Parameter` to the attribute is accepted, but an optimizer built before still holds
# > the old parameter: after `backward()` through the module, `step()` leaves the new parameter unchanged.
@pytest.mark.clause("PUPD-10")
def test_new_parameter_is_not_in_old_optimizer(device, run):
    lin = linear(device)
    old = lin.weight
    opt = torch.optim.SGD(lin.parameters(), lr=LR)
    run(assign_weight, lin, nn.Parameter(torch.tensor([[3.0, 4.0]], device=device)))
    assert lin.weight is not old
    assert opt.param_groups[0]["params"][0] is old
    opt.zero_grad()
    lin(torch.tensor([[1.0, 1.0]], device=device)).sum().backward()
    assert lin.weight.grad is not None
    version = lin.weight._version
    opt.step()
    assert lin.weight._version == version


# > PUPD-11: When a graph has saved a parameter for backward (as `(w * w).sum()` saves `w`, or `lin2(lin1(x))` saves
# > `lin2.weight`) and the parameter is updated in place before that graph's `backward()`, by an update of PUPD-1 or by
# > `opt.step()` (for example between `loss.backward(retain_graph=True)` and a second `loss.backward()`), that
# > `backward()` raises `RuntimeError` whose message contains "one of the variables needed for gradient computation has
# > been modified by an inplace operation". This is the version check of NOGRAD-7 and INPLACE-11: call `backward()` on
# > every graph first, then step.
@pytest.mark.clause("PUPD-11")
@pytest.mark.parametrize("how", [*SPELLINGS, pytest.param("opt.step()", id="opt.step()")])
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_update_before_backward_of_saving_graph_raises(device, how, run):
    w = nn.Parameter(torch.tensor([1.0, 2.0], device=device))
    opt = torch.optim.SGD([w], lr=LR)
    loss = (w * w).sum()
    loss.backward(retain_graph=True)
    if how == "opt.step()":
        run(sgd_step, opt)
    else:
        update(run, w, how, "no_grad")
    with raises(RuntimeError, SAVED_MODIFIED):
        loss.backward()


@pytest.mark.clause("PUPD-11")
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_step_between_backwards_of_two_layer_model_raises(device, run):
    lin1, lin2 = nn.Linear(2, 2, device=device), nn.Linear(2, 1, device=device)
    opt = torch.optim.SGD([*lin1.parameters(), *lin2.parameters()], lr=0.1)
    loss = lin2(lin1(torch.ones(1, 2, device=device))).sum()  # lin2 saves its weight for lin1's gradient
    loss.backward(retain_graph=True)
    run(sgd_step, opt)
    with raises(RuntimeError, SAVED_MODIFIED):
        loss.backward()


# Seeds, read as parameter updates and run as written (fixing only what stops them from running, as noted).


@pytest.mark.clause("PUPD-8")
def test_seed_en_reassignment_as_update_step(device, run):
    # English seed, "Avoiding variable reassignment": x = something_new. As an update step of a module parameter:
    lin = linear(device)
    version = lin.weight._version
    x = lin.weight
    x = run(rebinding_step(True), x)  # x = x - lr * x.grad: "creates a new variable"
    assert x is not lin.weight and type(x) is torch.Tensor
    assert x.grad_fn is not None  # connected to the old parameter, not "broken"
    assert lin.weight._version == version  # the parameter the module holds is not updated


@pytest.mark.clause("PUPD-1", "INPLACE-1")
def test_seed_en_slicing_update(device):
    # English seed, third snippet, "Correct approach": as written it raises on a leaf that requires grad.
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    with raises(RuntimeError, "leaf Variable that requires grad is being used in an in-place operation"):
        x[:] = torch.tensor([3.0, 4.0], device=device)
    # Inside no_grad it is a correct update.
    with torch.no_grad():
        x[:] = torch.tensor([3.0, 4.0], device=device)
    assert (x.is_leaf, x.requires_grad, x._version > 0) == (True, True, True)


@pytest.mark.clause("PUPD-1", "PUPD-8", "INPLACE-1")
def test_seed_en_add_update(device):
    # English seed, in-place snippet: x.add_(2.0)  # Equivalent to x = x + 2.0 (but in-place)
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    with raises(RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation"):
        x.add_(2.0)
    holder = [x]
    with torch.no_grad():
        x.add_(2.0)
    assert holder[0] is x and x.is_leaf and x._version > 0
    x = x + 2.0  # the "equivalent": a new non-leaf; the holder keeps the old tensor
    assert holder[0] is not x and not x.is_leaf


@pytest.mark.clause("PUPD-1", "INPLACE-1")
def test_seed_ko_in_place_update(device):
    # Korean seed, method 2. torch.Variable does not exist:
    with raises(AttributeError, "has no attribute 'Variable'"):
        torch.Variable(torch.randn(5))
    # Fixed to run: a leaf that requires grad. x.add_(1) then raises, as INPLACE-1 states.
    x = torch.randn(5, device=device, requires_grad=True)
    with raises(RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation"):
        x.add_(1)
    with torch.no_grad():
        x.add_(1)
    assert (x.is_leaf, x.requires_grad, x.grad_fn, x._version > 0) == (True, True, None, True)


@pytest.mark.clause("PUPD-1", "INPLACE-1")
def test_seed_ko_copy_update(device):
    # Korean seed, method 3, torch.Variable fixed to a leaf that requires grad.
    x = torch.randn(5, device=device, requires_grad=True)
    with raises(RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation"):
        x.copy_(torch.randn(5, device=device))
    with torch.no_grad():
        x.copy_(torch.ones(5, device=device))
    assert (x.is_leaf, x.requires_grad, x.grad_fn, x._version > 0) == (True, True, None, True)
