"""Solve rate of a trained policy on ARC test pairs: pass@k over sampled attempts, by task.

Every scored test pair of every task is played ``k`` times in eval mode (the target is the
stored test output, never shown to the policy) with actions sampled from the policy; a pair
counts as solved if any attempt submits the exact output, a task if all its scored pairs
are solved (the ARC rule). Episodes run in fixed-size batches inside one compiled function.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Int32, PRNGKeyArray

from jaxarc.agents.model.compilation import policy_jit
from jaxarc.agents.model.policy import AbstractPolicy
from jaxarc.agents.run.checkpoint import (
    META_FILE,
    CheckpointError,
    config_from_dict,
    latest_checkpoint,
    load_checkpoint,
)
from jaxarc.agents.run.family_eval import evaluate_on_generator
from jaxarc.data.bank import TaskBank
from jaxarc.envs import EnvironmentConfig, JaxArcConfig, UnifiedDatasetConfig
from jaxarc.envs.functional import batch_reset
from jaxarc.envs.rollout import play
from jaxarc.envs.types import ArcObservation


class EvaluationError(Exception):
    """The checkpoint or the task source cannot be evaluated (with the reason)."""


def resolve_checkpoint_dir(path: str | Path) -> Path:
    """``path`` itself if it is a checkpoint, else the newest one in ``path`` or
    ``path/checkpoints`` (so a run directory works too)."""
    path = Path(path)
    if (path / META_FILE).is_file():
        return path
    for root in (path / "checkpoints", path):
        found = latest_checkpoint(root)
        if found is not None:
            return found
    raise EvaluationError(f"no checkpoint found in {path} (nor in {path / 'checkpoints'})")


def _episode_table(bank: TaskBank) -> tuple[np.ndarray, np.ndarray]:
    """``(task_index, pair_index)`` of every scored test pair, task-major."""
    scored = np.asarray(bank.test_scored)
    tasks, pairs = np.nonzero(scored)
    return tasks.astype(np.int32), pairs.astype(np.int32)


def play_policy_episodes(
    policy: Any,
    env_config: JaxArcConfig,
    bank: TaskBank,
    keys: PRNGKeyArray,
    task_indices: Int32[Array, " B"],
    pair_indices: Int32[Array, " B"],
    greedy: Bool[Array, " B"] | None = None,
) -> Any:
    """Play one episode per row, the task's demonstrations encoded once; the final states.

    Actions are sampled from the policy, or its mode where ``greedy`` is set (``None``: all
    sampled). ``bank`` must be closed over, not traced: the environment keeps it static."""
    reset_keys, step_keys = jax.vmap(lambda k: jax.random.split(k), out_axes=1)(keys)
    states, obs = batch_reset(reset_keys, env_config, bank, task_indices, pair_indices)
    steps = env_config.environment.max_episode_steps
    per_step_keys = jax.vmap(lambda k: jax.random.split(k, steps), out_axes=1)(step_keys)
    tasks = jax.vmap(policy.encode_task)(obs)  # the demonstration pairs, once per episode

    def choose(o: ArcObservation, t: Any, k: PRNGKeyArray, g: Any) -> Any:
        distribution = policy.act(o, t)
        sampled = distribution.sample(k)
        if g is None:
            return sampled
        return jax.tree.map(lambda m, s: jnp.where(g, m, s), distribution.mode(), sampled)

    def act(states: Any, obs: ArcObservation, step_key: PRNGKeyArray) -> tuple[Any, None]:
        return jax.vmap(choose)(obs, tasks, step_key, greedy), None

    states, _, _ = play(states, obs, env_config, act, per_step_keys)
    return states


def adapt_policy_to_canvas(policy: AbstractPolicy, canvas: tuple[int, int]) -> AbstractPolicy:
    """``policy`` set to read a ``canvas``-sized grid (:meth:`AbstractPolicy.with_canvas`);
    :func:`check_policy_reads` then tells whether it can read the new canvas."""
    return policy.with_canvas(canvas)


def check_policy_reads(policy: Any, env_config: JaxArcConfig, bank: TaskBank) -> None:
    """Raise :class:`EvaluationError` unless ``policy`` accepts observations of ``bank``'s
    canvas and demonstration count (a convolutional policy does; a fixed-size one not)."""
    keys = jax.random.split(jax.random.key(0), 1)
    try:
        _, obs = jax.eval_shape(
            lambda k: batch_reset(k, env_config, bank, jnp.zeros(1, jnp.int32)), keys
        )
        one = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape[1:], x.dtype), obs)
        jax.eval_shape(lambda o: policy(o).sample(jax.random.key(0)), one)
    except Exception as err:  # shape errors from inside the policy
        raise EvaluationError(
            f"the policy cannot read {bank.name} observations (canvas {bank.canvas_shape}, "
            f"{bank.max_demos} demonstration pairs): {type(err).__name__}: {err}. Policies "
            "with fixed-size layers only run on the canvas they were trained on."
        ) from None


def evaluate_policy(
    policy: Any,
    action_config: Any,
    bank: TaskBank,
    *,
    attempts: int,
    max_episode_steps: int,
    batch_size: int,
    key: PRNGKeyArray,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """pass@``attempts`` of ``policy`` on ``bank``'s scored test pairs; returns the report.

    ``progress(done, total)`` is called with the number of tasks whose every attempt has
    been played: ``(0, total)`` before the first batch (whose call compiles the program),
    then after every batch."""
    env_config = JaxArcConfig(
        environment=EnvironmentConfig(max_episode_steps=max_episode_steps, episode_mode="eval"),
        dataset=UnifiedDatasetConfig(*bank.canvas_shape),
        action=action_config,
    )
    policy = adapt_policy_to_canvas(policy, bank.canvas_shape)
    check_policy_reads(policy, env_config, bank)
    tasks, pairs = _episode_table(bank)
    if tasks.size == 0:
        raise EvaluationError(f"{bank.name} has no test pairs with known outputs to score")
    rows_task = np.repeat(tasks, attempts)
    rows_pair = np.repeat(pairs, attempts)
    total = rows_task.size
    padded = math.ceil(total / batch_size) * batch_size  # one compiled shape for all batches
    rows_task = np.pad(rows_task, (0, padded - total))
    rows_pair = np.pad(rows_pair, (0, padded - total))
    keys = jax.random.split(key, padded)
    play = policy_jit(
        lambda policy, keys, tasks, pairs: (
            play_policy_episodes(policy, env_config, bank, keys, tasks, pairs).success
        )
    )
    # tasks whose rows all lie before row r (rows are task-major)
    task_ends = np.flatnonzero(np.diff(rows_task[:total], append=-1)) + 1
    batches = []
    for start in range(0, padded, batch_size):
        if progress is not None:
            progress(int(np.searchsorted(task_ends, start, side="right")), task_ends.size)
        batches.append(
            np.asarray(
                play(
                    policy,
                    keys[start : start + batch_size],
                    jnp.asarray(rows_task[start : start + batch_size]),
                    jnp.asarray(rows_pair[start : start + batch_size]),
                )
            )
        )
    if progress is not None:
        progress(task_ends.size, task_ends.size)
    success = np.concatenate(batches)[:total].reshape(-1, attempts)
    per_task: dict[int, list[dict[str, Any]]] = {}
    for (task, pair), outcomes in zip(zip(tasks, pairs, strict=True), success, strict=True):
        per_task.setdefault(int(task), []).append(
            {
                "pair": int(pair),
                "attempts": [bool(s) for s in outcomes],
                "solved": bool(any(outcomes)),
            }
        )
    results = [
        {
            "task_id": bank.task_ids[task],
            "solved": all(p["solved"] for p in task_pairs),
            "test_pairs": task_pairs,
        }
        for task, task_pairs in per_task.items()
    ]
    solved_tasks = sum(r["solved"] for r in results)
    solved_pairs = int(success.any(axis=1).sum())
    return {
        "source": bank.name,
        "attempts": attempts,
        "max_episode_steps": max_episode_steps,
        "num_tasks": len(results),
        "solved_tasks": solved_tasks,
        "solve_rate": solved_tasks / len(results),
        "num_pairs": int(tasks.size),
        "solved_pairs": solved_pairs,
        "pair_solve_rate": solved_pairs / int(tasks.size),
        "tasks": results,
    }


BASELINES = ("predictor-rule",)
BASELINE_MAX_STEPS = 10  # the rule floods one region per step, then submits


def load_trained_policy(checkpoint: str | Path) -> tuple[Any, Any, Path]:
    """``(train config, policy, checkpoint dir)`` of a checkpoint or run directory."""
    from jaxarc.agents.grpo.config import TrainConfig
    from jaxarc.agents.grpo.train import make_train

    path = resolve_checkpoint_dir(checkpoint)
    try:
        config = config_from_dict(TrainConfig, json.loads((path / "config.json").read_text()))
        init, _ = make_train(config)
        loaded = load_checkpoint(path, init(jax.random.key(config.seed)))
    except (CheckpointError, OSError, ValueError, TypeError) as err:
        raise EvaluationError(f"cannot load {path}: {err}") from None
    return config, loaded.state.policy, path


def baseline_policy(name: str, canvas: int) -> tuple[Any, Any]:
    """``(config, policy)`` of the zero-learning baseline ``name`` (see :data:`BASELINES`):
    point actions, FLOOD_c and SUBMIT, :data:`BASELINE_MAX_STEPS` steps."""
    from jaxarc.agents.grpo.config import FLOOD_AND_SUBMIT, TrainConfig
    from jaxarc.agents.model.predictor_rule import predictor_rule_policy

    if name not in BASELINES:
        raise EvaluationError(f"unknown baseline {name!r}; known: {', '.join(BASELINES)}")
    config = TrainConfig(
        selection_format="point",
        allowed_operations=FLOOD_AND_SUBMIT,
        canvas=canvas,
        max_episode_steps=BASELINE_MAX_STEPS,
    )
    return config, predictor_rule_policy("point", (canvas, canvas))


def evaluate_checkpoint(
    checkpoint: str | Path | None,
    source: str,
    *,
    baseline: str | None = None,
    attempts: int = 2,
    max_episode_steps: int | None = None,
    limit: int | None = None,
    batch_size: int = 32,
    seed: int = 0,
    by_family: bool = False,
    canvas: int | None = None,
    min_side: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Load the policy of ``checkpoint`` (a checkpoint or run directory), or the zero-learning
    ``baseline``, and evaluate it on ``source``: pass@``attempts`` by task (see
    :func:`evaluate_policy`).

    Every source training takes works: a generated family (``"gen/easy"``) is evaluated on
    ``limit`` (default: the run's ``eval_tasks``) tasks generated from ``seed``. With
    ``by_family`` a generator is instead scored greedily on ``limit`` (default 512) fresh
    tasks, overall and per family, on a ``canvas`` x ``canvas`` canvas with grids of at least
    ``min_side`` cells a side (``canvas=12, min_side=10``: sizes a policy trained on 8x8
    never saw); see :func:`jaxarc.agents.run.family_eval.evaluate_on_generator`.
    ``progress`` follows the tasks of a task-bank evaluation (see :func:`evaluate_policy`);
    a generator scored by family plays all its tasks in one call.
    """
    from jaxarc.data import load_source
    from jaxarc.data.stacking import generated_bank

    if (checkpoint is None) == (baseline is None):
        raise EvaluationError("give a checkpoint or a baseline (exactly one)")
    generated = source.startswith("gen/")
    if (canvas is not None or min_side) and not (by_family and generated):
        raise EvaluationError("canvas and min_side apply to generated sources by family only")
    if checkpoint is not None:
        config, policy, path = load_trained_policy(checkpoint)
    else:
        side = (canvas or 8) if generated else 30  # (a bank's canvas is adopted below)
        config, policy = baseline_policy(baseline, side)
        path = None
    if max_episode_steps is not None:
        config = config.replace(max_episode_steps=max_episode_steps)
    if generated and by_family:
        try:
            report = evaluate_on_generator(
                policy,
                config,
                source,
                canvas=canvas,
                min_side=min_side,
                num_tasks=limit or 512,
                seed=seed,
            )
        except ValueError as err:
            raise EvaluationError(str(err)) from None
    else:
        try:
            bank = load_source(source)
        except Exception as err:
            raise EvaluationError(f"cannot load task source {source!r}: {err}") from None
        if not isinstance(bank, TaskBank):  # a generated family: `limit` (or eval_tasks) tasks
            bank = generated_bank(bank, limit or int(config.eval_tasks), seed, name=source)
        elif limit is not None:
            bank = bank.subset(range(min(limit, bank.num_tasks)))
        report = evaluate_policy(
            policy,
            config.env_config().action,
            bank,
            attempts=attempts,
            max_episode_steps=int(config.max_episode_steps),
            batch_size=batch_size,
            key=jax.random.key(seed),
            progress=progress,
        )
    report["checkpoint"] = str(path) if path is not None else None
    report["baseline"] = baseline
    report["train_config"] = dataclasses.asdict(config)
    return report
