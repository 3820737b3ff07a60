"""Write a split of an ARC source as a directory of task files (a source for ``jaxarc train``).

    python benchmarks/arc_split.py --source arc-agi-1/training --skip 100 --max-side 10 \
        --out runs/arc-training-split

Pretraining on ARC tasks must keep tasks apart for tuning and never use evaluation tasks:
the first ``--skip`` tasks of the source (in its order, the tuning split) are left out, and
``--max-side N`` keeps the tasks whose every grid fits an N x N canvas. Each kept task is
written as ``<task id>.json`` with its demonstration pairs and its test pairs, outputs
included (a training source: ``--episode-mode train`` plays its demonstration pairs).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", default="arc-agi-1/training")
    parser.add_argument("--skip", type=int, default=100, help="first tasks left out")
    parser.add_argument("--max-side", type=int, default=30, help="largest grid side kept")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if "evaluation" in args.source:
        parser.error("evaluation tasks are for the final score only: split a training source")

    from jaxarc.data.loading import load_bank
    from jaxarc.solve.problem import known_test_outputs, problems_from_bank

    bank = load_bank(args.source)
    problems = problems_from_bank(bank)
    outputs = known_test_outputs(bank)
    args.out.mkdir(parents=True, exist_ok=True)
    kept = 0
    for problem in problems[args.skip :]:
        tests = outputs[problem.task_id]
        if any(out is None for out in tests):
            continue
        grids = [*problem.demo_inputs, *problem.demo_outputs, *problem.test_inputs, *tests]
        if max(max(g.shape) for g in grids) > args.max_side:
            continue
        pairs = lambda ins, outs: [  # noqa: E731
            {"input": i.tolist(), "output": o.tolist()} for i, o in zip(ins, outs, strict=True)
        ]
        task = {
            "train": pairs(problem.demo_inputs, problem.demo_outputs),
            "test": pairs(problem.test_inputs, tests),
        }
        (args.out / f"{problem.task_id}.json").write_text(json.dumps(task))
        kept += 1
    print(f"{args.out}: {kept} tasks of {args.source} (after the first {args.skip})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
