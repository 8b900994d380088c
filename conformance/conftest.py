# The conformance harness is a pytest plugin: conformance/harness/plugin.py (its design note says how to write a test).
from conformance.harness.plugin import (  # noqa: F401
    device,
    observe,
    pytest_addoption,
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_generate_tests,
    pytest_runtest_makereport,
    pytest_runtest_setup,
    run,
    run_mode,
    torch_global_state_guard,
)

# Populations drawn from torch's operator database: sample or full (--population), said in the summary and results.
pytest_plugins = ["conformance.harness.opdb_plugin"]
