"""The built site's search, run as readers run it (Sphinx's searchtools.js, under Node.js): a clause ID finds that
clause first, each error message of the landing page's lookup finds the page that explains it, a whole traceback line
finds its entry with the fix first, and a release finds its page."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.harness import registry, releases

ROOT = registry.ROOT
sphinx_build = pytest.importorskip("sphinx.cmd.build")  # a docs dependency, installed by nox -s tests
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
import errors  # noqa: E402  (the landing page's entries: each message and the page that explains it)

pytestmark = pytest.mark.usefixtures("fresh_results")  # they read the recorded results


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built once for this module (the docs build of nox -s tests builds it again, with -W)."""
    out = tmp_path_factory.mktemp("html")
    assert sphinx_build.build_main(["-q", "-b", "html", str(ROOT), str(out)]) == 0
    return out


def search(site: Path, queries: list[str]) -> list[list[list[str]]]:
    node = shutil.which("node")
    assert node, "these tests run the site's search with Node.js (node), which this machine lacks"
    done = subprocess.run(
        [node, str(ROOT / "tests" / "site_search.js"), str(site), json.dumps(queries)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_a_clause_id_finds_that_clause_first(site):
    ids = sorted(registry.default().clauses)
    for cid, results in zip(ids, search(site, ids), strict=True):
        assert results and results[0][1] == cid, f"{cid}: first results {results[:3]}"


def test_each_error_of_the_lookup_finds_its_entry_first(site):
    # The entry holds the situation, the fix, and the page that explains it ("Read"; tests/test_site.py).
    entries = [message for messages in errors.owners().values() for message in messages]
    assert len(entries) >= 10
    for message, results in zip(entries, search(site, entries), strict=True):
        entry = ["docs/index", f"#{errors.anchor(message)}"]
        assert results and results[0][::2] == entry, f"{message!r}: first results {results[:3]}"


# Each landing entry's message as torch prints it on the last line of a traceback (torch 2.13.0): exception class in
# front, tensor shapes, versions and hints around it.
TRACEBACK_LINES = {
    "a leaf Variable that requires grad is being used in an in-place operation.": (
        "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation."
    ),
    "a view of a leaf Variable that requires grad is being used in an in-place operation.": (
        "RuntimeError: a view of a leaf Variable that requires grad is being used in an in-place operation."
    ),
    "one of the variables needed for gradient computation has been modified by an inplace operation": (
        "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [2]], which is output 0 of Add, is at version 1; expected version 0 instead. "
        "Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False)."
    ),
    "element 0 of tensors does not require grad and does not have a grad_fn": (
        "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn"
    ),
    "Trying to backward through the graph a second time": (
        "RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after "
        "they have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
        "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
        "you need to access saved tensors after calling backward."
    ),
    "module 'torch' has no attribute 'Variable'": "AttributeError: module 'torch' has no attribute 'Variable'",
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled": (
        "RuntimeError: A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
        "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving "
        "both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be "
        "tracked) or both outside (if you want the inplace to be tracked)."
    ),
    "This view is the output of a function that returns multiple views": (
        "RuntimeError: Output 0 of Split is a view and is being modified inplace. This view is the output of a "
        "function that returns multiple views. Such functions do not allow the output views to be modified inplace. "
        "You should replace the inplace operation by an out-of-place one."
    ),
    "Inference tensors cannot be saved for backward": (
        "RuntimeError: Inference tensors cannot be saved for backward. Please do not use Tensors created in "
        "inference mode in computation tracked by autograd. To work around this, you can make a clone to get a "
        "normal tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`."
    ),
    "Inplace update to inference tensor outside InferenceMode": (
        "RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
        "to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
        "details."
    ),
    "Only Tensors of floating point and complex dtype can require gradients": (
        "RuntimeError: Only Tensors of floating point and complex dtype can require gradients"
    ),
    "cannot assign 'torch.FloatTensor' as parameter 'weight' (torch.nn.Parameter or None expected)": (
        "TypeError: cannot assign 'torch.FloatTensor' as parameter 'weight' (torch.nn.Parameter or None expected)"
    ),
    "size mismatch for weight": (
        "RuntimeError: Error(s) in loading state_dict for Linear:\n\tsize mismatch for weight: copying a param with "
        "shape torch.Size([3, 2]) from checkpoint, the shape in current model is torch.Size([2, 2])."
    ),
    "data set to a tensor that requires gradients must be floating point or complex dtype": (
        "RuntimeError: data set to a tensor that requires gradients must be floating point or complex dtype"
    ),
}


def test_a_pasted_traceback_line_finds_its_entry_with_the_fix_first(site):
    messages = [m for ms in errors.owners().values() for m in ms]
    assert sorted(TRACEBACK_LINES) == sorted(messages), "one traceback line per entry of the landing page"
    for message, results in zip(TRACEBACK_LINES, search(site, list(TRACEBACK_LINES.values())), strict=True):
        entry = ["docs/index", f"#{errors.anchor(message)}"]
        assert results and results[0][::2] == entry, f"{message!r}: first results {results[:3]}"


def test_a_release_finds_its_page_first(site):
    versions = [str(v) for v in releases.boundaries()]
    queries = [q for v in versions for q in (v, f"torch {v}")]
    for query, results in zip(queries, search(site, queries), strict=True):
        assert results and results[0][0] == f"docs/releases/torch-{query.split()[-1]}", f"{query}: {results[:3]}"


def test_a_clause_with_a_release_finds_the_clause(site):
    results = search(site, ["INDEX-12 2.5", "DATA-1 torch 2.9"])
    assert [r[0][1] for r in results] == ["INDEX-12", "DATA-1"], results
