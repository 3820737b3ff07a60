"""The agents' compiled programs: convolutions left to XLA on CPU, same values, one compile."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import jaxlib
import numpy as np
import pytest

from jaxarc.agents.model.compilation import policy_compiler_options, policy_jit
from jaxarc.agents.model.layers import ConvHWC


def _conv_loss(layer: ConvHWC, grids: jax.Array) -> jax.Array:
    return jnp.sum(jax.vmap(layer)(grids) ** 2)


@pytest.fixture(scope="module")
def layer_and_grids() -> tuple[ConvHWC, jax.Array]:
    # the quick preset trunk's channels: with XLA's default options (jaxlib 0.10) the weights'
    # gradient of this convolution runs as a YNNPACK fusion
    layer = ConvHWC(29, 24, 3, key=jax.random.key(0))
    grids = jax.random.normal(jax.random.key(1), (4, 8, 8, 29), jnp.float32)
    return layer, grids


def test_policy_programs_leave_convolutions_to_xla_on_cpu(layer_and_grids):
    if jax.default_backend() != "cpu":
        pytest.skip("the options are for the CPU backend")
    if tuple(int(part) for part in jaxlib.__version__.split(".")[:2]) < (0, 10):
        pytest.skip(f"measured with jaxlib 0.10; this is {jaxlib.__version__}")
    options = policy_compiler_options()
    assert options  # this jaxlib accepts them
    layer, grids = layer_and_grids
    value_and_grad = eqx.filter_value_and_grad(_conv_loss)
    # equinox's Compiled wraps jax's (its `compiled` field)
    text = policy_jit(value_and_grad).lower(layer, grids).compile().compiled.as_text()
    # the forward convolution and the weights' gradient stay convolutions, none inside a
    # YNNPACK fusion
    assert text.count("convolution(") >= 2
    ynn_fusions = [line for line in text.splitlines() if "__ynn_fusion" in line]
    assert not [line for line in ynn_fusions if "conv_general_dilated" in line]


def test_policy_jit_gives_the_default_compilations_values_and_compiles_once(
    layer_and_grids, count_compilations
):
    layer, grids = layer_and_grids
    value_and_grad = eqx.filter_value_and_grad(_conv_loss)
    ours = policy_jit(value_and_grad)
    default = eqx.filter_jit(value_and_grad)

    def compare(grids):
        value, grads = ours(layer, grids)
        ref_value, ref_grads = default(layer, grids)
        np.testing.assert_allclose(value, ref_value, rtol=1e-5)
        pairs = zip(jax.tree.leaves(grads), jax.tree.leaves(ref_grads), strict=True)
        for leaf, ref_leaf in pairs:  # float rounding: relative to the largest entry
            scale = float(np.max(np.abs(ref_leaf)))
            np.testing.assert_allclose(leaf, ref_leaf, rtol=1e-4, atol=1e-5 * scale)

    compare(grids)
    other = jax.random.normal(jax.random.key(2), grids.shape, jnp.float32)
    with count_compilations() as counter:
        compare(other)  # new values, same shapes: no compilation
    assert counter.programs == 0
