"""Wall-clock timing of a JAX call, for the benchmarks: the call's result and its seconds,
after the device has finished (``jax.block_until_ready``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """``(fn(), seconds)``: the call's result, once every array in it is ready."""
    import jax

    tic = time.perf_counter()
    out = jax.block_until_ready(fn())
    return out, time.perf_counter() - tic
