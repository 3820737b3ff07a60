"""The compile clock counts what JAX spends making a program, once per program."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxarc.benchmarking.compile_clock import CompileClock


def test_the_clock_counts_a_new_program_once_and_only_while_running():
    @jax.jit
    def program(x):
        return jnp.cumsum(jnp.sin(x) * 3.0)

    x = jnp.arange(17, dtype=jnp.float32)
    with CompileClock() as outer:
        with CompileClock() as inner:
            program(x).block_until_ready()
        made = (inner.trace, inner.lower, inner.compile, inner.programs)
        program(x).block_until_ready()  # compiled already: nothing to add
    assert inner.trace > 0 and inner.lower > 0
    # a program loaded from the persistent compilation cache is not compiled again
    assert inner.programs in (0, 1) and (inner.compile > 0) == (inner.programs == 1)
    assert (inner.trace, inner.lower, inner.compile, inner.programs) == made
    assert outer.seconds == inner.seconds and outer.programs == inner.programs
    assert inner.seconds == inner.trace + inner.lower + inner.compile
    program(x + 1.0).block_until_ready()  # no clock running
    jax.jit(lambda y: y * 2.0)(x).block_until_ready()
    assert (inner.trace, inner.lower, inner.compile, inner.programs) == made
