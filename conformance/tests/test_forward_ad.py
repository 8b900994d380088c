"""Conformance tests for spec/forward_ad.md (in-place updates of dual tensors). Each test quotes the clause it
proves."""

import warnings

import pytest
import torch
import torch.autograd.forward_ad as fwAD

from conformance.harness.checks import assert_values, raises

VIEW_OF_LEAF = "a view of a leaf Variable that requires grad is being used in an in-place operation"


def dual(device, primal=(1.0, 2.0), tangent=(1.0, 1.0)):
    return fwAD.make_dual(torch.tensor(primal, device=device), torch.tensor(tangent, device=device))


def tangent_of(x):
    return fwAD.unpack_dual(x).tangent


def setitem(index, value):
    def update(x):
        x[index] = value(x) if callable(value) else value
        return x

    return update


def plain(x):
    return torch.tensor([5.0, 6.0], device=x.device)


# spelling -> (update, tangent afterwards) for x = make_dual([1., 2.], [1., 1.])
UPDATES = {
    "x.add_(5)": (lambda x: x.add_(5), [1.0, 1.0]),
    "x.sub_(1)": (lambda x: x.sub_(1), [1.0, 1.0]),
    "x += 1": (lambda x: x.__iadd__(1), [1.0, 1.0]),
    "x.mul_(3)": (lambda x: x.mul_(3), [3.0, 3.0]),
    "x *= 3": (lambda x: x.__imul__(3), [3.0, 3.0]),
    "x.div_(2)": (lambda x: x.div_(2), [0.5, 0.5]),
    "x.neg_()": (lambda x: x.neg_(), [-1.0, -1.0]),
    "x.pow_(2)": (lambda x: x.pow_(2), [2.0, 4.0]),
    "x.clamp_(max=1.5)": (lambda x: x.clamp_(max=1.5), [1.0, 0.0]),
    "x.zero_()": (lambda x: x.zero_(), [0.0, 0.0]),
    "x.fill_(7)": (lambda x: x.fill_(7), [0.0, 0.0]),
    "x.copy_(v)": (lambda x: x.copy_(plain(x)), [0.0, 0.0]),
    "x[:] = v": (setitem(slice(None), plain), [0.0, 0.0]),
    "x[0] = 5": (setitem(0, 5.0), [0.0, 1.0]),
}


# > FWAD-1: Inside `fwAD.dual_level()`, an in-place update of a dual tensor `x = fwAD.make_dual(p, t)` (`p = [1., 2.]`,
# > `t = [1., 1.]`) returns `x` itself and makes its tangent the derivative of the update applied to the old tangent:
# > `x.add_(5)`, `x.sub_(1)`, `x += 1`: `[1., 1.]`; `x.mul_(3)`, `x *= 3`: `[3., 3.]`; `x.div_(2)`: `[0.5, 0.5]`;
# > `x.neg_()`: `[-1., -1.]`; `x.pow_(2)`: `[2., 4.]`; `x.clamp_(max=1.5)`: `[1., 0.]`; `x.zero_()`, `x.fill_(7)`,
# > `x.copy_(v)` and `x[:] = v` with a `v` that has no tangent: `[0., 0.]`; `x[0] = 5`: `[0., 1.]`.
@pytest.mark.clause("FWAD-1")
@pytest.mark.parametrize("spelling", UPDATES)
def test_update_of_a_dual_tensor_updates_its_tangent(device, spelling):
    update, expected = UPDATES[spelling]
    with fwAD.dual_level():
        x = dual(device)
        result = update(x)
        assert result is x, f"{spelling} returned another tensor"
        assert_values(tangent_of(x), expected, f"tangent after {spelling}")


# > FWAD-2: Each update of FWAD-1 increases `x._version`, and `x` keeps a tangent. The tangent is updated in place:
# > the tensor `fwAD.unpack_dual(x).tangent` returned before the update is the one returned after it.
@pytest.mark.clause("FWAD-2")
@pytest.mark.parametrize("spelling", UPDATES)
def test_update_of_a_dual_tensor_keeps_its_tangent_object(device, spelling):
    update, _ = UPDATES[spelling]
    with fwAD.dual_level():
        x = dual(device)
        before, version = tangent_of(x), x._version
        update(x)
        assert x._version > version, f"{spelling}: _version {version} -> {x._version}"
        assert tangent_of(x) is before, f"{spelling}: the tangent is another tensor afterwards"


# > FWAD-3: A tensor with no tangent that an in-place update writes values of a dual tensor `d` into gains a tangent:
# > that of `d` where `d`'s values were written, zero elsewhere (`y = torch.zeros(2)`, `d` with primal `[1., 2.]` and
# > tangent `[3., 4.]`: `y.add_(d)` and `y.copy_(d)` give `[3., 4.]`, `y[0] = d[1]` gives `[4., 0.]`). `y` does not come
# > to require grad. An in-place update of a view of a dual tensor updates the base's tangent where the view lies
# > (`base[1:].mul_(2)` of a base with tangent `[1., 1., 1.]`: `[1., 2., 2.]`), and a view of a tensor with no tangent
# > that receives a dual tensor's values gives its base a tangent (`base[1:].copy_(d)` of `torch.zeros(3)`, `d` with
# > tangent `[5., 6.]`: `[0., 5., 6.]`).
@pytest.mark.clause("FWAD-3")
@pytest.mark.parametrize(
    ("spelling", "write", "expected"),
    [
        ("y.add_(d)", lambda y, d: y.add_(d), [3.0, 4.0]),
        ("y.copy_(d)", lambda y, d: y.copy_(d), [3.0, 4.0]),
        ("y[0] = d[1]", lambda y, d: y.__setitem__(0, d[1]), [4.0, 0.0]),
    ],
)
def test_a_plain_tensor_gains_the_tangent_written_into_it(device, spelling, write, expected):
    with fwAD.dual_level():
        y, d = torch.zeros(2, device=device), dual(device, tangent=(3.0, 4.0))
        assert tangent_of(y) is None
        write(y, d)
        assert tangent_of(y) is not None, f"{spelling}: y has no tangent"
        assert_values(tangent_of(y), expected, f"tangent of y after {spelling}")
        assert not y.requires_grad


@pytest.mark.clause("FWAD-3")
def test_views_carry_tangents_to_their_base(device):
    with fwAD.dual_level():
        base = dual(device, primal=(1.0, 2.0, 3.0), tangent=(1.0, 1.0, 1.0))
        base[1:].mul_(2)
        assert_values(tangent_of(base), [1.0, 2.0, 2.0], "tangent of the base after base[1:].mul_(2)")
        base = torch.zeros(3, device=device)
        base[1:].copy_(dual(device, tangent=(5.0, 6.0)))
        assert tangent_of(base) is not None, "base[1:].copy_(d) left the base without a tangent"
        assert_values(tangent_of(base), [0.0, 5.0, 6.0], "tangent of the base after base[1:].copy_(d)")


# > FWAD-4: An integer tensor that receives a dual tensor's values (`y.copy_(d)` with `y` of dtype int64) gains no
# > tangent.
@pytest.mark.clause("FWAD-4")
def test_an_integer_tensor_gains_no_tangent(device):
    with fwAD.dual_level():
        y = torch.zeros(2, dtype=torch.int64, device=device)
        y.copy_(dual(device))
        assert_values(y, [1, 2], "int64 y after y.copy_(d)")
        assert tangent_of(y) is None


# > FWAD-5: `torch.no_grad()` does not apply to forward-mode AD: inside it, `x.mul_(3)` on a dual tensor makes its
# > tangent `[3., 3.]`, and `y = x * 3` has the tangent `[3., 3.]`, as outside.
@pytest.mark.clause("FWAD-5")
def test_no_grad_does_not_stop_forward_ad(device):
    with fwAD.dual_level():
        x = dual(device)
        with torch.no_grad():
            x.mul_(3)
            y = dual(device) * 3
        assert_values(tangent_of(x), [3.0, 3.0], "tangent after x.mul_(3) under no_grad")
        assert tangent_of(y) is not None, "y = x * 3 under no_grad has no tangent"
        assert_values(tangent_of(y), [3.0, 3.0], "tangent of y = x * 3 under no_grad")


# > FWAD-6: Inside `torch.inference_mode()` forward-mode AD is off: `x.mul_(3)` on a dual tensor multiplies its primal
# > and leaves its tangent `[1., 1.]`, with no error or warning, so the tangent no longer matches the values;
# > `y = x * 3` has no tangent.
@pytest.mark.clause("FWAD-6")
def test_inference_mode_stops_forward_ad(device):
    with fwAD.dual_level():
        x, d = dual(device), dual(device)  # made first: the first make_dual of a process may warn (torch.jit)
        with warnings.catch_warnings(record=True) as caught, torch.inference_mode():
            warnings.simplefilter("always")
            x.mul_(3)
            y = d * 3
        assert_values(x, [3.0, 6.0], "x after x.mul_(3) in inference_mode")
        assert_values(tangent_of(x), [1.0, 1.0], "tangent after x.mul_(3) in inference_mode")
        assert tangent_of(y) is None, "y = x * 3 in inference_mode has a tangent"
    assert not caught, [str(w.message) for w in caught]


# > FWAD-7: An update written through `x.data` or `x.detach()` (`x.data.mul_(3)`, `x.detach().mul_(3)`) changes the
# > primal of the dual tensor `x` and leaves its tangent as it was (`[1., 1.]`), with no error: the tangent is then
# > wrong for the values. `x.detach()` itself has no tangent.
@pytest.mark.clause("FWAD-7")
@pytest.mark.parametrize("through", ["x.data", "x.detach()"])
def test_writes_around_autograd_leave_the_tangent(device, through):
    with fwAD.dual_level():
        x = dual(device)
        alias = x.data if through == "x.data" else x.detach()
        alias.mul_(3)
        assert_values(x, [3.0, 6.0], f"x after {through}.mul_(3)")
        assert_values(tangent_of(x), [1.0, 1.0], f"tangent after {through}.mul_(3)")
        assert tangent_of(x.detach()) is None


# > FWAD-8: `x = fwAD.make_dual(p, t)` shares the memory of `p`: an in-place update of `x` writes into `p`. If `p` is
# > a leaf that requires grad, `x` is a view of it, and an in-place update of `x` with grad mode on raises
# > RuntimeError whose message contains "a view of a leaf Variable that requires grad is being used in an in-place
# > operation".
@pytest.mark.clause("FWAD-8")
def test_a_dual_tensor_shares_the_memory_of_its_primal(device):
    p = torch.tensor([1.0, 2.0], device=device)
    with fwAD.dual_level():
        x = fwAD.make_dual(p, torch.ones(2, device=device))
        x.mul_(3)
        assert_values(p, [3.0, 6.0], "p after x.mul_(3)")
        leaf = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
        x = fwAD.make_dual(leaf, torch.ones(2, device=device))
        assert x._base is leaf
        with raises(RuntimeError, VIEW_OF_LEAF):
            x.mul_(3)


# > FWAD-9: Once `fwAD.dual_level()` has exited, `fwAD.unpack_dual(x).tangent` of a tensor that was dual inside it is
# > `None`.
@pytest.mark.clause("FWAD-9")
def test_tangents_end_with_their_level(device):
    with fwAD.dual_level():
        x = dual(device)
        assert tangent_of(x) is not None
    assert tangent_of(x) is None
