"""Test-time RL ablations on the first tasks of a source: a table of settings.

    python benchmarks/test_time_rl.py --checkpoint runs/medium --source arc-agi-1/training \
        --limit 100 --settings frozen,16,16+hindsight

Every setting runs :func:`jaxarc.solve.policy_finetune.attempts_after_test_time_rl` (the
function behind ``jaxarc solve --method test-time-rl``) on the same tasks with the same key
(``--seed``). A setting is ``frozen`` (no update: the policy plays the tests as it is, on
the same canvases) or ``N`` (N updates a task), optionally followed by ``+hindsight`` (half
the groups also trained as hindsight groups), ``+entropy=X`` (the entropy bonus),
``+temperature=T`` (the learning rollouts' sampling temperature), ``+steps=S`` (episode
steps), ``+groups=G`` (groups per update), ``+size=N`` (rollouts per group) or ``+lr=X``.
``--max-side 10`` keeps the tasks that fit a 10x10 canvas (quick ablations).
``--reachable REPORT --max-actions K`` keeps the tasks that a ``jaxarc solve`` search report
solved with at most K actions (SUBMIT not counted): the tasks the policy's episodes can
reach, which separates what learning finds from what the action space holds.

Per setting the table gives pass@2 by task; the tasks whose every demonstration pair the
tuned policy solves greedily (leave-one-out), and the mean share of demonstrations so
solved (the learning's own measure: it needs no test output); the tasks whose last update
solved at least one demonstration episode (``train_success > 0``); the seconds spent making
programs (tracing, lowering, compiling: once per canvas size), and with them excluded, the
seconds a task and the learning's environment steps a second; and the wall time in all.
Use a split of the training tasks: evaluation tasks are for the final score only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

EXTRAS = {
    "entropy": ("entropy_coef", float),
    "groups": ("batch_tasks", int),
    "size": ("group_size", int),
    "lr": ("lr", float),
    "temperature": ("temperature", float),
    "steps": ("max_episode_steps", int),
}


def parse_setting(text: str) -> dict:
    """``"frozen"`` / ``"16"`` / ``"16+hindsight+entropy=0.1+temperature=2"`` to TestTimeConfig
    arguments."""
    if text == "frozen":
        return {"updates": 0}
    updates, *extras = text.split("+")
    arguments: dict = {"updates": int(updates)}
    for extra in extras:
        name, _, value = extra.partition("=")
        if name == "hindsight" and not value:
            arguments["hindsight_fraction"] = 0.5
        elif name in EXTRAS and value:
            field, kind = EXTRAS[name]
            arguments[field] = kind(value)
        else:
            raise ValueError(
                f"setting {text!r}: use frozen or N, each optionally followed by +hindsight, "
                "+entropy=X, +groups=G, +size=N, +lr=X, +temperature=T, +steps=S"
            )
    return arguments


def reachable_tasks(report: Path, max_actions: int) -> set[str]:
    """The tasks a search report solved, with a solution of at most ``max_actions`` actions."""
    tasks = json.loads(report.read_text())["tasks"]
    return {
        task_id
        for task_id, entry in tasks.items()
        if entry.get("solved")
        and any(len(solution) <= max_actions for solution in entry.get("solutions", []))
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--source", default="arc-agi-1/training")
    parser.add_argument("--limit", type=int, default=100, help="the first N tasks")
    parser.add_argument("--settings", default="frozen,16")
    parser.add_argument(
        "--max-side", type=int, default=30, help="keep the tasks whose canvas is at most this"
    )
    parser.add_argument(
        "--reachable",
        type=Path,
        default=None,
        metavar="REPORT",
        help="keep the tasks this search report (jaxarc solve's .report.json) solved",
    )
    parser.add_argument(
        "--max-actions", type=int, default=3, help="with --reachable: the longest solution kept"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="a JSON file of the rows")
    args = parser.parse_args()

    import jax

    from jaxarc.agents.run.evaluate import load_trained_policy
    from jaxarc.benchmarking.compile_clock import CompileClock
    from jaxarc.data.loading import load_bank
    from jaxarc.solve.policy_finetune import (
        TestTimeConfig,
        attempts_after_test_time_rl,
        canvas_side,
    )
    from jaxarc.solve.problem import known_test_outputs, problems_from_bank
    from jaxarc.solve.submission import entries, score_submission

    config, policy, path = load_trained_policy(args.checkpoint)
    bank = load_bank(args.source)
    bank = bank.subset(range(min(args.limit, bank.num_tasks)))
    problems = problems_from_bank(bank)
    kept = [i for i, p in enumerate(problems) if canvas_side(p) <= args.max_side]
    if args.reachable is not None:
        short = reachable_tasks(args.reachable, args.max_actions)
        kept = [i for i in kept if problems[i].task_id in short]
    bank, problems = bank.subset(kept), [problems[i] for i in kept]
    rows = []
    for setting in args.settings.split(","):
        tt = TestTimeConfig(**parse_setting(setting))
        start = time.perf_counter()
        with CompileClock() as clock:
            attempts, infos = attempts_after_test_time_rl(
                policy, config, problems, tt, key=jax.random.key(args.seed)
            )
        seconds = time.perf_counter() - start
        submission = {t: entries(a) for t, a in attempts.items()}
        score = score_submission(submission, known_test_outputs(bank))
        steps = tt.env_steps_per_task(tt.episode_steps(config)) * len(problems)
        rows.append(
            {
                "setting": setting,
                "solved": score["solved_tasks"],
                "scored": score["scored_tasks"],
                "train_success_tasks": sum(i.get("train_success", 0) > 0 for i in infos.values()),
                "demos_all_solved_tasks": sum(i["demos_solved"] == 1 for i in infos.values()),
                "mean_demos_solved": round(
                    sum(i["demos_solved"] for i in infos.values()) / len(problems), 4
                ),
                "mean_train_success": round(
                    sum(i.get("train_success", 0) for i in infos.values()) / len(problems), 4
                ),
                "wall_seconds": round(seconds, 1),
                **clock.speed(seconds, len(problems), steps),
                "solved_ids": sorted(t for t, s in score["tasks"].items() if s["solved"]),
            }
        )
        print(f"{setting}: {rows[-1]}", file=sys.stderr, flush=True)
    reach = (
        f", solved by {args.reachable.name} in at most {args.max_actions} actions"
        if args.reachable is not None
        else ""
    )
    print(
        f"{args.source}, {len(problems)} of the first {args.limit} tasks (canvas at most "
        f"{args.max_side}{reach}), checkpoint {path}, seed {args.seed}"
    )
    print(
        "| setting | pass@2 by task | every demonstration solved | demonstrations solved "
        "| train_success > 0 | compile s | s / task | env steps/s | wall s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['setting']} | {r['solved']} of {r['scored']} | {r['demos_all_solved_tasks']} "
            f"| {r['mean_demos_solved']:.1%} | {r['train_success_tasks']} "
            f"| {r['compile_seconds']} | {r['seconds_per_task']:.2f} "
            f"| {r.get('env_steps_per_second')} | {r['wall_seconds']} |"
        )
    if args.out is not None:
        args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
