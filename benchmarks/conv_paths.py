"""The policy's 3x3 convolutions (forward and both gradients) compiled with XLA's default
CPU options and with the agents' options (:mod:`jaxarc.agents.model.compilation`: no
YNNPACK convolution fusions). Prints a table; compile time is excluded and reported.

    python benchmarks/conv_paths.py [--repeats 5] [--calls 10]

Shapes: the quick preset's trunk (384 grids of 8x8, 29 -> 24 channels: the surrogate
step's per-step observations) and the learned predictor's second layer (16 tasks x 4 grids
x 9 shared colour planes, 16 -> 16 channels).

The last column compares each convolution with a float32 matmul of the surrogate step's
FLOPs measured in the same run (``jaxarc bench train``'s practical peak): the surrogate step
cannot run at a larger share of that matmul than its own convolutions do. A second table
times the bare matrix products of each convolution (forward, input gradient, weight gradient
as ``[N*H*W, 9*C_in] x [9*C_in, C_out]`` etc., the 9x patch copy assumed free): the rate
any convolution algorithm could reach at these channel counts.
"""

from __future__ import annotations

import argparse
import time

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxarc.agents.model.compilation import policy_compiler_options
from jaxarc.agents.model.layers import ConvHWC
from jaxarc.benchmarking.train_flops import matmul_reference

SURROGATE_STEP_FLOPS = 2.17e9
"""The quick preset's surrogate step (XLA cost analysis, ``jaxarc bench train``), which
sizes the reference matmul (1028 x 1028)."""

SHAPES = {
    "trunk 384x8x8, 29->24": (384, 8, 8, 29, 24),
    "predictor 576x8x8, 16->16": (576, 8, 8, 16, 16),
}


def best_seconds_per_call(fn, args: tuple, repeats: int, calls: int) -> float:
    """The best of ``repeats`` mean times of ``calls`` back-to-back calls of ``fn(*args)``."""
    best = float("inf")
    for _ in range(repeats):
        tic = time.perf_counter()
        for _ in range(calls):
            out = fn(*args)
        jax.block_until_ready(out)
        best = min(best, (time.perf_counter() - tic) / calls)
    return best


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
    best = best_seconds_per_call(fn, (x, params), repeats, calls)
    flops = 3 * 2 * n * h * w * i * o * 9  # forward, input gradient, weight gradient
    return compile_s, best, flops / best


def gemm_rate(m: int, k: int, n: int, repeats: int, calls: int) -> float:
    """FLOP/s of a compiled float32 ``[m, k] x [k, n]`` matmul (best of ``repeats``)."""
    a = jax.random.normal(jax.random.key(0), (m, k), jnp.float32)
    b = jax.random.normal(jax.random.key(1), (k, n), jnp.float32)
    matmul = jax.jit(jnp.matmul)
    jax.block_until_ready(matmul(a, b))
    return 2 * m * k * n / best_seconds_per_call(matmul, (a, b), repeats, calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--calls", type=int, default=10)
    args = parser.parse_args()
    options = policy_compiler_options()
    print(f"backend {jax.default_backend()}; the agents' options: {options}")
    rows = []
    for name, shape in SHAPES.items():
        cells, compiles, rate = [], [], 0.0
        for setting in ({}, options):
            compile_s, seconds, rate = measure(shape, setting, args.repeats, args.calls)
            compiles.append(f"{compile_s:.2f}")
            cells.append(f"{seconds * 1e3:.2f} ms ({rate / 1e9:.0f} GFLOP/s)")
        rows.append((name, compiles, cells, rate))
    matmul = matmul_reference(SURROGATE_STEP_FLOPS)
    peak = matmul["flops_per_second"]
    print(
        f"same-run float32 matmul {matmul['n']}x{matmul['n']}: {peak / 1e9:.0f} GFLOP/s "
        f"({matmul['seconds'] * 1e3:.2f} ms)"
    )
    print(
        "| convolution (fwd + both grads) | compile | XLA defaults | agents' options "
        "| agents' options / matmul |"
    )
    print("|---|---|---|---|---:|")
    for name, compiles, cells, rate in rows:
        print(
            f"| {name} | {' / '.join(compiles)} s | {cells[0]} | {cells[1]} "
            f"| {100 * rate / peak:.0f}% |"
        )
    print()
    print("| the convolution's matrix products | forward | input gradient | weight gradient |")
    print("|---|---|---|---|")
    for name, (grids, h, w, c_in, c_out) in SHAPES.items():
        positions, patch = grids * h * w, 9 * c_in
        products = ((positions, patch, c_out), (positions, c_out, patch), (patch, positions, c_out))
        row = []
        for m, k, n in products:
            rate = gemm_rate(m, k, n, args.repeats, args.calls)
            row.append(f"[{m},{k}]x[{k},{n}]: {rate / 1e9:.0f} GFLOP/s ({rate / peak:.0%})")
        print(f"| {name} | {' | '.join(row)} |")


if __name__ == "__main__":
    main()
