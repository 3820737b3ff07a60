"""A/B in one process: a preset's GRPO update compiled with the agents' CPU compiler options
(:mod:`jaxarc.agents.model.compilation`) and with XLA's defaults, timed in interleaved
blocks so that the machine's drift hits both alike. Prints a table; compile time is
excluded and reported.

    python benchmarks/update_compile_options.py [--preset quick] [--blocks 6] [--updates 20]
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax

import jaxarc.agents.model.compilation as compilation
from jaxarc.agents import make_train
from jaxarc.agents.run.distributed import make_data_mesh
from jaxarc.benchmarking.train_bench import train_bench_config


def build(config, with_options: bool):
    """``(update, state, compile seconds)`` with or without the agents' options."""
    chosen = compilation.policy_compiler_options
    if not with_options:  # the switch policy_jit reads when the update is built
        compilation.policy_compiler_options = dict
    try:
        init, update = make_train(config, make_data_mesh())
    finally:
        compilation.policy_compiler_options = chosen
    state = init(jax.random.key(0))
    tic = time.perf_counter()
    state, metrics = update(state)
    jax.block_until_ready(metrics)
    return update, state, time.perf_counter() - tic


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=("quick", "default"), default="quick")
    parser.add_argument("--blocks", type=int, default=6)
    parser.add_argument("--updates", type=int, default=20)
    args = parser.parse_args()
    config = train_bench_config(args.preset)
    print(f"backend {jax.default_backend()}; options: {compilation.policy_compiler_options()}")
    names = ("agents' options", "XLA defaults")
    runs = {name: list(build(config, name == names[0])) for name in names}
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.blocks):
        for name, run in runs.items():
            update, state, _ = run
            tic = time.perf_counter()
            for _ in range(args.updates):
                state, metrics = update(state)
            jax.block_until_ready(metrics)
            run[1] = state
            times[name].append((time.perf_counter() - tic) / args.updates * 1e3)
    heading = f"ms per update ({args.blocks} blocks of {args.updates})"
    print(f"| compiled with | first update | {heading} | median |")
    print("|---|---|---|---|")
    for name, run in runs.items():
        blocks = " ".join(f"{t:.1f}" for t in times[name])
        print(f"| {name} | {run[2]:.1f} s | {blocks} | {statistics.median(times[name]):.1f} |")


if __name__ == "__main__":
    main()
