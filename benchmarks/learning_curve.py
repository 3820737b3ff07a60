"""Learning curve of the GRPO trainer: held-out success rate against updates and seconds.

    python benchmarks/learning_curve.py --preset quick --minutes 15 --eval-every 20
    python benchmarks/learning_curve.py --replot benchmarks/results/X.jsonl --png curve.png

Trains with ``make_train`` (the same compiled update as ``jaxarc train``) and, every
``--eval-every`` updates, evaluates the policy on freshly generated held-out tasks (eval
mode: the test pair, keys never used in training), greedily (and by sampling with
``--sampled``). A uniformly random policy is evaluated on the same tasks first. Rows go to
stdout and, as JSON lines, to ``--out`` (default
``benchmarks/results/learning_curve_<preset>.jsonl``); the untrained policy is evaluated
before the first update (row ``update 0``); ``seconds`` counts training, compilation
included, not the evaluations. ``--set init_from=RUN`` starts from the policy of a
``jaxarc train`` run (a stage of a curriculum, as ``jaxarc train --init-from``). The rows
use the metric names of ``jaxarc train``'s ``metrics.jsonl`` (``eval_success_rate``,
``eval_success/<family>``), and ``--png`` draws them with ``jaxarc train``'s own plotting
(:func:`jaxarc.agents.run.plotting.plot_run_curve`:
the stages, the untrained and random references, the number of held-out tasks).
``--replot`` draws the PNG of a stored JSONL (older files named the held-out success
``heldout_greedy``; both are read).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import jax

from jaxarc.agents import TrainConfig, UniformPolicy, make_evaluator, make_train
from jaxarc.agents.run.family_eval import make_family_evaluator
from jaxarc.agents.run.plotting import plot_run_curve
from jaxarc.agents.run.warm_start import warm_start
from jaxarc.benchmarking.machine import run_provenance
from jaxarc.data.generators import generator_families


def _parse(text: str, current: object) -> object:
    if isinstance(current, bool):
        if text.lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"expected true/false, got {text!r}")
        return text.lower() in ("true", "1")
    return type(current)(text) if current is not None else text


def set_field(config, path: list[str], text: str):
    """``config`` with the (nested, dotted) field ``path`` set from ``text``."""
    head, *rest = path
    current = getattr(config, head)
    value = set_field(current, rest, text) if rest else _parse(text, current)
    return dataclasses.replace(config, **{head: value})


def with_sets(config, items: list[str]):
    """``config`` with each ``FIELD=VALUE`` of ``items`` set in turn (``--set``; dotted
    fields are nested)."""
    for item in items:
        name, value = item.split("=", 1)
        config = set_field(config, name.split("."), value)
    return config


def provenance() -> dict[str, str]:
    """Where a curve comes from: the command, the date, the commit and the machine."""
    return run_provenance(Path(__file__).parent)


def _train_summary(metrics) -> str:
    """The training metrics of one update: BC (stage_bc = 1) or GRPO."""
    m = {k: float(v) for k, v in metrics.items()}
    if m.get("stage_bc", 0.0):
        return (
            f"[bc] nll {m['bc_nll']:.3f} cell {m['bc_cell_loss']:.3f} "
            f"op acc {m['bc_operation_accuracy']:.3f}"
        )
    return (
        f"[grpo] train succ {m['success_rate']:.3f} ret {m['mean_return']:.3f} "
        f"ent {m['entropy']:.2f} kl {m['kl']:.4f} clip {m['clip_fraction']:.3f} "
        f"eq {m['equal_group_fraction']:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="quick")
    parser.add_argument(
        "--source",
        default=None,
        help="task source (the rl preset takes the action format this source needs)",
    )
    parser.add_argument("--minutes", type=float, default=15.0)
    parser.add_argument("--eval-every", type=int, default=20)
    parser.add_argument("--eval-tasks", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sampled", action="store_true", help="also evaluate by sampling")
    parser.add_argument(
        "--set", nargs="*", default=[], help="overrides FIELD=VALUE (dotted for nested fields)"
    )
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--png", type=Path, default=None, help="draw the curve here")
    parser.add_argument("--replot", type=Path, default=None, help="draw a stored JSONL (--png)")
    args = parser.parse_args()
    if args.replot is not None:
        draw(
            args.replot, args.png or args.replot.with_suffix(".png"), "stored run", args.eval_tasks
        )
        return

    config = TrainConfig.preset(args.preset, source=args.source)
    if args.source is not None:
        config = config.replace(source=args.source)
    config = with_sets(config, args.set).replace(seed=args.seed)
    out = args.out or Path(__file__).parent / "results" / f"learning_curve_{args.preset}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)

    families = generator_families(config.source) if config.source.startswith("gen/") else ()
    if len(families) > 1:  # a mixture: greedy success per family too (same episodes)
        greedy = make_family_evaluator(config, args.eval_tasks)
    else:
        greedy = make_evaluator(config, args.eval_tasks, greedy=True, details=True)
    sampled = (
        make_evaluator(config, args.eval_tasks, greedy=False, details=True)
        if args.sampled
        else None
    )
    eval_key = jax.random.key(10_000 + args.seed)  # held-out: never used by training
    uniform = UniformPolicy(config.selection_format, (config.canvas, config.canvas))
    random_evaluator = (
        make_family_evaluator(config, args.eval_tasks, greedy=False)
        if len(families) > 1
        else make_evaluator(config, args.eval_tasks, greedy=False, details=True)
    )
    random_eval = random_evaluator(uniform, eval_key)
    random_by_family = {
        f"random/{name}": float(rate)
        for name, rate in zip(families, random_eval.get("family_success", ()), strict=False)
    }
    random_success = float(random_eval["success"])
    random_similarity = float(random_eval["similarity"])
    print(f"config: {config}")
    print(
        f"uniform random policy: success {random_success:.4f}, final similarity "
        f"{random_similarity:.3f} on {args.eval_tasks} held-out tasks {random_by_family}"
    )

    def held_out(policy) -> dict[str, float]:
        """Greedy success and final similarity (and sampled success) on the held-out tasks."""
        greedy_eval = greedy(policy, eval_key)
        per_family = (
            {
                f"eval_success/{name}": float(rate)
                for name, rate in zip(families, greedy_eval["family_success"], strict=True)
            }
            if "family_success" in greedy_eval
            else {}
        )
        row = dict(
            **per_family,
            eval_success_rate=float(greedy_eval["success"]),
            eval_similarity=float(greedy_eval["similarity"]),
        )
        if sampled:
            row["eval_sampled_success_rate"] = float(sampled(policy, eval_key)["success"])
        return row

    init, update = make_train(config)
    state = init(jax.random.key(config.seed))
    if config.init_from is not None:  # --set init_from=RUN: a stage of a curriculum
        state = warm_start(state, config)
    rows = []
    with out.open("w") as log:
        header = {
            "random_success": random_success,
            "random_similarity": random_similarity,
            "eval_tasks": args.eval_tasks,
            **random_by_family,
            **provenance(),
        }
        log.write(json.dumps({**header, "config": repr(config)}) + "\n")
        row = dict(update=0, seconds=0.0, **held_out(state.policy))
        rows.append(row)
        log.write(json.dumps(row) + "\n")
        print(f"untrained policy: held-out greedy {row['eval_success_rate']:.3f}", flush=True)
        start = time.perf_counter()  # the clock counts training (compile included), not evals
        eval_seconds = 0.0
        index = 0
        while True:
            state, metrics = update(state)
            index += 1
            elapsed = time.perf_counter() - start - eval_seconds
            last = index >= config.num_updates or elapsed > args.minutes * 60
            if index % 10 == 0 and index % args.eval_every:
                print(f"upd {index:5d}  t {elapsed:7.1f}s  {_train_summary(metrics)}", flush=True)
            if index % args.eval_every == 0 or index == 1 or last:
                eval_start = time.perf_counter()
                evaluation = held_out(state.policy)
                eval_seconds += time.perf_counter() - eval_start
                m = {k: float(v) for k, v in metrics.items()}
                stage = "bc" if m.get("stage_bc", 0.0) else "grpo"
                row = dict(update=index, stage=stage, seconds=round(elapsed, 1), **evaluation, **m)
                rows.append(row)
                log.write(json.dumps(row) + "\n")
                log.flush()
                family_text = " ".join(
                    f"{k.split('/')[1]}={v:.2f}" for k, v in row.items() if "eval_success/" in k
                )
                print(
                    f"upd {index:5d}  t {row['seconds']:7.1f}s  {family_text}  held-out greedy "
                    f"{row['eval_success_rate']:.3f} "
                    f"(similarity {row['eval_similarity']:.3f})  {_train_summary(metrics)}",
                    flush=True,
                )
            if last:
                break
    if args.png:
        draw(out, args.png, f"preset {args.preset}", args.eval_tasks)


_OLD_NAMES = {"heldout_greedy": "eval_success_rate", "heldout_greedy/": "eval_success/"}


def read_curve(path: Path) -> tuple[dict, list[dict]]:
    """The header and the rows of a stored curve, with older metric names renamed."""
    header, *rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    renamed = []
    for row in rows:
        new = {}
        for key, value in row.items():
            for old, name in _OLD_NAMES.items():
                if key == old or (old.endswith("/") and key.startswith(old)):
                    key = name + key.removeprefix(old) if old.endswith("/") else name
                    break
            new[key] = value
        renamed.append(new)
    return header, renamed


def draw(jsonl: Path, png: Path, what: str, eval_tasks: int) -> None:
    """``jaxarc train``'s learning curve of a stored run: the updates after update 0, the
    untrained policy (update 0) and the uniformly random policy as references."""
    header, rows = read_curve(jsonl)
    untrained = next((r for r in rows if r["update"] == 0), None)
    references = {"untrained (update 0)": untrained["eval_success_rate"]} if untrained else {}
    references["uniform random policy"] = header["random_success"]
    config = header.get("config", "")
    source = config.split("source='", 1)[1].split("'", 1)[0] if "source='" in config else ""
    seed = config.split("seed=", 1)[1].split(",", 1)[0] if "seed=" in config else "?"
    when = f" ({header['date']}, {header['commit']})" if "commit" in header else ""
    path = plot_run_curve(
        [r for r in rows if r["update"] > 0],
        png,
        title=f"benchmarks/learning_curve.py: {source}, {what}, seed {seed}{when}",
        references=references,
        held_out_tasks=int(header.get("eval_tasks", eval_tasks)),
    )
    print(f"curve: {path}")


if __name__ == "__main__":
    main()
