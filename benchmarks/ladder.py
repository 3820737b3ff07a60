"""The difficulty ladder's baseline table: uniform random, the purejaxrl-style PPO example and
the GRPO agent on every rung (``jaxarc.data.ladder.LADDER``), and the reward study.

    python benchmarks/ladder.py --sections rewards random   # seconds
    python benchmarks/ladder.py --sections ppo              # tens of minutes on 2 cores
    python benchmarks/ladder.py --sections grpo             # tens of minutes on 2 cores
    python benchmarks/ladder.py --report                    # the tables, from the JSON

Each section writes ``<out>/<section>.json`` (default ``benchmarks/results/ladder``), with
the command of every training run, the date, the commit and the machine it ran on;
``--report`` renders them as ``<out>/ladder.md``, each command with its date, commit and
machine: the report the tables of docs/results.md ("Learning on the ladder") are copied
from. GRPO runs write their run directories under
``runs/ladder/``.

* ``rewards``: mean return and success of four scripted policies (SUBMIT at once, never
  submit with random edits, never submit doing nothing, the oracle) under the ``default``
  and ``generic`` reward presets, on the rungs the oracle covers.
* ``random``: a uniformly random flat action every step (the rung's operations), greedy
  success of the PPO table's meaning: the fraction of episodes solved.
* ``ppo``: ``examples/purejaxrl_ppo.py`` per rung (budget and seeds in :data:`PPO_RUNS`).
* ``grpo``: ``jaxarc train`` with the quick preset's settings per rung (:data:`GRPO_RUNS`).
* ``rl``: reward-only GRPO (``--preset rl``) learning curves per source, 3 seeds, and seed 0
  without hindsight groups (``ladder_reward.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import jaxarc
from jaxarc.data.generators import oracle_actions
from jaxarc.data.ladder import LADDER, RUNGS, Rung
from jaxarc.envs.episode import episode_pair
from jaxarc.grid import operation_ids as ops

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder_reward import reward_rows, section_rl  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = ("rewards", "random", "ppo", "grpo", "rl")
PRESETS = ("default", "generic")
ORACLE_RUNGS = ("gen/ladder-1", "gen/ladder-2", "gen/ladder-3", "gen/ladder-4", "gen/easy")
PPO_COMMON = ["--num-envs", "64", "--num-steps", "16", "--lr", "2.5e-4"]
# the PPO recipe that learns rung 2: a correct SUBMIT pays 10, entropy bonus 0.1
RECIPE = ("--success-bonus", "10", "--ent-coef", "0.1")
RENEW = ("--task-refresh", "64")
# (rung, reward preset, env steps, seeds, extra flags, file suffix): three seeds for rung 1
# and the recipe, one for the others
PPO_RUNS: tuple[tuple[str, str, int, tuple[int, ...], tuple[str, ...], str], ...] = (
    ("gen/ladder-1", "generic", 1_000_000, (0, 1, 2), (), ""),
    ("gen/ladder-1", "default", 500_000, (0,), (), ""),
    ("gen/ladder-2", "generic", 1_000_000, (0,), (), ""),
    ("gen/ladder-3", "generic", 2_000_000, (0,), (), ""),
    ("gen/ladder-3", "default", 1_000_000, (0,), (), ""),
    ("gen/ladder-4", "generic", 1_000_000, (0,), (), ""),
    ("gen/recolour", "generic", 1_000_000, (0,), (), ""),
    ("gen/easy", "generic", 1_000_000, (0,), (), ""),
    ("gen/medium", "generic", 300_000, (0,), (), ""),
    ("ARC-AGI-1", "generic", 100_000, (0,), (), ""),
    ("gen/ladder-1", "generic", 1_000_000, (0, 1, 2), RECIPE, "bonus10_ent01"),
    ("gen/ladder-2", "generic", 3_000_000, (0, 1, 2), RECIPE, "bonus10_ent01"),
    ("gen/ladder-3", "generic", 3_000_000, (0,), RECIPE, "bonus10_ent01"),
    # the recipe on a pool that renews 64 of its 1,024 tasks at every update
    ("gen/ladder-2", "generic", 3_000_000, (0, 1, 2), (*RECIPE, *RENEW), "bonus10_ent01_renew64"),
)
# (rung, canvas, extra flags): the quick preset (80 behaviour-cloning + 50 GRPO updates)
GRPO_RUNS: tuple[tuple[str, int, tuple[str, ...]], ...] = (
    ("gen/ladder-1", 4, ()),
    ("gen/ladder-2", 4, ()),
    ("gen/ladder-3", 4, ()),
    ("gen/ladder-4", 5, ()),
    ("gen/recolour", 8, ()),
)
# gen/easy under the quick preset is make run itself, measured on 3 seeds (docs/results.md,
# "The presets"); the report cites it rather than spending another half hour on it
GRPO_CITED = {
    "gen/easy": (
        "100% / 100% / 100% (3 seeds, 256 tasks; docs/results.md)",
        "66,560, 57-70 s",
    ),
    # the medium preset's 400 behaviour-cloning updates (seed 0, predictor off;
    # docs/results.md "The presets")
    "gen/medium": (
        "99.8% (medium preset, 400 BC updates, 512 tasks; docs/results.md)",
        "204,800, 260 s",
    ),
}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def provenance() -> dict[str, str]:
    """The date, the commit and the machine of a run made now."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    return {
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "commit": commit or "unknown",
        "machine": f"{os.cpu_count()}-core {jax.default_backend().upper()}",
    }


def plain_command(command: str) -> str:
    """A stored command as a user types it: without the ``nice`` the runs used, run
    directories under ``runs/ladder/``."""
    words = shlex.split(command)
    if words[:1] == ["nice"]:
        words = words[3:]
    text = shlex.join(words)
    return text.replace("/tmp/ladder-grpo-", "runs/ladder/grpo-")


def _when(row: dict, path: Path) -> str:
    """``date, commit, machine`` of a stored run: its own fields, else the commit that
    stored its file (runs made before the fields existed ran on the 2-core CPU)."""
    if "date" in row and "commit" in row:
        return f"{row['date']}, {row['commit']}, {row.get('machine', 'unknown machine')}"
    logged = subprocess.run(
        ["git", "log", "-1", "--format=%ad, %h", "--date=short", "--", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return f"{logged or 'not committed'}, 2-core CPU"


# ---------------------------------------------------------------- scripted policies


def _flat_env(rung: Rung, preset: str):
    env, params = jaxarc.make_flat(rung.name, **rung.make_options(reward_preset=preset))
    return env, params


def _oracle_indices(env, state, rung: Rung) -> list[list[int]]:
    """Each environment's oracle as flat action indices (SUBMIT last)."""
    task = state.episode_store
    pairs = jax.vmap(lambda t, p: episode_pair(t, p, "train"))(task, state.pair_index)
    codec = env.env  # FlatPointActionWrapper under FlattenObservationWrapper
    allowed = {ops.operation_id(o) for o in rung.operations}
    plans = []
    for i in range(int(state.pair_index.shape[0])):
        h, w = np.asarray(pairs.input_shape[i])
        inp = np.asarray(pairs.input_grid[i])[:h, :w]
        out = np.asarray(pairs.target_grid[i])[:h, :w]
        plan = []
        for op, r, c, _, _ in oracle_actions("recolour", inp, out):  # the flood oracle
            if op not in allowed and op != ops.SUBMIT:  # a one-cell rung plays FILL_c
                op = op - ops.FLOOD_0 + ops.operation_id("FILL_0")
            plan.append(codec.flat_index(op, r, c))
        plans.append(plan)
    return plans


def scripted_returns(rung: Rung, preset: str, episodes: int = 256, seed: int = 0) -> dict:
    """Mean return and success of the scripted policies on ``episodes`` fresh episodes."""
    env, params = _flat_env(rung, preset)
    codec = env.env
    submit = codec.flat_index(ops.SUBMIT, 0, 0)
    num_actions = int(env.action_space(params).n)
    reset = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))
    step = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))
    keys = jax.random.split(jax.random.key(seed), episodes)
    rng = np.random.default_rng(seed)
    cells = num_actions // len(rung.operations)
    edits = np.array([a for a in range(num_actions) if a // cells != submit // cells])
    _, state0 = reset(keys, params)
    plans = _oracle_indices(env, state0, rung)
    policies = {
        "submit_at_once": lambda t: np.full(episodes, submit),
        "never_submit_random_edits": lambda t: rng.choice(edits, episodes),
        "never_submit_idle": None,  # a step that changes nothing (measured below)
        "oracle": lambda t: np.array([p[min(t, len(p) - 1)] for p in plans]),
    }
    result = {}
    for name, policy in policies.items():
        _, state = reset(keys, params)
        total = np.zeros(episodes)
        done = np.zeros(episodes, bool)
        solved = np.zeros(episodes, bool)
        for t in range(rung.max_episode_steps):
            if policy is None:  # idle: the step penalty alone, every step until truncation
                step_penalty = float(params.reward.step_penalty)
                total = np.full(episodes, step_penalty * rung.max_episode_steps)
                break
            action = jnp.asarray(policy(t), jnp.int32)
            step_keys = jax.random.split(jax.random.key(seed + 1 + t), episodes)
            _, state, reward, terminated, truncated, info = step(step_keys, state, action, params)
            live = ~done
            total += np.where(live, np.asarray(reward), 0.0)
            solved |= live & np.asarray(info["success"])
            done |= np.asarray(terminated | truncated)
        result[name] = {"mean_return": float(total.mean()), "success": float(solved.mean())}
    return result


def section_rewards(rungs: list[str]) -> dict:
    rows = []
    for name in rungs:
        if name not in ORACLE_RUNGS:
            continue
        for preset in PRESETS:
            rows.append({"rung": name, "preset": preset, **scripted_returns(RUNGS[name], preset)})
            print(json.dumps(rows[-1]))
    return {"episodes": 256, "load": load(), "rows": rows}


def section_random(rungs: list[str], episodes: int = 4096) -> dict:
    rows = []
    for name in rungs:
        rung = RUNGS[name]
        for preset in PRESETS:
            env, params = _flat_env(rung, preset)
            num_actions = int(env.action_space(params).n)

            @jax.jit
            def play(key, env=env, params=params, num_actions=num_actions, rung=rung):
                keys = jax.random.split(key, episodes)
                obs, state = jax.vmap(env.reset, in_axes=(0, None))(keys, params)

                def body(carry, key):
                    state, done, solved, total = carry
                    a_key, s_key = jax.random.split(key)
                    action = jax.random.randint(a_key, (episodes,), 0, num_actions)
                    _, state, reward, term, trunc, info = jax.vmap(
                        env.step, in_axes=(0, 0, 0, None)
                    )(jax.random.split(s_key, episodes), state, action, params)
                    total = total + jnp.where(done, 0.0, reward)
                    solved = solved | (~done & info["success"])
                    return (state, done | term | trunc, solved, total), None

                zeros = jnp.zeros(episodes, bool)
                start = (state, zeros, zeros, jnp.zeros(episodes))
                steps = jax.random.split(key, rung.max_episode_steps)
                (_, _, solved, total), _ = jax.lax.scan(body, start, steps)
                return solved.mean(), total.mean()

            success, mean_return = jax.device_get(play(jax.random.key(0)))
            rows.append(
                {
                    "rung": name,
                    "preset": preset,
                    "episodes": episodes,
                    "num_actions": num_actions,
                    "success": float(success),
                    "mean_return": float(mean_return),
                }
            )
            print(json.dumps(rows[-1]))
    return {"load": load(), "rows": rows}


# ---------------------------------------------------------------- training runs


def _run(command: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    print("$", shlex.join(command), flush=True)
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        print(done.stdout[-2000:], done.stderr[-4000:], file=sys.stderr)
    return time.perf_counter() - start, done.stdout + done.stderr[-2000:]


def section_ppo(rungs: list[str], out: Path, rerun: bool) -> dict:
    """One example run per entry of :data:`PPO_RUNS` (all its seeds); a run whose results
    are stored already (``ppo_<rung>_<preset>.json`` and its ``.meta.json``) is reused
    unless ``rerun``."""
    rows = []
    for name, preset, steps, seeds, extra, suffix in PPO_RUNS:
        if name not in rungs:
            continue
        slug = f"ppo_{name.replace('/', '_')}_{preset}" + (f"_{suffix}" if suffix else "")
        json_path, meta_path = out / f"{slug}.json", out / f"{slug}.meta.json"
        if not rerun and json_path.exists() and meta_path.exists():
            meta = json.loads(meta_path.read_text())
        else:
            command = [sys.executable, "examples/purejaxrl_ppo.py"]
            command += ["--env", name, "--reward-preset", preset]
            command += ["--total-timesteps", str(steps), *PPO_COMMON, *extra]
            command += ["--seed", *map(str, seeds)]
            command += ["--json", str(json_path.relative_to(ROOT))]
            load_before = load()
            wall, log = _run(["nice", "-n", "5", *command])
            meta = {
                "command": shlex.join(command).replace(sys.executable, "python"),
                "wall_s": round(wall, 1),
                **provenance(),
                "load_before": load_before,
                "load_after": load(),
                "log_tail": log[-1500:],
            }
            meta_path.write_text(json.dumps(meta, indent=1))
        results = json.loads(json_path.read_text()) if json_path.exists() else []
        for r in results:
            r.pop("config", None)
        rows.append({"rung": name, "preset": preset, "suffix": suffix, **meta, "seeds": results})
        print(json.dumps({k: v for k, v in rows[-1].items() if k != "log_tail"})[:600])
    return {"rows": rows}


def section_grpo(rungs: list[str], out: Path, rerun: bool) -> dict:
    """One quick-preset ``jaxarc train`` per entry of :data:`GRPO_RUNS`; a finished run (its
    ``grpo_<rung>.meta.json`` and run directory) is reused unless ``rerun``."""
    rows = []
    for name, canvas, extra in GRPO_RUNS:
        if name not in rungs:
            continue
        slug = name.replace("/", "_")
        run_dir = Path("runs") / "ladder" / f"grpo-{slug}"  # relative to the repository
        meta_path = out / f"grpo_{slug}.meta.json"
        command = [str(Path(sys.executable).with_name("jaxarc"))]
        command += ["train", "--preset", "quick", "--source", name, "--canvas", str(canvas)]
        command += ["--run-dir", str(run_dir), "--fresh-run-dir", "--no-progress"]
        command += ["--no-tensorboard", "--no-compile-cache", "--eval-every", "130", *extra]
        if not rerun and meta_path.exists():
            rows.append(json.loads(meta_path.read_text()))
            continue
        from jaxarc.cli.train import fresh_run_dir

        run_dir = fresh_run_dir(ROOT / run_dir)  # where the command above will write
        load_before = load()
        wall, log = _run(["nice", "-n", "5", *command])
        lines = (run_dir / "metrics.jsonl").read_text().splitlines()
        metrics = [json.loads(line) for line in lines if line.strip()]
        config = json.loads((run_dir / "config.json").read_text())
        final = metrics[-1]
        update_seconds = [m.get("time/update_seconds", 0.0) for m in metrics]
        row = {
            "rung": name,
            "command": shlex.join(command).replace(str(Path(sys.executable).parent) + "/", ""),
            "wall_s": round(wall, 1),
            "first_update_s": round(update_seconds[0], 1),  # compilation included
            "later_updates_s": round(sum(update_seconds[1:]), 1),
            "updates": int(final.get("update", len(metrics))),
            "bc_updates": config.get("bc_updates"),
            "env_steps": int(final.get("total_env_steps", 0)),
            "eval_success": final.get("eval_success_rate"),
            "eval_tasks": config.get("eval_tasks"),
            "train_success_last": final.get("success_rate"),
            **provenance(),
            "load_before": load_before,
            "load_after": load(),
            "log_tail": log[-1500:],
        }
        meta_path.write_text(json.dumps(row, indent=1))
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "log_tail"}))
    return {"rows": rows}


# ---------------------------------------------------------------- report


def _pct(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{100 * x:.2f}%" if 0 < x < 0.01 else f"{100 * x:.1f}%"


def _ppo_cells(row: dict | None) -> tuple[str, str]:
    if not row or not row["seeds"]:
        return "not run", "-"
    seeds = row["seeds"]
    success = " / ".join(_pct(s["greedy_success"]) for s in seeds)
    cost = "; ".join(
        f"{s['env_steps']:,}, {s['train_s']:.0f} s (+{s['compile_s']:.0f} s)" for s in seeds
    )
    return success, cost


def report(out: Path) -> str:
    """The tables as markdown, also written to ``<out>/ladder.md``: the baselines per rung
    with every run's command, the scripted policies under the two reward presets, and the
    reward-only agents."""

    def read(section: str) -> dict:
        path = out / f"{section}.json"
        return json.loads(path.read_text()) if path.exists() else {"rows": []}

    random_rows = {(r["rung"], r["preset"]): r for r in read("random")["rows"]}
    ppo_rows = {(r["rung"], r["preset"], r.get("suffix", "")): r for r in read("ppo")["rows"]}
    grpo_rows = {r["rung"]: r for r in read("grpo")["rows"]}
    baseline = [
        "| rung | flat actions | random | PPO greedy success (per seed) | PPO env steps, "
        "training time (+compilation) | GRPO quick: held-out success | GRPO env steps, wall "
        "(compilation included) |",
        "|---|---|---|---|---|---|---|",
    ]
    for rung in LADDER:
        rnd = random_rows.get((rung.name, "generic"))
        ppo_success, ppo_cost = _ppo_cells(ppo_rows.get((rung.name, "generic", "")))
        grpo = grpo_rows.get(rung.name)
        grpo_success = _pct(grpo["eval_success"]) if grpo else "not run"
        grpo_cost = "-"
        if not grpo and rung.name in GRPO_CITED:
            grpo_success, grpo_cost = GRPO_CITED[rung.name]
        if grpo:
            seconds = grpo["wall_s"] or (
                grpo["first_update_s"] + grpo["later_updates_s"] + grpo.get("eval_s", 0)
            )
            grpo_cost = f"{grpo['env_steps']:,}, {seconds:.0f} s"
        baseline.append(
            f"| `{rung.name}` | {rnd['num_actions'] if rnd else '-'} | "
            f"{_pct(rnd['success']) if rnd else '-'} | {ppo_success} | {ppo_cost} | "
            f"{grpo_success} | {grpo_cost} |"
        )
    baseline += ["", "The same PPO under the `default` reward preset:", ""]
    for (name, preset, _), row in ppo_rows.items():
        if preset == "default":
            success, cost = _ppo_cells(row)
            baseline.append(f"* `{name}`: greedy success {success} ({cost})")
    baseline += ["", "The commands, each with its date, commit and machine:", ""]
    for row in ppo_rows.values():
        suffix = f"_{row['suffix']}" if row.get("suffix") else ""
        slug = f"ppo_{row['rung'].replace('/', '_')}_{row['preset']}{suffix}"
        when = _when(row, out / f"{slug}.meta.json")
        baseline.append(f"* `{plain_command(row['command'])}`: {when}")
    for row in grpo_rows.values():
        when = _when(row, out / f"grpo_{row['rung'].replace('/', '_')}.meta.json")
        baseline.append(f"* `{plain_command(row['command'])}`: {when}")
    scripted = [
        "| rung | preset | SUBMIT at once | never submit, random edits "
        "| never submit, idle | oracle | uniformly random |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in read("rewards")["rows"]:
        cells = [
            f"{r[p]['mean_return']:+.3f} ({_pct(r[p]['success'])})"
            for p in ("submit_at_once", "never_submit_random_edits", "never_submit_idle", "oracle")
        ]
        rnd = random_rows.get((r["rung"], r["preset"]))
        cells.append(f"{rnd['mean_return']:+.3f} ({_pct(rnd['success'])})" if rnd else "-")
        scripted.append(f"| `{r['rung']}` | {r['preset']} | " + " | ".join(cells) + " |")

    def ppo_cell(source: str, suffix: str) -> str:
        row = ppo_rows.get((source, "generic", suffix))
        if not row or not row["seeds"]:
            return "not run"
        steps = row["seeds"][0]["env_steps"]
        cell = f"{_ppo_cells(row)[0]} ({steps / 1e6:.1f}M steps)"
        renewed = ppo_rows.get((source, "generic", f"{suffix}_renew64")) if suffix else None
        if renewed and renewed["seeds"]:
            cell = f"{cell}; renewing its pool: {_ppo_cells(renewed)[0]}"
        return cell

    def grpo_cell(source: str) -> str:
        if source in grpo_rows:
            return f"{_pct(grpo_rows[source]['eval_success'])} (seed 0)"
        return GRPO_CITED.get(source, ("not run",))[0]

    reward = reward_rows(out, ppo_cell, grpo_cell)
    text = "\n\n".join("\n".join(table) for table in (baseline, scripted, reward)) + "\n"
    (out / "ladder.md").write_text(text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sections", nargs="*", default=[], choices=SECTIONS)
    parser.add_argument("--rungs", nargs="+", default=[r.name for r in LADDER])
    parser.add_argument("--out", default=str(ROOT / "benchmarks/results/ladder"))
    parser.add_argument("--report", action="store_true", help="render <out>/ladder.md")
    parser.add_argument("--rerun", action="store_true", help="ppo, grpo: rerun stored runs")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for section in args.sections:
        if section == "rewards":
            result = section_rewards(args.rungs)
        elif section == "random":
            result = section_random(args.rungs)
        elif section == "ppo":
            result = section_ppo(args.rungs, out, args.rerun)
        elif section == "rl":
            result = section_rl(args.rungs, out)
        else:
            result = section_grpo(args.rungs, out, args.rerun)
        path = out / f"{section}.json"
        if path.exists() and set(args.rungs) != {r.name for r in LADDER}:  # merge a partial run
            old = json.loads(path.read_text())
            keep = [r for r in old["rows"] if r["rung"] not in args.rungs]
            result["rows"] = keep + result["rows"]
        path.write_text(json.dumps(result, indent=1))
    if args.report:
        print(report(out))


if __name__ == "__main__":
    main()
