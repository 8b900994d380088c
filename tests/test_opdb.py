"""The op_db population (conformance/harness/opdb.py) and its plugin (opdb_plugin.py): sample or full, said so."""

import json
import os
import subprocess
import sys

import pytest

from conformance.harness import opdb
from tests.conftest import ROOT, run


def test_sample_is_fixed_and_in_population_order():
    ids = [f"op{i}_" for i in range(150)]
    first, again = opdb.sample_ids(ids), opdb.sample_ids(list(ids))
    assert first == again and len(first) == opdb.SAMPLE_SIZE
    assert first == [i for i in ids if i in set(first)]
    assert opdb.sample_ids(ids[:10]) == ids[:10]  # a population no larger than the sample is taken whole


def test_importing_the_module_needs_no_torch():
    code = "import sys; import conformance.harness.populations as p; assert 'torch' not in sys.modules; "
    code += "print(p.ALL['OPDB_INPLACE'].description[:5])"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_committed_members_match_the_installed_torch():
    """opdb_inplace.json (shown on the spec pages) holds what the installed torch's op_db gives."""
    import torch

    version = torch.__version__.split("+")[0]
    data = opdb.load_data()
    refresh = "python -m conformance.harness.opdb --write"
    if version not in data:
        pytest.fail(f"{opdb.DATA_FILE.name} has no entry for torch {version}: {refresh}")
    assert data[version] == json.loads(json.dumps(opdb.record())), f"stale: {refresh}"


def test_drawing_leaves_no_global_state_changed():
    import torch

    from conformance.harness import state

    opdb.drawn.cache_clear()
    before = state.snapshot()
    seed = torch.initial_seed()
    opdb.drawn()
    assert state.check(before) is None
    assert torch.initial_seed() == seed


def test_record_refuses_a_sample(demo):
    code, out, doc = run(demo, "--record", "--population", "sample")
    assert code == 4 and doc is None, out
    assert "--record needs the whole population; --population sample takes a sample of OPDB_INPLACE" in out
    assert "Traceback" not in out


def test_sample_run_says_so_in_summary_and_results(tmp_path):
    out = tmp_path / "r.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "conformance/tests/test_inplace_ops.py",
            "--device",
            "cpu",
            "--population",
            "sample",
            "--results",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    total = len(opdb.OPDB_INPLACE.ids())
    line = f"population OPDB_INPLACE sampled: {opdb.SAMPLE_SIZE} of {total} members"
    assert line in proc.stdout
    entry = json.loads(out.read_text())["devices"]["cpu"]["eager"]["VERSION-80"]
    assert entry["outcome"] == "pass"
    assert entry["observed"]["OPDB_INPLACE"] == f"sample: {opdb.SAMPLE_SIZE} of {total} members"
    assert entry["tests"] <= opdb.SAMPLE_SIZE  # it ran at most 40 tests, and claims no more


def test_missing_op_db_dependency_ends_the_run_in_one_line(tmp_path):
    (tmp_path / "expecttest.py").write_text('raise ModuleNotFoundError("No module named \'numpy\'", name="numpy")\n')
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "conformance/tests/test_inplace_ops.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert proc.returncode == 4, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "ERROR: OPDB_INPLACE: cannot import torch's operator database (op_db): No module named 'numpy'" in (
        proc.stderr
    )
    assert "install numpy into this environment" in proc.stderr, "the hint names the module that is missing"
    assert "Traceback" not in proc.stdout + proc.stderr
