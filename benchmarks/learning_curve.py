"""Learning curve of the GRPO trainer: held-out success rate against wall-clock time.

    python benchmarks/learning_curve.py --preset quick --minutes 15 --eval-every 20

Trains with ``make_train`` (the same compiled update as ``jaxarc train``) and, every
``--eval-every`` updates, evaluates the policy on freshly generated held-out tasks (eval
mode: the test pair, keys never used in training), greedily and by sampling. A uniformly
random policy is evaluated on the same tasks first. Rows go to stdout and, as JSON lines,
to ``--out`` (default ``benchmarks/results/learning_curve_<preset>.jsonl``); the untrained
policy is evaluated before the first update (row ``update 0``). ``--png`` draws held-out
success and training metrics against wall-clock seconds (compile included in the first
update's time).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jax

from jaxarc.agents import TrainConfig, UniformPolicy, make_evaluator, make_train
from jaxarc.agents.run.plotting import plot_learning_curve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--minutes", type=float, default=15.0)
    parser.add_argument("--eval-every", type=int, default=20)
    parser.add_argument("--eval-tasks", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sampled", action="store_true", help="also evaluate by sampling")
    parser.add_argument("--set", nargs="*", default=[], help="overrides FIELD=VALUE (top level)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--png", type=Path, default=None, help="draw the curve here")
    args = parser.parse_args()

    config = TrainConfig.preset(args.preset)
    for item in args.set:
        name, value = item.split("=", 1)
        current = getattr(config, name)
        config = config.replace(**{name: type(current)(value) if current is not None else value})
    config = config.replace(seed=args.seed)
    out = args.out or Path(__file__).parent / "results" / f"learning_curve_{args.preset}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)

    greedy = make_evaluator(config, args.eval_tasks, greedy=True, details=True)
    sampled = (
        make_evaluator(config, args.eval_tasks, greedy=False, details=True)
        if args.sampled
        else None
    )
    eval_key = jax.random.key(10_000 + args.seed)  # held-out: never used by training
    uniform = UniformPolicy(config.selection_format, (config.canvas, config.canvas))
    random_eval = make_evaluator(config, args.eval_tasks, greedy=False, details=True)(
        uniform, eval_key
    )
    random_success = float(random_eval["success"])
    random_similarity = float(random_eval["similarity"])
    print(f"config: {config}")
    print(
        f"uniform random policy: success {random_success:.4f}, final similarity "
        f"{random_similarity:.3f} on {args.eval_tasks} held-out tasks"
    )

    def held_out(policy) -> dict[str, float]:
        """Greedy success and final similarity (and sampled success) on the held-out tasks."""
        greedy_eval = greedy(policy, eval_key)
        return dict(
            heldout_greedy=float(greedy_eval["success"]),
            heldout_greedy_similarity=float(greedy_eval["similarity"]),
            heldout_sampled=float(sampled(policy, eval_key)["success"])
            if sampled
            else float("nan"),
        )

    init, update = make_train(config)
    state = init(jax.random.key(config.seed))
    rows = []
    with out.open("w") as log:
        header = {"random_success": random_success, "random_similarity": random_similarity}
        log.write(json.dumps({**header, "config": repr(config)}) + "\n")
        row = dict(update=0, seconds=0.0, **held_out(state.policy))
        rows.append(row)
        log.write(json.dumps(row) + "\n")
        print(f"untrained policy: held-out greedy {row['heldout_greedy']:.3f}", flush=True)
        start = time.perf_counter()  # the clock counts training (compile included), not evals
        eval_seconds = 0.0
        index = 0
        while True:
            state, metrics = update(state)
            index += 1
            elapsed = time.perf_counter() - start - eval_seconds
            last = index >= config.num_updates or elapsed > args.minutes * 60
            if index % 10 == 0 and index % args.eval_every:
                print(
                    f"upd {index:5d}  t {elapsed:7.1f}s  train succ "
                    f"{float(metrics['success_rate']):.3f} ret {float(metrics['mean_return']):.3f}",
                    flush=True,
                )
            if index % args.eval_every == 0 or index == 1 or last:
                eval_start = time.perf_counter()
                evaluation = held_out(state.policy)
                eval_seconds += time.perf_counter() - eval_start
                m = {k: float(v) for k, v in metrics.items()}
                row = dict(update=index, seconds=round(elapsed, 1), **evaluation, **m)
                rows.append(row)
                log.write(json.dumps(row) + "\n")
                log.flush()
                print(
                    f"upd {index:5d}  t {row['seconds']:7.1f}s  held-out greedy "
                    f"{row['heldout_greedy']:.3f} "
                    f"(similarity {row['heldout_greedy_similarity']:.3f}) "
                    f"sampled {row['heldout_sampled']:.3f}  train succ {m['success_rate']:.3f} "
                    f"ret {m['mean_return']:.3f} ent {m['entropy']:.2f} kl {m['kl']:.4f} "
                    f"clip {m['clip_fraction']:.3f} eq {m['equal_group_fraction']:.2f}",
                    flush=True,
                )
            if last:
                break
    if args.png:
        title = (
            f"{config.source}, preset {args.preset}: held-out greedy success vs training seconds "
            f"(uniform random policy: {random_success:.1%})"
        )
        metrics = ["heldout_greedy", "heldout_sampled", "success_rate", "mean_return", "entropy"]
        plot_learning_curve(rows, args.png, metrics, x_key="seconds", window=1, title=title)
        print(f"curve: {args.png}")


if __name__ == "__main__":
    main()
