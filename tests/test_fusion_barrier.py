"""The fusion barriers of ``jaxarc.grid.fusion_barrier`` return their input unchanged, and
``materialize_fused`` compiles to XLA's own reduction (the computation fused into it), not
to a YNNPACK reduction of a stacked copy."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxarc.grid.fusion_barrier import materialize_array, materialize_fused


@pytest.mark.parametrize("barrier", [materialize_array, materialize_fused])
@pytest.mark.parametrize("dtype", [jnp.int8, jnp.int32, jnp.uint32, jnp.bool_])
def test_barrier_returns_its_input(barrier, dtype):
    rng = np.random.default_rng(0)
    if dtype == jnp.bool_:
        values = rng.random((5, 7)) < 0.5
    else:
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, (5, 7), dtype=dtype, endpoint=True)
        values[0, :2] = info.min, info.max  # the reduction's floor and the top
    array = jnp.asarray(values, dtype)
    np.testing.assert_array_equal(np.asarray(jax.jit(barrier)(array)), values)


def test_materialize_fused_is_one_xla_reduction_with_its_computation():
    def grid_pass(grid, colour):
        return materialize_fused(jnp.where(grid >= 0, colour, jnp.int8(-1)))

    grid = jnp.zeros((64, 900), jnp.int8)
    hlo = jax.jit(grid_pass).lower(grid, jnp.int8(3)).compile().as_text()
    assert "__ynn_fusion" not in hlo
    # one kernel: the stacked [2, ...] pair is built inside the reduction, never written
    kernels = re.findall(r"= (\S+) fusion\(", hlo)
    assert kernels == ["s8[64,900]{1,0}"], kernels
