"""``jaxarc bench train``: its flags, and the table it prints (and writes with ``--out``).

The measurements are :func:`jaxarc.benchmarking.train_bench.run_train_benchmark`'s: the
compiled GRPO train step against eager execution, throughput, where an iteration's time goes
and the FLOP figures. The ``jaxarc bench`` module (:mod:`jaxarc.cli.bench`) calls
:func:`register_train_bench`.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from jaxarc.cli.arg_types import non_negative_int, positive_int, positive_int_list


def add_train_bench_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--preset", choices=("quick", "default"), default="quick")
    parser.add_argument("--batch-tasks", type=positive_int, default=None, metavar="B")
    parser.add_argument("--group-size", type=positive_int, default=None, metavar="G")
    parser.add_argument("--max-episode-steps", type=positive_int, default=None, metavar="T")
    parser.add_argument("--compiled-steps", type=positive_int, default=20, metavar="N")
    parser.add_argument(
        "--eager-steps",
        type=non_negative_int,
        default=2,
        metavar="N",
        help="eager (jax.disable_jit) calls timed per step size after a warm-up call; 0 skips "
        "the eager run (its warm-up compiles every primitive: minutes per size on a GPU)",
    )
    parser.add_argument(
        "--step-episodes",
        type=positive_int_list("episode counts"),
        default=(1, 8),
        metavar="N,N",
        help="episode counts at which the step is also timed (the training minibatch always is)",
    )
    parser.add_argument("--updates", type=positive_int, default=5, metavar="N")
    parser.add_argument(
        "--out",
        "--out-dir",
        dest="out",
        type=Path,
        default=None,
        metavar="DIR",
        help="also write train_step_<preset>[_<backend>].{json,md} into DIR (no backend on cpu)",
    )
    parser.add_argument("--profile", type=Path, default=None, metavar="DIR",
                        help="also write a jax.profiler trace of one update")  # fmt: skip


def register_train_bench(bench_subparsers: argparse._SubParsersAction) -> None:
    parser = bench_subparsers.add_parser(
        "train", help="compiled vs eager GRPO train step, training throughput, env share"
    )
    add_train_bench_arguments(parser)
    parser.set_defaults(func=run_train_bench)


def bench_config(args: argparse.Namespace) -> Any:
    """The measured ``TrainConfig`` of the parsed flags (``--preset`` and the batch shape)."""
    from jaxarc.benchmarking.train_bench import train_bench_config

    return train_bench_config(
        args.preset,
        batch_tasks=args.batch_tasks,
        group_size=args.group_size,
        max_episode_steps=args.max_episode_steps,
    )


def flops_rows(results: dict[str, Any]) -> list[tuple[str, str]]:
    """The table rows of :func:`flops_measurements`' figures."""
    r, m = results, results["matmul"]
    steps = r["config"]["max_episode_steps"]
    return [
        ("surrogate step FLOPs (XLA cost analysis)", f"{r['step_flops'] / 1e9:.2f} GFLOP"),
        ("surrogate step achieved FLOP/s", f"{r['step_flops_per_second'] / 1e9:.1f} GFLOP/s"),
        (
            "same-run float32 matmul (practical peak)",
            f"{m['n']}x{m['n']}: {m['flops_per_second'] / 1e9:.1f} GFLOP/s",
        ),
        ("surrogate step / matmul FLOP/s", f"{r['step_vs_matmul']:.1%}"),
        (
            "policy FLOPs per env step (encode_task / T + act)",
            f"{r['policy_flops_per_env_step'] / 1e6:.2f} MFLOP "
            f"({r['policy_encode_task_flops'] / 1e6:.1f} / {steps} "
            f"+ {r['policy_act_flops'] / 1e6:.2f})",
        ),
    ]


def format_table(results: dict[str, Any]) -> str:
    """The results as a markdown table."""
    c = results["config"]
    shape = f"B={c['batch_tasks']} G={c['group_size']} T={c['max_episode_steps']}"
    r = results
    rows = [
        ("config", f"{shape}, {c['selection_format']}, minibatch {c['minibatch_episodes']} eps"),
        ("train step, first call (trace + compile)", f"{r['step_compile_seconds']:.2f} s"),
    ]
    for row in r["step_by_minibatch"]:
        compiled = f"{row['compiled_seconds'] * 1e3:.2f} ms"
        eager = (
            "not run"
            if math.isnan(row["eager_seconds"])
            else f"{row['eager_seconds'] * 1e3:.0f} ms = {row['speedup']:.0f}x"
        )
        rows.append(
            (f"train step on {row['episodes']} episodes: compiled / eager", f"{compiled} / {eager}")
        )
    rows += flops_rows(r)
    rows += [
        ("update (rollouts + all steps), first call", f"{r['update_first_call_seconds']:.1f} s"),
        ("update, sustained", f"{r['update_seconds'] * 1e3:.1f} ms"),
        ("training throughput", f"{r['env_steps_per_second']:,.0f} env steps/s"),
        ("rollouts (policy + environment) share", f"{r['rollout_share']:.1%}"),
        ("surrogate steps share", f"{r['steps_share']:.1%}"),
        ("environment alone, same steps", f"{r['env_only_seconds'] * 1e3:.1f} ms"),
        ("environment share of an update", f"{r['env_share']:.1%}"),
        ("load average (1 min) after the run", f"{r['load_average_1min_after']:.1f}"),
        ("devices", r["device_description"]),
    ]
    width = max(len(name) for name, _ in rows)
    lines = [f"| {'measurement'.ljust(width)} | value |", f"|{'-' * (width + 2)}|-------|"]
    lines += [f"| {name.ljust(width)} | {value} |" for name, value in rows]
    return "\n".join(lines)


def run_train_bench(args: argparse.Namespace) -> int:
    from jaxarc.benchmarking.train_bench import run_train_benchmark

    config = bench_config(args)
    results = run_train_benchmark(
        config,
        compiled_steps=args.compiled_steps,
        eager_steps=args.eager_steps,
        step_episodes=args.step_episodes,
        updates=args.updates,
        profile_dir=args.profile,
    )
    table = format_table(results)
    print(table)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        import jax

        backend = jax.default_backend()  # a GPU run writes beside the CPU table, not over it
        stem = f"train_step_{args.preset}" + ("" if backend == "cpu" else f"_{backend}")
        (args.out / f"{stem}.json").write_text(json.dumps(results, indent=2))
        (args.out / f"{stem}.md").write_text(table + "\n")
        print(f"results: {args.out / stem}.json / .md")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="surrogate_step", description=__doc__.split("\n")[0])
    add_train_bench_arguments(parser)
    return run_train_bench(parser.parse_args(argv))
