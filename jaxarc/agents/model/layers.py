"""Network layers for the policy."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float32, PRNGKeyArray


class ConvHWC(eqx.Module):
    """A same-padded 2-D convolution on channels-last ``[H, W, C]`` inputs.

    ``K x K`` kernels run as ``lax.conv_general_dilated`` (NHWC): the convolution kernel
    builds its patches tile by tile in cache, where patches built as an array (the ``K*K``
    shifted copies side by side, then one dot) are ``K*K`` times the input, which at a
    training batch (512 grids of 8x8x54: 64 MB) no longer fits in cache; on the 2-core
    machine the convolution and its two gradients were 4-10x faster than that dot at the
    quick preset's trunk and predictor sizes (jaxlib 0.10; ``benchmarks/results/
    train_step_quick.md``). ``1 x 1`` kernels are a plain dot. The agents' programs compile
    with :func:`jaxarc.agents.model.compilation.policy_jit`, which on CPU leaves these
    convolutions to XLA's own kernels rather than YNNPACK's.
    """

    weight: Float32[Array, "K K I O"]
    bias: Float32[Array, " O"]

    def __init__(self, in_channels: int, out_channels: int, size: int, *, key: PRNGKeyArray):
        scale = 1.0 / jnp.sqrt(jnp.float32(in_channels * size * size))
        w_key, b_key = jax.random.split(key)
        shape = (size, size, in_channels, out_channels)
        self.weight = jax.random.uniform(w_key, shape, jnp.float32, -scale, scale)
        self.bias = jax.random.uniform(b_key, (out_channels,), jnp.float32, -scale, scale)

    def __call__(self, x: Float32[Array, "H W I"]) -> Float32[Array, "H W O"]:
        return _convolve(x, self.weight) + self.bias[None, None, :]

    def partial(self, x: Float32[Array, "H W J"], channels: np.ndarray) -> Float32[Array, "H W O"]:
        """The layer's response to input channels ``channels`` (static indices, in ``x``'s
        order) alone, without the bias: a convolution is linear, so the sum over a split of
        the input channels plus the bias is the whole layer."""
        return _convolve(x, self.weight[:, :, channels, :])


def _convolve(
    x: Float32[Array, "H W I"], weight: Float32[Array, "K K I O"]
) -> Float32[Array, "H W O"]:
    size, _, in_channels, out_channels = weight.shape
    if size == 1:
        return jnp.einsum("hwi,io->hwo", x, weight.reshape(in_channels, out_channels))
    return jax.lax.conv_general_dilated(
        x[None],
        weight,
        window_strides=(1, 1),
        padding="SAME",
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
    )[0]
