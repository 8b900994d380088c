"""The pytest plugin of the op_db populations (conformance/harness/opdb.py): sample or full, and saying which.

Registered from conformance/conftest.py. A test over such a population carries
``@pytest.mark.population(OPDB_INPLACE)`` and takes an ``op`` argument: this plugin
parametrizes ``op`` over the members the run takes (``population(P, without=(ids))``: less those, which
the clause names as exceptions stated elsewhere)::

    @pytest.mark.clause("VERSION-80")
    @pytest.mark.population(OPDB_INPLACE)
    def test_every_opdb_inplace_op_bumps(device, op):
        x, update = op(device)
        ...

ids read ``test_every_opdb_inplace_op_bumps[cpu-add_]``. Which members a run takes:

- ``--population full``: all of them; the default of a run that writes results (``--results``, ``--record``);
- ``--population sample``: the fixed sample (``opdb.SAMPLE_SIZE`` members, seeded: the same ones for a given
  torch release); the default otherwise (``python -m pytest conformance``), to keep that run fast;
- ``--record --population sample`` is refused before anything runs: a recording takes the whole population.

What was taken is said twice: in the run's summary ("population OPDB_INPLACE sampled: 40 of 153 members"), and
in the results, as the ``observed`` value ``OPDB_INPLACE`` of every clause with a test over the population
("sample: 40 of 153 members" or "all 153 members"), so a results file never claims more than ran.
"""

from __future__ import annotations

import pytest

from . import opdb

WIRE_KEY = "conformance_opdb_populations"


def pytest_addoption(parser):
    parser.getgroup("conformance").addoption(
        "--population",
        choices=("full", "sample"),
        default=None,
        help=f"populations drawn from torch's op_db: every member (full), or a fixed sample of {opdb.SAMPLE_SIZE} "
        "(sample); default: full when results are written (--results, --record), else sample",
    )


def full_population(config) -> bool:
    chosen = config.getoption("--population")
    if chosen is None:
        return bool(config.getoption("--record") or config.getoption("--results"))
    return chosen == "full"


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "population(p): parametrize the test's `op` over the op_db population p (sample or full)"
    )
    if config.getoption("--record") and config.getoption("--population") == "sample":
        raise pytest.UsageError(
            "--record needs the whole population; --population sample takes a sample of " + ", ".join(opdb.ALL)
        )
    config._opdb_taken = {}  # population name -> (members taken, members in all)
    config.pluginmanager.register(_Summary(config), "conformance-opdb-summary")


def _note(taken: int, total: int) -> str:
    return f"all {total} members" if taken == total else f"sample: {taken} of {total} members"


def pytest_generate_tests(metafunc):
    marker = metafunc.definition.get_closest_marker("population")
    if marker is None:
        return
    population = marker.args[0]
    try:
        population.ids()
    except ImportError as exc:  # said in one line once collection is over (pytest_collection_finish)
        metafunc.config._opdb_error = (
            f"{population.name}: cannot import torch's operator database (op_db): {exc}; install "
            f"{exc.name or 'it'} into this environment (op_db needs numpy and the dependencies of pyproject.toml)"
        )
        metafunc.parametrize("op", [])
        return
    full = full_population(metafunc.config)
    metafunc.config._opdb_taken[population.name] = (len(population.chosen(full)), len(population.ids()))
    metafunc.parametrize("op", population.params(full, without=marker.kwargs.get("without", ())))


def pytest_collection_finish(session):
    if error := getattr(session.config, "_opdb_error", None):
        raise pytest.UsageError(error)  # ends the run before any test: "ERROR: ..." and exit 4, no results


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    marker = item.get_closest_marker("population")
    if marker is None:
        return
    name = marker.args[0].name
    taken = item.config._opdb_taken.get(name)
    if taken:
        if not hasattr(item, "_conformance_observed"):
            item._conformance_observed = {}
        item._conformance_observed[name] = _note(*taken)


class _Summary:
    """Says in the run's summary which members were taken (on the xdist controller: as its workers report)."""

    def __init__(self, config):
        self.config = config

    def pytest_sessionfinish(self, session):
        if hasattr(self.config, "workerinput"):
            self.config.workeroutput[WIRE_KEY] = dict(self.config._opdb_taken)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        for name, taken in getattr(node, "workeroutput", {}).get(WIRE_KEY, {}).items():
            self.config._opdb_taken[name] = tuple(taken)

    def pytest_terminal_summary(self, terminalreporter):
        for name, (taken, total) in sorted(self.config._opdb_taken.items()):
            if taken == total:
                terminalreporter.write_line(f"population {name}: all {total} members")
            else:
                terminalreporter.write_line(
                    f"population {name} sampled: {taken} of {total} members (seed {opdb.SAMPLE_SEED}; "
                    "--population full takes all)",
                    yellow=True,
                )
