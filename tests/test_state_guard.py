"""The per-test global-state guard (conformance/harness/state.py), on the demo project of tests/conftest.py.

One demo run holds, for every kind of state, a test that leaks it and a test right after it that asserts the
state is clean again, plus a test that uses every kind properly (enters and exits) and must pass.
"""

import re
import textwrap
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import add_test, run

# (kind the guard must name, code of a test that leaks it, code of the next test: the state is clean again)
LEAKS = [
    ("grad mode", "torch.set_grad_enabled(False)", "assert torch.is_grad_enabled()"),
    (
        "inference mode",
        "KEEP.append(torch.inference_mode())\nKEEP[-1].__enter__()",
        "assert not torch.is_inference_mode_enabled() and torch.is_grad_enabled()\n"
        "x = torch.ones(1, requires_grad=True) * 2\n"
        "assert x.requires_grad and not x.is_inference()",
    ),
    ("anomaly mode", "torch.autograd.set_detect_anomaly(True)", "assert not torch.is_anomaly_enabled()"),
    (
        "anomaly check_nan",
        "torch.autograd.set_detect_anomaly(False, check_nan=False)",
        "assert torch.is_anomaly_check_nan_enabled()",
    ),
    ("default dtype", "torch.set_default_dtype(torch.float64)", "assert torch.ones(1).dtype == torch.float32"),
    (
        "default device",
        "torch.set_default_device('meta')",
        "assert torch.ones(1).device.type == 'cpu' and torch._C._len_torch_function_stack() == 0\n"
        "assert torch.ones(1, device='meta').is_meta",
    ),
    (
        "default device",
        "torch.device('meta').__enter__()",
        "assert torch.ones(1).device.type == 'cpu' and torch._C._len_torch_function_stack() == 0",
    ),
    ("manual seed", "torch.manual_seed(123)", "assert torch.initial_seed() == SEED"),
    (
        "deterministic algorithms",
        "torch.use_deterministic_algorithms(True)",
        "assert not torch.are_deterministic_algorithms_enabled()",
    ),
    (
        "deterministic algorithms warn_only",
        "torch.use_deterministic_algorithms(False, warn_only=True)",
        "assert not torch.is_deterministic_algorithms_warn_only_enabled()",
    ),
    (
        "deterministic algorithms",
        "torch.use_deterministic_algorithms(True, warn_only=True)",
        "assert not torch.are_deterministic_algorithms_enabled()\n"
        "assert not torch.is_deterministic_algorithms_warn_only_enabled()",
    ),
    (
        "deterministic fill_uninitialized_memory",
        "torch._C._set_deterministic_fill_uninitialized_memory(False)",
        "assert torch._C._get_deterministic_fill_uninitialized_memory()",
    ),
    (
        "overwrite_module_params_on_conversion",
        "torch.__future__.set_overwrite_module_params_on_conversion(True)",
        "assert not torch.__future__.get_overwrite_module_params_on_conversion()",
    ),
    (
        "swap_module_params_on_conversion",
        "torch.__future__.set_swap_module_params_on_conversion(True)",
        "assert not torch.__future__.get_swap_module_params_on_conversion()",
    ),
    (
        "saved tensors hooks",
        "torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t).__enter__()",
        "assert torch._C._autograd._top_saved_tensors_default_hooks(True) is None",
    ),
    (
        "saved tensors hooks disabled",
        "torch._C._autograd._saved_tensors_hooks_disable('off')",
        "assert torch._C._autograd._saved_tensors_hooks_is_enabled()",
    ),
    ("torch function mode stack", "FMode().__enter__()", "assert torch._C._len_torch_function_stack() == 0"),
    (
        "torch dispatch mode stack",
        "DMode().__enter__()",
        "assert torch._C._len_torch_dispatch_stack() == 0\n"
        "assert not getattr(torch.utils._python_dispatch, '_is_in_torch_dispatch_mode', False)",
    ),
    (
        "forward AD level",
        "torch.autograd.forward_ad.enter_dual_level()",
        "assert torch.autograd.forward_ad._current_level == -1\nwith torch.autograd.forward_ad.dual_level():\n    pass",
    ),
    ("forward grad mode", "torch._C._set_fwd_grad_enabled(False)", "assert torch._C._is_fwd_grad_enabled()"),
    (
        "multithreaded backward",
        "torch._C._set_multithreading_enabled(False)",
        "assert torch._C._is_multithreading_enabled()",
    ),
    ("view replay", "torch._C._set_view_replay_enabled(True)", "assert not torch._C._is_view_replay_enabled()"),
    (
        "autocast",
        "torch.autocast('cpu').__enter__()",
        "assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32",
    ),
    (
        "dispatch key TLS",
        "KEEP.append(torch._C._DisableTorchDispatch())\ngetattr(KEEP[-1], '__enter__', lambda: None)()",
        "assert not torch._C._dispatch_tls_local_exclude_set().has(torch._C.DispatchKey.Python)",
    ),
    (
        "num threads",
        "torch.set_num_threads(torch.get_num_threads() + 1)",
        "assert torch.get_num_threads() == THREADS",
    ),
    ("warn always", "torch.set_warn_always(True)", "assert not torch.is_warn_always_enabled()"),
    (
        "print options",
        "torch.set_printoptions(precision=2)",
        "assert repr(torch.tensor([1 / 3])) == 'tensor([0.3333])'",
    ),
    ("cudnn enabled", "torch.backends.cudnn.enabled = False", "assert torch.backends.cudnn.enabled"),
    ("cudnn benchmark", "torch.backends.cudnn.benchmark = True", "assert not torch.backends.cudnn.benchmark"),
    (
        "cudnn deterministic",
        "torch.backends.cudnn.deterministic = True",
        "assert not torch.backends.cudnn.deterministic",
    ),
    ("cudnn allow_tf32", "torch.backends.cudnn.allow_tf32 = False", "assert torch.backends.cudnn.allow_tf32"),
    (
        "cuda matmul allow_tf32",
        "torch._C._set_cublas_allow_tf32(not torch._C._get_cublas_allow_tf32())",
        "assert torch._C._get_cublas_allow_tf32() == TF32",
    ),
    (
        "float32 matmul precision",
        "torch.set_float32_matmul_precision('medium')",
        "assert torch.get_float32_matmul_precision() == 'highest'",
    ),
    ("mkldnn enabled", "torch.backends.mkldnn.enabled = False", "assert torch.backends.mkldnn.enabled"),
]

# Kinds whose API an old torch lacks (the guard leaves them out there, see state.py): their pair is skipped.
MAY_BE_MISSING = {
    "saved tensors hooks",  # no way to read the hooks stack before _top_saved_tensors_default_hooks
    "swap_module_params_on_conversion",  # torch.__future__ flag added in 2.3
    "deterministic fill_uninitialized_memory",  # 2.1
    "multithreaded backward",
    "view replay",
}

HEADER = """\
import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from conformance.harness import state

COVERED = {kind.name for kind in state.KINDS}
SEED, THREADS, TF32 = torch.initial_seed(), torch.get_num_threads(), torch._C._get_cublas_allow_tf32()
KEEP = []  # guards a leaking test keeps alive


class FMode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class DMode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))
"""

PAIR = """
@pytest.mark.clause("DEMO-1")
def test_leak_{i}(device):
    if {kind!r} not in COVERED:
        pytest.skip("not covered on this torch: {kind}")
{leak}


@pytest.mark.clause("DEMO-1")
def test_clean_after_{i}(device):
    if {kind!r} not in COVERED:
        pytest.skip("not covered on this torch: {kind}")
{check}
"""

PROPER_USE = """

@pytest.mark.clause("DEMO-1")
def test_proper_use(device):
    import torch.autograd.forward_ad as fwAD

    x = torch.ones(2, requires_grad=True)
    with torch.no_grad(), torch.enable_grad(), torch.autograd.set_detect_anomaly(True, check_nan=False):
        with torch.inference_mode():
            assert torch.is_inference_mode_enabled()
        with torch.device("meta"), FMode(), DMode():
            assert torch.ones(1).is_meta
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            (x * x).sum().backward()
        with torch.autograd.graph.save_on_cpu():
            (x.exp()).sum().backward()
        with fwAD.dual_level():
            fwAD.make_dual(torch.ones(1), torch.ones(1))
        with torch.autocast("cpu"):
            assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.bfloat16
        with torch.random.fork_rng():
            torch.manual_seed(5)
    torch.set_default_device("meta")
    torch.set_default_device(None)  # back to no default device: no mode is left behind
    dtype, opts = torch.get_default_dtype(), dict(torch._tensor_str.PRINT_OPTS.__dict__)
    try:
        torch.set_default_dtype(torch.float64)
        torch.set_printoptions(precision=2)
        torch.use_deterministic_algorithms(True, warn_only=True)
    finally:
        torch.set_default_dtype(dtype)
        torch.set_printoptions(**{k: opts[k] for k in ("precision", "threshold", "edgeitems", "linewidth")})
        torch.use_deterministic_algorithms(False)
"""


def _body(code: str) -> str:
    return textwrap.indent(code, "    ")


def _outcomes(xml_path) -> dict[str, tuple[str, str]]:
    """{test name: (outcome, message)} from a junit xml file; outcome: passed, failed, error or skipped."""
    found = {}
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        name = case.get("name").removesuffix("[cpu]")
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
                message = (child.get("message") or "") + "\n" + (child.text or "")
                break
        previous = found.get(name)
        if previous is None or previous[0] == "passed":  # a teardown error is a second entry for the test
            found[name] = (outcome, message)
    return found


def test_every_kind_of_leak_fails_its_test_names_the_kind_and_is_restored(demo):
    from conformance.harness import state

    covered = {kind.name for kind in state.KINDS}
    assert covered <= {kind for kind, _, _ in LEAKS}, "every kind the guard covers has a leaking test here"
    source = HEADER + "".join(
        PAIR.format(i=i, kind=kind, leak=_body(leak), check=_body(check)) for i, (kind, leak, check) in enumerate(LEAKS)
    )
    add_test(demo, source + PROPER_USE)
    xml = demo / "junit.xml"
    code, output, doc = run(demo, "--device", "cpu", "-p", "no:randomly", f"--junitxml={xml}")
    assert code == 1, output
    outcomes = _outcomes(xml)
    problems = []
    for i, (kind, _, _) in enumerate(LEAKS):
        leak, clean = outcomes.get(f"test_leak_{i}"), outcomes.get(f"test_clean_after_{i}")
        if leak is None or clean is None:
            problems.append(f"{kind} (#{i}): not run")
        elif leak[0] == "skipped":
            if kind in covered or kind not in MAY_BE_MISSING or clean[0] != "skipped":
                problems.append(f"{kind} (#{i}): skipped although the guard covers it or must")
        elif leak[0] != "error" or "test leaked global torch state: " not in leak[1]:
            problems.append(f"{kind} (#{i}): the leaking test did not fail at teardown: {leak}")
        elif not re.search(rf"(state: |; ){re.escape(kind)}: ", leak[1]) or "NOT restored" in leak[1]:
            problems.append(f"{kind} (#{i}): kind not named, or not restored: {leak[1].strip()[:300]}")
        elif clean[0] != "passed":
            problems.append(f"{kind} (#{i}): the next test found the state still changed: {clean[1][:300]}")
    assert not problems, "\n".join(problems) + "\n" + output[-3000:]
    assert outcomes["test_proper_use"][0] == "passed", outcomes["test_proper_use"]
    assert doc["devices"]["cpu"]["eager"]["DEMO-1"]["outcome"] == "fail"


@pytest.mark.parametrize(
    ("leak", "what"),
    [
        ("torch.set_grad_enabled(False)", "grad mode: True -> False"),
        ("torch.set_default_dtype(torch.float64)", "default dtype"),
        ("torch.manual_seed(123)", "manual seed"),
        ("torch.autograd.set_detect_anomaly(True)", "anomaly mode: False -> True"),
    ],
)
def test_leaked_global_state_fails_the_test_and_is_restored(demo, leak, what):
    add_test(
        demo,
        f"""
        import pytest, torch
        @pytest.mark.clause("DEMO-1")
        def test_leaks(device):
            {leak}
        @pytest.mark.clause("DEMO-1")
        def test_after(device):
            assert torch.is_grad_enabled() and torch.get_default_dtype() == torch.float32
            assert not torch.is_anomaly_enabled()
    """,
    )
    code, output, doc = run(demo, "--device", "cpu")
    assert code == 1
    assert "test leaked global torch state" in output and what in output
    assert "test_after[cpu] PASSED" in run(demo, "--device", "cpu", "-v")[1]
    assert doc["devices"]["cpu"]["eager"]["DEMO-1"]["outcome"] == "fail"
