"""A trained policy's two attempts at every test input: a greedy episode and a sampled one.

The policy is frozen. Each test input is played as an evaluation episode with all the
task's demonstrations as context, like ``jaxarc eval`` (it reuses its policy checks and its
rollout), but the episodes run on a bank built from the :class:`~jaxarc.solve.problem.Problem`
s, which hold no test output: the environment has no target to read, and the prediction
is the grid the episode ends with (after SUBMIT, or at the step limit).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import PRNGKeyArray

from jaxarc.agents.model.compilation import policy_jit
from jaxarc.agents.run.evaluate import (
    adapt_policy_to_canvas,
    check_policy_reads,
    play_policy_episodes,
)
from jaxarc.data.bank import DEFAULT_CANVAS, TaskBank
from jaxarc.data.stacking import bank_from_tasks
from jaxarc.envs import EnvironmentConfig, JaxArcConfig, UnifiedDatasetConfig
from jaxarc.solve.problem import Problem
from jaxarc.solve.submission import grid_list


def bank_without_test_outputs(
    problems: list[Problem], name: str = "solve", canvas_shape: tuple[int, int] = DEFAULT_CANVAS
) -> TaskBank:
    """The problems as a bank on ``canvas_shape`` (the ARC canvas by default); its test
    pairs have no outputs."""
    raw = {
        p.task_id: {
            "train": [
                {"input": grid_list(a), "output": grid_list(b)}
                for a, b in zip(p.demo_inputs, p.demo_outputs, strict=True)
            ],
            "test": [{"input": grid_list(g)} for g in p.test_inputs],
        }
        for p in problems
    }
    return bank_from_tasks(raw, canvas_shape=canvas_shape, name=name)


def policy_attempts(
    policy: Any,
    action_config: Any,
    problems: list[Problem],
    *,
    max_episode_steps: int,
    batch_size: int,
    key: PRNGKeyArray,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, list[tuple[np.ndarray, np.ndarray]]]:
    """``(greedy, sampled)`` final grids per test input of every problem, by task id."""
    bank = bank_without_test_outputs(problems)
    env_config = JaxArcConfig(
        environment=EnvironmentConfig(max_episode_steps=max_episode_steps, episode_mode="eval"),
        dataset=UnifiedDatasetConfig(*bank.canvas_shape),
        action=action_config,
    )
    policy = adapt_policy_to_canvas(policy, bank.canvas_shape)
    check_policy_reads(policy, env_config, bank)
    rows = [(t, q, g) for t, p in enumerate(problems) for q in range(p.num_tests) for g in (1, 0)]
    table = np.asarray(rows, np.int32)
    total = len(rows)
    padded = math.ceil(total / batch_size) * batch_size
    table = np.pad(table, ((0, padded - total), (0, 0)))
    keys = jax.random.split(key, padded)

    def final_grids(policy, keys, t, q, g):
        states = play_policy_episodes(policy, env_config, bank, keys, t, q, g)
        return states.grid, states.grid_shape

    program = policy_jit(final_grids)
    grids, shapes = [], []
    for start in range(0, padded, batch_size):
        if progress is not None:
            progress(int(table[min(start, total - 1), 0]), len(problems))
        part = table[start : start + batch_size]
        grid, shape = program(
            policy,
            keys[start : start + batch_size],
            jnp.asarray(part[:, 0]),
            jnp.asarray(part[:, 1]),
            jnp.asarray(part[:, 2].astype(bool)),
        )
        grids.append(np.asarray(grid))
        shapes.append(np.asarray(shape))
    if progress is not None:
        progress(len(problems), len(problems))
    grid_rows, shape_rows = np.concatenate(grids)[:total], np.concatenate(shapes)[:total]
    made = [g[: s[0], : s[1]].copy() for g, s in zip(grid_rows, shape_rows, strict=True)]
    result: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {p.task_id: [] for p in problems}
    for k in range(0, total, 2):
        task = problems[rows[k][0]].task_id
        result[task].append((made[k], made[k + 1]))
    return result
