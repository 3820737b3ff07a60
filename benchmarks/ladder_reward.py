"""The ladder's learning-from-reward table: reward-only GRPO (the ``rl`` preset) per source,
next to the PPO example (plain and with the success-bonus recipe), behaviour cloning + GRPO
and the random and untrained references. (Runs without hindsight groups are the ablations
of docs/training.md, "Learning from reward".)

The GRPO runs are ``benchmarks/learning_curve.py`` curves (JSON lines: a header with the
command, date, commit and machine, then one row per evaluation), stored as
``rl_<source>_seed<S>.jsonl`` in the results folder. ``python benchmarks/ladder.py
--sections rl`` runs the missing ones; ``--report --docs`` renders the table into
docs/ladder.md (``<!-- ladder:reward -->``).
"""

from __future__ import annotations

import json
import math
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# (source, at most minutes per run, extra --set fields): the rungs and gen/easy run the
# preset's 600 updates (the minutes only bound a slow machine), gen/medium 25 minutes
RL_RUNS: tuple[tuple[str, float, tuple[str, ...]], ...] = (
    ("gen/ladder-1", 20, ()),
    ("gen/ladder-2", 20, ()),
    ("gen/ladder-3", 20, ()),
    ("gen/ladder-4", 20, ()),
    ("gen/recolour", 20, ()),
    ("gen/easy", 20, ()),
    ("gen/medium", 25, ("num_updates=100000",)),
)
RL_SEEDS = (0, 1, 2)
SUCCESS = 0.9  # the bar: first evaluation at or above it


def slug(source: str) -> str:
    return source.replace("/", "_").replace("-", "_")


def curve_path(out: Path, source: str, seed: int) -> Path:
    return out / f"rl_{slug(source)}_seed{seed}.jsonl"


def curve_command(source: str, minutes: float, seed: int, sets: tuple[str, ...], path: Path):
    """The ``learning_curve.py`` command of one run (paths relative to the repository)."""
    command = ["python", "benchmarks/learning_curve.py", "--preset", "rl", "--source", source]
    every = "100" if any(s.startswith("num_updates") for s in sets) else "25"
    command += ["--minutes", f"{minutes:g}", "--eval-every", every]
    command += ["--eval-tasks", "512", "--seed", str(seed)]
    if sets:
        command += ["--set", *sets]
    return command + ["--out", str(path.relative_to(ROOT))]


def section_rl(sources: list[str], out: Path) -> dict:
    """Runs every missing curve (:data:`RL_SEEDS`); one row per source names the curves it
    ran."""
    rows = []
    for source, minutes, sets in RL_RUNS:
        if source not in sources:
            continue
        ran = []
        for seed in RL_SEEDS:
            path = curve_path(out, source, seed)
            if path.exists():
                continue
            command = curve_command(source, minutes, seed, sets, path)
            print("$", shlex.join(command), flush=True)
            subprocess.run([sys.executable, *command[1:]], cwd=ROOT, check=True)
            ran.append(str(path.relative_to(ROOT)))
        rows.append({"rung": source, "ran": ran})
    return {"rows": rows}


def read_curve(path: Path) -> dict | None:
    """A stored curve summarised: the header's provenance, the final held-out greedy success,
    the first evaluation at or above :data:`SUCCESS` (update, env steps, seconds since the
    start), the seconds to the first update (compilation included) and the untrained
    policy's success."""
    if not path.exists():
        return None
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = [_evaluation(r) for r in lines[1:]]
    rows = [r for r in rows if r is not None]
    if not rows:  # (a run still compiling)
        return None
    header = lines[0]
    steps_per_update = next((r["env_steps"] for r in lines[1:] if "env_steps" in r), 0.0)
    first = next((r for r in rows if r["success"] >= SUCCESS), None)
    return {
        "command": re.sub(r"--out \S*/benchmarks/", "--out benchmarks/", header.get("command", "")),
        "when": f"{header.get('date')}, {header.get('commit')}, {header.get('machine')}",
        "random": header.get("random_success"),
        "untrained": rows[0]["success"],
        "final": rows[-1]["success"],
        "best": max(r["success"] for r in rows),
        "updates": rows[-1]["update"],
        "first_update_s": next((r["seconds"] for r in rows if r["update"] >= 1), math.nan),
        "seconds": rows[-1]["seconds"],
        "reached": None
        if first is None
        else {
            "update": first["update"],
            "env_steps": int(first["update"] * steps_per_update),
            "seconds": first["seconds"],
        },
        "families": rows[-1]["families"],
    }


def _evaluation(row: dict) -> dict | None:
    """An evaluation row of a curve (``eval_success_rate``, ``eval_success/<family>``; curves
    written before the trainer's metric names: ``heldout_greedy``...), else None."""
    for total, family in (
        ("eval_success_rate", "eval_success/"),
        ("heldout_greedy", "heldout_greedy/"),
    ):
        if total in row:
            families = {k[len(family) :]: v for k, v in row.items() if k.startswith(family)}
            return {
                "update": row["update"],
                "seconds": row["seconds"],
                "success": row[total],
                "families": families,
            }
    return None


def _pct(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{100 * x:.2f}%" if 0 < x < 0.01 else f"{100 * x:.1f}%"


def _reached(curve: dict) -> str:
    hit = curve["reached"]
    if hit is None:
        return f"not in {curve['updates']:,} updates ({curve['seconds']:.0f} s)"
    return (
        f"update {hit['update']:,}: {hit['env_steps']:,} steps, {hit['seconds']:.0f} s "
        f"({curve['first_update_s']:.0f} s to update 1)"
    )


def reward_rows(out: Path, ppo_cells, grpo_cells) -> list[str]:
    """The markdown table and the commands under it. ``ppo_cells(source, suffix)`` and
    ``grpo_cells(source)`` give the other agents' cells (from ladder.py's stored runs)."""
    table = [
        "| source | uniform random / untrained (GRPO's actions) "
        "| reward-only GRPO: held-out greedy success (per seed) "
        "| first evaluation at >=90% (per seed) "
        "| PPO, generic preset | PPO + success bonus 10, entropy 0.1 | BC + GRPO (quick) |",
        "|---|---|---|---|---|---|---|",
    ]
    commands = []
    for source, _, _ in RL_RUNS:
        curves = [read_curve(curve_path(out, source, s)) for s in RL_SEEDS]
        curves = [c for c in curves if c]
        if not curves:
            continue
        ref = curves[0]
        success = " / ".join(_pct(c["final"]) for c in curves)
        reached = "; ".join(_reached(c) for c in curves)
        table.append(
            f"| `{source}` | {_pct(ref['random'])} / {_pct(ref['untrained'])} | {success} | "
            f"{reached} | {ppo_cells(source, '')} | "
            f"{ppo_cells(source, 'bonus10_ent01')} | {grpo_cells(source)} |"
        )
        commands += [f"* `{c['command']}`: {c['when']}" for c in curves]
    title = "The reward-only GRPO commands, each with its date, commit and machine:"
    return [*table, "", title, "", *commands]
