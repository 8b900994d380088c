"""Conformance tests for spec/version_counter.md (the version counter and saved tensors).

Each test quotes the clause it proves.
"""

import pytest
import torch

from conformance.harness.checks import SAVED_MODIFIED, assert_values, leaf, raises

SECOND_TIME = "Trying to backward through the graph a second time"


def plain(device, values=(1.0, 2.0)):
    return torch.tensor(list(values), device=device)


NEW = {
    "torch.tensor(...)": lambda d: plain(d),
    "torch.tensor(..., requires_grad=True)": lambda d: leaf(d),
    "torch.zeros(2)": lambda d: torch.zeros(2, device=d),
    "torch.empty(2)": lambda d: torch.empty(2, device=d),
    "x * 2 (x requires grad)": lambda d: leaf(d) * 2,
    "x + 1 (x at version 2)": None,
    "x.clone() (x at version 2)": None,
}


def _bumped_twice(device):
    x = plain(device)
    x.add_(1)
    x.mul_(2)
    assert x._version == 2
    return x


# > VERSION-1: A newly created tensor has `_version` 0: one made by a factory function (`torch.tensor`,
# > `torch.zeros`, `torch.empty`), with or without `requires_grad=True`, and every result of an out-of-place
# > operation, including `clone()`, whatever the version of its inputs.
@pytest.mark.clause("VERSION-1")
@pytest.mark.parametrize("how", list(NEW))
def test_new_tensor_starts_at_version_0(device, how):
    if how == "x + 1 (x at version 2)":
        t = _bumped_twice(device) + 1
    elif how == "x.clone() (x at version 2)":
        t = _bumped_twice(device).clone()
    else:
        t = NEW[how](device)
    assert t._version == 0


def _update(t, spelling, device):
    if spelling == "t.add_(1)":
        t.add_(1)
    elif spelling == "t += 1":
        t += 1
    elif spelling == "t *= 2":
        t *= 2
    elif spelling == "t[0] = 5":
        t[0] = 5.0
    elif spelling == "t[:] = v":
        t[:] = torch.tensor([5.0, 6.0], device=device)
    elif spelling == "t[[0]] = 5":
        t[[0]] = 5.0
    elif spelling == "t.copy_(v)":
        t.copy_(torch.tensor([5.0, 6.0], device=device))
    elif spelling == "t.zero_()":
        t.zero_()
    elif spelling == "t.fill_(7)":
        t.fill_(7.0)
    elif spelling == "torch.add(t, 1, out=t)":
        torch.add(t, 1, out=t)
    elif spelling == "t.add_(0)":
        t.add_(0)
    else:
        raise AssertionError(spelling)


SPELLINGS = [
    "t.add_(1)",
    "t += 1",
    "t *= 2",
    "t[0] = 5",
    "t[:] = v",
    "t[[0]] = 5",
    "t.copy_(v)",
    "t.zero_()",
    "t.fill_(7)",
    "torch.add(t, 1, out=t)",
    "t.add_(0)",
]


# > VERSION-2: Every in-place update adds exactly 1 to `_version`, also one that leaves the values as they
# > were (`t.add_(0)`), and `k` updates add `k`, whatever the spelling (`t.add_(1)`, `t += 1`, `t *= 2`,
# > `t[0] = v`, `t[:] = v`, `t[[0]] = v`, `t.copy_(v)`, `t.zero_()`, `t.fill_(v)`, `torch.add(t, 1, out=t)`).
@pytest.mark.clause("VERSION-2")
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_each_update_adds_one(device, spelling):
    t = plain(device)
    for k in (1, 2, 3):
        _update(t, spelling, device)
        assert t._version == k


# > VERSION-3: Operations that do not write into a tensor leave its `_version` as it was: reading it, an
# > out-of-place operation on it, `clone()`, making a view of it, `requires_grad_()`; `torch.add(x, 1, out=o)`
# > adds 1 to the `_version` of `o` only.
@pytest.mark.clause("VERSION-3")
def test_non_writing_operations_keep_version(device):
    x = plain(device)
    x.add_(1)
    _ = x + 1, x * 2, x.sin(), x.sum(), x.clone(), x[0], x.view(2), x.tolist() if device != "meta" else None
    x.requires_grad_()
    assert x._version == 1
    y = plain(device)
    o = torch.empty(2, device=device)
    torch.add(y, 1, out=o)
    assert (y._version, o._version) == (0, 1)


VIEWS = {
    "x[0]": lambda x: x[0],
    "x[1:]": lambda x: x[1:],
    "x.view(2)": lambda x: x.view(2),
    "x.unsqueeze(0)": lambda x: x.unsqueeze(0),
    "x.reshape(2)": lambda x: x.reshape(2),
    "x[0:][0:]": lambda x: x[0:][0:],
}


# > VERSION-4: A view (`x[0]`, `x[1:]`, `x.view(2)`, `x.unsqueeze(0)`, `x.reshape(2)` of a contiguous `x`, a
# > view of a view) shares one counter with its base and with every other view of that base: a view made
# > after `k` updates of the base reads `k`, and an update through any of them adds 1 to all.
@pytest.mark.clause("VERSION-4")
@pytest.mark.parametrize("view", list(VIEWS))
def test_views_share_the_counter(device, view):
    x = plain(device)
    x.add_(1)
    x.add_(1)
    v = VIEWS[view](x)
    other = x[0:1]
    assert (x._version, v._version, other._version) == (2, 2, 2)
    v.mul_(2)
    assert (x._version, v._version, other._version) == (3, 3, 3)
    other.zero_()
    x.add_(1)
    assert (x._version, v._version, other._version) == (5, 5, 5)


# > VERSION-5: `_version` cannot be assigned: `x._version = n` raises `AttributeError` whose message
# > contains "'_version' of" and "is not writable".
@pytest.mark.clause("VERSION-5")
def test_version_is_read_only(device):
    x = plain(device)
    with pytest.raises(AttributeError) as info:
        x._version = 5
    assert "'_version' of" in str(info.value) and "is not writable" in str(info.value), str(info.value)
    assert x._version == 0


def _bump_under_no_grad(t):
    with torch.no_grad():
        t.add_(1)


# > VERSION-6: `x * y` (both tensors) saves `y` when `x` requires grad and `x` when `y` requires grad: updating
# > a saved input in place after the forward makes `backward()` raise `RuntimeError` whose message contains
# > "one of the variables needed for gradient computation has been modified by an inplace operation"; when `y`
# > does not require grad, `x` is not saved and updating it does not make `backward()` raise.
@pytest.mark.clause("VERSION-6")
@pytest.mark.parametrize(
    ("y_requires_grad", "modified", "raises_"),
    [(True, "x", True), (True, "y", True), (False, "y", True), (False, "x", False)],
)
def test_mul_saves_the_other_input(device, y_requires_grad, modified, raises_):
    x = leaf(device)
    y = torch.tensor([3.0, 4.0], device=device, requires_grad=y_requires_grad)
    loss = (x * y).sum()
    _bump_under_no_grad(x if modified == "x" else y)
    if raises_:
        with raises(RuntimeError, SAVED_MODIFIED):
            loss.backward()
    else:
        loss.backward()
        assert x.grad is not None


NOTHING_SAVED = {
    "x + y": lambda x, y: x + y,
    "x - y": lambda x, y: x - y,
    "torch.add(x, y)": lambda x, y: torch.add(x, y),
    "x * 3": lambda x, y: x * 3 + y,
    "x / 2": lambda x, y: x / 2 + y,
}


# > VERSION-7: `x + y`, `x - y`, `torch.add(x, y)`, and `x * c`, `x / c` with a Python number `c` save no
# > input: updating `x` and `y` in place after the forward, and updating the result in place (`z.add_(1)`),
# > does not make `backward()` raise.
@pytest.mark.clause("VERSION-7")
@pytest.mark.parametrize("op", list(NOTHING_SAVED))
@pytest.mark.parametrize("modified", ["inputs", "output"])
def test_ops_that_save_nothing(device, op, modified):
    x, y = leaf(device), leaf(device, (3.0, 4.0))
    z = NOTHING_SAVED[op](x, y)
    if modified == "inputs":
        _bump_under_no_grad(x)
        _bump_under_no_grad(y)
    else:
        z.add_(1)
    z.sum().backward()
    assert x.grad is not None and y.grad is not None


# > VERSION-10: The gradients are then those of the values at the time of the forward: for `(x + y).sum()`
# > all ones for both, for `(x - y).sum()` ones and minus ones, for `(x * 3 + y).sum()` threes and ones.
@pytest.mark.clause("VERSION-10")
@pytest.mark.parametrize(
    ("op", "gx", "gy"),
    [("x + y", [1.0, 1.0], [1.0, 1.0]), ("x - y", [1.0, 1.0], [-1.0, -1.0]), ("x * 3", [3.0, 3.0], [1.0, 1.0])],
)
def test_gradients_after_updating_unsaved_inputs(device, op, gx, gy):
    x, y = leaf(device), leaf(device, (3.0, 4.0))
    z = NOTHING_SAVED[op](x, y)
    with torch.no_grad():
        x.mul_(10)
        y.mul_(10)
    z.sum().backward()
    assert_values(x.grad, gx, f"x.grad of ({op}).sum()")
    assert_values(y.grad, gy, f"y.grad of ({op}).sum()")


SAVES_OUTPUT = {
    "x.exp()": torch.exp,
    "x.sigmoid()": torch.sigmoid,
    "x.tanh()": torch.tanh,
    "x.relu()": torch.relu,
    "x.sqrt()": torch.sqrt,
}
SAVES_INPUT = {
    "x.sin()": torch.sin,
    "x.cos()": torch.cos,
    "x.log()": torch.log,
    "x.pow(2)": lambda x: x.pow(2),
}


def _modify_output(out, how):
    if how == "out.mul_(1) (recorded)":
        out.mul_(1)
        return out
    copy = out * 1  # keep the graph of `out` reachable, then change `out` behind it
    with torch.no_grad():
        out.mul_(1)
    return copy


# > VERSION-8: `exp`, `sigmoid`, `tanh`, `relu` and `sqrt` save their result, not their input: updating the
# > input in place after the forward does not make `backward()` raise, and updating the result in place
# > (recorded, or under `torch.no_grad()`) makes it raise the error of VERSION-6.
@pytest.mark.clause("VERSION-8")
@pytest.mark.parametrize("op", list(SAVES_OUTPUT))
@pytest.mark.parametrize("how", ["input", "out.mul_(1) (recorded)", "out.mul_(1) under no_grad"])
def test_ops_that_save_their_result(device, op, how):
    x = leaf(device)
    out = SAVES_OUTPUT[op](x)
    if how == "input":
        _bump_under_no_grad(x)
        out.sum().backward()
        assert x.grad is not None
    else:
        final = _modify_output(out, how)
        with raises(RuntimeError, SAVED_MODIFIED):
            final.sum().backward()


# > VERSION-9: `sin`, `cos`, `log` and `pow(2)` save their input, not their result: updating the input in
# > place after the forward makes `backward()` raise the error of VERSION-6, and updating the result in place
# > does not.
@pytest.mark.clause("VERSION-9")
@pytest.mark.parametrize("op", list(SAVES_INPUT))
@pytest.mark.parametrize("how", ["input", "out.mul_(1) (recorded)", "out.mul_(1) under no_grad"])
def test_ops_that_save_their_input(device, op, how):
    x = leaf(device)
    out = SAVES_INPUT[op](x)
    if how == "input":
        _bump_under_no_grad(x)
        with raises(RuntimeError, SAVED_MODIFIED):
            out.sum().backward()
    else:
        _modify_output(out, how).sum().backward()
        assert x.grad is not None


# > VERSION-11: After `backward()` without `retain_graph=True` (or `torch.autograd.grad(...)` without it),
# > a second `backward()` through a graph whose nodes saved tensors (`(x * x).sum()`, `x.exp().sum()`) raises
# > `RuntimeError` whose message contains "Trying to backward through the graph a second time".
@pytest.mark.clause("VERSION-11")
@pytest.mark.parametrize("op", ["(x * x).sum()", "x.exp().sum()", "x.sin().sum()"])
@pytest.mark.parametrize("first", ["loss.backward()", "torch.autograd.grad(loss, x)"])
def test_second_backward_raises(device, op, first):
    x = leaf(device)
    loss = {
        "(x * x).sum()": lambda: (x * x).sum(),
        "x.exp().sum()": lambda: x.exp().sum(),
        "x.sin().sum()": lambda: x.sin().sum(),
    }[op]()
    if first == "loss.backward()":
        loss.backward()
    else:
        torch.autograd.grad(loss, x)
    with raises(RuntimeError, SECOND_TIME):
        loss.backward()


# > VERSION-12: With `retain_graph=True` the next `backward()` through the same graph is accepted; one without
# > it after that frees the graph, and a third raises the error of VERSION-11.
@pytest.mark.clause("VERSION-12")
def test_retain_graph_allows_one_more(device):
    x = leaf(device)
    loss = (x * x).sum()
    loss.backward(retain_graph=True)
    loss.backward(retain_graph=True)
    loss.backward()
    with raises(RuntimeError, SECOND_TIME):
        loss.backward()


# > VERSION-13: Gradients of repeated `backward()` calls accumulate: after two `backward()` of
# > `(x * x).sum()` at `x = [1, 2]` (the first with `retain_graph=True`) `x.grad` is `[4, 8]`.
@pytest.mark.clause("VERSION-13")
def test_retain_graph_accumulates(device):
    x = leaf(device)
    loss = (x * x).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    assert_values(x.grad, [4.0, 8.0], "x.grad after two backward() of (x * x).sum()")


# > VERSION-14: A graph of additions and subtractions of tensors and numbers (`(x + x).sum()`, `(x - y).sum()`,
# > `(x + 3).sum()`) can be differentiated again without `retain_graph=True`: the second `backward()` raises no
# > error.
@pytest.mark.clause("VERSION-14")
@pytest.mark.parametrize("op", ["(x + x).sum()", "(x - y).sum()", "(x + 3).sum()"])
def test_second_backward_without_saved_tensors(device, op):
    x, y = leaf(device), leaf(device, (3.0, 4.0))
    loss = {
        "(x + x).sum()": lambda: (x + x).sum(),
        "(x - y).sum()": lambda: (x - y).sum(),
        "(x + 3).sum()": lambda: (x + 3).sum(),
    }[op]()
    loss.backward()
    loss.backward()
    assert x.grad is not None


PACKED = {
    "x * y": (lambda x, y: x * y, 2),
    "x * x": (lambda x, y: x * x, 2),
    "x.exp()": (lambda x, y: x.exp(), 1),
    "x.sin()": (lambda x, y: x.sin(), 1),
    "x + y": (lambda x, y: x + y, 0),
    "x * 3": (lambda x, y: x * 3, 0),
}


# > VERSION-15: Inside `torch.autograd.graph.saved_tensors_hooks(pack, unpack)`, `pack` is called once for each
# > tensor an operation saves, during the forward (`x * y` with both requiring grad: 2 calls; `x * x`: 2;
# > `x.exp()`: 1; `x.sin()`: 1; `x + y` and `x * 3`: none), and `unpack` once for each of them during
# > `backward()`.
@pytest.mark.clause("VERSION-15")
@pytest.mark.parametrize("op", list(PACKED))
def test_saved_tensor_hooks_calls(device, op):
    calls = []

    def pack(t):
        calls.append("pack")
        return t

    def unpack(t):
        calls.append("unpack")
        return t

    f, n = PACKED[op]
    x, y = leaf(device), leaf(device, (3.0, 4.0))
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = f(x, y).sum()
    assert calls == ["pack"] * n
    out.backward()
    assert calls == ["pack"] * n + ["unpack"] * n


# > VERSION-16: When `pack` returns a clone (`pack = lambda t: t.clone()`, `unpack = lambda t: t`), updating
# > the saved input in place after the forward does not make `backward()` raise.
@pytest.mark.clause("VERSION-16")
@pytest.mark.parametrize("op", ["(x * x).sum()", "x.sin().sum()"])
def test_packing_a_clone_makes_update_harmless(device, op):
    x = leaf(device)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        loss = (x * x).sum() if op == "(x * x).sum()" else x.sin().sum()
    with torch.no_grad():
        x.mul_(10)
    loss.backward()
    assert x.grad is not None


# > VERSION-17: The gradient is then that of the values at the time of the forward: `[2, 4]` for
# > `(x * x).sum()` at `x = [1, 2]` after `x.mul_(10)`.
@pytest.mark.clause("VERSION-17")
def test_packing_a_clone_gives_forward_time_gradient(device):
    x = leaf(device)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        loss = (x * x).sum()
    with torch.no_grad():
        x.mul_(10)
    loss.backward()
    assert_values(x.grad, [2.0, 4.0], "x.grad from the packed clone (x at forward time was [1, 2])")


# > VERSION-18: The autograd notes' sentence "if you're using in-place functions and not seeing any errors, you
# > can be sure that the computed gradients are correct" does not hold for in-place functions applied through
# > `.data`: with `x = [0, 0]`, `o = x.exp()`, `o.data.zero_()` raises no error and the gradient of `o.sum()`
# > is `[0, 0]` instead of `[1, 1]`; `x.data.mul_(10)` after `(x * x).sum()` at `x = [1, 2]` gives `[20, 40]`
# > instead of `[2, 4]`.
@pytest.mark.clause("VERSION-18")
@pytest.mark.parametrize("case", ["exp result", "mul input"])
def test_docs_sentence_counterexample(device, case):
    if case == "exp result":
        x = leaf(device, (0.0, 0.0))
        o = x.exp()
        o.data.zero_()
        o.sum().backward()
        assert_values(x.grad, [0.0, 0.0], "x.grad (correct: exp(0) = [1, 1])")
    else:
        x = leaf(device)
        loss = (x * x).sum()
        x.data.mul_(10)
        loss.backward()
        assert_values(x.grad, [20.0, 40.0], "x.grad (correct: [2, 4])")


# Seeds, run as written (fixing only what stops them from running, as noted).


@pytest.mark.clause("VERSION-2")
@pytest.mark.parametrize("method", ["add_", "copy_"])
def test_seed_ko_inplace_metadata_is_the_version(device, method):
    # Korean seed, methods 2 and 3. As written they call torch.Variable, which does not exist:
    with raises(AttributeError, "has no attribute 'Variable'"):
        torch.Variable(torch.randn(5))
    # Fixed to run with torch.autograd.Variable (a plain tensor that does not require grad). The "metadata"
    # that the in-place operation updates is the version counter; backward() still cannot run, because x
    # never required grad.
    x = torch.autograd.Variable(torch.randn(5, device=device))
    if method == "add_":
        x.add_(1)
    else:
        x.copy_(torch.randn(5, device=device))
    assert x._version == 1
    y = x.sum()
    with raises(RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn"):
        y.backward()
