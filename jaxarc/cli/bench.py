"""``jaxarc bench env`` (environment throughput) and ``jaxarc bench train``.

Both print their table; they write result files (``.md`` + ``.json``) only into the folder
given with ``--out`` (``--out benchmarks/results`` updates the committed results), so a
run from the repository root never overwrites them by accident.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxarc.cli.arg_types import positive_int_list
from jaxarc.cli.bench_train import register_train_bench
from jaxarc.cli.main import CLIError

_int_list = positive_int_list("batch sizes")


def _formats(text: str) -> tuple[str, ...]:
    values = tuple(v.strip() for v in text.split(","))
    bad = [v for v in values if v not in ("point", "bbox", "mask")]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown format(s) {bad}; use point, bbox, mask")
    return values


def register(subparsers: argparse._SubParsersAction) -> None:
    bench = subparsers.add_parser("bench", help="benchmarks (environment, training)")
    kinds = bench.add_subparsers(dest="bench_kind", metavar="KIND")
    kinds.required = True
    env = kinds.add_parser("env", help="environment steps per second (batch_step)")
    env.add_argument("--source", default="arc-agi-1/training")
    env.add_argument("--formats", type=_formats, default=("point", "bbox", "mask"))
    env.add_argument("--batch-sizes", type=_int_list, default=(1, 64, 1024, 4096, 16384))
    env.add_argument("--steps", type=int, default=100, help="steps inside lax.scan")
    env.add_argument("--loop-steps", type=int, default=20, help="steps of the Python loop")
    env.add_argument("--repeats", type=int, default=3)
    env.add_argument("--quick", action="store_true", help="batches 1,64,1024 and 20 steps")
    env.add_argument(
        "--out",
        "--results-dir",
        dest="out",
        type=Path,
        default=None,
        metavar="DIR",
        help="also write the table (.md) and results (.json) into DIR (default: print only)",
    )
    env.add_argument(
        "--faces",
        choices=("with", "only", "none"),
        default="with",
        help="the faces table (core vs gymnax vs make_vec, ARC-AGI-1 vs gen/easy): "
        "after the formats table (with), instead of it (only) or not at all (none)",
    )
    env.add_argument(
        "--face-batch-sizes", type=_int_list, default=(1024, 4096), help="faces table batches"
    )
    env.add_argument(
        "--face-envs", default="ARC-AGI-1,gen/easy", help="faces table environments (first: base)"
    )
    # (face_throughput.FACE_EPISODE_STEPS; not imported here, so parsing stays light)
    env.add_argument("--max-episode-steps", type=int, default=8, help="faces table episode length")
    env.set_defaults(func=_run_env)
    register_train_bench(kinds)


def _run_env(args: argparse.Namespace) -> int:
    from jaxarc.benchmarking.env_throughput import run

    if args.steps < 1 or args.repeats < 1 or args.loop_steps < 0:
        raise CLIError("--steps and --repeats must be >= 1, --loop-steps >= 0")
    from jaxarc.data import load_source

    try:  # a bad source is the user's error, said before anything is compiled
        load_source(args.source)
    except (ValueError, OSError) as err:
        raise CLIError(f"cannot load --source {args.source!r}: {err}") from None
    if args.max_episode_steps < 1:
        raise CLIError("--max-episode-steps must be >= 1")
    face_envs = tuple(v.strip() for v in args.face_envs.split(",") if v.strip())
    if args.faces != "none":  # a bad name is refused before the first table is measured
        from jaxarc.gymnax.registry import make, registered_names

        if not face_envs:
            raise CLIError("--face-envs names no environment")
        known = set(registered_names())
        for name in (n for n in face_envs if n not in known):
            try:  # a single task id (else make says what it knows)
                make(name)
            except ValueError as err:
                raise CLIError(f"--face-envs: {err}") from None
    batch_sizes, steps = args.batch_sizes, args.steps
    if args.quick:
        batch_sizes, steps = (1, 64, 1024), 20
    results_dir = args.out
    if args.faces != "only":
        run(
            source=args.source,
            formats=args.formats,
            batch_sizes=batch_sizes,
            scan_steps=steps,
            loop_steps=args.loop_steps,
            repeats=args.repeats,
            results_dir=results_dir,
        )
    if args.faces != "none":
        from jaxarc.benchmarking.face_throughput import save_faces

        save_faces(
            env_names=face_envs,
            batch_sizes=args.face_batch_sizes,
            scan_steps=steps,
            loop_steps=max(args.loop_steps, 1),
            repeats=args.repeats,
            max_episode_steps=args.max_episode_steps,
            results_dir=results_dir,
        )
    return 0
