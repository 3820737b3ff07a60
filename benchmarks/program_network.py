"""Train the program network across ARC-AGI-1 training tasks and measure what it carries to
the tuning split, and print a table.

    python benchmarks/program_network.py --updates 300 --learn-updates 100 \
        --out runs/program-network --json network.json

The network trains on training tasks 100-399 (:mod:`jaxarc.solve.program_network`, through
the GRPO trainer's own update) and is saved in ``--out``. It is then measured on the tuning
split (training tasks 0-99; never on evaluation tasks), each row scored pass@2 against the
known test outputs as ``jaxarc solve`` scores, with the tasks solved by programs that solve
every demonstration apart:

* ``uniform``: program-rl (with the content language) learned per task for
  ``--learn-updates`` updates of ``--learn-group`` programs from the uniform start;
* ``network frozen``: the network's greedy program alone (no learning);
* ``network + learning``: program-rl started from the network's logits, same budget.

With ``--network DIR`` an already trained network is measured (no training).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def score(problems, known, attempts, records) -> dict:
    from jaxarc.solve.attempts import solved_by_solutions
    from jaxarc.solve.submission import entries, score_submission

    submission = {p.task_id: entries(attempts[p.task_id]) for p in problems}
    scored = score_submission(submission, known)["tasks"]
    solved = sorted(t for t, r in scored.items() if r["solved"])
    first = [r["first_solved_update"] for r in records.values() if r["first_solved_update"] >= 0]
    return {
        "solved": solved,
        "solved_by_solutions": sorted(solved_by_solutions(scored, records)),
        "demos_solved": sum(
            r["greedy_solves_demos"] or r["best_solves_demos"] for r in records.values()
        ),
        "median_first_solved_update": sorted(first)[len(first) // 2] if first else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--updates", type=int, default=300, help="network training updates")
    parser.add_argument("--learn-updates", type=int, default=100, help="program-rl per task")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--learn-group", type=int, default=64, help="programs an update")
    parser.add_argument(
        "--hindsight", type=int, default=0, help="relabelled tasks of each update's 8"
    )
    parser.add_argument("--train-tasks", type=int, default=300, help="of training 100-399")
    parser.add_argument("--tuning-tasks", type=int, default=100, help="of training 0-99")
    parser.add_argument("--network", type=Path, default=None, help="measure this network")
    parser.add_argument("--out", type=Path, default=Path("runs/program-network"))
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--rows", default="uniform,frozen,network")
    parser.add_argument(
        "--uniform-share",
        type=float,
        default=0.0,
        help="the network row starts from (1 - e) x network + e x the uniform start",
    )
    parser.add_argument(
        "--curve", default="", help="frozen greedy score after these updates, e.g. 0,50,100"
    )
    args = parser.parse_args(argv)

    import jax

    from jaxarc.data.loading import load_bank
    from jaxarc.solve.network_store import load_network, save_network
    from jaxarc.solve.problem import known_test_outputs, problems_from_bank
    from jaxarc.solve.program_attempts import solve_with_program_rl
    from jaxarc.solve.program_network import (
        ProgramNetworkConfig,
        network_start,
        network_task,
        train_program_network,
    )
    from jaxarc.solve.program_rl import ProgramRLConfig
    from jaxarc.solve.program_variant import LearnerVariant

    bank = load_bank("arc-agi-1/training")
    config = ProgramNetworkConfig(updates=args.updates, hindsight_tasks=args.hindsight)
    tuning = bank.subset(range(args.tuning_tasks))
    tuning_problems, tuning_known = problems_from_bank(tuning), known_test_outputs(tuning)
    from jaxarc.benchmarking.machine import run_provenance

    report: dict = {
        **run_provenance(Path(__file__).parent),
        "config": repr(config),
        "seed": args.seed,
        "learn_updates": args.learn_updates,
        "learn_group": args.learn_group,
        "uniform_share": args.uniform_share,
    }
    if args.network is None:
        train_problems = problems_from_bank(bank.subset(range(100, 100 + args.train_tasks)))
        start = time.perf_counter()
        tasks = [network_task(p, config.reward()) for p in train_problems]
        features = time.perf_counter() - start

        curve_at = {int(k) for k in args.curve.split(",") if k}
        report["frozen_curve"] = []
        evaluating = [0.0]  # seconds spent on the curve's points (left out of training's)

        def frozen_point(updates: int, policy) -> None:
            began = time.perf_counter()
            attempts, records = solve_with_program_rl(
                tuning_problems,
                ProgramRLConfig(updates=0),
                seed=args.seed,
                variant=LearnerVariant(language=True),
                start_logits=network_start(policy, ProgramRLConfig()),
            )
            point = score(tuning_problems, tuning_known, attempts, records)
            point.update(updates=updates, seconds=round(time.perf_counter() - began, 1))
            report["frozen_curve"].append(point)
            evaluating[0] += point["seconds"]
            print(
                f"frozen greedy after {updates} updates: {len(point['solved'])} solved", flush=True
            )

        if 0 in curve_at:
            from jaxarc.solve.program_network import init_state

            frozen_point(
                0, init_state(jax.random.split(jax.random.key(args.seed))[0], config).policy
            )

        def show(index: int, record: dict, policy) -> None:
            if index + 1 in curve_at:
                frozen_point(index + 1, policy)
            if index % 10 == 0 or index == config.updates - 1:
                print(
                    f"update {index + 1}: reward {record['mean_reward']:.3f}, solved share "
                    f"{record['solved_share']:.3f}, tasks found {record['tasks_found']}, "
                    f"{time.perf_counter() - start:.0f} s",
                    flush=True,
                )

        evaluating[0] = 0.0  # (the untrained point is not training time)
        start = time.perf_counter()
        policy, history = train_program_network(
            tasks, config, jax.random.key(args.seed), on_update=show
        )
        seconds = time.perf_counter() - start - evaluating[0]
        report["training"] = {
            "tasks": len(tasks),
            "feature_seconds": round(features, 1),
            "seconds": round(seconds, 1),
            # program steps played per demonstration pair, a second (compiling included)
            "program_steps_per_second": round(
                config.updates
                * config.tasks_per_update
                * config.group_size
                * config.program_length
                / seconds
            ),
            "curve": [
                {k: r[k] for k in ("mean_reward", "solved_share", "tasks_found")} for r in history
            ],
        }
        save_network(args.out, policy, {"updates": args.updates, "seed": args.seed}, train_problems)
        steps = report["training"]["program_steps_per_second"]
        print(
            f"trained in {seconds:.0f} s (features {features:.0f} s, {steps} program steps/s "
            f"per demonstration): {args.out}"
        )
    else:
        policy = load_network(args.network)

    problems, known = tuning_problems, tuning_known
    language = LearnerVariant(language=True)
    learn = ProgramRLConfig(
        updates=args.learn_updates,
        group_size=args.learn_group,
        exploring_starts=args.learn_group // 4,  # a quarter, as the default's 16 of 64
    )
    frozen = ProgramRLConfig(updates=0)
    rows = {
        "uniform": (learn, None),
        "frozen": (frozen, network_start(policy, learn)),
        "network": (learn, network_start(policy, learn, args.uniform_share)),
    }
    report["rows"] = {}
    for name in filter(None, args.rows.split(",")):
        row_config, start_fn = rows[name]
        began = time.perf_counter()
        attempts, records = solve_with_program_rl(
            problems, row_config, seed=args.seed, variant=language, start_logits=start_fn
        )
        result = score(problems, known, attempts, records)
        result["seconds"] = round(time.perf_counter() - began, 1)
        report["rows"][name] = result
        print(
            f"{name}: {len(result['solved'])} of {len(problems)} "
            f"({len(result['solved_by_solutions'])} by solutions, {result['demos_solved']} "
            f"demonstration-solving), median first solve "
            f"{result['median_first_solved_update']}, {result['seconds']:.0f} s",
            flush=True,
        )
    print("\n| row | solved | by solutions | demo-solving | median first solve | wall |")
    print("|---|---|---|---|---|---|")
    for name, r in report["rows"].items():
        print(
            f"| {name} | {len(r['solved'])} | {len(r['solved_by_solutions'])} | "
            f"{r['demos_solved']} | {r['median_first_solved_update']} | {r['seconds']:.0f} s |"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
