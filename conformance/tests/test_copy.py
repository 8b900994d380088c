"""Conformance tests for spec/copy.md (`x.copy_(src)`)."""

import ast
import json
import subprocess
import sys
import warnings

import pytest
import torch

from conformance.harness.checks import NO_GRAD_FN, assert_values, by_mode, leaf, raises, same_storage

LEAF_IN_PLACE = "a leaf Variable that requires grad is being used in an in-place operation."
NO_DATA = "Cannot copy out of meta tensor; no data!"
COMPLEX_TO_REAL = "Casting complex values to real discards the imaginary part"


def copy(x, src):
    return x.copy_(src)


def copy_no_grad(x, src):
    with torch.no_grad():
        return x.copy_(src)


SOURCES = {
    "plain float": lambda d: torch.tensor([3.0, 4.0], device=d),
    "requires grad": lambda d: torch.tensor([3.0, 4.0], device=d, requires_grad=True),
    "int64": lambda d: torch.tensor([3, 4], device=d),
    "float64": lambda d: torch.tensor([3.0, 4.0], device=d, dtype=torch.float64),
    "scalar": lambda d: torch.tensor(3.0, device=d),
}


# > COPY-1: `x.copy_(src)` on a leaf `x` that requires grad, with grad mode on, raises RuntimeError whose
# > message contains "a leaf Variable that requires grad is being used in an in-place operation.", for each
# > of these `src`: a plain float tensor, one that requires grad, an int64 tensor, a float64 tensor, a
# > 0-dimensional tensor; `x._version` stays 0.
@pytest.mark.clause("COPY-1")
@pytest.mark.parametrize("source", list(SOURCES))
def test_copy_into_leaf_requiring_grad_raises(device, source, run):
    x = leaf(device)
    with raises(RuntimeError, LEAF_IN_PLACE):
        run(copy, x, SOURCES[source](device))
    assert (x._version, x.is_leaf, x.grad_fn) == (0, True, None)


@pytest.mark.clause("COPY-2")
def test_failed_copy_keeps_values(device, run):
    # > COPY-2: After the error of COPY-1 the values of `x` are unchanged.
    x = leaf(device)
    with raises(RuntimeError, LEAF_IN_PLACE):
        run(copy, x, torch.tensor([3.0, 4.0], device=device))
    assert_values(x, [1.0, 2.0], "x after the failed copy_")


# > COPY-3: Inside `torch.no_grad()` the same `x.copy_(src)` (each `src` of COPY-1) is allowed: it returns `x`
# > itself, bumps `x._version` by 1, and `x` stays a leaf that requires grad with no `grad_fn`, keeping its own
# > storage and dtype.
# > VERSION-97 (compile, until 2.4): Before 2.4, a compiled in-place update under `torch.no_grad()` of a leaf `x` that
# > requires grad counts once, as eagerly: `x.copy_(src)` (each `src` of COPY-1, as in COPY-3) and every indexed
# > assignment of INDEX-8 leave `x` a leaf that requires grad with no `grad_fn` (for `copy_`, with its own storage and
# > dtype) and `x._version` at 1; from 2.4 it is 2 (COPY-90, INDEX-91). Layer: AOTAutograd. The 2.4 change is not
# > located.
@pytest.mark.parametrize("bump", by_mode("COPY-3", "COPY-90", 1, 2, as_eager="VERSION-97"))
@pytest.mark.parametrize("source", list(SOURCES))
def test_copy_into_leaf_under_no_grad(device, source, bump, run):
    x = leaf(device)
    storage, src = x.untyped_storage()._cdata, SOURCES[source](device)
    out = run(copy_no_grad, x, src)
    assert out is x
    assert x.untyped_storage()._cdata == storage and not same_storage(x, src)
    assert (x._version, x.is_leaf, x.requires_grad, x.grad_fn) == (bump, True, True, None)
    assert x.dtype == torch.float32


@pytest.mark.clause("COPY-4")
@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.compiled_since("2.4", before="INPLACE-102", also_on="2.1 2.2", modes="inductor")  # returns from no_grad
def test_copy_under_no_grad_values(device, source, run):
    # > COPY-4: After COPY-3, `x` holds the values of `src`, and a graph built afterwards uses them.
    x = leaf(device)
    run(copy_no_grad, x, SOURCES[source](device))
    expected = [3.0, 3.0] if source == "scalar" else [3.0, 4.0]
    assert_values(x, expected, "x after copy_ under no_grad")
    (x * x).sum().backward()
    assert_values(x.grad, [2 * v for v in expected], "x.grad = 2 * new x")


# > COPY-5: `y.copy_(src)` on a non-leaf `y` that requires grad and is not a view (`y = a * 2`), with grad mode on,
# > raises no error, returns `y`, bumps `y._version` by 1, and gives `y` the `grad_fn` `CopyBackwards`; `y` stays a
# > non-leaf that requires grad. This holds whether `src` requires grad or not. (On a view: COPY-18.)
@pytest.mark.clause("COPY-5")
@pytest.mark.parametrize("src_requires_grad", [True, False])
def test_copy_into_non_leaf(device, src_requires_grad, run):
    a = leaf(device)
    y = a * 2
    assert not y._is_view()
    src = torch.tensor([3.0, 4.0], device=device, requires_grad=src_requires_grad)
    assert run(copy, y, src) is y
    assert (y._version, y.requires_grad, y.is_leaf, type(y.grad_fn).__name__) == (1, True, False, "CopyBackwards")


VIEWS_OF_NON_LEAF = {
    "b[1:3]": lambda b: b[1:3],
    "b.view(2, 2)": lambda b: b.view(2, 2),
    "b.view(2, 2).t()": lambda b: b.view(2, 2).t(),
    "b[0]": lambda b: b[0],
    "b.view(2, 2).diagonal()": lambda b: b.view(2, 2).diagonal(),
}


# > COPY-18: `y.copy_(src)` on a non-leaf view `y` that requires grad (with grad mode on), a view of `b = a * 1`
# > (`a` a leaf that requires grad) taken by `b[1:3]`, `b.view(2, 2)`, `b.view(2, 2).t()`, `b[0]` or
# > `b.view(2, 2).diagonal()`, raises no error and returns `y`; `y`'s `grad_fn` becomes `AsStridedBackward0`
# > (not `CopyBackwards`, nor the node of its view operation such as `SliceBackward0`), `b`'s `grad_fn` becomes
# > `CopySlices`, and `y._version` and `b._version` both go from 0 to 1; `y` stays a non-leaf that requires grad.
# > This holds whether `src` requires grad or not.
@pytest.mark.clause("COPY-18")
@pytest.mark.parametrize("src_requires_grad", [True, False])
@pytest.mark.parametrize("view", list(VIEWS_OF_NON_LEAF))
def test_copy_into_non_leaf_view(device, view, src_requires_grad, run):
    a = torch.tensor([1.0, 2.0, 3.0, 4.0], device=device, requires_grad=True)
    b = a * 1
    y = VIEWS_OF_NON_LEAF[view](b)
    assert y._is_view() and (y._version, b._version) == (0, 0)
    src = torch.full(y.shape, 9.0, device=device, requires_grad=src_requires_grad)
    assert run(copy, y, src) is y
    assert (type(y.grad_fn).__name__, type(b.grad_fn).__name__) == ("AsStridedBackward0", "CopySlices")
    assert (y._version, b._version, y.requires_grad, y.is_leaf) == (1, 1, True, False)


# > COPY-6: Backward through that `y` sends the gradient of `y` to `src` (when `src` requires grad) and a zero gradient
# > to the overwritten values: for `y = a * 2`, `a.grad` is a tensor of zeros, not `None`.
@pytest.mark.clause("COPY-6")
@pytest.mark.parametrize("src_requires_grad", [True, False])
def test_copy_into_non_leaf_gradient(device, src_requires_grad, run):
    a = leaf(device)
    y = a * 2
    src = torch.tensor([3.0, 4.0], device=device, requires_grad=src_requires_grad)
    run(copy, y, src)
    (y * torch.tensor([1.0, 10.0], device=device)).sum().backward()
    assert_values(a.grad, [0.0, 0.0], "a.grad (overwritten)")
    if src_requires_grad:
        assert_values(src.grad, [1.0, 10.0], "src.grad")
    else:
        assert src.grad is None


# > COPY-7: `t.copy_(src)` into a floating tensor `t` that does not require grad, from a `src` that requires grad, with
# > grad mode on, makes `t` require grad: `t` becomes a non-leaf with `grad_fn` `CopyBackwards`, and its gradient flows
# > to `src`. Into an integer tensor it raises no error, and `t` keeps `requires_grad=False`.
# > VERSION-96 (compile, until 2.5): these compiled steps do what their eager clauses say, `_version` included.
@pytest.mark.parametrize("int_bump", by_mode("COPY-7", "COPY-91", 1, 2, as_eager="VERSION-96"))
def test_copy_from_source_requiring_grad_into_plain_tensor(device, int_bump, run):
    t = torch.zeros(2, device=device)
    src = leaf(device)
    run(copy, t, src)
    assert (t.requires_grad, t.is_leaf, type(t.grad_fn).__name__, t._version) == (True, False, "CopyBackwards", 1)
    t.sum().backward()
    assert src.grad is not None and src.grad.shape == (2,)
    i = torch.zeros(2, dtype=torch.int64, device=device)
    run(copy, i, leaf(device))
    assert (i.requires_grad, i.grad_fn, i._version) == (False, None, int_bump)


BROADCAST = {
    (3,): [[1.0, 2.0, 3.0]] * 2,
    (1, 3): [[1.0, 2.0, 3.0]] * 2,
    (2, 1): [[1.0] * 3, [2.0] * 3],
    (): [[1.0] * 3] * 2,
}


def _source(shape, device, requires_grad=False):
    values = {(3,): [1.0, 2.0, 3.0], (1, 3): [[1.0, 2.0, 3.0]], (2, 1): [[1.0], [2.0]], (): 1.0}[shape]
    return torch.tensor(values, device=device, requires_grad=requires_grad)


# > COPY-8: `src` is broadcast to the shape of `x`: `x.copy_(src)` with `src` of shape `(3,)`, `(1, 3)`,
# > `(2, 1)` or `()` into `x` of shape `(2, 3)` raises no error and `x` keeps its shape.
@pytest.mark.clause("COPY-8")
@pytest.mark.parametrize("shape", list(BROADCAST), ids=str)
def test_copy_broadcasts_source(device, shape, run):
    x = torch.zeros(2, 3, device=device)
    run(copy, x, _source(shape, device))
    assert x.shape == (2, 3)


@pytest.mark.clause("COPY-9")
@pytest.mark.parametrize("shape", list(BROADCAST), ids=str)
def test_copy_broadcasts_source_values_and_gradient(device, shape, run):
    # > COPY-9: With the shapes of COPY-8, the values of `src` are repeated along the broadcast dimensions, and the
    # > gradient that reaches `src` through a non-leaf destination is summed over them (it has the shape of `src`).
    x = torch.zeros(2, 3, device=device)
    run(copy, x, _source(shape, device))
    assert_values(x, BROADCAST[shape], f"x after copy_ from shape {shape}")
    y = torch.zeros(2, 3, device=device, requires_grad=True) * 1
    src = _source(shape, device, requires_grad=True)
    run(copy, y, src)
    y.sum().backward()
    assert src.grad.shape == src.shape
    assert_values(src.grad, {(3,): [2.0] * 3, (1, 3): [[2.0] * 3], (2, 1): [[3.0], [3.0]], (): 6.0}[shape], "src.grad")


# > COPY-10: On a device that holds data (`cpu`, `cuda`), `x.copy_(src)` where `src` does not broadcast to the shape of
# > `x` raises `RuntimeError`: "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension
# > 1" for `x` of shape `(2, 3)` and `src` of shape `(2,)`; "The size of tensor a (2) must match the size of tensor b
# > (3) at non-singleton dimension 0" for `src` of shape `(3, 1)`; and "output with shape [3] doesn't match the
# > broadcast shape [2, 3]" for `x` of shape `(3,)` and `src` of shape `(2, 3)`. `x` keeps its shape and its `_version`.
NOT_BROADCASTABLE = [
    ((2, 3), (2,), "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1"),
    ((2, 3), (3, 1), "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    ((3,), (2, 3), "output with shape [3] doesn't match the broadcast shape [2, 3]"),
]


def _copy_not_broadcastable_raises(device, dest, src, fragment, run):
    x = torch.zeros(dest, device=device)
    if run.mode == "eager":
        refused = raises(RuntimeError, fragment)
    else:  # Dynamo's error, whose message changes between releases (COPY-92)
        refused = pytest.raises(torch._dynamo.exc.TorchRuntimeError)
    with refused:
        run(copy, x, torch.ones(src, device=device))
    assert x._version == 0
    assert x.shape == dest


@pytest.mark.parametrize("clause", by_mode("COPY-10", "COPY-92", None, None))
@pytest.mark.parametrize(("dest", "src", "fragment"), NOT_BROADCASTABLE, ids=str)
def test_copy_non_broadcastable_raises(device, dest, src, fragment, clause, run):
    _copy_not_broadcastable_raises(device, dest, src, fragment, run)


# > COPY-16 (since 2.1): On the `meta` device, `x.copy_(src)` where `src` does not broadcast to the shape of `x` raises
# > the same `RuntimeError` as on a device with data (COPY-10), and `x` keeps its shape and its `_version`.
@pytest.mark.parametrize("clause", by_mode("COPY-16", "COPY-93", None, None))
@pytest.mark.parametrize(("dest", "src", "fragment"), NOT_BROADCASTABLE, ids=str)
def test_copy_non_broadcastable_raises_on_meta(device, dest, src, fragment, clause, run):
    _copy_not_broadcastable_raises(device, dest, src, fragment, run)


# > COPY-17 (until 2.1): On the `meta` device, `x.copy_(src)` where `src` does not broadcast to the shape of `x` raises
# > no error.
@pytest.mark.clause("COPY-17")
@pytest.mark.parametrize(("dest", "src"), [(d, s) for d, s, _ in NOT_BROADCASTABLE], ids=str)
def test_copy_non_broadcastable_accepted_on_old_meta(device, dest, src, run):
    x = torch.zeros(dest, device=device)
    run(copy, x, torch.ones(src, device=device))
    assert x.shape == dest


# > COPY-11: `x.copy_(src)` keeps the dtype of `x` (float32 from int64, int64 from float32, float64 from bool, float32
# > from float64, float16 from float32) and bumps its `_version` by 1.
# > VERSION-96 (compile, until 2.5): these compiled steps do what their eager clauses say, `_version` included.
@pytest.mark.parametrize("bump", by_mode("COPY-11", "COPY-94", 1, 2, as_eager="VERSION-96"))
@pytest.mark.parametrize(
    ("x_dtype", "src_dtype"),
    [
        (torch.float32, torch.int64),
        (torch.int64, torch.float32),
        (torch.float64, torch.bool),
        (torch.float32, torch.float64),
        (torch.float16, torch.float32),
    ],
    ids=str,
)
def test_copy_keeps_dtype(device, x_dtype, src_dtype, bump, run):
    x = torch.zeros(2, device=device, dtype=x_dtype)
    run(copy, x, torch.ones(2, device=device, dtype=src_dtype))
    assert (x.dtype, x._version) == (x_dtype, bump)


@pytest.mark.clause("COPY-12")
@pytest.mark.parametrize(
    ("x_dtype", "src", "expected"),
    [
        (torch.float32, [1, 2], [1.0, 2.0]),
        (torch.int64, [1.7, -1.7], [1, -1]),
        (torch.float64, [True, False], [1.0, 0.0]),
        (torch.int32, [2.5, -0.5], [2, 0]),
    ],
    ids=str,
)
def test_copy_converts_values(device, x_dtype, src, expected, run):
    # > COPY-12: The values of `src` are converted to the dtype of `x`: to an integer dtype by truncation toward zero
    # > (`1.7 -> 1`, `-1.7 -> -1`, `-0.5 -> 0`); from bool to `1` and `0`.
    x = torch.zeros(2, device=device, dtype=x_dtype)
    run(copy, x, torch.tensor(src, device=device))
    assert_values(x, expected, f"{x_dtype} after copy_({src})")


# The real destinations of COPY-13: floating point and integer (bool is COPY-19 / COPY-20).
REAL_DTYPES = [
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.int64,
    torch.int32,
    torch.uint8,
    torch.int8,
]


def _copy_complex_warnings(device, dtype, src, run=None, always=False):
    """Copy the complex `src` into a zero tensor of `dtype` (through `run`, else eagerly); return it and the number of
    "Casting complex values to real" UserWarnings, with `torch.set_warn_always(always)` during the copy."""
    x, src = torch.zeros(len(src), device=device, dtype=dtype), torch.tensor(src, device=device)
    before = torch.is_warn_always_enabled()
    torch.set_warn_always(always)  # set back below: the harness checks that a test leaves it as it found it
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if run is None:
                copy(x, src)
            else:
                run(copy, x, src)
    finally:
        torch.set_warn_always(before)
    return x, sum(issubclass(w.category, UserWarning) and COMPLEX_TO_REAL in str(w.message) for w in caught)


# > COPY-13: Copying a complex `src` into an `x` of a real floating-point dtype (float16, bfloat16, float32, float64)
# > or an integer dtype (int64, int32, uint8, int8) keeps the real part ... and emits a UserWarning whose message
# > contains "Casting complex values to real discards the imaginary part" ... While `torch.set_warn_always(True)` is
# > on, the warning is emitted again at the second copy and later ones too.
# > COPY-95 (compile, until 2.15): Inside a compiled function, copying a complex `src` into an `x` of one of the dtypes
# > of COPY-13 keeps the real part and emits no warning, also with `torch.set_warn_always(True)` on: the "Casting
# > complex values to real discards the imaginary part" `UserWarning` of COPY-13 is not raised. Layer: Dynamo.
@pytest.mark.parametrize("warnings_per_copy", by_mode("COPY-13", "COPY-95", 1, 0))
@pytest.mark.parametrize("dtype", REAL_DTYPES, ids=str)
def test_copy_complex_into_real_warns(device, dtype, warnings_per_copy, run):
    for _ in range(2):
        x, seen = _copy_complex_warnings(device, dtype, [1 + 2j, 3 - 1j], run, always=True)
        assert seen == warnings_per_copy, f"{COMPLEX_TO_REAL!r}: expected {warnings_per_copy}, observed {seen}"
        assert x.dtype == dtype
        assert_values(x, [1, 3], "real part")


# > COPY-13: Copying a complex `src` into an `x` of a real floating-point dtype (float16, bfloat16, float32, float64) or
# > an integer dtype (int64, int32, uint8, int8) keeps the real part, converted to the dtype of `x` (`[1+2j, 3-1j]`
# > gives `[1, 3]`), and emits a `UserWarning` whose message contains "Casting complex values to real discards the
# > imaginary part" once per process: the warning is `TORCH_WARN_ONCE`, a single one for these dtypes together, so the
# > first such copy in a process warns, and later ones, into the same dtype or another of them, emit no warning. While
# > `torch.set_warn_always(True)` is on, the warning is emitted again at the second copy and later ones too.
@pytest.mark.clause("COPY-13")
@pytest.mark.parametrize("dtype", REAL_DTYPES, ids=str)
def test_copy_complex_into_real_warns_at_most_once(device, dtype):
    # In this process an earlier copy (another test, a trace) may have used the warning up: the first copy here may
    # warn or not; after it, none does (the fresh process of the next test sees the first warning).
    _copy_complex_warnings(device, dtype, [1 + 2j, 3 - 1j])
    for other in (dtype, torch.float32, torch.int64):
        x, seen = _copy_complex_warnings(device, other, [1 + 2j, 3 - 1j])
        assert seen == 0, f"a later copy into {other} emitted {seen} warning(s) {COMPLEX_TO_REAL!r}"
        assert_values(x, [1, 3], "real part")


# TORCH_WARN_ONCE's flag belongs to the process, and this one's may be used up: the counts come from a new Python
# process that imports torch and then forks once per sequence of copies, so that each sequence starts with the
# warning unused. It prints, for each sequence of dtype names, the number of warnings each copy emitted.
FRESH_PROCESS = """
import json, os, sys, warnings
import torch

device, sequences, message = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]


def counts(names):
    out = []
    for name in names:
        x = torch.zeros(2, dtype=getattr(torch, name), device=device)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            x.copy_(torch.tensor([1 + 2j, 3 - 1j], device=device))
        out.append(sum(message in str(w.message) for w in caught))
    return out


result = []
for names in sequences:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.write(write, json.dumps(counts(names)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        result.append(json.loads(pipe.read()))
    os.waitpid(pid, 0)
print(json.dumps(result))
"""


def _warnings_in_fresh_processes(device, sequences):
    names = [[str(dtype).removeprefix("torch.") for dtype in seq] for seq in sequences]
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS, device, json.dumps(names), COMPLEX_TO_REAL],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return ast.literal_eval(done.stdout.strip().splitlines()[-1])


# > COPY-13: ... the first such copy in a process warns, and later ones, into the same dtype or another of them, emit
# > no warning ...
@pytest.mark.clause("COPY-13")
def test_copy_complex_into_real_warns_once_per_process(device):
    sequences = [[dtype, dtype, torch.int64 if dtype.is_floating_point else torch.float32] for dtype in REAL_DTYPES]
    assert _warnings_in_fresh_processes(device, sequences) == [[1, 0, 0]] * len(REAL_DTYPES)


# > COPY-19 (since 2.4): Copying a complex `src` into a bool `x` gives True where the complex value is nonzero (its
# > real or its imaginary part is nonzero): `[2j, 0j, 0.5+0j]` gives `[True, False, True]`. It emits no "Casting
# > complex values to real discards the imaginary part" warning, also with `torch.set_warn_always(True)` on, and it
# > does not use up the warning of COPY-13: a copy into float32 after it, in a new process, still warns.
@pytest.mark.clause("COPY-19")
def test_copy_complex_into_bool_tests_nonzero(device):
    for always in (True, False):
        x, seen = _copy_complex_warnings(device, torch.bool, [2j, 0j, 0.5 + 0j], always=always)
        assert seen == 0, f"copy into bool (set_warn_always({always})) emitted {seen} warning(s)"
        assert_values(x, [True, False, True], "bool of [2j, 0j, 0.5+0j]")
    assert _warnings_in_fresh_processes(device, [[torch.bool, torch.bool, torch.float32]]) == [[0, 0, 1]]


# > COPY-20 (until 2.4): Copying a complex `src` into a bool `x` keeps the truth of the real part only:
# > `[2j, 0j, 0.5+0j]` gives `[False, False, True]`. It warns as in COPY-13: the same single warning, which a copy into
# > bool and one into a dtype of COPY-13 use up together, emitted again while `torch.set_warn_always(True)` is on.
@pytest.mark.clause("COPY-20")
def test_copy_complex_into_bool_keeps_real_part(device):
    for _ in range(2):
        x, seen = _copy_complex_warnings(device, torch.bool, [2j, 0j, 0.5 + 0j], always=True)
        assert seen == 1, f"copy into bool under set_warn_always(True) emitted {seen} warning(s)"
        assert_values(x, [False, False, True], "bool of the real parts of [2j, 0j, 0.5+0j]")
    sequences = [[torch.bool, torch.bool, torch.float32], [torch.float32, torch.bool]]
    assert _warnings_in_fresh_processes(device, sequences) == [[1, 0, 0], [1, 0]]


# > COPY-14: The gradient that reaches `src` through `y.copy_(src)` has the dtype of `src` (float64), while `y` keeps
# > its own dtype (float32).
@pytest.mark.clause("COPY-14")
@pytest.mark.compiled_since("2.3", before="COPY-97", devices="meta")  # on meta the step fails to compile
def test_copy_gradient_dtype(device, run):
    a = leaf(device)
    y = a * 1
    src = torch.tensor([3.0, 4.0], device=device, dtype=torch.float64, requires_grad=True)
    run(copy, y, src)
    assert y.dtype == torch.float32
    y.sum().backward()
    assert (src.grad.dtype, a.grad.dtype) == (torch.float64, torch.float32)


# > COPY-97 (compile, meta, until 2.3): On the `meta` device, before 2.3, the compiled `y.copy_(src)` of COPY-14
# > (`y = a * 1` of a float32 leaf `a` that requires grad, `src` a float64 leaf that requires grad) fails to compile: it
# > raises `torch._dynamo.exc.BackendCompilerFailed` (a `RuntimeError`) whose message contains "Creating a new Tensor
# > subclass FakeTensor but the raw Tensor object is already associated to a python object of type FakeTensor", and `y`
# > is left as it was: float32, `grad_fn` still `MulBackward0`, `_version` 0. On `cpu` the step compiles and COPY-14
# > holds. Layer: AOTAutograd (Dynamo alone, `backend="eager"`, compiles it; the error is raised while AOTAutograd
# > traces the joint forward and backward graph).
FAKE_REWRAP = (
    "Creating a new Tensor subclass FakeTensor but the raw Tensor object is already associated to a python object "
    "of type FakeTensor"
)


@pytest.mark.clause("COPY-97")
def test_compiled_copy_gradient_dtype_fails_on_meta_before_2_3(device, run):
    import torch._dynamo.exc

    a = leaf(device)
    y = a * 1
    src = torch.tensor([3.0, 4.0], device=device, dtype=torch.float64, requires_grad=True)
    with raises(RuntimeError, FAKE_REWRAP) as info:
        run(copy, y, src)
    assert isinstance(info.value, torch._dynamo.exc.BackendCompilerFailed)
    assert (y.dtype, type(y.grad_fn).__name__, y._version) == (torch.float32, "MulBackward0", 0)


# > COPY-15: `x.copy_(src)` keeps the device of `x`. Into a `meta` tensor from a `cpu` one it is accepted
# > (`x` stays on `meta`, `_version` bumps by 1); into a `cpu` tensor from a `meta` one it raises
# > NotImplementedError whose message contains "Cannot copy out of meta tensor; no data!", and `x._version`
# > stays 0.
# > VERSION-96 (compile, until 2.5): these compiled steps do what their eager clauses say, `_version` included.
@pytest.mark.parametrize("bumps", by_mode("COPY-15", "COPY-96", (1, 0), (2, 1), as_eager="VERSION-96"))
def test_copy_between_cpu_and_meta(device, bumps, run):
    meta_bump, failed_bump = bumps  # `_version` after the copy into meta, after the failed copy out of meta
    other = "cpu" if device == "meta" else "meta"
    x = torch.zeros(2, device=device)
    src = torch.tensor([1.0, 2.0], device=other)
    if device == "meta":
        assert run(copy, x, src) is x
        assert (x.device.type, x._version) == ("meta", meta_bump)
    else:
        with raises(NotImplementedError, NO_DATA):
            run(copy, x, src)
        assert (x.device.type, x._version) == (device, failed_bump)


# Seeds, run as written (fixing only what stops them from running, as noted).


@pytest.mark.clause("COPY-1")
def test_seed_ko_copy_method(device):
    # Korean seed, "copy_() 메서드 사용" (and method 3 of its example code). As written, torch.Variable:
    with raises(AttributeError, "has no attribute 'Variable'"):
        torch.Variable(torch.randn(5))
    # Fix 1, torch.autograd.Variable: a plain tensor, requires_grad=False. copy_ works, backward raises.
    x = torch.autograd.Variable(torch.randn(5, device=device))
    x.copy_(torch.randn(5, device=device))
    y = x.sum()
    with raises(RuntimeError, NO_GRAD_FN):
        y.backward()
    assert x.grad is None
    # Fix 2, a tensor that requires grad: copy_ itself raises.
    x = torch.randn(5, device=device, requires_grad=True)
    with raises(RuntimeError, LEAF_IN_PLACE):
        x.copy_(torch.randn(5, device=device))


@pytest.mark.clause("COPY-4")
def test_seed_ko_copy_method_corrected(device):
    # What the seed meant, and what prints tensor([1., 1., 1., 1., 1.]): copy under no_grad.
    x = torch.randn(5, device=device, requires_grad=True)
    with torch.no_grad():
        x.copy_(torch.arange(5.0, device=device))
    y = x.sum()
    y.backward()
    assert_values(x.grad, [1.0] * 5, "x.grad")
    assert_values(x, [0.0, 1.0, 2.0, 3.0, 4.0], "x")


@pytest.mark.clause("COPY-11", "COPY-15", "COPY-3")
def test_seed_ko_copy_does_not_update_metadata(device):
    # "copy_() 메서드는 ... 메타데이터를 자동으로 업데이트합니다": shape, dtype, device, storage are x's own.
    x = torch.zeros(2, 3, device=device, requires_grad=True)
    storage_before = x.untyped_storage()._cdata
    with torch.no_grad():
        x.copy_(torch.ones(3, device="cpu" if device == "meta" else device, dtype=torch.float64))
    assert (x.shape, x.dtype, x.device.type, x.requires_grad) == ((2, 3), torch.float32, device, True)
    assert x.untyped_storage()._cdata == storage_before
