"""Generalisation rows of a checkpoint (or of the zero-learning baseline), and their table.

    python benchmarks/generalisation.py --checkpoint runs/quick --name quick_learned
    python benchmarks/generalisation.py --baseline predictor-rule --name baseline --gen gen/easy
    python benchmarks/generalisation.py --table

Each row is one ``jaxarc eval`` run (the same function, ``evaluate_checkpoint``), written as
``<out>/<name>_<evaluation>.json`` with the equivalent ``jaxarc eval`` command, the wall
time (compile included) and the load average before and after, so the row can be checked
and a later checkpoint (the medium preset's) added next to the recorded ones:

* ``<gen>_<c>x<c>``: greedy success on 512 fresh tasks of the generator the checkpoint was
  trained on (``--gen``, default its ``source``), per family, on the training canvas;
* ``<gen>_12x12_min10`` and ``<gen>_16x16_min13``: the same on a 12x12 canvas with grids
  of 10 to 12 cells a side and on a 16x16 canvas with grids of 13 to 16, sizes a policy
  trained on the 8x8 canvas never saw;
* ``arc-agi-1_training`` / ``arc-agi-1_evaluation``: pass@2 by task over the 400 tasks.

``--only`` picks some of them (by file slug, e.g. ``gen_easy_16x16_min13``). ``--table``
prints (and writes ``<out>/table.md``) one column per name found in ``<out>``, one row per
evaluation.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "results" / "generalisation"
ARC = ("arc-agi-1/training", "arc-agi-1/evaluation")
UNSEEN = ((12, 10), (16, 13))  # (canvas side, smallest grid side) never seen on 8x8
LIMIT = 512


def evaluations(gen: str, canvas: int) -> dict[str, dict]:
    """``{file slug: jaxarc eval arguments}`` of the generalisation rows."""
    slug = gen.replace("/", "_")
    return {
        f"{slug}_{canvas}x{canvas}": {"source": gen, "by_family": True, "limit": LIMIT},
        **{
            f"{slug}_{side}x{side}_min{least}": {
                "source": gen,
                "by_family": True,
                "limit": LIMIT,
                "canvas": side,
                "min_side": least,
            }
            for side, least in UNSEEN
        },
        **{
            source.replace("/", "_"): {"source": source, "attempts": 2, "batch_size": 32}
            for source in ARC
        },
    }


def eval_command(who: list[str], arguments: dict) -> str:
    """The ``jaxarc eval`` command line that computes the same row."""
    words = ["jaxarc", "eval", *who, "--source", arguments["source"]]
    if arguments.get("by_family"):
        words += ["--by-family", "--limit", str(arguments["limit"])]
    if "canvas" in arguments:
        words += ["--canvas", str(arguments["canvas"]), "--min-side", str(arguments["min_side"])]
    if "attempts" in arguments:
        words += ["--attempts", str(arguments["attempts"])]
    return " ".join(words)


def run_rows(args: argparse.Namespace) -> None:
    from jaxarc.agents.run.evaluate import evaluate_checkpoint, load_trained_policy

    if args.checkpoint is not None:
        config, _, _ = load_trained_policy(args.checkpoint)
        gen = args.gen or config.source
        canvas = config.canvas
        who = ["--checkpoint", str(args.checkpoint)]
    else:
        gen, canvas = args.gen, 8
        who = ["--baseline", args.baseline]
    if not gen.startswith("gen/"):
        raise SystemExit(f"--gen must name a generator (gen/...), got {gen!r}")
    rows = evaluations(gen, canvas)
    for slug, arguments in rows.items():
        if args.only and slug not in args.only:
            continue
        load_before = os.getloadavg()[0]
        tic = time.perf_counter()
        report = evaluate_checkpoint(
            args.checkpoint,
            arguments["source"],
            baseline=args.baseline,
            attempts=arguments.get("attempts", 2),
            limit=arguments.get("limit"),
            batch_size=arguments.get("batch_size", 32),
            by_family=arguments.get("by_family", False),
            canvas=arguments.get("canvas"),
            min_side=arguments.get("min_side", 0),
        )
        wall = time.perf_counter() - tic
        report["measured"] = {
            "command": eval_command(who, arguments),
            "wall_s_compile_included": round(wall, 1),
            "load_average_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        }
        path = args.out / f"{args.name}_{slug}.json"
        path.write_text(json.dumps(report, indent=2) + "\n")
        print(f"{slug}: {describe(report)}  ({wall:.0f} s; {path})", flush=True)


def describe(report: dict) -> str:
    """The row's cell: greedy success or pass@2 (solved tasks of the total)."""
    if "families" in report:
        return f"{100 * report['solve_rate']:.1f}%"
    return f"{100 * report['solve_rate']:.2f}% ({report['solved_tasks']}/{report['num_tasks']})"


def table(out: Path) -> str:
    """A Markdown table of every ``<name>_<evaluation>.json`` in ``out``."""
    slugs = [
        slug
        for gen in ("gen/easy", "gen/medium")
        for slug in evaluations(gen, 8)
        if slug.startswith("gen")
    ] + [source.replace("/", "_") for source in ARC]
    cells: dict[str, dict[str, str]] = {}
    for path in sorted(out.glob("*.json")):
        for slug in slugs:
            if path.stem.endswith("_" + slug):
                name = path.stem[: -len(slug) - 1]
                cells.setdefault(name, {})[slug] = describe(json.loads(path.read_text()))
    names = sorted(cells, key=lambda n: (n != "baseline", n))
    lines = [
        "| evaluation | " + " | ".join(names) + " |",
        "|---" * (len(names) + 1) + "|",
    ]
    for slug in slugs:
        if any(slug in cells[name] for name in names):
            row = [cells[name].get(slug, "-") for name in names]
            lines.append(f"| `{slug}` | " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--checkpoint", type=Path, help="checkpoint or run directory")
    who.add_argument("--baseline", choices=("predictor-rule",))
    parser.add_argument("--name", help="row name: files <name>_<evaluation>.json")
    parser.add_argument("--gen", default=None, help="generator (default: the run's source)")
    parser.add_argument("--only", nargs="+", default=None, metavar="EVALUATION")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--table", action="store_true", help="print and write table.md")
    args = parser.parse_args()
    if args.checkpoint is not None or args.baseline is not None:
        if not args.name:
            parser.error("--name is required with --checkpoint or --baseline")
        if args.baseline is not None and args.gen is None:
            parser.error("--baseline needs --gen (the generator to evaluate on)")
        args.out.mkdir(parents=True, exist_ok=True)
        run_rows(args)
    elif not args.table:
        parser.error("give --checkpoint or --baseline (with --name), or --table")
    if args.table:
        text = table(args.out)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "table.md").write_text(text + "\n")
        print(text)


if __name__ == "__main__":
    main()
