"""What the benchmark tables say about the machine they were measured on."""

from __future__ import annotations

import datetime
import os
import shlex
import subprocess
import sys
from pathlib import Path

import jax


def device_description() -> str:
    """The backend, the device count and the device kind, e.g. ``"gpu (1 x NVIDIA H200)"`` or
    ``"cpu (1 x cpu)"``: GPU tables name the card, so runs on different cards are not
    compared as if they were one."""
    devices = jax.devices()
    kinds = sorted({device.device_kind for device in devices})
    return f"{jax.default_backend()} ({len(devices)} x {', '.join(kinds)})"


def cpu_count() -> int:
    """The processors this process may run on (its affinity where the OS tells it)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def run_provenance(repository: Path) -> dict[str, str]:
    """Where a benchmark's figures come from: the command as typed, the date, the commit of
    ``repository`` (``"unknown"`` outside a git checkout) and the machine."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=repository,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return {
        "command": "python " + shlex.join(sys.argv),
        "date": datetime.date.today().isoformat(),
        "commit": commit or "unknown",
        "machine": f"{cpu_count()} CPU cores, {device_description()}, jax {jax.__version__}",
    }
