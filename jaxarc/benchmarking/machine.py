"""What the benchmark tables say about the machine they were measured on."""

from __future__ import annotations

import os

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
