"""Populations: the named sets of operations that quantified clauses range over.

Note [Populations]
------------------
A clause that quantifies ("every view operation", "any in-place spelling") names what it
quantifies over: a population of this module ("every operation of VIEW_OPS"). Its page
shows the members (``:::{population} VIEW_OPS`` renders their ids), and its tests
parametrize over exactly those members, so that each member's outcome is reported on its
own::

    # > VIEW-10: A view (every operation of VIEW_OPS) taken inside `torch.no_grad()` ...
    @pytest.mark.clause("VIEW-10")
    @pytest.mark.parametrize("view", VIEW_OPS.params())
    def test_view_taken_under_no_grad(device, view):
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=True)
        with torch.no_grad():
            v = view(x)
        ...

ids read ``test_view_taken_under_no_grad[cpu-x.t()]``. A member is ``(id, callable)``: the
id is the Python spelling the callable runs, on the input(s) the population's description
names. An exception found for one member is not hidden by dropping the member: it is named
in the clause, or stated by a clause of its own.

Members come from torch's own API and are checked against the installed torch: ``params()``
leaves out a member whose ``torch.Tensor`` method or ``torch`` function, as named in its id,
does not exist there (today every member exists on every release of the support window).
The callables import torch only when called (``torch`` below is a lazy stand-in), so this
module imports without torch, as the docs build needs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


class _LazyTorch:
    """``torch``, imported on first attribute access (the docs build has no torch)."""

    def __getattr__(self, name):
        import torch as real

        return getattr(real, name)


torch = _LazyTorch()

# ``x.name`` / ``t.name`` (a Tensor method or attribute) and ``torch.name`` in a member's id.
_METHOD = re.compile(r"\b[xtacov]\.([A-Za-z_]\w*)")
_FUNCTION = re.compile(r"\btorch\.([A-Za-z_]\w*)")


@dataclass(frozen=True)
class Population:
    name: str
    description: str  # one line: what the members are, and what input they take
    members: tuple[tuple[str, Callable], ...]

    def ids(self) -> list[str]:
        return [mid for mid, _ in self.members]

    def available(self) -> list[tuple[str, Callable]]:
        """The members whose Tensor methods and torch functions exist on the installed torch."""
        import torch as real

        def exists(mid: str) -> bool:
            return all(hasattr(real.Tensor, m) for m in _METHOD.findall(mid)) and all(
                hasattr(real, f) for f in _FUNCTION.findall(mid)
            )

        return [(mid, fn) for mid, fn in self.members if exists(mid)]

    def params(self) -> list:
        """``pytest.param(callable, id=member id)`` for each available member."""
        import pytest

        return [pytest.param(fn, id=mid) for mid, fn in self.available()]

    def without(self, *ids: str, name: str, description: str) -> Population:
        """A sub-population: these members left out (each must be a member)."""
        unknown = set(ids) - set(self.ids())
        if unknown:
            raise ValueError(f"{self.name} has no members {sorted(unknown)}")
        return Population(name, description, tuple(m for m in self.members if m[0] not in ids))


def check_each(population: Population, check: Callable[[Callable], None], raising: dict | None = None) -> None:
    """Run ``check(member)`` for every available member; fail once, naming every member that failed and why.
    A member of ``raising`` (id -> (exception type, message fragment)) must make ``check`` raise that instead.

    For a clause over the product of two populations: the test is parametrized over one of them and
    checks each member of the other with this, so that a failure still names the member.
    """
    failed = []
    for mid, fn in population.available():
        try:
            if raising and mid in raising:
                import pytest

                exc_type, fragment = raising[mid]
                with pytest.raises(exc_type, match=re.escape(fragment)):
                    check(fn)
            else:
                check(fn)
        except (AssertionError, pytest_fail()) as exc:
            failed.append(f"{population.name} member {mid}: {exc}")
    assert not failed, "\n".join(failed)


def pytest_fail() -> type:
    """pytest.raises's "DID NOT RAISE" exception (no Exception subclass)."""
    import pytest

    return pytest.fail.Exception


def _setitem(t, index, value):
    t[index] = value
    return t


def _iop(t, op, value):
    """Augmented assignment (``t += value`` ...) as an expression; returns the rebound name's tensor."""
    if op == "+=":
        t += value
    elif op == "-=":
        t -= value
    elif op == "*=":
        t *= value
    else:
        t /= value
    return t


def _v(t):
    """The value operand of a spelling: a tensor like ``t`` that does not require grad."""
    return torch.full_like(t.detach(), 0.5)


# The operands below are [True, False] and [0], made without `torch.tensor(data, device=...)`: inside a compiled
# step Dynamo does not turn such a tensor on `meta` into a fake tensor and fails (torch 2.1 to 2.13).
def _mask(t):
    return torch.arange(2, device=t.device) == 0


def _index(t):
    return torch.zeros(1, dtype=torch.long, device=t.device)


VIEW_OPS = Population(
    "VIEW_OPS",
    "Operations that return a view of their input (`_is_view()` True, `_base` the input, same storage), "
    "applied to a contiguous float tensor `x` of shape (2, 2); for split/chunk/unbind/tensor_split, their "
    "first output. Not members: `x.detach()` and `x.data` (share storage, not views), `x.real` (returns `x` "
    "itself for a real dtype), `x.view(dtype)` (a view of another dtype), `x.reshape`/`x.contiguous()` "
    "when they copy.",
    (
        ("x[0]", lambda x: x[0]),
        ("x[:, 1:]", lambda x: x[:, 1:]),
        ("x[:]", lambda x: x[:]),
        ("x[None]", lambda x: x[None]),
        ("x[..., 0]", lambda x: x[..., 0]),
        ("x.view(4)", lambda x: x.view(4)),
        ("x.view_as(x)", lambda x: x.view_as(x)),
        ("x.reshape(4)", lambda x: x.reshape(4)),
        ("x.flatten()", lambda x: x.flatten()),
        ("x.unflatten(1, (2, 1))", lambda x: x.unflatten(1, (2, 1))),
        ("x.t()", lambda x: x.t()),
        ("x.T", lambda x: x.T),
        ("x.mT", lambda x: x.mT),
        ("x.transpose(0, 1)", lambda x: x.transpose(0, 1)),
        ("x.swapaxes(0, 1)", lambda x: x.swapaxes(0, 1)),
        ("x.permute(1, 0)", lambda x: x.permute(1, 0)),
        ("x.movedim(0, 1)", lambda x: x.movedim(0, 1)),
        ("x.unsqueeze(0)", lambda x: x.unsqueeze(0)),
        ("x.squeeze()", lambda x: x.squeeze()),
        ("x.expand(3, 2, 2)", lambda x: x.expand(3, 2, 2)),
        ("x.narrow(1, 0, 1)", lambda x: x.narrow(1, 0, 1)),
        ("x.select(0, 1)", lambda x: x.select(0, 1)),
        ("x.diagonal()", lambda x: x.diagonal()),
        ("x.as_strided((2,), (1,))", lambda x: x.as_strided((2,), (1,))),
        ("x.unfold(1, 1, 1)", lambda x: x.unfold(1, 1, 1)),
        ("x[:, 1:].t()", lambda x: x[:, 1:].t()),
        ("x.split(1)[0]", lambda x: x.split(1)[0]),
        ("x.split([1, 1])[0]", lambda x: x.split([1, 1])[0]),
        ("x.chunk(2)[0]", lambda x: x.chunk(2)[0]),
        ("x.unbind()[0]", lambda x: x.unbind()[0]),
        ("x.tensor_split(2)[0]", lambda x: x.tensor_split(2)[0]),
    ),
)

NON_VIEW_OPS = Population(
    "NON_VIEW_OPS",
    "Differentiable out-of-place operations whose result is a new floating point tensor, not a view, "
    "applied to a float tensor `x` of shape (2, 2). Operations whose result shape depends on the values "
    "(`x[x > 1]`) are not members: meta tensors cannot run them.",
    (
        ("x * 2", lambda x: x * 2),
        ("x + x", lambda x: x + x),
        ("x - 1", lambda x: x - 1),
        ("x / 2", lambda x: x / 2),
        ("x.sin()", lambda x: x.sin()),
        ("x.exp()", lambda x: x.exp()),
        ("x.abs()", lambda x: x.abs()),
        ("x.clamp(0, 3)", lambda x: x.clamp(0, 3)),
        ("x.round()", lambda x: x.round()),
        ("x.sum()", lambda x: x.sum()),
        ("x.mean(0)", lambda x: x.mean(0)),
        ("x.norm()", lambda x: x.norm()),
        ("x.max()", lambda x: x.max()),
        ("x.cumsum(0)", lambda x: x.cumsum(0)),
        ("x.softmax(1)", lambda x: x.softmax(1)),
        ("x.clone()", lambda x: x.clone()),
        ("x.to(torch.float64)", lambda x: x.to(torch.float64)),
        ("x.t().contiguous()", lambda x: x.t().contiguous()),
        ("x.t().reshape(4)", lambda x: x.t().reshape(4)),
        ("x.flip(0)", lambda x: x.flip(0)),
        ("x.roll(1)", lambda x: x.roll(1)),
        ("x.repeat(2, 1)", lambda x: x.repeat(2, 1)),
        ("x[[1, 0]]", lambda x: x[[1, 0]]),
        ("x.index_select(0, i)", lambda x: x.index_select(0, _index(x))),
        ("x.masked_fill(x > 1, 0)", lambda x: x.masked_fill(x > 1, 0.0)),
        ("torch.where(x > 1, x, x * 2)", lambda x: torch.where(x > 1, x, x * 2)),
        ("torch.cat([x, x])", lambda x: torch.cat([x, x])),
        ("torch.stack([x, x])", lambda x: torch.stack([x, x])),
        ("x @ x", lambda x: x @ x),
    ),
)

BINARY_OPS = Population(
    "BINARY_OPS",
    "Differentiable operations of two float tensors `a` and `c` of shape (2,).",
    (
        ("a * c", lambda a, c: a * c),
        ("c * a", lambda a, c: c * a),
        ("a + c", lambda a, c: a + c),
        ("a - c", lambda a, c: a - c),
        ("a / c", lambda a, c: a / c),
        ("torch.add(a, c)", lambda a, c: torch.add(a, c)),
        ("torch.maximum(a, c)", lambda a, c: torch.maximum(a, c)),
        ("torch.atan2(a, c)", lambda a, c: torch.atan2(a, c)),
        ("a.pow(c)", lambda a, c: a.pow(c)),
        ("torch.lerp(a, c, 0.5)", lambda a, c: torch.lerp(a, c, 0.5)),
        ("torch.dot(a, c)", lambda a, c: torch.dot(a, c)),
        ("torch.stack([a, c])", lambda a, c: torch.stack([a, c])),
        ("torch.cat([a, c])", lambda a, c: torch.cat([a, c])),
        ("torch.where(a > c, a, c)", lambda a, c: torch.where(a > c, a, c)),
    ),
)

NON_DIFFERENTIABLE_RESULTS = Population(
    "NON_DIFFERENTIABLE_RESULTS",
    "Operations whose result never requires grad, applied to a float tensor `x` of shape (2,): results "
    "of an integer or bool dtype, `detach()`, and new tensors that take only the shape, dtype and device "
    "of `x`. (`x.nonzero()` is not a member: meta tensors cannot run it.)",
    (
        ("x.argmax()", lambda x: x.argmax()),
        ("x.argmin()", lambda x: x.argmin()),
        ("x.argsort()", lambda x: x.argsort()),
        ("x.max(0).indices", lambda x: x.max(0).indices),
        ("x.topk(1).indices", lambda x: x.topk(1).indices),
        ("x.sort().indices", lambda x: x.sort().indices),
        ("x > 1", lambda x: x > 1),
        ("x == x", lambda x: x == x),
        ("torch.eq(x, 1)", lambda x: torch.eq(x, 1)),
        ("x.isnan()", lambda x: x.isnan()),
        ("x.long()", lambda x: x.long()),
        ("x.int()", lambda x: x.int()),
        ("x.bool()", lambda x: x.bool()),
        ("x.to(torch.int32)", lambda x: x.to(torch.int32)),
        ("x.detach()", lambda x: x.detach()),
        ("torch.zeros_like(x)", lambda x: torch.zeros_like(x)),
        ("torch.ones_like(x)", lambda x: torch.ones_like(x)),
        ("torch.empty_like(x)", lambda x: torch.empty_like(x)),
        ("torch.full_like(x, 7)", lambda x: torch.full_like(x, 7.0)),
        ("torch.rand_like(x)", lambda x: torch.rand_like(x)),
        ("x.new_zeros(2)", lambda x: x.new_zeros(2)),
        ("x.new_ones(2)", lambda x: x.new_ones(2)),
        ("x.new_empty(2)", lambda x: x.new_empty(2)),
        ("x.new_full((2,), 7)", lambda x: x.new_full((2,), 7.0)),
    ),
)

SAVES_INPUT = Population(
    "SAVES_INPUT",
    "Operations that save their input `x` (a float tensor of shape (2,), values in [1, 2]) for backward, "
    "and not their result (`tools/autograd/derivatives.yaml`: the formula for `self` uses `self`).",
    (
        ("x * x", lambda x: x * x),
        ("torch.mul(x, x)", lambda x: torch.mul(x, x)),
        ("x.sin()", lambda x: x.sin()),
        ("x.cos()", lambda x: x.cos()),
        ("x.log()", lambda x: x.log()),
        ("x.pow(2)", lambda x: x.pow(2)),
        ("x.atan()", lambda x: x.atan()),
        ("x.log1p()", lambda x: x.log1p()),
        ("x.erf()", lambda x: x.erf()),
        ("x.abs()", lambda x: x.abs()),
        ("x.clamp(0, 1.5)", lambda x: x.clamp(0, 1.5)),
        ("torch.dot(x, x)", lambda x: torch.dot(x, x)),
    ),
)

SAVES_OUTPUT = Population(
    "SAVES_OUTPUT",
    "Operations that save their result for backward, and not their input `x` (a float tensor of shape (2,), "
    "values in [1, 2]; `tools/autograd/derivatives.yaml`: the formula uses `result`).",
    (
        ("x.exp()", lambda x: x.exp()),
        ("x.exp2()", lambda x: x.exp2()),
        ("x.expm1()", lambda x: x.expm1()),
        ("x.sigmoid()", lambda x: x.sigmoid()),
        ("x.tanh()", lambda x: x.tanh()),
        ("x.relu()", lambda x: x.relu()),
        ("x.sqrt()", lambda x: x.sqrt()),
        ("x.rsqrt()", lambda x: x.rsqrt()),
        ("x.reciprocal()", lambda x: x.reciprocal()),
        ("x.softmax(0)", lambda x: x.softmax(0)),
        ("x.log_softmax(0)", lambda x: x.log_softmax(0)),
    ),
)

INPLACE_SPELLINGS = Population(
    "INPLACE_SPELLINGS",
    "In-place updates of a float tensor `t` of shape (2,): methods with a trailing underscore, augmented "
    "assignments, assignments through an index, and a function called with `out=t`; `v` is a tensor of the "
    "same shape that does not require grad. Not members: `resize_`/`resize_as_`, `set_`, `apply_`/`map_`, "
    "in-place view operations such as `t_()`, and writes through `t.data`. Under torch.compile on `meta` before "
    "torch 2.15, `t[[0]] = 5` cannot be compiled (COMPILE-9): a test of one member is not-applicable there, a test "
    "that checks every member in one item checks that this one raises COMPILE-9's error.",
    (
        ("t.add_(1)", lambda t: t.add_(1)),
        ("t.add_(0)", lambda t: t.add_(0)),
        ("t.sub_(1)", lambda t: t.sub_(1)),
        ("t.mul_(2)", lambda t: t.mul_(2)),
        ("t.div_(2)", lambda t: t.div_(2)),
        ("t += 1", lambda t: _iop(t, "+=", 1)),
        ("t -= 1", lambda t: _iop(t, "-=", 1)),
        ("t *= 2", lambda t: _iop(t, "*=", 2)),
        ("t /= 2", lambda t: _iop(t, "/=", 2)),
        ("t.zero_()", lambda t: t.zero_()),
        ("t.fill_(7)", lambda t: t.fill_(7.0)),
        ("t.clamp_(0, 1)", lambda t: t.clamp_(0, 1)),
        ("t.neg_()", lambda t: t.neg_()),
        ("t.exp_()", lambda t: t.exp_()),
        ("t.pow_(2)", lambda t: t.pow_(2)),
        ("t.addcmul_(v, v)", lambda t: t.addcmul_(_v(t), _v(t))),
        ("t.lerp_(v, 0.5)", lambda t: t.lerp_(_v(t), 0.5)),
        ("t.masked_fill_(m, 0)", lambda t: t.masked_fill_(_mask(t), 0.0)),
        ("t.index_fill_(0, i, 0)", lambda t: t.index_fill_(0, _index(t), 0.0)),
        ("t.copy_(v)", lambda t: t.copy_(_v(t))),
        ("t[0] = 5", lambda t: _setitem(t, 0, 5.0)),
        ("t[:] = v", lambda t: _setitem(t, slice(None), _v(t))),
        ("t[[0]] = 5", lambda t: _setitem(t, [0], 5.0)),
        ("t[m] = 5", lambda t: _setitem(t, _mask(t), 5.0)),
        ("torch.add(t, 1, out=t)", lambda t: torch.add(t, 1, out=t)),
        ("torch.mul(t, 2, out=t)", lambda t: torch.mul(t, 2, out=t)),
    ),
)

INPLACE_RECORDED = INPLACE_SPELLINGS.without(
    "torch.add(t, 1, out=t)",
    "torch.mul(t, 2, out=t)",
    name="INPLACE_RECORDED",
    description="The members of INPLACE_SPELLINGS that autograd records on a non-leaf that requires grad "
    "(all but the `out=` spellings, which it refuses there).",
)

COPY_SPELLINGS = Population(
    "COPY_SPELLINGS",
    "The members of INPLACE_RECORDED whose autograd node is one of the hand-written nodes `CopyBackwards` "
    "and `CopySlices` rather than a generated `...BackwardN` node.",
    tuple(m for m in INPLACE_SPELLINGS.members if m[0] in ("t.copy_(v)", "t[0] = 5", "t[:] = v")),
)

# Every population by name. TENSOR_KINDS (conformance/harness/kinds.py) adds itself when that module is imported.
ALL = {
    p.name: p
    for p in (
        VIEW_OPS,
        NON_VIEW_OPS,
        BINARY_OPS,
        NON_DIFFERENTIABLE_RESULTS,
        SAVES_INPUT,
        SAVES_OUTPUT,
        INPLACE_SPELLINGS,
        INPLACE_RECORDED,
        COPY_SPELLINGS,
    )
}


def _sub_inplace(p, lr):
    """``p -= lr * p.grad`` as an expression (the augmented assignment updates ``p`` in place)."""
    p -= lr * p.grad
    return p


LOADSD_MODULES = Population(
    "LOADSD_MODULES",
    "Modules whose parameters and buffers `load_state_dict` and `state_dict` are run on, each built on the "
    "device of the run: `nn.Linear(2, 1)` (parameters `weight`, `bias`) and `nn.BatchNorm1d(2)` (parameters "
    "`weight`, `bias`; buffers `running_mean`, `running_var`, `num_batches_tracked`).",
    (
        ("nn.Linear(2, 1)", lambda device: torch.nn.Linear(2, 1, device=device)),
        ("nn.BatchNorm1d(2)", lambda device: torch.nn.BatchNorm1d(2, device=device)),
    ),
)

PARAM_UPDATE_SPELLINGS = Population(
    "PARAM_UPDATE_SPELLINGS",
    "In-place update steps of a leaf `p` that requires grad and has a `.grad` (an `nn.Parameter` of a "
    "module, or a plain leaf), with a learning rate `lr`; run with grad mode disabled.",
    (
        ("p.add_(p.grad, alpha=-lr)", lambda p, lr: p.add_(p.grad, alpha=-lr)),
        ("p -= lr * p.grad", _sub_inplace),
        ("p.sub_(lr * p.grad)", lambda p, lr: p.sub_(lr * p.grad)),
        ("p.copy_(p - lr * p.grad)", lambda p, lr: p.copy_(p - lr * p.grad)),
        ("p[:] = p - lr * p.grad", lambda p, lr: _setitem(p, slice(None), p - lr * p.grad)),
    ),
)

PARAM_NON_PARAMETER_VALUES = Population(
    "PARAM_NON_PARAMETER_VALUES",
    "Values that are neither an `nn.Parameter` nor `None`, made from a parameter `w` of shape (1, 2) on its "
    "device: plain tensors of five dtypes, one that requires grad, the result of an operation on `w`, "
    "`w.detach()`, and a list.",
    (
        ("torch.zeros(1, 2)", lambda w: torch.zeros(1, 2, device=w.device)),
        (
            "torch.zeros(1, 2, dtype=torch.float64)",
            lambda w: torch.zeros(1, 2, device=w.device, dtype=torch.float64),
        ),
        (
            "torch.zeros(1, 2, dtype=torch.float16)",
            lambda w: torch.zeros(1, 2, device=w.device, dtype=torch.float16),
        ),
        ("torch.zeros(1, 2, dtype=torch.int64)", lambda w: torch.zeros(1, 2, device=w.device, dtype=torch.int64)),
        ("torch.zeros(1, 2, dtype=torch.bool)", lambda w: torch.zeros(1, 2, device=w.device, dtype=torch.bool)),
        ("torch.zeros(1, 2, requires_grad=True)", lambda w: torch.zeros(1, 2, device=w.device, requires_grad=True)),
        ("w * 2", lambda w: w * 2),
        ("w.detach()", lambda w: w.detach()),
        ("[[1.0, 2.0]]", lambda w: [[1.0, 2.0]]),
    ),
)

ALL.update({p.name: p for p in (LOADSD_MODULES, PARAM_UPDATE_SPELLINGS, PARAM_NON_PARAMETER_VALUES)})


# Operands made from `arange` like `_mask` and `_index` above (`torch.tensor(data)` on `meta` fails to trace).
def _ia_t(x, first, n):
    """`t`: n consecutive values from `first` (7, 8, 9 / 8, 9 / 5, 6), float like `x`."""
    return torch.arange(n, dtype=x.dtype, device=x.device) + first


def _ia_mask(x):
    return torch.arange(3, device=x.device) % 2 == 0  # [True, False, True]


def _ia_idx(x):
    return torch.arange(2, device=x.device) * 2  # [0, 2]


INDEX_ASSIGNMENTS = Population(
    "INDEX_ASSIGNMENTS",
    "Indexed and sliced assignments to a float tensor `x` of shape (3,) holding [1, 2, 3]: `t` is a tensor "
    "that does not require grad, of the shape of the part assigned to (values 7, 8, 9 for `x[:]`/`x[...]`, "
    "8, 9 for `x[1:]`, 5, 6 for a mask or an index tensor), `mask` is [True, False, True] and `idx` is [0, 2].",
    (
        ("x[:] = t", lambda x: _setitem(x, slice(None), _ia_t(x, 7.0, 3))),
        ("x[...] = t", lambda x: _setitem(x, Ellipsis, _ia_t(x, 7.0, 3))),
        ("x[0] = 5.0", lambda x: _setitem(x, 0, 5.0)),
        ("x[1:] = t", lambda x: _setitem(x, slice(1, None), _ia_t(x, 8.0, 2))),
        ("x[mask] = 5.0", lambda x: _setitem(x, _ia_mask(x), 5.0)),
        ("x[mask] = t", lambda x: _setitem(x, _ia_mask(x), _ia_t(x, 5.0, 2))),
        ("x[idx] = 5.0", lambda x: _setitem(x, _ia_idx(x), 5.0)),
        ("x[idx] = t", lambda x: _setitem(x, _ia_idx(x), _ia_t(x, 5.0, 2))),
    ),
)

OUT_OF_PLACE_SPELLINGS = Population(
    "OUT_OF_PLACE_SPELLINGS",
    "Out-of-place arithmetic `y = op(x)` of a float tensor `x` of shape (2,) with a number, or with a tensor "
    "`t` of the same shape (holding 2) that does not require grad.",
    (
        ("x + 2", lambda x: x + 2),
        ("x + 2.0", lambda x: x + 2.0),
        ("2 + x", lambda x: 2 + x),
        ("x.add(2)", lambda x: x.add(2)),
        ("torch.add(x, 2)", lambda x: torch.add(x, 2)),
        ("x + t", lambda x: x + torch.full((2,), 2.0, device=x.device)),
        ("x - 2", lambda x: x - 2),
        ("x * 2", lambda x: x * 2),
        ("x / 2", lambda x: x / 2),
    ),
)

ALL.update({p.name: p for p in (INDEX_ASSIGNMENTS, OUT_OF_PLACE_SPELLINGS)})


def _full7(v):
    """The tensor operand `t` of a view update: 7, 8, 9, ... in the shape of `v`, not requiring grad."""
    return torch.arange(7.0, 7.0 + v.numel(), device=v.device).reshape(v.shape)


def _viadd(v):
    v += 1
    return v


def _vimul(v):
    v *= 2
    return v


VIEW_UPDATES = Population(
    "VIEW_UPDATES",
    "In-place updates of a view `v` (of any shape with at least one dimension): methods with a trailing "
    "underscore, augmented assignments and assignments through an index; `t` holds 7, 8, 9, ... in the shape "
    "of `v` and does not require grad.",
    (
        ("v.add_(1)", lambda v: v.add_(1)),
        ("v += 1", _viadd),
        ("v.mul_(2)", lambda v: v.mul_(2)),
        ("v *= 2", _vimul),
        ("v.copy_(t)", lambda v: v.copy_(_full7(v))),
        ("v.zero_()", lambda v: v.zero_()),
        ("v.fill_(7)", lambda v: v.fill_(7.0)),
        ("v[0] = 7", lambda v: _setitem(v, 0, 7.0)),
        ("v[...] = t", lambda v: _setitem(v, Ellipsis, _full7(v))),
    ),
)

MULTI_OUTPUT_VIEWS = ("x.split(1)[0]", "x.split([1, 1])[0]", "x.chunk(2)[0]", "x.unbind()[0]")

SINGLE_OUTPUT_VIEW_OPS = VIEW_OPS.without(
    *MULTI_OUTPUT_VIEWS,
    name="SINGLE_OUTPUT_VIEW_OPS",
    description="The members of VIEW_OPS whose view is not an output of a function that returns several "
    "views (all but the outputs of split, chunk and unbind; `x.tensor_split(2)[0]` is a member).",
)

MULTI_OUTPUT_VIEW_OPS = VIEW_OPS.without(
    *SINGLE_OUTPUT_VIEW_OPS.ids(),
    name="VIEW_OPS of split, chunk and unbind",
    description="The first outputs of split, chunk and unbind: the members of VIEW_OPS that are not in "
    "SINGLE_OUTPUT_VIEW_OPS (NOGRAD-19, INFER-22).",
)

WRITABLE_VIEW_OPS = VIEW_OPS.without(
    "x.expand(3, 2, 2)",
    name="WRITABLE_VIEW_OPS",
    description="The members of VIEW_OPS whose elements are distinct memory locations (all but "
    "`x.expand(3, 2, 2)`, an in-place update of which is refused as writing one location several times).",
)

WRITABLE_SINGLE_OUTPUT_VIEW_OPS = SINGLE_OUTPUT_VIEW_OPS.without(
    "x.expand(3, 2, 2)",
    name="WRITABLE_SINGLE_OUTPUT_VIEW_OPS",
    description="The members of both SINGLE_OUTPUT_VIEW_OPS and WRITABLE_VIEW_OPS.",
)

ALL.update(
    {p.name: p for p in (VIEW_UPDATES, SINGLE_OUTPUT_VIEW_OPS, WRITABLE_VIEW_OPS, WRITABLE_SINGLE_OUTPUT_VIEW_OPS)}
)

REBIND_TARGETS = Population(
    "REBIND_TARGETS",
    "What a name `x` that refers to a leaf `x` of shape (2,) that requires grad is rebound to (`x = ...`): "
    "fresh tensors (`v` is [3, 4]), results of differentiable operations of `x`, views of `x`, tensors that "
    "share its storage without being views, and results that do not require grad.",
    (
        ("torch.tensor(v)", lambda x: torch.tensor([3.0, 4.0], device=x.device)),
        (
            "torch.tensor(v, requires_grad=True)",
            lambda x: torch.tensor([3.0, 4.0], device=x.device, requires_grad=True),
        ),
        ("x + 1", lambda x: x + 1),
        ("x * 2", lambda x: x * 2),
        ("x.sin()", lambda x: x.sin()),
        ("x.detach()", lambda x: x.detach()),
        ("x.data", lambda x: x.data),
        ("x.clone()", lambda x: x.clone()),
        ("x[:]", lambda x: x[:]),
        ("x.view(2)", lambda x: x.view(2)),
        ("x.argmax()", lambda x: x.argmax()),
        ("x.new_zeros(2)", lambda x: x.new_zeros(2)),
    ),
)

ALL.update({REBIND_TARGETS.name: REBIND_TARGETS})

FACTORIES = Population(
    "FACTORIES",
    "Factory functions, called as `f(device, x, **kwargs)` with the keyword arguments of the clause "
    "(`requires_grad=True` ...): `torch` functions that create a tensor on `device`, and the `*_like` "
    "functions and `Tensor.new_*` methods of a prototype `x` (a float leaf of shape (2,) that requires grad).",
    (
        ("torch.randn(5)", lambda d, x, **k: torch.randn(5, device=d, **k)),
        ("torch.rand(5)", lambda d, x, **k: torch.rand(5, device=d, **k)),
        ("torch.tensor([1.0, 2.0])", lambda d, x, **k: torch.tensor([1.0, 2.0], device=d, **k)),
        ("torch.zeros(5)", lambda d, x, **k: torch.zeros(5, device=d, **k)),
        ("torch.ones(5)", lambda d, x, **k: torch.ones(5, device=d, **k)),
        ("torch.empty(5)", lambda d, x, **k: torch.empty(5, device=d, **k)),
        ("torch.full((5,), 2.0)", lambda d, x, **k: torch.full((5,), 2.0, device=d, **k)),
        ("torch.arange(5.0)", lambda d, x, **k: torch.arange(5.0, device=d, **k)),
        ("torch.zeros_like(x)", lambda d, x, **k: torch.zeros_like(x, **k)),
        ("torch.ones_like(x)", lambda d, x, **k: torch.ones_like(x, **k)),
        ("torch.empty_like(x)", lambda d, x, **k: torch.empty_like(x, **k)),
        ("torch.randn_like(x)", lambda d, x, **k: torch.randn_like(x, **k)),
        ("torch.full_like(x, 3.0)", lambda d, x, **k: torch.full_like(x, 3.0, **k)),
        ("x.new_zeros(3)", lambda d, x, **k: x.new_zeros(3, **k)),
        ("x.new_ones(3)", lambda d, x, **k: x.new_ones(3, **k)),
        ("x.new_empty(3)", lambda d, x, **k: x.new_empty(3, **k)),
        ("x.new_full((3,), 1.0)", lambda d, x, **k: x.new_full((3,), 1.0, **k)),
        ("x.new_tensor([1.0, 2.0])", lambda d, x, **k: x.new_tensor([1.0, 2.0], **k)),
    ),
)

ALL.update({FACTORIES.name: FACTORIES})


# Populations of the tensor pages (clone, copy, data, detach, indexing, inference_mode, views, version_counter, ...).


# Populations of the module pages (functional, grad, load_state_dict, no_grad, parameter_update, set, ...).

MODULES = Population(
    "MODULES",
    "Modules with parameters, built by `f(device)` on the device of the run: one or two parameters, with and "
    "without buffers, nested (`nn.Sequential`, parameter names such as `0.weight`), and parameters of one to "
    "three dimensions.",
    (
        ("nn.Linear(2, 1)", lambda d: torch.nn.Linear(2, 1, device=d)),
        ("nn.Linear(2, 1, bias=False)", lambda d: torch.nn.Linear(2, 1, bias=False, device=d)),
        ("nn.BatchNorm1d(2)", lambda d: torch.nn.BatchNorm1d(2, device=d)),
        ("nn.LayerNorm(2)", lambda d: torch.nn.LayerNorm(2, device=d)),
        ("nn.Conv1d(1, 2, 2)", lambda d: torch.nn.Conv1d(1, 2, 2, device=d)),
        ("nn.Embedding(3, 2)", lambda d: torch.nn.Embedding(3, 2, device=d)),
        (
            "nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))",
            lambda d: torch.nn.Sequential(
                torch.nn.Linear(2, 3, device=d), torch.nn.ReLU(), torch.nn.Linear(3, 1, device=d)
            ),
        ),
    ),
)


def _leaf(d):
    return torch.tensor([1.0, 2.0], device=d, requires_grad=True)


TENSORS = Population(
    "TENSORS",
    "Tensors of several kinds, made by `f(device)` on the device of the run: leaves with and without "
    "`requires_grad`, of float, integer, bool and complex dtypes, 0-dim and empty; an `nn.Parameter`; a non-leaf; "
    "a view; a detached tensor; a tensor made by the legacy `torch.autograd.Variable`.",
    (
        ("torch.tensor([1.0, 2.0])", lambda d: torch.tensor([1.0, 2.0], device=d)),
        ("torch.tensor([1.0, 2.0], requires_grad=True)", _leaf),
        ("torch.zeros(2, 3)", lambda d: torch.zeros(2, 3, device=d)),
        ("torch.arange(3)", lambda d: torch.arange(3, device=d)),
        ("torch.tensor([True])", lambda d: torch.tensor([True], device=d)),
        ("torch.zeros(2, dtype=torch.complex64)", lambda d: torch.zeros(2, dtype=torch.complex64, device=d)),
        ("torch.tensor(3.0)", lambda d: torch.tensor(3.0, device=d)),
        ("torch.empty(0)", lambda d: torch.empty(0, device=d)),
        ("nn.Parameter(torch.ones(2))", lambda d: torch.nn.Parameter(torch.ones(2, device=d))),
        ("x * 2", lambda d: _leaf(d) * 2),
        ("x[:1]", lambda d: _leaf(d)[:1]),
        ("x.detach()", lambda d: _leaf(d).detach()),
        ("torch.autograd.Variable(torch.ones(1))", lambda d: torch.autograd.Variable(torch.ones(1, device=d))),
    ),
)

ALL.update({p.name: p for p in (MODULES, TENSORS)})


# Populations drawn from torch's own operator database (op_db): conformance/harness/opdb.py. Their members are
# drawn from the installed torch when first asked for (importing op_db takes seconds), never at this import.
from .opdb import OPDB_INPLACE  # noqa: E402

ALL.update({OPDB_INPLACE.name: OPDB_INPLACE})
