"""Conformance tests of the in-place clauses over every in-place operation of torch's operator database.

The population OPDB_INPLACE (conformance/harness/opdb.py) is drawn from the installed torch's op_db; each test
takes its members through ``@pytest.mark.population`` (conformance/harness/opdb_plugin.py: all of them when
results are written, a fixed sample of 40 otherwise). ``op(device)`` gives a fresh copy ``x`` of the member's
float32 sample input (a leaf that does not require grad) and ``update(t)``, the in-place variant with the
sample's other arguments. The clauses are on spec/inplace.md and spec/version_counter.md.
"""

import pytest
import torch

from conformance.harness.checks import assert_values
from conformance.harness.modes import OPDB_COMPILED_UNSPECIFIED
from conformance.harness.opdb import OPDB_INPLACE

# op_db's dropout2d/dropout3d samples are unbatched: torch warns about how it reads their shape.
pytestmark = pytest.mark.filterwarnings("ignore:dropout[23]d:UserWarning")

LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."
OUT_ERROR = (
    "functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad"
)
RESIZE_ERROR = "cannot resize variables that require grad"

# The exceptions the clauses name (found by running the population on every release 2.0.1 .. 2.15.0).
# Not differentiable: no leaf check; accepted on a leaf that requires grad, and counted.
NOT_DIFFERENTIABLE = ("logical_not_", "logical_and_", "logical_or_", "logical_xor_")
# Their op_db sample has p=0: `F.dropout(x, p=0, inplace=True)` returns `x` without touching it.
UNTOUCHED = (
    "nn.functional.dropout_",
    "nn.functional.dropout2d_",
    "nn.functional.alpha_dropout_",
    "nn.functional.feature_alpha_dropout_.with_train",
    "nn.functional.feature_alpha_dropout_.without_train",
)
# Refuse any tensor that requires grad, also under no_grad (VERSION-41 .. VERSION-43 for their version counts).
RESIZE = ("resize_", "resize_as_")
# Named by INPLACE-80 as stated by INPLACE-82 / INPLACE-83 (its message changed in 2.11): not run over here.
LDEXP = ("ldexp_",)


def _no_grad(update):
    def step(x):
        with torch.no_grad():
            return update(x)

    return step


def _version_increase(op, device, run) -> int:
    x, update = op(device)
    before = x._version
    run(update, x)
    return x._version - before


# > INPLACE-80: With grad mode enabled, the update of a leaf `x` that requires grad by every member of the population
# > `OPDB_INPLACE` (listed above) raises `RuntimeError` whose message contains "a leaf Variable that requires grad is
# > being used in an in-place operation", and `x` stays a leaf without `grad_fn` at the same `_version`. ...
@pytest.mark.clause("INPLACE-80")
@pytest.mark.population(OPDB_INPLACE, without=LDEXP)
def test_opdb_inplace_on_leaf_requiring_grad(device, op, run):
    x, update = op(device)
    x.requires_grad_()
    before = x._version
    if op.id in NOT_DIFFERENTIABLE or op.id in UNTOUCHED:
        result = run(update, x)
        assert result is x and x.is_leaf and x.requires_grad and x.grad_fn is None, f"{op.id}: accepted as is"
        increase = x._version - before
        assert (increase == 0) if op.id in UNTOUCHED else (increase > 0), f"{op.id}: _version +{increase}"
        return
    with pytest.raises(RuntimeError) as info:
        run(update, x)
    expected = RESIZE_ERROR if op.id in RESIZE else LEAF_ERROR
    assert expected in str(info.value), f"{op.id}: {info.value}"
    assert x._version == before and x.is_leaf and x.grad_fn is None


def _ldexp_on_leaf(device, run):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        run(lambda x, other: x.ldexp_(other), x, torch.tensor([1.0, 2.0], device=device))
    assert x._version == 0 and x.is_leaf and x.grad_fn is None
    return str(info.value)


# > INPLACE-82: In the case of INPLACE-80, `x.ldexp_(other)` raises `RuntimeError` whose message contains "functions
# > with out=... arguments don't support automatic differentiation, but one of the arguments requires grad", and not the
# > message of INPLACE-80; `x` keeps its `_version`.
@pytest.mark.clause("INPLACE-82")
def test_ldexp_on_leaf_raises_out_error(device, run):
    message = _ldexp_on_leaf(device, run)
    assert OUT_ERROR in message and LEAF_ERROR not in message, message


# > INPLACE-83: In the case of INPLACE-80, `x.ldexp_(other)` raises `RuntimeError` whose message contains "a leaf
# > Variable that requires grad is being used in an in-place operation"; `x` keeps its `_version`.
@pytest.mark.clause("INPLACE-83")
def test_ldexp_on_leaf_raises_leaf_error(device, run):
    message = _ldexp_on_leaf(device, run)
    assert LEAF_ERROR in message, message


# > INPLACE-81: Inside `torch.no_grad`, the update of a leaf `x` that requires grad by every member of `OPDB_INPLACE`
# > (listed above) is accepted: it returns `x` itself, `x` stays a leaf that requires grad and has no `grad_fn`, and
# > `x._version` increases, except for the members of INPLACE-80 with `p=0`, which leave it unchanged (VERSION-80). ...
@pytest.mark.clause("INPLACE-81")
@pytest.mark.population(OPDB_INPLACE)
@pytest.mark.compiled_since("2.4", before="INPLACE-102", also_on="2.1 2.2", modes="inductor")  # returns from no_grad
def test_opdb_inplace_under_no_grad_on_leaf(device, op, run):
    x, update = op(device)
    x.requires_grad_()
    before = x._version
    step = _no_grad(update)
    if op.id in RESIZE:
        with pytest.raises(RuntimeError, match=RESIZE_ERROR):
            run(step, x)
        assert x._version == before
        return
    result = run(step, x)
    assert result is x, f"{op.id}: returns another tensor"
    assert x.is_leaf and x.requires_grad and x.grad_fn is None, f"{op.id}: {x.is_leaf=} {x.requires_grad=}"
    increase = x._version - before
    assert (increase == 0) if op.id in UNTOUCHED else (increase > 0), f"{op.id}: _version +{increase}"


# > INPLACE-84: On a tensor that does not require grad, with grad mode enabled, the update by every member of
# > `OPDB_INPLACE` (listed above) is accepted: it returns the tensor itself, which stays a leaf that does not require
# > grad and has no `grad_fn`. There is no exception.
@pytest.mark.clause("INPLACE-84")
@pytest.mark.population(OPDB_INPLACE)
def test_opdb_inplace_on_tensor_not_requiring_grad(device, op, run):
    x, update = op(device)
    result = run(update, x)
    assert result is x, f"{op.id}: returns another tensor"
    assert x.is_leaf and not x.requires_grad and x.grad_fn is None


# > VERSION-80: With grad mode enabled, the update of a tensor that does not require grad by every member of
# > `OPDB_INPLACE` increases its `_version`, the in-place view operations (`t_`, `transpose_`, `squeeze_`, `unsqueeze_`,
# > `as_strided_`) included. The exceptions: `nn.functional.dropout_`, `nn.functional.dropout2d_`,
# > `nn.functional.alpha_dropout_`, `nn.functional.feature_alpha_dropout_.with_train` and
# > `nn.functional.feature_alpha_dropout_.without_train`, whose op_db sample has `p=0`, leave it unchanged
# > (`F.dropout(x, p=0, inplace=True)` returns `x` without touching it). `resize_` and `resize_as_` are left to
# > VERSION-41, VERSION-42 and VERSION-43 (the sample of `resize_as_` has the shape of `x`).
@pytest.mark.clause("VERSION-80")
@pytest.mark.population(OPDB_INPLACE, without=RESIZE)
@pytest.mark.compiled_since("2.5", before="VERSION-101 VERSION-103", modes="inductor")  # uncounted updates
def test_opdb_inplace_increases_version(device, op, run):
    increase = _version_increase(op, device, run)
    if op.id in UNTOUCHED:
        assert increase == 0, f"{op.id}: _version +{increase}"
    else:
        assert increase > 0, f"{op.id}: _version +{increase}, expected an increase"


# > VERSION-81: By how much one update of VERSION-80 by a member of `OPDB_INPLACE` increases `_version`. Recorded for
# > every member. (Observed on every release from 2.0.1 to 2.15.0: by 1, except `nn.functional.dropout3d_`, by 2: its
# > unbatched sample is unsqueezed and squeezed back in place, and 0 for the members with `p=0`.)
@pytest.mark.clause("VERSION-81")
@pytest.mark.population(OPDB_INPLACE, without=RESIZE)
def test_opdb_inplace_version_increase_size(device, op, observe, run):
    observe(op.id, _version_increase(op, device, run))


# Compiled, as written and as the population calls them (harness/modes.MEMBER_DIVERGENCES makes their items of the
# clauses above not-applicable where the clauses below say what they do instead).
def _member(member_id: str, device: str):
    return dict(OPDB_INPLACE.members)[member_id](device)


def _as_written(update):
    """``update`` as ``member(device)`` gives it, for a step written out: (device) -> (x, update)."""

    def make(device):
        x, t = torch.full((5, 5), 2.0, device=device), torch.tensor(2.0, device=device)
        return x, (lambda x: update(x, t))

    return make


# > INPLACE-96: On `meta`, with grad mode enabled, the compiled steps `F.selu(x, inplace=True)`, `x.square_()` and
# > `x.true_divide_(t)` ... on a leaf `x` that requires grad are accepted ...: the step returns `x`, which stays a
# > leaf that requires grad and has no `grad_fn`, and `x._version` increases by 1. The same holds for the members
# > `nn.functional.selu_`, `square_` and `true_divide_` of `OPDB_INPLACE`.
@pytest.mark.clause("INPLACE-96")
@pytest.mark.parametrize(
    "make",
    [
        pytest.param(_as_written(lambda x, t: torch.nn.functional.selu(x, inplace=True)), id="F.selu(x, inplace=True)"),
        pytest.param(_as_written(lambda x, t: x.square_()), id="x.square_()"),
        pytest.param(_as_written(lambda x, t: x.true_divide_(t)), id="x.true_divide_(t)"),
        *(
            pytest.param(lambda device, m=m: _member(m, device), id=m)
            for m in ("nn.functional.selu_", "square_", "true_divide_")
        ),
    ],
)
def test_compiled_update_of_meta_leaf_accepted(device, make, run):
    x, update = make(device)
    x.requires_grad_()
    result = run(update, x)
    assert result is x, "returns another tensor"
    assert (x.is_leaf, x.requires_grad, x.grad_fn) == (True, True, None)
    assert x._version == 1, f"_version {x._version}, expected 1"


# > INPLACE-97: The compiled step `x.polygamma_(n)` fails to compile: on a tensor `x` that does not require grad (with
# > grad mode enabled), and on a leaf `x` that requires grad inside `torch.no_grad()`, calling it raises
# > `torch._dynamo.exc.BackendCompilerFailed` ... whose message contains "Found a custom (non-ATen) operator" and
# > "aten::polygamma_", and `x` keeps its `_version` ... So do the members `polygamma_.polygamma_n_0` to
# > `polygamma_.polygamma_n_4` of `OPDB_INPLACE`.
@pytest.mark.clause("INPLACE-97")
@pytest.mark.parametrize(
    "make",
    [
        *(pytest.param(_as_written(lambda x, t, n=n: x.polygamma_(n)), id=f"x.polygamma_({n})") for n in range(5)),
        *(
            pytest.param(lambda device, n=n: _member(f"polygamma_.polygamma_n_{n}", device), id=f"n_{n}")
            for n in range(5)
        ),
    ],
)
@pytest.mark.parametrize("leaf_under_no_grad", [False, True], ids=["not requiring grad", "leaf under no_grad"])
def test_compiled_polygamma_fails_to_compile(device, make, leaf_under_no_grad, run):
    from torch._dynamo.exc import BackendCompilerFailed

    x, update = make(device)
    if leaf_under_no_grad:
        x.requires_grad_()
        update = _no_grad(update)
    with pytest.raises(BackendCompilerFailed) as info:
        run(update, x)
    message = str(info.value)
    assert "Found a custom (non-ATen) operator" in message and "aten::polygamma_" in message, message
    assert x._version == 0


def _what_it_does(run, step, x) -> str:
    before = x._version
    try:
        result = run(step, x)
    except Exception as exc:  # what it raises is the observation
        return f"raises {type(exc).__name__}"
    state = f"is x: {result is x}, leaf: {x.is_leaf}, requires grad: {x.requires_grad}"
    return f"accepted ({state}), _version +{x._version - before}"


# > INPLACE-98 (UNSPECIFIED): What the compiled update by the members of `OPDB_INPLACE` in `OPDB_COMPILED_UNSPECIFIED`
# > (listed below this clause) does in the cases of INPLACE-80, INPLACE-81, INPLACE-84 and VERSION-80, before 2.8.
# > Recorded per member and case: whether it is accepted and how `_version` changes, or the exception. (Observed: on
# > some of 2.1 to 2.7 and of `cpu` and `meta` each fails to compile, raises `AssertionError` or
# > `InternalTorchDynamoError`, leaves `_version` unchanged, or refuses the update under `torch.no_grad()` as if on a
# > leaf outside it; the dropout family and `rrelu_` differ on 2.1 only, the comparisons and `logical_*_` on `meta` on
# > 2.1 and 2.2, `resize_` on 2.1 and 2.2, `conj_physical_` on 2.1 and 2.4, the in-place ops that change `x`'s shape or
# > strides up to 2.7. Dynamo breaks the graph at those when they change an input ("Inplace op on input tensor") and
# > runs them eagerly; from 2.8 also when they are called as the population calls them, `torch.Tensor.t_(x)`
# > (pytorch/pytorch#150573, fixing #129673). From 2.8 every member holds as those clauses say.)
@pytest.mark.clause("INPLACE-98")
@pytest.mark.parametrize("member", OPDB_COMPILED_UNSPECIFIED)
def test_compiled_opdb_update_before_2_8(device, member, run, observe):
    cases = {
        "on a leaf that requires grad": (True, lambda update: update),
        "on a leaf that requires grad, under no_grad": (True, _no_grad),
        "on a tensor that does not require grad": (False, lambda update: update),
    }
    for case, (requires_grad, form) in cases.items():
        x, update = _member(member, device)
        x.requires_grad_(requires_grad)
        observe(f"{member}, {case}", _what_it_does(run, form(update), x))


ZERO_DIM_FILLS = {
    "x.zero_()": lambda x: x.zero_(),
    "x.fill_(5.0)": lambda x: x.fill_(5.0),
    "x.index_fill_(0, i, 5.0)": lambda x: x.index_fill_(0, torch.tensor([0], device=x.device), 5.0),
}


def _add_no_grad_returned(x, y):
    with torch.no_grad():
        return x.add_(y)


def _copy_no_grad_returned(x, y):
    with torch.no_grad():
        return x.copy_(y)


def _add_no_grad_then_returned(x, y):
    with torch.no_grad():
        x.add_(y)
    return x


# > INPLACE-102: On 2.3, compiled with inductor, a step that updates in place, under `torch.no_grad()`, a leaf `x` that
# > requires grad from a tensor `y` and returns `x` (`with torch.no_grad(): return x.add_(y)`, `return x.copy_(y)`, or
# > `x.add_(y)` in the block and `return x` after it) raises `torch._dynamo.exc.BackendCompilerFailed` when it is first
# > called (an `AssertionError` of AOTAutograd's backward graph), and `x` keeps its values. So do the steps of COPY-4,
# > of INPLACE-81 and of PUPD-1 to PUPD-4, which return the updated leaf. On 2.2 and from 2.4 the steps compile; with
# > `backend="aot_eager"` they compile on 2.3. Layer: Inductor.
@pytest.mark.clause("INPLACE-102")
@pytest.mark.parametrize(
    "step",
    [_add_no_grad_returned, _copy_no_grad_returned, _add_no_grad_then_returned],
    ids=["return x.add_(y)", "return x.copy_(y)", "x.add_(y); return x"],
)
def test_inductor_no_grad_update_returned_fails_on_2_3(device, step, run):
    x, y = torch.tensor([1.0, 2.0], device=device, requires_grad=True), torch.tensor([3.0, 4.0], device=device)
    with pytest.raises(torch._dynamo.exc.BackendCompilerFailed):
        run(step, x, y)
    assert_values(x, [1.0, 2.0], "x after the refused step")


# > INPLACE-101: On 2.1, compiled with inductor, on `cpu`, a step that fills a 0-dimensional tensor in place
# > (`x.zero_()`, `x.fill_(5.0)`, `x.index_fill_(0, i, 5.0)` for `x = torch.tensor(3.0)` that does not require grad)
# > raises `NameError` whose message contains "is not defined": the code inductor generates reads a buffer it never
# > made. So do the op_db members `zero_`, `fill_` and `index_fill_` in the cases of INPLACE-84 and VERSION-81. From 2.2
# > the steps compile. Layer: Inductor.
@pytest.mark.clause("INPLACE-101")
@pytest.mark.parametrize("fill", list(ZERO_DIM_FILLS))
def test_inductor_fill_of_zero_dim_tensor_fails_on_2_1(device, fill, run):
    x = torch.tensor(3.0, device=device)
    with pytest.raises(NameError, match="is not defined"):
        run(ZERO_DIM_FILLS[fill], x)
