"""Conformance tests for spec/no_grad.md (grad mode). Each test quotes the clause it proves.

Grad mode is global (thread-local) state: every test changes it through context managers only, so the
mode is restored even when an assertion fails.
"""

import threading

import pytest
import torch

from conformance.harness.checks import (
    NO_GRAD_FN,
    SAVED_MODIFIED,
    assert_values,
    compiled_since,
    leaf,
    raises,
    view_and_base_targets,
)
from conformance.harness.populations import (
    FACTORIES,
    INPLACE_SPELLINGS,
    MULTI_OUTPUT_VIEW_OPS,
    NON_VIEW_OPS,
    VIEW_OPS,
    check_each,
)

DISABLING = {
    "torch.no_grad()": torch.no_grad,
    "torch.set_grad_enabled(False)": lambda: torch.set_grad_enabled(False),
}
ENABLING = {
    "torch.enable_grad()": torch.enable_grad,
    "torch.set_grad_enabled(True)": lambda: torch.set_grad_enabled(True),
}


# > NOGRAD-1: Inside `with torch.no_grad():` or `with torch.set_grad_enabled(False):`,
# > `torch.is_grad_enabled()` is False; on leaving the block, also by an exception, it is what it was before.
@pytest.mark.clause("NOGRAD-1")
@pytest.mark.parametrize("cm", list(DISABLING))
@pytest.mark.parametrize("outer", [True, False])
def test_grad_mode_inside_and_after(device, cm, outer):
    with torch.set_grad_enabled(outer):
        with DISABLING[cm]():
            assert torch.is_grad_enabled() is False
        assert torch.is_grad_enabled() is outer
        with pytest.raises(ValueError):
            with DISABLING[cm]():
                raise ValueError
        assert torch.is_grad_enabled() is outer


def matrix(device):
    """The input of NON_VIEW_OPS and VIEW_OPS: a float leaf of shape (2, 2) that requires grad."""
    return torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=True)


def _base(device, kind):
    x = matrix(device)
    return x if kind == "leaf" else x * 1


# > NOGRAD-2: With grad mode disabled (by either block, or inside a function decorated with `@torch.no_grad()`), the
# > result of every operation of the population `NON_VIEW_OPS` (listed below) does not require grad, is a leaf and has
# > no `grad_fn`, even when its inputs require grad (leaves or non-leaves). Views are the exception (NOGRAD-40).
@pytest.mark.clause("NOGRAD-2")
@pytest.mark.parametrize("cm", list(DISABLING))
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_results_inside_do_not_require_grad(device, cm, kind):
    def check(op):
        x = _base(device, kind)
        with DISABLING[cm]():
            r = op(x)
        assert (r.requires_grad, r.is_leaf, r.grad_fn) == (False, True, None)

    check_each(NON_VIEW_OPS, check)


@pytest.mark.clause("NOGRAD-2")
@pytest.mark.parametrize("op", NON_VIEW_OPS.params())
def test_results_of_no_grad_decorated_function(device, op):
    @torch.no_grad()
    def f(x):
        return op(x), torch.is_grad_enabled()

    r, mode = f(matrix(device))
    assert (r.requires_grad, r.is_leaf, r.grad_fn, mode) == (False, True, None, False)


# > NOGRAD-40: With grad mode disabled (by either block, or inside a function decorated with `@torch.no_grad()`), the
# > result of every operation of the population `VIEW_OPS` (listed below) applied to a tensor that requires grad (a leaf
# > or a non-leaf) is a view of it that requires grad; it is a leaf and has no `grad_fn` (VIEW-10).
@pytest.mark.clause("NOGRAD-40")
@pytest.mark.parametrize("cm", [*DISABLING, "@torch.no_grad()"])
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_views_inside_require_grad(device, cm, kind):
    def check(view):
        x = _base(device, kind)
        if cm == "@torch.no_grad()":
            v = torch.no_grad()(view)(x)
        else:
            with DISABLING[cm]():
                v = view(x)
        assert (v._is_view(), v._base is x) == (True, True)
        assert (v.requires_grad, v.is_leaf, v.grad_fn) == (True, True, None)

    check_each(VIEW_OPS, check)


# > NOGRAD-3: Grad mode does not affect factory functions (every member of FACTORIES): with grad mode disabled, a tensor
# > created without `requires_grad=True` does not require grad (as it does not with grad mode enabled), and one created
# > with `requires_grad=True` is a leaf that requires grad.
@pytest.mark.clause("NOGRAD-3")
@pytest.mark.parametrize("cm", list(DISABLING))
@pytest.mark.parametrize("factory", FACTORIES.params())
def test_factories_inside(device, cm, factory):
    x = leaf(device)
    with DISABLING[cm]():
        plain = factory(device, x)
        tracked = factory(device, x, requires_grad=True)
    assert (plain.requires_grad, plain.is_leaf) == (False, True)
    assert (tracked.requires_grad, tracked.is_leaf, tracked.grad_fn) == (True, True, None)


def _new(device):
    return torch.arange(5.0, 7.0, device=device)  # [5, 6]; not torch.tensor(data), see populations._mask


UPDATES = {
    "x[:] = v": lambda x: x.__setitem__(slice(None), _new(x.device)),
    "x[0] = 5": lambda x: x.__setitem__(0, 5.0),
    "x.add_(1)": lambda x: x.add_(1),
    "x += 1": None,  # augmented assignment needs a statement; see _update
    "torch.add(x, 1, out=x)": lambda x: torch.add(x, 1, out=x),
    "x.copy_(v)": lambda x: x.copy_(_new(x.device)),
    "x.mul_(2)": lambda x: x.mul_(2),
    "x.zero_()": lambda x: x.zero_(),
    "x.fill_(7)": lambda x: x.fill_(7.0),
}
EXPECTED = {
    "x[:] = v": [5.0, 6.0],
    "x[0] = 5": [5.0, 2.0],
    "x.add_(1)": [2.0, 3.0],
    "x += 1": [2.0, 3.0],
    "torch.add(x, 1, out=x)": [2.0, 3.0],
    "x.copy_(v)": [5.0, 6.0],
    "x.mul_(2)": [2.0, 4.0],
    "x.zero_()": [0.0, 0.0],
    "x.fill_(7)": [7.0, 7.0],
}


def _update(x, spelling):
    if spelling == "x += 1":
        x += 1
    else:
        UPDATES[spelling](x)


def _disabled(cm, update):
    """The update step `with <cm>: update(x)`: an update of INPLACE_SPELLINGS with grad mode disabled."""

    def step(x):
        with DISABLING[cm]():
            update(x)

    return step


def _no_grad_update(spelling):
    """The update step `with torch.no_grad(): <spelling>` (a spelling of UPDATES)."""

    def step(x):
        with torch.no_grad():
            _update(x, spelling)

    return step


# > NOGRAD-4: With grad mode disabled, every update of the population INPLACE_SPELLINGS applied to a leaf `x` that
# > requires grad (among them the nine updates `x[:] = v`, `x[0] = v`, `x.add_(1)`, `x += 1`, `torch.add(x, 1, out=x)`,
# > `x.copy_(v)`, `x.mul_(2)`, `x.zero_()`, `x.fill_(v)` that NOGRAD-5, NOGRAD-6 and NOGRAD-8 speak of) raises no error;
# > afterwards `x` is the same object, still a leaf that requires grad, has no `grad_fn`, and `x._version` has
# > increased. (Over every in-place operation of torch's operator database, INPLACE-81 states the same with its
# > exceptions: `resize_` and `resize_as_` still raise, and dropout with `p=0` leaves `_version` as it was.)
@pytest.mark.clause("NOGRAD-4")
@pytest.mark.parametrize("cm", list(DISABLING))
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_in_place_on_leaf_inside_is_allowed(device, cm, update, run):
    x = leaf(device)
    ident = id(x)
    run(_disabled(cm, update), x)
    assert (id(x), x.is_leaf, x.requires_grad, x.grad_fn) == (ident, True, True, None)
    assert x._version > 0


# > NOGRAD-5: The values written by the nine updates listed in NOGRAD-4 are the values of `x` afterwards.
@pytest.mark.clause("NOGRAD-5")
@pytest.mark.parametrize("spelling", list(UPDATES))
def test_in_place_on_leaf_inside_changes_values(device, spelling, run):
    x = leaf(device)
    run(_no_grad_update(spelling), x)
    assert_values(x, EXPECTED[spelling], f"x after {spelling}")


# > NOGRAD-6: The nine updates listed in NOGRAD-4, with grad mode enabled, raise `RuntimeError`, and `x._version` is
# > unchanged: the message contains "leaf Variable that requires grad is being used in an in-place operation" (the words
# > before it depend on the spelling and the release, see INDEX-4 and INDEX-5), and for `torch.add(x, 1, out=x)` it
# > contains "don't support automatic differentiation, but one of the arguments requires grad". (Inside a compiled
# > function before torch 2.11, `x[0] = 5` is not refused: INDEX-94; before 2.9, neither is `x[:] = v`: INDEX-96.)
@pytest.mark.clause("NOGRAD-6")
@pytest.mark.parametrize(
    "spelling",
    compiled_since("2.9", compiled_since("2.11", list(UPDATES), ["x[0] = 5"], "INDEX-94"), ["x[:] = v"], "INDEX-96"),
)
def test_in_place_on_leaf_outside_raises(device, spelling, run):
    x = leaf(device)
    if spelling.startswith("torch.add"):
        fragment = "don't support automatic differentiation, but one of the arguments requires grad"
    else:
        fragment = "leaf Variable that requires grad is being used in an in-place operation"
    with raises(RuntimeError, fragment):
        run(_update, x, spelling)
    assert x._version == 0


# > NOGRAD-7: Disabling grad mode does not disable the version check: when a graph has saved `x` and `x` is updated in
# > place with grad mode disabled (any member of INPLACE_SPELLINGS, as in NOGRAD-4), `backward()` of that graph raises
# > `RuntimeError` whose message contains "one of the variables needed for gradient computation has been modified by an
# > inplace operation". (Compare DATA-6: a write through `.data` is not caught.)
@pytest.mark.clause("NOGRAD-7")
@pytest.mark.parametrize("update", INPLACE_SPELLINGS.params())
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_in_place_inside_on_saved_tensor_raises(device, update, run):
    x = leaf(device)
    y = (x * x).sum()
    run(_disabled("torch.no_grad()", update), x)
    with raises(RuntimeError, SAVED_MODIFIED):
        y.backward()


# > NOGRAD-8: With grad mode disabled, each of the nine updates listed in NOGRAD-4 applied to a non-leaf `y` that
# > requires grad and is not a view (`y = a * 1` of a leaf `a` that requires grad) raises no error, increments
# > `y._version`, and leaves `y` a non-leaf that requires grad with the same `grad_fn` object. A view does not keep its
# > `grad_fn` object (NOGRAD-18, NOGRAD-19).
@pytest.mark.clause("NOGRAD-8")
@pytest.mark.parametrize("spelling", list(UPDATES))
@pytest.mark.compiled_since("2.4", before="NOGRAD-92")  # the grad_fn is replaced
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_in_place_on_non_leaf_inside(device, spelling, run):
    y = leaf(device) * 1
    fn = y.grad_fn
    run(_no_grad_update(spelling), y)
    assert (y.requires_grad, y.is_leaf, y.grad_fn is fn) == (True, False, True)
    assert y._version > 0


REGENERATED_VIEW = "is a view and its base or another view of its base has been modified inplace"
VIEW_TARGETS = view_and_base_targets(VIEW_OPS)  # the members with one output, through `y` and `b`


def _view_of(device, kind):
    """`(b, y)`: `b` a (2, 2) leaf that requires grad or the non-leaf `a * 1`, and `y = b[1]`, made with grad mode
    enabled; or the counterexample `b = a * 1` of a 4-element leaf `a`, `y = b[1:3]`."""
    if kind == "(a * 1)[1:3]":
        b = torch.tensor([1.0, 2.0, 3.0, 4.0], device=device, requires_grad=True) * 1
        return b, b[1:3]
    b = _base(device, kind)
    return b, b[1]


# > NOGRAD-18: Let `y` be a view that has a `grad_fn`, made with grad mode enabled by an operation of `VIEW_OPS` with
# > one output (every member but the outputs of `split`, `chunk` and `unbind`) from a tensor `b` that requires grad, a
# > leaf or a non-leaf (`b = a * 1`), for instance `(a * 1)[1:3]`. With grad mode disabled, after an in-place update of
# > `y` or of `b` (each of the nine updates listed in NOGRAD-4 on `y = b[1]` or on `b`; `y.add_(1)` or `b.add_(1)` for
# > every such operation, but `y.add_(1)` of `b.expand(3, 2, 2)`, which torch refuses, the elements of the view
# > overlapping), `y` is still a non-leaf that requires grad and `y._version` has increased, but `y.grad_fn` is a new
# > node object of class `AsStridedBackward0`, not the node it had before the update (whatever that node's class,
# > `SliceBackward0`, `SelectBackward0`, `ViewBackward0`, ...): autograd regenerates the node of a view whose version
# > has changed when it is next read; later reads return that new object. The same holds inside inference mode
# > (INFER-21).
@pytest.mark.clause("NOGRAD-18")
@pytest.mark.parametrize("spelling", list(UPDATES))
@pytest.mark.parametrize(
    "kind, target",
    [("non-leaf", "y"), ("non-leaf", "b"), ("leaf", "y"), ("leaf", "b"), ("(a * 1)[1:3]", "y")],
)
def test_in_place_on_view_inside_regenerates_grad_fn(device, spelling, kind, target):
    b, y = _view_of(device, kind)
    fn = y.grad_fn
    assert (fn is not None, y._is_view(), y.is_leaf) == (True, True, False)
    _no_grad_update(spelling)(y if target == "y" else b)  # eager only: NOGRAD-18 is about eager mode
    new = y.grad_fn
    assert (y.requires_grad, y.is_leaf, y._version > 0) == (True, False, True)
    assert (new is fn, type(new).__name__, y.grad_fn is new) == (False, "AsStridedBackward0", True)


def _add_one_under_no_grad(t):
    with torch.no_grad():
        t.add_(1)


@pytest.mark.clause("NOGRAD-18")
@pytest.mark.parametrize("view, target", VIEW_TARGETS)
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_in_place_on_views_inside_regenerates_grad_fn(device, view, target, kind):
    b = _base(device, kind)
    y = view(b)
    fn = y.grad_fn
    assert (fn is not None, y._is_view(), y.is_leaf) == (True, True, False)
    _add_one_under_no_grad(y if target == "y" else b)
    new = y.grad_fn
    assert (y.requires_grad, y.is_leaf, y._version > 0) == (True, False, True)
    assert (new is fn, type(new).__name__, y.grad_fn is new) == (False, "AsStridedBackward0", True)


# > NOGRAD-19: For a view `y` that is the first output of `b.split(1)`, `b.split([1, 1])`, `b.chunk(2)` or
# > `b.unbind()` (made with grad mode enabled, from a tensor `b` that requires grad, a leaf or a non-leaf), `y.add_(1)`
# > or `b.add_(1)` with grad mode disabled raises no error, but reading `y.grad_fn` afterwards raises RuntimeError
# > whose message contains "is a view and its base or another view of its base has been modified inplace".
@pytest.mark.clause("NOGRAD-19")
@pytest.mark.parametrize("view", MULTI_OUTPUT_VIEW_OPS.params())
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
@pytest.mark.parametrize("target", ["y", "b"])
def test_in_place_on_multi_output_view_inside_then_grad_fn_raises(device, view, kind, target):
    b = _base(device, kind)
    y = view(b)
    assert y.grad_fn is not None
    _add_one_under_no_grad(y if target == "y" else b)
    with raises(RuntimeError, REGENERATED_VIEW):
        y.grad_fn  # noqa: B018 - reading it is the operation


# > NOGRAD-92 (compile, until 2.4): Inside a compiled function, an in-place update under `torch.no_grad()` of a non-leaf
# > `y` that requires grad (`y = a * 1`; every one of `y[:] = v`, `y[0] = 5`, `y.add_(1)`, `y += 1`,
# > `torch.add(y, 1, out=y)`, `y.copy_(v)`, `y.mul_(2)`, `y.zero_()`, `y.fill_(7)`) raises no error and increases
# > `y._version`, and `y` stays a non-leaf that requires grad, but its `grad_fn` is replaced by a new node of type
# > `CopyBackwards`. Layer: AOTAutograd.
@pytest.mark.clause("NOGRAD-92")
@pytest.mark.parametrize("spelling", list(UPDATES))
def test_compiled_in_place_on_non_leaf_inside_records_copy_before_2_4(device, spelling, run):
    y = leaf(device) * 1
    fn = y.grad_fn
    run(_no_grad_update(spelling), y)
    assert (y.requires_grad, y.is_leaf, y.grad_fn is fn, type(y.grad_fn).__name__) == (
        True,
        False,
        False,
        "CopyBackwards",
    )
    assert y._version > 0


# > NOGRAD-93 (compile, 2.2-2.3): After the update of NOGRAD-92, for `a = [1, 2]` the gradient of `(y * [1, 10]).sum()`
# > with respect to `a` is `[0, 0]`: a silently wrong gradient (observed, not checked by its tests: eagerly, and
# > compiled on 2.1 and from 2.4, it is `[1, 10]`). Layer: AOTAutograd.
@pytest.mark.clause("NOGRAD-93")
@pytest.mark.parametrize("spelling", list(UPDATES))
def test_compiled_in_place_on_non_leaf_inside_loses_the_gradient_on_2_2_and_2_3(device, spelling, run):
    a = leaf(device)
    y = a * 1
    run(_no_grad_update(spelling), y)
    (y * torch.tensor([1.0, 10.0], device=device)).sum().backward()
    assert_values(a.grad, [0.0, 0.0], f"a.grad after a compiled {spelling} of y = a * 1 under no_grad")


INDEX_UPDATES = ("x[:] = v", "x[0] = 5")  # the members of UPDATES that assign through an index


# > NOGRAD-94 (inductor, 2.2-2.3): Compiled with inductor on 2.2 and 2.3, of the nine updates of NOGRAD-92 under
# > `torch.no_grad()` of a non-leaf `y = a * 1` (`a = [1, 2]`, a leaf that requires grad), only the index assignments
# > `y[:] = v` and `y[0] = 5` replace `y.grad_fn` with a new node of type `CopyBackwards`, and after them the gradient
# > of `(y * [1, 10]).sum()` with respect to `a` is `[0, 0]`, as with `aot_eager` (NOGRAD-93). The other seven
# > (`y.add_(1)`, `y += 1`, `torch.add(y, 1, out=y)`, `y.copy_(v)`, `y.mul_(2)`, `y.zero_()`, `y.fill_(7)`) leave `y`
# > its `grad_fn` object, as eagerly (NOGRAD-8), and the gradient is `[1, 10]`, as eagerly. None raises an error, and
# > `y` stays a non-leaf that requires grad. Layer: Inductor (with `aot_eager` all nine replace the node).
@pytest.mark.clause("NOGRAD-94")
@pytest.mark.parametrize("spelling", list(UPDATES))
def test_inductor_keeps_grad_fn_but_for_index_assignments_on_2_2_and_2_3(device, spelling, run):
    a = leaf(device)
    y = a * 1
    fn = y.grad_fn
    run(_no_grad_update(spelling), y)
    assert (y.requires_grad, y.is_leaf) == (True, False)
    replaced = spelling in INDEX_UPDATES
    assert (y.grad_fn is fn, type(y.grad_fn).__name__) == (
        (False, "CopyBackwards") if replaced else (True, "MulBackward0")
    )
    (y * torch.tensor([1.0, 10.0], device=device)).sum().backward()
    what = f"a.grad after {spelling} of y = a * 1 under no_grad, compiled with inductor"
    assert_values(a.grad, [0.0, 0.0] if replaced else [1.0, 10.0], what)


# > NOGRAD-9: `torch.enable_grad()` and `torch.set_grad_enabled(True)` inside a block that disabled grad mode enable it
# > again: operations there are recorded, and on leaving the inner block grad mode is disabled again. `torch.no_grad()`
# > (or `torch.set_grad_enabled(False)`) inside `torch.enable_grad()` disables it, and leaving restores it.
@pytest.mark.clause("NOGRAD-9")
@pytest.mark.parametrize("inner", list(ENABLING))
@pytest.mark.parametrize("outer", list(DISABLING))
def test_nesting(device, outer, inner):
    x = leaf(device)
    with DISABLING[outer]():
        with ENABLING[inner]():
            assert torch.is_grad_enabled()
            y = x * 2
        assert not torch.is_grad_enabled()
        z = x * 2
        with ENABLING[inner]():
            with DISABLING[outer]():
                assert not torch.is_grad_enabled()
            assert torch.is_grad_enabled()
    assert (y.requires_grad, y.grad_fn is not None) == (True, True)
    assert (z.requires_grad, z.grad_fn) == (False, None)


# > NOGRAD-10: `@torch.no_grad()` and `@torch.enable_grad()` used as decorators leave grad mode unchanged
# > when applied; the decorated function runs with grad mode disabled (enabled), and on return, also by an
# > exception, grad mode is what it was before the call. For a generator function the mode holds inside
# > the generator's body only, not in the caller between two `next()`.
@pytest.mark.clause("NOGRAD-10")
@pytest.mark.parametrize("deco", ["torch.no_grad()", "torch.enable_grad()"])
@pytest.mark.parametrize("outer", [True, False])
def test_decorators_with_parentheses(device, deco, outer):
    inside = deco == "torch.enable_grad()"
    with torch.set_grad_enabled(outer):
        make = torch.no_grad if deco == "torch.no_grad()" else torch.enable_grad

        @make()
        def f(x, fail=False):
            if fail:
                raise ValueError
            return x * 2, torch.is_grad_enabled()

        assert torch.is_grad_enabled() is outer
        r, mode = f(leaf(device))
        assert (mode, r.requires_grad) == (inside, inside)
        assert torch.is_grad_enabled() is outer
        with pytest.raises(ValueError):
            f(leaf(device), fail=True)
        assert torch.is_grad_enabled() is outer

        @make()
        def gen():
            yield torch.is_grad_enabled()
            yield torch.is_grad_enabled()

        it = gen()
        first = next(it)
        between = torch.is_grad_enabled()
        second = next(it)
        assert (first, between, second) == (inside, outer, inside)


# > NOGRAD-11: `@torch.no_grad` and `@torch.enable_grad` without parentheses (equivalently `torch.no_grad(f)`) also work
# > as decorators, with the effect of NOGRAD-10.
@pytest.mark.clause("NOGRAD-11")
@pytest.mark.parametrize("deco", ["torch.no_grad", "torch.enable_grad"])
def test_decorators_without_parentheses(device, deco):
    inside = deco == "torch.enable_grad"
    with torch.set_grad_enabled(not inside):

        def f(x):
            return x * 2, torch.is_grad_enabled()

        g = torch.no_grad(f) if deco == "torch.no_grad" else torch.enable_grad(f)
        assert callable(g) and not isinstance(g, torch.Tensor)
        r, mode = g(leaf(device))
        assert (mode, r.requires_grad) == (inside, inside)
        assert torch.is_grad_enabled() is (not inside)


# > NOGRAD-12: `@torch.no_grad` and `@torch.enable_grad` without parentheses raise `TypeError` when applied (the message
# > contains "takes 1 positional argument but 2 were given" for `no_grad`, "takes no arguments" for `enable_grad`).
@pytest.mark.clause("NOGRAD-12")
@pytest.mark.parametrize("deco", ["torch.no_grad", "torch.enable_grad"])
def test_decorators_without_parentheses_fail(device, deco):
    def f(x):
        return x * 2

    if deco == "torch.no_grad":
        with raises(TypeError, "takes 1 positional argument but 2 were given"):
            torch.no_grad(f)
    else:
        with raises(TypeError, "takes no arguments"):
            torch.enable_grad(f)


# > NOGRAD-13: `@torch.set_grad_enabled(False)` used as a decorator leaves grad mode unchanged when
# > applied; the decorated function runs with grad mode disabled, and after the call grad mode is what it was.
@pytest.mark.clause("NOGRAD-13")
def test_set_grad_enabled_decorator(device):
    with torch.enable_grad():

        @torch.set_grad_enabled(False)
        def f(x):
            return x * 2, torch.is_grad_enabled()

        assert torch.is_grad_enabled()
        r, mode = f(leaf(device))
        assert (mode, r.requires_grad) == (False, False)
        assert torch.is_grad_enabled()


# > NOGRAD-14: Applying `@torch.set_grad_enabled(False)` as a decorator disables grad mode at that moment and leaves it
# > disabled (the constructor sets the mode); the decorated function runs with grad mode disabled, and after a call grad
# > mode is still disabled.
@pytest.mark.clause("NOGRAD-14")
def test_set_grad_enabled_decorator_leaks(device):
    with torch.enable_grad():  # restores grad mode after the leak this clause states

        @torch.set_grad_enabled(False)
        def f(x):
            return x * 2, torch.is_grad_enabled()

        after_definition = torch.is_grad_enabled()
        r, mode = f(leaf(device))
        after_call = torch.is_grad_enabled()
    assert (after_definition, mode, r.requires_grad, after_call) == (False, False, False, False)


# > NOGRAD-15: Grad mode is thread-local: a thread started inside `torch.no_grad()` runs with grad mode
# > enabled, and its operations on a tensor that requires grad are recorded.
@pytest.mark.clause("NOGRAD-15")
def test_grad_mode_is_thread_local(device):
    x = leaf(device)
    seen = {}

    def work():
        seen["mode"] = torch.is_grad_enabled()
        seen["requires_grad"] = (x * 2).requires_grad

    with torch.no_grad():
        t = threading.Thread(target=work)
        t.start()
        t.join()
        assert not torch.is_grad_enabled()
    assert seen == {"mode": True, "requires_grad": True}


# > NOGRAD-16: `backward()` of a graph recorded with grad mode enabled runs inside `torch.no_grad()` and
# > accumulates the same gradients as outside it.
@pytest.mark.clause("NOGRAD-16")
def test_backward_inside_no_grad(device):
    x = leaf(device)
    y = (x * x).sum()
    with torch.no_grad():
        y.backward()
    assert_values(x.grad, [2.0, 4.0], "x.grad = 2 * x")


def _sgd_step(w):
    with torch.no_grad():
        w -= 0.25 * w.grad


# > NOGRAD-17: A leaf updated in place under `torch.no_grad()` takes part in graphs recorded afterwards: repeating
# > `loss.backward()`, `with torch.no_grad(): w -= lr * w.grad`, `w.grad = None` gives at each step the gradient at the
# > updated value. This is a training loop; `torch.optim.SGD` `step()` makes the same update with grad mode disabled.
@pytest.mark.clause("NOGRAD-17")
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_training_step_under_no_grad(device, run):
    w = torch.tensor([1.0, -2.0], device=device, requires_grad=True)
    grads, values = [], []
    step = run.function(_sgd_step)  # compiled once, called at every step
    for _ in range(3):
        loss = (w * w).sum()  # gradient 2 * w
        loss.backward()
        grads.append(w.grad.tolist())
        step(w)
        w.grad = None
        values.append(w.tolist())
    assert grads == [[2.0, -4.0], [1.0, -2.0], [0.5, -1.0]]
    assert values == [[0.5, -1.0], [0.25, -0.5], [0.125, -0.25]]
    assert (w.is_leaf, w.requires_grad) == (True, True)
    assert w._version >= 3  # three updates, each increases it (VERSION-2)


EVAL_MODULES = {
    "Linear": lambda d: torch.nn.Linear(2, 2, device=d),
    "Sequential(Linear, Dropout)": lambda d: torch.nn.Sequential(
        torch.nn.Linear(2, 2, device=d), torch.nn.Dropout(0.5)
    ),
    "BatchNorm1d": lambda d: torch.nn.BatchNorm1d(2, device=d),
}


# > NOGRAD-60: `module.eval()` and `module.train(False)` set `module.training` to False and leave grad mode as it was
# > (`torch.is_grad_enabled()` stays True) and the parameters' `requires_grad` as they were; the output of the module in
# > eval mode (for `nn.Linear`, an `nn.Sequential` of `nn.Linear` and `nn.Dropout`, and `nn.BatchNorm1d`) still requires
# > grad and has a `grad_fn`, and `backward()` from it fills the parameters' `.grad`. Only `torch.no_grad()` around the
# > call gives an output without `grad_fn` (NOGRAD-2).
@pytest.mark.clause("NOGRAD-60")
@pytest.mark.parametrize("switch", ["module.eval()", "module.train(False)"])
@pytest.mark.parametrize("module", list(EVAL_MODULES))
def test_eval_mode_is_not_no_grad(device, module, switch):
    m = EVAL_MODULES[module](device)
    m.eval() if switch == "module.eval()" else m.train(False)
    assert not m.training
    assert torch.is_grad_enabled()
    assert all(p.requires_grad for p in m.parameters())
    out = m(torch.ones(3, 2, device=device))
    assert out.requires_grad and out.grad_fn is not None
    out.sum().backward()
    assert all(p.grad is not None for p in m.parameters())


# Seeds, run as written (fixing only what stops them from running, as noted).


@pytest.mark.clause("NOGRAD-3", "REQGRAD-11")
def test_seed_ko_no_grad_block(device):
    # Korean seed, "no_grad() 블록 사용", verbatim (it runs as written; device added).
    with torch.no_grad():
        # 변수 선언
        x = torch.randn(5, device=device)

        # 값 변경
        x = torch.randn(5, device=device)

    # 역전파 확인
    y = x.sum()
    assert (x.requires_grad, y.requires_grad) == (False, False)
    with raises(RuntimeError, NO_GRAD_FN):
        y.backward()
    # print(x.grad) is never reached.


@pytest.mark.clause("NOGRAD-3", "REQGRAD-11")
def test_seed_ko_no_grad_block_is_irrelevant(device):
    # The same lines without the no_grad block fail the same way: torch.randn(5) never requires grad.
    x = torch.randn(5, device=device)
    x = torch.randn(5, device=device)
    y = x.sum()
    with raises(RuntimeError, NO_GRAD_FN):
        y.backward()


@pytest.mark.clause("NOGRAD-4", "NOGRAD-17")
@pytest.mark.only_devices("cpu")  # the seed snippet as written: values, on the default device
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_seed_ko_closing_bullet_no_grad_update_trains(device, run):
    # "위 방법들은 역전파를 수행하지 않으므로, 모델 학습에는 사용할 수 없습니다" is wrong for no_grad:
    # updating a parameter under no_grad is how a training step is written (torch.optim does it too).
    w = torch.tensor([3.0], device=device, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.5)
    (w * w).sum().backward()
    run(opt.step)  # runs its update with grad mode disabled
    assert (w.is_leaf, w.requires_grad, w.grad_fn) == (True, True, None)
    assert w._version > 0


def _optimizer_style_step(w, g):
    with torch.no_grad():
        w.sub_(0.1 * g)


def _compiled_optimizer_style_step_bump(device, run):
    w = leaf(device)
    run(_optimizer_style_step, w, torch.ones(2, device=device))
    assert (w.is_leaf, w.requires_grad, w.grad_fn) == (True, True, None)
    return w._version


# > NOGRAD-90 (compile, until 2.5): Inside a compiled function, `with torch.no_grad(): w.sub_(0.1 * g)` on a leaf `w`
# > that requires grad (an optimizer-style step) leaves `w` a leaf that requires grad with no `grad_fn` and increases
# > `w._version` by 1, as the same step does eagerly.
@pytest.mark.clause("NOGRAD-90")
def test_compiled_optimizer_style_step_counts_once_before_2_5(device, run):
    assert _compiled_optimizer_style_step_bump(device, run) == 1


# > NOGRAD-91 (compile, since 2.5): Inside a function compiled with `aot_eager`, the step of NOGRAD-90 increases
# > `w._version` by 2, where the same step run eagerly increases it by 1 (with Dynamo alone, `backend="eager"`, by 1:
# > the layer is AOTAutograd). Run on 2.1.2 and 2.4.1 (1) and 2.5.1, 2.9.1 (2), cpu and meta. With inductor the counts
# > are those of VERSION-101 and VERSION-102.
@pytest.mark.clause("NOGRAD-91")
def test_compiled_optimizer_style_step_counts_twice_since_2_5(device, run):
    assert _compiled_optimizer_style_step_bump(device, run) == 2
