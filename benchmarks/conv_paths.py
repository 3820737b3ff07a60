"""The policy's 3x3 convolutions (forward and both gradients) compiled with XLA's default
CPU options and with the agents' options (:mod:`jaxarc.agents.model.compilation`: no
YNNPACK convolution fusions). Prints a table; compile time is excluded and reported.

    python benchmarks/conv_paths.py [--repeats 5] [--calls 10]

Shapes: the quick preset's trunk (384 grids of 8x8, 29 -> 24 channels: the surrogate
step's per-step observations) and the learned predictor's second layer (16 tasks x 4 grids
x 9 shared colour planes, 16 -> 16 channels).
"""

from __future__ import annotations

import argparse
import time

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxarc.agents.model.compilation import policy_compiler_options
from jaxarc.agents.model.layers import ConvHWC

SHAPES = {
    "trunk 384x8x8, 29->24": (384, 8, 8, 29, 24),
    "predictor 576x8x8, 16->16": (576, 8, 8, 16, 16),
}


def measure(shape: tuple[int, ...], options: dict[str, str], repeats: int, calls: int):
    """(compile seconds, best seconds per call, FLOP/s) of value-and-grad of the policy's
    convolution layer (:class:`ConvHWC`, vmapped over grids as the policy runs it) with
    respect to its input and weights."""
    n, h, w, i, o = shape
    layer = ConvHWC(i, o, 3, key=jax.random.key(1))
    x = jax.random.normal(jax.random.key(0), (n, h, w, i), jnp.float32)
    cotangent = jax.random.normal(jax.random.key(2), (n, h, w, o), jnp.float32)
    params, static = eqx.partition(layer, eqx.is_array)

    def loss(x, params):
        return jnp.sum(jax.vmap(eqx.combine(params, static))(x) * cotangent)

    fn = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)), compiler_options=options or None)
    tic = time.perf_counter()
    jax.block_until_ready(fn(x, params))
    compile_s = time.perf_counter() - tic
    best = float("inf")
    for _ in range(repeats):
        tic = time.perf_counter()
        for _ in range(calls):
            out = fn(x, params)
        jax.block_until_ready(out)
        best = min(best, (time.perf_counter() - tic) / calls)
    flops = 3 * 2 * n * h * w * i * o * 9  # forward, input gradient, weight gradient
    return compile_s, best, flops / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--calls", type=int, default=10)
    args = parser.parse_args()
    options = policy_compiler_options()
    print(f"backend {jax.default_backend()}; the agents' options: {options}")
    print("| convolution (fwd + both grads) | compile | XLA defaults | agents' options |")
    print("|---|---|---|---|")
    for name, shape in SHAPES.items():
        cells = []
        compiles = []
        for setting in ({}, options):
            compile_s, seconds, rate = measure(shape, setting, args.repeats, args.calls)
            compiles.append(f"{compile_s:.2f}")
            cells.append(f"{seconds * 1e3:.2f} ms ({rate / 1e9:.0f} GFLOP/s)")
        print(f"| {name} | {' / '.join(compiles)} s | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
