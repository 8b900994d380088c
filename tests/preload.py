"""Imported once by the forkserver of tests/test_sensitivity.py: what every sabotage run would otherwise compute again
(the spec's registry, the fingerprints' reach of the suite's tests and harness) is computed here and inherited by each
forked run (the functions are cached; the files do not change while the tests run)."""

from conformance.harness import fingerprints, registry

registry.default()
fingerprints.units()
fingerprints.harness_digest()
