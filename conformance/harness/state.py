"""Process-wide torch state that a test must leave as it found it: snapshot, compare, restore.

The guard (``torch_global_state_guard`` in plugin.py) takes a :func:`snapshot` before and after every test;
:func:`check` names each changed kind as '<kind>: <before> -> <after>' and puts back exactly what changed
(:func:`restore`), leaving no mode or guard of its own behind.

Note [What the guard covers, and how]
-------------------------------------
Each kind is read with the cheapest getter torch has (C bindings, module attributes; nothing that runs an op,
creates a tensor or initialises a device), so a snapshot costs a few microseconds. A kind whose getter is missing
from the installed torch is left out; ``KINDS`` lists what this torch covers. Kind: read with / put back with.

- torch function mode stack: ``_C._len_torch_function_stack`` + ``_get_function_stack_at`` (DeviceContext modes
  count as the default device) / ``__exit__`` of the leaked top mode (else ``_C._pop_torch_function_stack``)
  until the stack is a prefix of the old one, then ``_push_on_torch_function_stack`` for what is missing.
- default device: ``torch._GLOBAL_DEVICE_CONTEXT`` (2.0: the context; later: ``.device_context`` of a
  thread-local), ``torch.utils._device.CURRENT_DEVICE`` (2.1+) and the DeviceContexts on the function stack /
  the stack mended as above and both globals set back; never ``set_default_device``, which pushes a mode.
- torch dispatch mode stack: ``_C._len_torch_dispatch_stack`` + ``_get_dispatch_stack_at`` and the
  ``torch.utils._python_dispatch._is_in_*`` flags / as the function stack, then the flags (and dynamo's copy).
- saved tensors hooks: ``_C._autograd._top_saved_tensors_default_hooks`` / ``_pop_saved_tensors_default_hooks``
  until the top is the old one.
- saved tensors hooks disabled: ``_saved_tensors_hooks_get_disabled_error_message`` / ``..._enable``/``_disable``.
- forward AD level: ``torch.autograd.forward_ad._current_level`` / ``forward_ad.exit_dual_level()``.
- inference mode: ``torch.is_inference_mode_enabled`` / see Note [Restoring inference mode].
- grad mode, forward grad mode, multithreaded backward, view replay: ``torch.is_grad_enabled``,
  ``_C._is_fwd_grad_enabled``, ``_C._is_multithreading_enabled``, ``_C._is_view_replay_enabled`` / ``_C._set_*``.
- autocast (enabled and dtype on cpu, cuda, and mps where present; cache enabled): ``torch.is_autocast_enabled``
  and ``get_autocast_dtype`` per device (2.4+; before: the ``_cpu``/``_gpu`` functions) / ``set_autocast_*``,
  then, outside autocast, its nesting back to 0 and its cache cleared.
- dispatch key TLS: ``_C._dispatch_tls_local_include_set``/``_exclude_set`` / two ``_C._ForceDispatchKeyGuard``
  released out of order (2.2+; before: ``_dispatch_tls_set_dispatch_key_included``/``_excluded`` key by key).
- anomaly mode, anomaly check_nan / ``torch.set_anomaly_enabled``.
- default dtype / ``set_default_dtype``. manual seed: ``initial_seed`` / ``manual_seed`` (which also restarts
  that seed's random stream).
- deterministic algorithms, its warn_only, fill_uninitialized_memory (2.1+) / ``use_deterministic_algorithms``,
  ``_C._set_deterministic_fill_uninitialized_memory``.
- num threads, warn always, print options (``torch._tensor_str.PRINT_OPTS`` fields), the ``torch.__future__``
  flags, cudnn enabled/benchmark/deterministic/allow_tf32, cuda matmul allow_tf32, float32 matmul precision,
  mkldnn enabled: their getter / their setter.

Some kinds follow from others (inference mode turns grad modes off and changes dispatch keys; a mode on a
stack adds the Python dispatch keys; autocast is a dispatch key): the "secondary" ones (forward grad mode,
multithreading, view replay, dispatch key TLS) are named only when they still differ once the others are back.

Note [Restoring inference mode]
-------------------------------
torch has no setter for the inference-mode flag, only the ``_C._InferenceMode`` guard, which sets the autograd
state and dispatch keys on construction (``__enter__`` from 2.1) and puts back what it found on destruction.
Two guards released out of order leave no guard behind: ``a`` (made in the leaked state L) and ``b`` (made in
the wanted state W) both set W; releasing ``a`` puts back L, releasing ``b`` puts back W. The other autograd
flags are then set one by one. ``_C._ForceDispatchKeyGuard`` (2.2+) restores the dispatch key sets the same way.

What differs on old releases: a kind whose API is missing is not covered. Saved tensors hooks cannot be read
before the release that added ``_top_saved_tensors_default_hooks`` (not in 2.4; the only way there is to pop the
stack, which would lose the hooks); a hook left on by a test is then caught by the run on a newer torch.
"""

from __future__ import annotations

import functools
import operator
import threading

import torch
import torch.__future__ as _future
import torch.autograd.forward_ad as _forward_ad
import torch.utils._device as _device_mod
import torch.utils._python_dispatch as _python_dispatch
from torch._tensor_str import PRINT_OPTS as _PRINT_OPTS

_C = torch._C
_A = torch._C._autograd
_DeviceContext = getattr(_device_mod, "DeviceContext", None)
_MAX_POPS = 1000  # a bound on every loop that pops a stack; far above any sane leak


class Kind:
    """One kind of process-wide state: read it, show it, put it back."""

    __slots__ = ("name", "get", "restore", "show", "key", "secondary", "index")

    def __init__(self, name, get, restore, show=repr, key=None, secondary=False):
        self.name = name
        self.get = get  # () -> raw value; raw values are compared with ==
        self.restore = restore  # (before snapshot, raw value before) -> None
        self.show = show  # raw value -> text
        self.key = key  # raw value -> what counts as a change (default: the raw value)
        self.secondary = secondary

    def __repr__(self):
        return f"Kind({self.name!r})"


KINDS: list[Kind] = []  # in restore order: stacks first (their modes would see later restore calls), flags last


def _add(name, get, restore, **kw) -> Kind | None:
    if get is None or restore is None:
        return None
    kind = Kind(name, get, restore, **kw)
    kind.index = len(KINDS)
    KINDS.append(kind)
    return kind


def _has(obj, *names) -> bool:
    return all(hasattr(obj, n) for n in names)


def _simple(name, getter, setter, **kw) -> Kind | None:
    """A kind read by one getter and put back by one setter."""
    if getter is None or setter is None:
        return None
    return _add(name, getter, lambda _snap, value: setter(value), **kw)


def _names(modes) -> str:
    return "[" + ", ".join(type(m).__name__ for m in modes) + "]"


def _mend_stack(before, current, pop, push, skip_exit=()):
    """Pop the top of a mode stack until it is a prefix of ``before``; push back what is missing."""
    for _ in range(_MAX_POPS):
        stack = current()
        if stack == before[: len(stack)]:
            break
        top = stack[-1]
        if not isinstance(top, skip_exit):
            try:  # the mode's own exit undoes whatever else its enter did
                top.__exit__(None, None, None)
            except Exception:
                pass
        if current() == stack:  # no exit, or it did not pop this mode
            pop()
    else:
        return
    for mode in before[len(current()) :]:
        push(mode)


# -- torch function modes and the default device ------------------------------------------------------------------

_len_tf = _C._len_torch_function_stack
_tf_at = _C._get_function_stack_at


def _function_stack():
    n = _len_tf()
    return tuple([_tf_at(i) for i in range(n)]) if n else ()


def _is_device_context(mode) -> bool:
    return _DeviceContext is not None and isinstance(mode, _DeviceContext)


def _restore_function_stack(before_stack):
    _mend_stack(
        before_stack,
        _function_stack,
        _C._pop_torch_function_stack,
        _C._push_on_torch_function_stack,
        skip_exit=(_DeviceContext,) if _DeviceContext else (),
    )


_add(
    "torch function mode stack",
    _function_stack,
    lambda _snap, before: _restore_function_stack(before),
    key=lambda stack: tuple(m for m in stack if not _is_device_context(m)),
    show=lambda stack: _names(m for m in stack if not _is_device_context(m)),
)

_MISSING = object()
_GDC = getattr(torch, "_GLOBAL_DEVICE_CONTEXT", _MISSING)
if isinstance(_GDC, threading.local):  # torch >= 2.1: a thread-local holding .device_context

    def _global_device_context():
        return _GDC.__dict__.get("device_context")  # (getattr of a missing name costs 0.4 us)

    def _set_global_device_context(value):
        _GDC.device_context = value

elif _GDC is not _MISSING:  # torch 2.0: a module global, None or a DeviceContext

    def _global_device_context():
        return torch._GLOBAL_DEVICE_CONTEXT

    def _set_global_device_context(value):
        torch._GLOBAL_DEVICE_CONTEXT = value

else:  # pragma: no cover - no set_default_device at all

    def _global_device_context():
        return None

    def _set_global_device_context(value):
        pass


_HAS_CURRENT_DEVICE = hasattr(_device_mod, "CURRENT_DEVICE")


def _default_device():
    n = _len_tf()
    return (
        _global_device_context(),
        _device_mod.CURRENT_DEVICE if _HAS_CURRENT_DEVICE else None,
        tuple([m for m in (_tf_at(i) for i in range(n)) if _is_device_context(m)]) if n else (),
    )


def _show_default_device(value):
    glob, current, contexts = value
    devices = [str(c.device) for c in contexts]
    if glob is not None and not any(c is glob for c in contexts):
        devices.insert(0, str(glob.device))
    if current is not None and not devices:
        devices.append(str(current))
    if not devices:
        return "None"
    return repr(devices[-1]) if len(devices) == 1 else repr(devices)


def _restore_default_device(snap, before):
    glob, current, _ = before
    _restore_function_stack(snap[_FUNCTION_STACK.index])
    _set_global_device_context(glob)
    if _HAS_CURRENT_DEVICE:
        _device_mod.CURRENT_DEVICE = current


_FUNCTION_STACK = KINDS[-1]
_add("default device", _default_device, _restore_default_device, show=_show_default_device)

# -- torch dispatch modes -----------------------------------------------------------------------------------------

_len_td = _C._len_torch_dispatch_stack
_COMPILE_INTERNALS_FLAG = "_is_in_any_mode_without_ignore_compile_internals"
_td_at = _C._get_dispatch_stack_at
_DISPATCH_FLAGS = tuple(
    n
    for n in (
        "_is_in_torch_dispatch_mode",
        "_is_in_non_infra_torch_dispatch_mode",
        _COMPILE_INTERNALS_FLAG,
    )
    if hasattr(_python_dispatch, n)
)
_dispatch_flags = operator.attrgetter(*_DISPATCH_FLAGS) if _DISPATCH_FLAGS else (lambda _m: ())
_set_compile_internals_flag = getattr(_python_dispatch, "set_is_in_mode_without_ignore_compile_internals", None)


def _dispatch_stack():
    n = _len_td()
    return tuple([_td_at(i) for i in range(n)]) if n else ()


def _dispatch_state():
    return (_dispatch_stack(), _dispatch_flags(_python_dispatch))


def _show_dispatch_state(value):
    stack, flags = value
    if len(_DISPATCH_FLAGS) == 1:
        flags = (flags,)
    raised = [n.removeprefix("_") for n, f in zip(_DISPATCH_FLAGS, flags, strict=True) if f]
    return _names(stack) + (f" ({', '.join(raised)})" if raised and not stack else "")


def _restore_dispatch_state(_snap, before):
    stack, flags = before
    _mend_stack(stack, _dispatch_stack, _C._pop_torch_dispatch_stack, _C._push_on_torch_dispatch_stack)
    values = (flags,) if len(_DISPATCH_FLAGS) == 1 else flags
    for name, value in zip(_DISPATCH_FLAGS, values, strict=True):
        setattr(_python_dispatch, name, value)
    if _set_compile_internals_flag is not None and _COMPILE_INTERNALS_FLAG in _DISPATCH_FLAGS:
        _set_compile_internals_flag(getattr(_python_dispatch, _COMPILE_INTERNALS_FLAG))


_add("torch dispatch mode stack", _dispatch_state, _restore_dispatch_state, show=_show_dispatch_state)

# -- saved tensors hooks ------------------------------------------------------------------------------------------


def _top_hooks_getter():
    top = getattr(_A, "_top_saved_tensors_default_hooks", None)
    if top is None:
        return None
    for args in ((True,), ()):  # (ignore_is_tracing) in the releases that have it
        try:
            top(*args)
        except TypeError:
            continue
        return functools.partial(top, *args) if args else top
    return None


_top_hooks = _top_hooks_getter()


def _same_hooks(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return all(x is y for x, y in zip(a, b, strict=True))


def _restore_hooks(_snap, before):
    for _ in range(_MAX_POPS):
        top = _top_hooks()
        if _same_hooks(top, before) or top is None:
            break
        _A._pop_saved_tensors_default_hooks()
    if before is not None and not _same_hooks(_top_hooks(), before):
        _A._push_saved_tensors_default_hooks(*before)


def _show_hooks(value):
    if value is None:
        return "None"
    return "(" + ", ".join(getattr(f, "__qualname__", type(f).__name__) for f in value) + ")"


_add("saved tensors hooks", _top_hooks, _restore_hooks if _top_hooks else None, show=_show_hooks)


def _restore_hooks_disabled(_snap, message):
    if message is None:
        _A._saved_tensors_hooks_enable()
    else:
        _A._saved_tensors_hooks_disable(message)


if _has(_A, "_saved_tensors_hooks_enable", "_saved_tensors_hooks_disable"):
    _add(
        "saved tensors hooks disabled",
        getattr(_A, "_saved_tensors_hooks_get_disabled_error_message", None),
        _restore_hooks_disabled,
    )

# -- forward AD ---------------------------------------------------------------------------------------------------


def _restore_dual_level(_snap, before):
    for _ in range(_MAX_POPS):
        if _forward_ad._current_level <= before:
            break
        _forward_ad.exit_dual_level()
    for _ in range(_MAX_POPS):
        if _forward_ad._current_level >= before:
            break
        _forward_ad.enter_dual_level()


if hasattr(_forward_ad, "_current_level"):
    _add("forward AD level", functools.partial(getattr, _forward_ad, "_current_level"), _restore_dual_level)

# -- autograd state: inference mode, grad modes -------------------------------------------------------------------


def _guard_enter(guard):
    enter = getattr(guard, "__enter__", None)
    if enter is not None:  # 2.1+: the guard acts in __enter__; 2.0: in the constructor
        enter()


def _guard_exit(guard):
    leave = getattr(guard, "__exit__", None)
    if leave is not None:
        leave(None, None, None)


def _restore_inference_mode(snap, before):
    # See Note [Restoring inference mode]: two guards, released out of order, leave none behind.
    first = _C._InferenceMode(before)
    _guard_enter(first)
    second = _C._InferenceMode(before)
    _guard_enter(second)
    _guard_exit(first)
    del first  # 2.0: destruction puts back the leaked state ...
    _guard_exit(second)
    del second  # ... and this puts back the wanted one
    for kind in (_GRAD, _FWD_GRAD, _MULTITHREADING, _VIEW_REPLAY):
        if kind is not None:
            kind.restore(snap, snap[kind.index])


_add("inference mode", torch.is_inference_mode_enabled, _restore_inference_mode)
_GRAD = _simple("grad mode", torch.is_grad_enabled, _C._set_grad_enabled)
_FWD_GRAD = _simple(
    "forward grad mode",
    getattr(_C, "_is_fwd_grad_enabled", None),
    getattr(_C, "_set_fwd_grad_enabled", None),
    secondary=True,
)
_MULTITHREADING = _simple(
    "multithreaded backward",
    getattr(_C, "_is_multithreading_enabled", None),
    getattr(_C, "_set_multithreading_enabled", None),
    secondary=True,
)
_VIEW_REPLAY = _simple(
    "view replay",
    getattr(_C, "_is_view_replay_enabled", None),
    getattr(_C, "_set_view_replay_enabled", None),
    secondary=True,
)

# -- autocast -----------------------------------------------------------------------------------------------------


def _autocast_api():
    """(getter, restorer) for autocast's enabled flag and dtype per device, on this torch."""
    try:
        torch.is_autocast_enabled("cpu")  # 2.4+: per device type
        per_device = True
    except TypeError:
        per_device = False
    if per_device:
        devices = []
        mps = getattr(torch.backends, "mps", None)
        for dev in ("cpu", "cuda") + (("mps",) if mps is not None and mps.is_available() else ()):
            try:
                torch.is_autocast_enabled(dev)
                torch.get_autocast_dtype(dev)
            except Exception:
                continue
            devices.append(dev)
        pairs = [
            (
                functools.partial(torch.is_autocast_enabled, d),
                functools.partial(torch.get_autocast_dtype, d),
                functools.partial(torch.set_autocast_enabled, d),
                functools.partial(torch.set_autocast_dtype, d),
            )
            for d in devices
        ]
    else:
        devices = ["cpu", "cuda"]
        pairs = [
            (
                torch.is_autocast_cpu_enabled,
                torch.get_autocast_cpu_dtype,
                torch.set_autocast_cpu_enabled,
                torch.set_autocast_cpu_dtype,
            ),
            (
                torch.is_autocast_enabled,
                torch.get_autocast_gpu_dtype,
                torch.set_autocast_enabled,
                torch.set_autocast_gpu_dtype,
            ),
        ]
    getters = [g for is_on, dtype, _, _ in pairs for g in (is_on, dtype)] + [torch.is_autocast_cache_enabled]

    def get():
        return tuple([g() for g in getters])

    def restore(_snap, before):
        for i, (_, _, set_on, set_dtype) in enumerate(pairs):
            set_on(before[2 * i])
            set_dtype(before[2 * i + 1])
        torch.set_autocast_cache_enabled(before[-1])
        if not any(before[0:-1:2]):  # outside any autocast: nesting back to 0, cache emptied
            depth = torch.autocast_increment_nesting() - 1
            for _ in range(depth + 1):
                torch.autocast_decrement_nesting()
            torch.clear_autocast_cache()

    def show(value):
        on = [f"{d}:{str(value[2 * i + 1]).removeprefix('torch.')}" for i, d in enumerate(devices) if value[2 * i]]
        return ("on " + ", ".join(on) if on else "off") + ("" if value[-1] else " (cache disabled)")

    return get, restore, show


try:
    _autocast_get, _autocast_restore, _autocast_show = _autocast_api()
except AttributeError:  # pragma: no cover - an autocast API is missing
    _autocast_get = _autocast_restore = _autocast_show = None
_add("autocast", _autocast_get, _autocast_restore, show=_autocast_show)

# -- dispatch key TLS ---------------------------------------------------------------------------------------------

_local_include = _C._dispatch_tls_local_include_set
_local_exclude = _C._dispatch_tls_local_exclude_set
_ALL_KEYS = tuple(_C.DispatchKey.__members__.values())

if _has(_local_include(), "raw_repr") and _has(_C.DispatchKeySet, "from_raw_repr"):

    def _keysets():  # two ints: cheap to read and compare
        return (_local_include().raw_repr(), _local_exclude().raw_repr())

    def _sets(value):
        return _C.DispatchKeySet.from_raw_repr(value[0]), _C.DispatchKeySet.from_raw_repr(value[1])

else:  # older torch: compare the sets' text, keep the sets to restore from

    class _keysets(tuple):
        __slots__ = ()

        def __new__(cls):
            inc, exc = _local_include(), _local_exclude()
            return tuple.__new__(cls, (repr(inc), repr(exc), inc, exc))

        def __eq__(self, other):
            return self[:2] == other[:2]

        def __ne__(self, other):
            return self[:2] != other[:2]

        __hash__ = None

    def _sets(value):
        return value[2], value[3]


def _key_names(keyset) -> set[str]:
    found = set()
    for k in _ALL_KEYS:
        try:
            if keyset.has(k):
                found.add(k.name)
        except Exception:  # alias keys
            pass
    return found


def _describe_keysets(before, after):
    parts = []
    for which, was, now in zip(("included", "excluded"), _sets(before), _sets(after), strict=True):
        was, now = _key_names(was), _key_names(now)
        delta = [f"+{n}" for n in sorted(now - was)] + [f"-{n}" for n in sorted(was - now)]
        if delta:
            parts.append(f"{which} {' '.join(delta[:8])}{' ...' if len(delta) > 8 else ''}")
    return ", ".join(parts) or f"{before[:2]} -> {after[:2]}"


def _restore_keysets(_snap, before):
    included, excluded = _sets(before)
    force = getattr(_C, "_ForceDispatchKeyGuard", None)
    if force is not None:  # 2.2+: exact, with two guards released out of order (see the note)
        first = force(included, excluded)
        _guard_enter(first)
        second = force(included, excluded)
        _guard_enter(second)
        _guard_exit(first)
        del first
        _guard_exit(second)
        del second
        return
    for was, now, setter in (  # 2.0, 2.1: key by key
        (included, _local_include(), _C._dispatch_tls_set_dispatch_key_included),
        (excluded, _local_exclude(), _C._dispatch_tls_set_dispatch_key_excluded),
    ):
        was, now = _key_names(was), _key_names(now)
        for name in sorted(was ^ now):
            setter(_C.DispatchKey.__members__[name], name in was)


_KEYSETS = _add("dispatch key TLS", _keysets, _restore_keysets, show=lambda v: repr(v[:2]), secondary=True)

# -- everything else: plain settings ------------------------------------------------------------------------------


def _restore_anomaly(snap, _value):
    mode = snap[_ANOMALY.index]
    if _CHECK_NAN is None:
        torch.set_anomaly_enabled(mode)
        return
    try:
        torch.set_anomaly_enabled(mode, snap[_CHECK_NAN.index])
    except TypeError:
        torch.set_anomaly_enabled(mode)


_ANOMALY = _add("anomaly mode", torch.is_anomaly_enabled, _restore_anomaly)
_CHECK_NAN = _add("anomaly check_nan", getattr(torch, "is_anomaly_check_nan_enabled", None), _restore_anomaly)
_simple("default dtype", torch.get_default_dtype, torch.set_default_dtype)
_simple("manual seed", torch.initial_seed, torch.manual_seed)


def _restore_deterministic(snap, _value):
    mode = snap[_DETERMINISTIC.index]
    if _WARN_ONLY is None:
        torch.use_deterministic_algorithms(mode)
    else:
        torch.use_deterministic_algorithms(mode, warn_only=snap[_WARN_ONLY.index])


_DETERMINISTIC = _add("deterministic algorithms", torch.are_deterministic_algorithms_enabled, _restore_deterministic)
_WARN_ONLY = _add(
    "deterministic algorithms warn_only",
    getattr(torch, "is_deterministic_algorithms_warn_only_enabled", None),
    _restore_deterministic,
)
_simple(
    "deterministic fill_uninitialized_memory",
    getattr(_C, "_get_deterministic_fill_uninitialized_memory", None),
    getattr(_C, "_set_deterministic_fill_uninitialized_memory", None),
)
_simple("num threads", torch.get_num_threads, torch.set_num_threads)
_simple("warn always", getattr(torch, "is_warn_always_enabled", None), getattr(torch, "set_warn_always", None))

_PRINT_FIELDS = tuple(
    n for n in ("precision", "threshold", "edgeitems", "linewidth", "sci_mode") if hasattr(_PRINT_OPTS, n)
)


def _restore_print_options(_snap, before):
    for name, value in zip(_PRINT_FIELDS, before, strict=True):
        setattr(_PRINT_OPTS, name, value)


def _describe_print_options(before, after):
    pairs = [(n, b, a) for n, b, a in zip(_PRINT_FIELDS, before, after, strict=True) if b != a]
    return ", ".join(f"{n} {b!r} -> {a!r}" for n, b, a in pairs)


_add(
    "print options",
    functools.partial(operator.attrgetter(*_PRINT_FIELDS), _PRINT_OPTS),
    _restore_print_options,
    show=lambda v: repr(dict(zip(_PRINT_FIELDS, v, strict=True))),
)
_PRINT = KINDS[-1]

for _flag in ("overwrite_module_params_on_conversion", "swap_module_params_on_conversion"):
    _simple(_flag, getattr(_future, f"get_{_flag}", None), getattr(_future, f"set_{_flag}", None))

for _name, _suffix in (
    ("cudnn enabled", "cudnn_enabled"),
    ("cudnn benchmark", "cudnn_benchmark"),
    ("cudnn deterministic", "cudnn_deterministic"),
    ("cudnn allow_tf32", "cudnn_allow_tf32"),
    ("cuda matmul allow_tf32", "cublas_allow_tf32"),
    ("float32 matmul precision", "float32_matmul_precision"),
    ("mkldnn enabled", "mkldnn_enabled"),
):
    _simple(_name, getattr(_C, f"_get_{_suffix}", None), getattr(_C, f"_set_{_suffix}", None))

_DESCRIBE = {_KEYSETS: _describe_keysets, _PRINT: _describe_print_options}
_GETTERS = tuple(kind.get for kind in KINDS)


def snapshot() -> tuple:
    """Every kind's raw value, in ``KINDS`` order."""
    return tuple([get() for get in _GETTERS])


def _differs(kind: Kind, before, after) -> bool:
    b, a = before[kind.index], after[kind.index]
    if b == a:
        return False
    return kind.key is None or kind.key(b) != kind.key(a)


def _describe(kind: Kind, before, after) -> str:
    b, a = before[kind.index], after[kind.index]
    describe = _DESCRIBE.get(kind)
    text = describe(b, a) if describe else f"{kind.show(b)} -> {kind.show(a)}"
    return f"{kind.name}: {text}"


def restore(before: tuple, after: tuple | None = None) -> tuple[list[str], list[str]]:
    """Put back every kind that differs from ``before``; leave no mode or guard behind.

    Returns (what had changed, what could not be put back), as '<kind>: <before> -> <after>' lines. A secondary
    kind is listed only if it still differs once the other kinds are back (it was not just their consequence).
    """
    if after is None:
        after = snapshot()
    if before == after:
        return [], []
    changed = []
    for kind in KINDS:
        if kind.secondary or before[kind.index] == after[kind.index]:
            continue
        if _differs(kind, before, after):
            changed.append(_describe(kind, before, after))
        try:
            kind.restore(before, before[kind.index])
        except Exception:
            pass  # reported below as not restored
    middle = snapshot()
    for kind in KINDS:
        if kind.secondary and _differs(kind, before, middle):
            changed.append(_describe(kind, before, after))
            try:
                kind.restore(before, before[kind.index])
            except Exception:
                pass
    final = snapshot()
    failed = [_describe(k, before, final) for k in KINDS if _differs(k, before, final)]
    return changed, failed


def check(before: tuple) -> str | None:
    """None if nothing changed since ``before``; else restore and return what changed ('; '-joined)."""
    after = snapshot()
    if before == after:
        return None
    changed, failed = restore(before, after)
    if not changed and not failed:
        return None
    return "; ".join(changed + (["NOT restored: " + "; ".join(failed)] if failed else []))
