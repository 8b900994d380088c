"""spec.json, the spec as data (conformance/harness/spec_data.py), against its JSON Schema and its sources."""

import json

import pytest

from conformance.harness import registry, spec_data, status

pytestmark = pytest.mark.usefixtures("fresh_results")  # they read the recorded results

jsonschema = pytest.importorskip("jsonschema")  # a dev dependency, installed by nox -s tests


@pytest.fixture(scope="module")
def data() -> dict:
    return spec_data.build()


def test_spec_json_validates_against_its_schema(data, tmp_path):
    schema = json.loads(spec_data.SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    written = json.loads(spec_data.write(tmp_path).read_text())
    assert written == data
    jsonschema.validate(written, schema)


def test_spec_json_holds_every_clause_and_each_recorded_outcome(data):
    clauses = registry.default().clauses
    assert [c["id"] for c in data["clauses"]] and {c["id"] for c in data["clauses"]} == set(clauses)
    for entry in data["clauses"]:
        clause = clauses[entry["id"]]
        assert (entry["page"], entry["level"], entry["needs_values"]) == (
            clause.page,
            clause.level,
            clause.needs_values,
        )
        for (version, device), doc in status.recorded().items():
            for mode in doc["devices"][device]:
                recorded = doc["devices"][device][mode][clause.id]["outcome"]
                assert entry["outcomes"][version][device][mode] == recorded, (clause.id, version, device, mode)


def _text(version):
    return str(version) if version else None


def test_a_wrong_entry_is_refused_by_the_schema(data):
    schema = json.loads(spec_data.SCHEMA.read_text())
    broken = json.loads(json.dumps(data))
    broken["clauses"][0]["outcomes"][data["torch_versions"][0]]["cpu"]["eager"] = "passed"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
