"""How the agents' programs compile: ``equinox.filter_jit`` plus the XLA options that make
the policy's convolutions fast on CPU.

On CPU, jaxlib 0.10 hands every convolution to a YNNPACK fusion by default. For the
policy's small 3x3 convolutions (8x8 grids, 4 to 29 input and 16 to 24 output channels)
XLA's own (Eigen) convolution is faster: the quick preset's trunk convolution and its two
gradients took 14.2 ms as YNNPACK fusions and 8.4-8.8 ms as Eigen convolutions on the
2-core machine (``benchmarks/conv_paths.py``), and the quick preset's update, compiled both
ways and timed alternately in one process, 94.7 ms against 81.2 ms (medians;
``benchmarks/update_compile_options.py``; docs/training.md, "Benchmark"). So the agents'
compiled programs keep YNNPACK for dots and reductions and leave convolutions to XLA.

The option is set per compiled program (``jax.jit(..., compiler_options=...)``), never
through the process-wide ``XLA_FLAGS``: a user's own programs are not touched. It is
applied only on the CPU backend and only when this jaxlib accepts it (checked once by
compiling a tiny program); elsewhere the programs compile with XLA's defaults.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal

import equinox as eqx
import jax
import jax.numpy as jnp

# the YNNPACK fusion kinds the agents' CPU programs keep (the default minus convolutions)
YNN_FUSION_OPTION = "xla_cpu_experimental_ynn_fusion_type"
YNN_FUSIONS_WITHOUT_CONVOLUTIONS = "LIBRARY_FUSION_TYPE_INDIVIDUAL_DOT,LIBRARY_FUSION_TYPE_REDUCE"


@functools.cache
def _accepted_cpu_options() -> tuple[tuple[str, str], ...]:
    options = {YNN_FUSION_OPTION: YNN_FUSIONS_WITHOUT_CONVOLUTIONS}
    try:  # an older or newer jaxlib may not know the option or its values
        jax.jit(jnp.negative, compiler_options=options).lower(jnp.zeros((), jnp.float32)).compile()
    except (RuntimeError, ValueError):
        return ()
    return tuple(options.items())


def policy_compiler_options() -> dict[str, str]:
    """The XLA compiler options of the agents' compiled programs on the default backend:
    ``{}`` unless it is CPU and this jaxlib accepts them."""
    if jax.default_backend() != "cpu":
        return {}
    return dict(_accepted_cpu_options())


def policy_jit(
    fun: Callable[..., Any],
    *,
    donate: Literal["all", "all-except-first", "warn", "warn-except-first", "none"] = "none",
) -> Callable[..., Any]:
    """``equinox.filter_jit(fun, donate=donate)`` compiled with
    :func:`policy_compiler_options` (for programs that evaluate or train a policy)."""
    return eqx.filter_jit(fun, donate=donate, compiler_options=policy_compiler_options() or None)
