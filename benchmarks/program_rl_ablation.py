"""Compare settings of the program policy learned per task (``jaxarc solve --method
program-rl``) on ARC-AGI-1 *training* tasks, and print a table.

    python benchmarks/program_rl_ablation.py --split reachable \
        --variant default --variant "start-only:explore_from_memory=False"

Settings are chosen here, never on evaluation tasks. Two splits:

* ``reachable``: the training tasks the search solves at k=3 (31, read from
  ``benchmarks/results/solve/training_search3.report.json``): what the action vocabulary
  reaches, so a miss is the learner's;
* ``tuning``: the first 100 training tasks (the tuning split of ``docs/training.md``).

A variant is ``NAME`` or ``NAME:field=value,field=value`` over the fields of the learner's
settings, :class:`jaxarc.solve.program_rl.ProgramRLConfig`, and of its experimental design
switches, :class:`jaxarc.solve.program_variant.LearnerVariant` (``default``: no change;
``jaxarc solve`` always learns with the adopted design). Each row
gives the tasks solved (pass@2, scored against the known test outputs after learning, as
``jaxarc solve`` scores), those solved by a program that solves every demonstration (the
report's ``solved_tasks_by_solutions``), the wall time with compiling included, and which
tasks. ``--prior shipped`` starts every task from the prior shipped with the package and
learns with its settings (the variant's changes on top); ``--prior none`` (the default)
from the uniform start.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

SEARCH_REPORT = Path(__file__).parent / "results/solve/training_search3.report.json"


def parse_variant(text: str) -> tuple[str, dict[str, object]]:
    """``"name:field=value,..."`` to ``(name, changes)``, each value of its field's type
    (a field of ``ProgramRLConfig`` or of ``LearnerVariant``)."""
    from jaxarc.solve.program_rl import ProgramRLConfig
    from jaxarc.solve.program_variant import LearnerVariant

    name, _, settings = text.partition(":")
    defaults = {**dataclasses.asdict(ProgramRLConfig()), **dataclasses.asdict(LearnerVariant())}
    changes: dict[str, object] = {}
    for item in filter(None, settings.split(",")):
        field, _, value = item.partition("=")
        if field not in defaults:
            raise SystemExit(
                f"--variant {text!r}: neither ProgramRLConfig nor LearnerVariant has a field "
                f"{field!r}"
            )
        kind = type(defaults[field])
        if kind is bool and value not in ("True", "False"):
            raise SystemExit(f"--variant {text!r}: {field} is True or False, not {value!r}")
        changes[field] = (value == "True") if kind is bool else kind(value)
    return name, changes


def learner(changes: dict[str, object]):
    """``(ProgramRLConfig, LearnerVariant)`` with ``changes`` applied to whichever holds
    each field."""
    from jaxarc.solve.program_rl import ProgramRLConfig
    from jaxarc.solve.program_variant import LearnerVariant

    variant_fields = {f.name for f in dataclasses.fields(LearnerVariant)}
    config = ProgramRLConfig(**{k: v for k, v in changes.items() if k not in variant_fields})
    variant = LearnerVariant(**{k: v for k, v in changes.items() if k in variant_fields})
    return config, variant


def split_indices(split: str, task_ids: list[str]) -> list[int]:
    if split == "tuning":
        return list(range(100))
    report = json.loads(SEARCH_REPORT.read_text())["tasks"]
    return [k for k, task in enumerate(task_ids) if report.get(task, {}).get("solved")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=("reachable", "tuning"), default="reachable")
    parser.add_argument("--variant", action="append", default=None, help="NAME[:f=v,...]")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--prior", choices=("none", "shipped"), default="none")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    variants = [parse_variant(v) for v in args.variant or ["default"]]

    from jaxarc.data.loading import load_bank
    from jaxarc.solve.attempts import solved_by_solutions
    from jaxarc.solve.problem import known_test_outputs, problems_from_bank
    from jaxarc.solve.program_attempts import solve_with_program_rl
    from jaxarc.solve.submission import entries, score_submission

    bank = load_bank("arc-agi-1/training")
    bank = bank.subset(split_indices(args.split, list(bank.task_ids)))
    problems = problems_from_bank(bank)
    known = known_test_outputs(bank)
    prior, base = None, {}
    if args.prior == "shipped":
        from jaxarc.solve.prior_store import load_prior
        from jaxarc.solve.program_rl_method import DEFAULT_PRIOR_DIR

        prior, prior_config = load_prior(DEFAULT_PRIOR_DIR)
        base = dataclasses.asdict(prior_config.program)
    rows = []
    for name, changes in variants:
        config, variant = learner({**base, **changes})
        start = time.perf_counter()
        attempts, records = solve_with_program_rl(
            problems, config, seed=args.seed, prior=prior, variant=variant
        )
        seconds = time.perf_counter() - start
        submission = {p.task_id: entries(attempts[p.task_id]) for p in problems}
        scored = score_submission(submission, known)["tasks"]
        solved = sorted(task for task, result in scored.items() if result["solved"])
        by_solutions = sorted(solved_by_solutions(scored, records))
        rows.append(
            {
                "variant": name,
                "changes": changes,
                "prior": args.prior,
                "solved": solved,
                "solved_by_solutions": by_solutions,
                "seconds": seconds,
            }
        )
        print(f"{name}: {len(solved)} of {len(problems)} in {seconds:.0f} s", flush=True)

    print(
        f"\narc-agi-1/training, {args.split} split ({len(problems)} tasks), seed {args.seed}, "
        f"prior {args.prior}"
    )
    print(
        "| variant | solved | by solutions | wall (compiling included) | tasks |\n"
        "|---|---|---|---|---|"
    )
    for row in rows:
        tasks = " ".join(row["solved"])
        print(
            f"| {row['variant']} | {len(row['solved'])} | {len(row['solved_by_solutions'])} "
            f"| {row['seconds']:.0f} s | {tasks} |"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
