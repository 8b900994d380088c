"""The "Your torch" views (docs/_static/your_torch.js), run under Node.js on the spec as data, against the same data
read in Python: the spec on one release, and what differs between two."""

import json
import shutil
import subprocess

import pytest

from conformance.harness import registry, spec_data

pytestmark = pytest.mark.usefixtures("fresh_results")  # they read the recorded results

SCRIPT = registry.ROOT / "docs" / "_static" / "your_torch.js"


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    return json.loads(spec_data.write(tmp_path_factory.mktemp("site")).read_text(encoding="utf-8"))


def views(spec: dict, calls: list[list]) -> list[list[str]]:
    """Each call (["onRelease" or "between", *arguments]) run by the page's script: the clause IDs it lists."""
    node = shutil.which("node")
    assert node, "these tests run the page's script with Node.js (node), which this machine lacks"
    program = (
        f"const views = require({json.dumps(str(SCRIPT))});"
        "const [spec, calls] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "console.log(JSON.stringify(calls.map(([f, ...a]) => views[f](spec, ...a).map((r) => r.clause.id))));"
    )
    done = subprocess.run(
        [node, "-e", program], input=json.dumps([spec, calls]), capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def outcome(clause: dict, release: str, device: str, mode: str) -> str:
    return clause["outcomes"].get(release, {}).get(device, {}).get(mode, "not-run")


def test_the_spec_on_one_release(spec):
    cases = [(r, d, m) for r in spec["torch_versions"][::5] for d in ("cpu", "meta") for m in spec["modes"]]
    got = views(spec, [["onRelease", *case] for case in cases])
    for case, ids in zip(cases, got, strict=True):
        expected = [c["id"] for c in spec["clauses"] if outcome(c, *case) != "not-applicable"]
        assert ids == expected, case
        # torch.compile does not run on 2.0 here, nor the inductor mode on meta: nothing applies
        assert ids or case[2] != "eager", case


def test_what_differs_between_two_releases(spec):
    first, last = spec["torch_versions"][0], spec["torch_versions"][-1]
    cases = [(first, last, "cpu", "eager"), (last, first, "cpu", "compile"), (last, last, "meta", "eager")]
    got = views(spec, [["between", *case] for case in cases])
    for (before, after, device, mode), ids in zip(cases, got, strict=True):
        expected = [
            c["id"] for c in spec["clauses"] if outcome(c, before, device, mode) != outcome(c, after, device, mode)
        ]
        assert ids == expected, (before, after, device, mode)
    assert got[0] and not got[2]  # 2.0 and the newest differ; a release does not differ from itself
