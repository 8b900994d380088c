"""The support window: the torch releases the conformance suite is run on.

This is the one place that declares it; noxfile.py and the release check read
it from here. Each entry is the newest patch of a minor release.
"""

from packaging.version import Version

TORCH_WINDOW = [
    "2.0.1",
    "2.1.2",
    "2.2.2",
    "2.3.1",
    "2.4.1",
    "2.5.1",
    "2.6.0",
    "2.7.1",
    "2.8.0",
    "2.9.1",
    "2.10.0",
    "2.11.0",
    "2.12.1",
    "2.13.0",
    "2.14.1",
    "2.15.0",
]


def numpy_requirement(torch_version: str) -> str:
    """numpy that the given torch imports cleanly with (torch < 2.4 was built against numpy 1).

    Any PEP 440 version: "2" is 2.0, "v2.15.0" and "1!2.13.0" (an epoch) are 2.15 and 2.13,
    pre-releases and dev builds go by their release; anything else raises InvalidVersion.
    """
    major, minor = (*Version(torch_version).release, 0)[:2]
    return "numpy<2" if (major, minor) < (2, 4) else "numpy"


def companions(torch_version: str) -> list[str]:
    """What the suite installs beside this torch: numpy to match it, and for torch 2.1 setuptools, whose
    ``pkg_resources`` its inductor imports (uv's environments have no setuptools; a venv of Python 3.11 has;
    setuptools 81 drops ``pkg_resources``). Any PEP 440 version, as ``numpy_requirement``."""
    major, minor = (*Version(torch_version).release, 0)[:2]
    return [numpy_requirement(torch_version), *(["setuptools<81"] if (major, minor) < (2, 2) else [])]


# The torch that `nox -s tests` checks the harness and the suite against: pip takes it from a local
# CPU wheel on this project's machines (fast), and from PyPI elsewhere.
TESTS_TORCH = "2.13.0"
