"""Device selection: which devices exist, which are present, which were asked for."""

from __future__ import annotations

from .registry import DEVICES as KNOWN  # noqa: F401  (one list of device names)
from .registry import listed


def present() -> list[str]:
    import torch

    found = ["cpu", "meta"]
    if torch.cuda.is_available():
        found.append("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        found.append("mps")
    return found


class DeviceError(ValueError):
    pass


def select(requested: str | None) -> list[str]:
    """The devices to run on: every present one by default, else the comma-separated list asked for."""
    available = present()
    if requested is None:
        return available
    chosen = listed("--device", requested, KNOWN, DeviceError)
    for name in chosen:
        if name not in available:
            raise DeviceError(
                f"device {name!r} was asked for but is not present here (present: {', '.join(available)})"
            )
    return chosen
