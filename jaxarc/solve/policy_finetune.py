"""Test-time reinforcement learning of a trained policy (``jaxarc solve --method
test-time-rl``, experimental): a copy of the policy learns each task from its demonstrations
alone, then plays the task's test inputs.

For every task a copy of the policy runs ``updates`` GRPO updates
(:func:`jaxarc.agents.grpo.train.grpo_update`) whose episodes play the task's
demonstration pairs in train mode: one pair's input, the task's other pairs as context, the
reward from that pair's known output (leave-one-out; the played pair's output is never in
the observation). No expert and no test output is involved. The tuned copy then plays
each test input twice, greedily and by sampling, with every demonstration as context: the
two attempts.

Tasks are trained ``tasks_at_once`` at a time: the per-task policies and optimiser states
are stacked on a leading slot axis and the update is vmapped over it, every slot playing
its own task of one bank. The bank (the problems, no test output) is closed over, and the
slot's task index is the traced input that selects its task, so a bank compiles three
programs, the update, the attempts and the replay of the demonstrations, whatever its
number of tasks.

The problems are played on the smallest canvas of :data:`POLICY_CANVAS_SIDES` that holds
every grid they show, in one bank per canvas and class of demonstration count (up to 3 pairs, 4,
6, 10, then each count alone: :data:`DEMO_COUNTS`), since a bank pads every task to its
largest number of pairs. Both matter to speed: most ARC tasks fit 10x10 or 15x15, where a
step costs a fraction of the 30x30 one; and a learned in-context predictor compares every
pair with every other, so on a 30x30 canvas an update of a bank padded to 6 pairs costs
several times one padded to 3 (one task with 6 pairs would slow every task of its canvas).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Int32, PRNGKeyArray

from jaxarc.agents.grpo.config import TrainConfig
from jaxarc.agents.grpo.train import grpo_update
from jaxarc.agents.grpo.train_state import TrainState
from jaxarc.agents.grpo.train_step import make_optimizer
from jaxarc.agents.model.compilation import policy_jit
from jaxarc.agents.model.policy import AbstractPolicy
from jaxarc.agents.model.tempered import TemperedPolicy
from jaxarc.agents.run.evaluate import (
    adapt_policy_to_canvas,
    check_policy_reads,
    play_policy_episodes,
)
from jaxarc.solve.attempts import TaskAttempts
from jaxarc.solve.policy_attempts import bank_without_test_outputs
from jaxarc.solve.problem import Problem

Attempts = dict[str, TaskAttempts]  # by task id
POLICY_CANVAS_SIDES = (10, 15, 20, 30)  # (a policy is cheaper on 15x15 than on 20x20)
DEMO_COUNTS = (3, 4, 6, 10)  # classes of demonstration count (beyond 10: each count alone)


def canvas_side(problem: Problem) -> int:
    """The smallest side of :data:`POLICY_CANVAS_SIDES` that holds every grid of ``problem``."""
    grids = (*problem.demo_inputs, *problem.demo_outputs, *problem.test_inputs)
    largest = max(max(g.shape) for g in grids)
    return next(side for side in POLICY_CANVAS_SIDES if side >= largest)


def demo_count(problem: Problem) -> int:
    """The class of ``problem``'s number of demonstration pairs: the first of
    :data:`DEMO_COUNTS` that holds it, or the number itself beyond them. Tasks of one canvas
    and class share a bank."""
    return next((n for n in DEMO_COUNTS if n >= problem.num_demos), problem.num_demos)


def bank_groups(problems: list[Problem]) -> list[tuple[int, list[Problem]]]:
    """``problems`` grouped into banks, as ``(canvas side, members)`` in the order they are
    learned: one bank per canvas side and class of demonstration count (:func:`demo_count`),
    each keeping its members' order."""
    banks: dict[tuple[int, int], list[Problem]] = {}
    for problem in problems:
        banks.setdefault((canvas_side(problem), demo_count(problem)), []).append(problem)
    return [(side, members) for (side, _), members in sorted(banks.items())]


@dataclasses.dataclass(frozen=True)
class TestTimeConfig:
    """How each task is learned at test time.

    Attributes:
        updates: GRPO updates per task (0: the policy plays the tests frozen).
        batch_tasks: groups per update; each group plays one demonstration pair, drawn
            uniformly from the task's pairs.
        group_size: rollouts per group (GRPO compares them).
        lr: the learning rate (``None``: the checkpoint's).
        hindsight_fraction: the share of groups also trained on as hindsight groups, relabelled
            with the grid one of their rollouts made (``None``: the checkpoint's).
        tasks_at_once: tasks trained together, vmapped over a slot axis.
        entropy_coef: the entropy bonus's weight (``None``: the checkpoint's).
        temperature: the learning rollouts sample the policy at this temperature
            (:class:`~jaxarc.agents.model.tempered.TemperedPolicy`; above 1 the rollouts of
            a group differ more). The attempts play the tuned weights at temperature 1.
        max_episode_steps: the steps of an episode, in learning and in the attempts
            (``None``: the checkpoint's).
    """

    __test__ = False  # (not a pytest class)

    updates: int = 16
    batch_tasks: int = 4
    group_size: int = 8
    lr: float | None = None
    hindsight_fraction: float | None = None
    tasks_at_once: int = 1
    entropy_coef: float | None = None
    temperature: float = 1.0
    max_episode_steps: int | None = None

    def __post_init__(self) -> None:
        for name in ("batch_tasks", "group_size", "tasks_at_once"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)!r}")
        if self.updates < 0:
            raise ValueError(f"updates must be 0 or more, got {self.updates!r}")
        if self.group_size < 2:
            raise ValueError(f"group_size must be at least 2, got {self.group_size!r}")
        if self.max_episode_steps is not None and self.max_episode_steps < 1:
            raise ValueError(
                f"max_episode_steps must be at least 1, got {self.max_episode_steps!r}"
            )
        if not self.temperature > 0:
            raise ValueError(f"temperature must be positive, got {self.temperature!r}")

    def train_config(self, trained: TrainConfig, canvas: int) -> TrainConfig:
        """The checkpoint's training configuration set for one task's demonstrations on a
        ``canvas`` x ``canvas`` bank: this batch shape, GRPO only (no behaviour cloning)."""
        grpo = dataclasses.replace(trained.grpo, epochs=1, minibatches=1)
        if self.hindsight_fraction is not None:
            grpo = dataclasses.replace(grpo, hindsight_fraction=self.hindsight_fraction)
        if self.entropy_coef is not None:
            grpo = dataclasses.replace(grpo, entropy_coef=self.entropy_coef)
        return trained.replace(
            canvas=canvas,
            episode_mode="train",
            batch_tasks=self.batch_tasks,
            group_size=self.group_size,
            num_updates=max(self.updates, 1),
            bc_updates=0,
            lr=trained.lr if self.lr is None else self.lr,
            lr_schedule="constant",
            warmup_updates=0,
            grpo=grpo,
            max_episode_steps=self.episode_steps(trained),
        )

    def episode_steps(self, trained: TrainConfig) -> int:
        """The steps of an episode: ``max_episode_steps``, else the checkpoint's."""
        return self.max_episode_steps or trained.max_episode_steps

    def env_steps_per_update(self, max_episode_steps: int) -> int:
        """Environment steps one update plays (groups x rollouts x episode steps)."""
        return self.batch_tasks * self.group_size * max_episode_steps

    def env_steps_per_task(self, max_episode_steps: int) -> int:
        """Environment steps one task's training takes."""
        return self.updates * self.env_steps_per_update(max_episode_steps)


def _stack_slots(policy: AbstractPolicy, optimizer: Any, keys: PRNGKeyArray) -> TrainState:
    """``len(keys)`` training states, each a fresh copy of ``policy`` and optimiser."""

    def one(key: PRNGKeyArray) -> TrainState:
        copy = jax.tree.map(lambda x: jnp.array(x, copy=True) if eqx.is_array(x) else x, policy)
        with jax.numpy_dtype_promotion("standard"):
            opt_state = optimizer.init(eqx.filter(copy, eqx.is_inexact_array))
        return TrainState(copy, copy, opt_state, key, jnp.int32(0))

    return eqx.filter_vmap(one)(keys)


def attempts_after_test_time_rl(
    policy: AbstractPolicy,
    trained: TrainConfig,
    problems: list[Problem],
    tt: TestTimeConfig,
    *,
    key: PRNGKeyArray,
    progress: Callable[[int, int], None] | None = None,
    finished: Mapping[str, tuple[TaskAttempts, dict[str, Any]]] | None = None,
    on_finished: Callable[[Attempts, dict[str, dict[str, Any]]], None] | None = None,
) -> tuple[Attempts, dict[str, dict[str, Any]]]:
    """``(greedy, sampled)`` final grids per test input of every problem after learning it
    from its demonstrations, by task id; and per task what the learning did: the canvas;
    ``demos_solved``, the share of its demonstration pairs the tuned policy solves greedily
    (each played leave-one-out, as in learning); and (with updates) ``train_success``, the
    success rate of the last update's rollouts on the demonstrations (sampled, at the
    learning's temperature), and ``train_return``, their mean return. It clears JAX's
    caches after each bank (:func:`bank_groups`), so that a long run holds one bank's
    programs at a time.

    ``on_finished(attempts, infos)`` is called with each chunk of tasks as it finishes
    (:class:`~jaxarc.solve.progress_log.ProgressLog` keeps them). ``finished`` holds the
    tasks of a stopped run with the same arguments (``{task_id: (attempts, info)}``): a chunk
    whose tasks are all there is taken from it, not learned again, and the keys advance as
    if it had been, so that the result is the uninterrupted run's."""
    finished = finished or {}
    attempts: Attempts = {}
    infos: dict[str, dict[str, Any]] = {}
    done = 0
    for side, members in bank_groups(problems):

        def report(k: int, _total: int, offset: int = done) -> None:
            if progress is not None:
                progress(offset + k, len(problems))

        key, bank_key = jax.random.split(key)
        made, info = _attempts_on_canvas(
            policy, trained, members, tt, side, bank_key, report, finished, on_finished
        )
        # Each bank's programs would stay in JAX's caches with their executables' memory
        # mappings (thousands a bank), and a process may hold only about 65,000: a set of
        # many banks would fail to compile its last ones. Clearing the caches frees them
        # (and makes the caller's own jitted functions compile again on their next call).
        jax.clear_caches()
        attempts.update(made)
        infos.update(info)
        done += len(members)
    if progress is not None:
        progress(len(problems), len(problems))
    return {p.task_id: attempts[p.task_id] for p in problems}, infos


def _attempts_on_canvas(
    policy: AbstractPolicy,
    trained: TrainConfig,
    problems: list[Problem],
    tt: TestTimeConfig,
    side: int,
    key: PRNGKeyArray,
    progress: Callable[[int, int], None],
    finished: Mapping[str, tuple[TaskAttempts, dict[str, Any]]],
    on_finished: Callable[[Attempts, dict[str, dict[str, Any]]], None] | None,
) -> tuple[Attempts, dict[str, dict[str, Any]]]:
    """:func:`attempts_after_test_time_rl` for problems that fit a ``side`` x ``side`` canvas."""
    bank = bank_without_test_outputs(problems, canvas_shape=(side, side))
    config = tt.train_config(trained, side)
    eval_env = config.env_config(episode_mode="eval")
    demo_env = config.env_config(episode_mode="train")
    policy = adapt_policy_to_canvas(policy, bank.canvas_shape)
    check_policy_reads(policy, eval_env, bank)
    learner = TemperedPolicy(policy, tt.temperature)  # (at 1 every logit is kept as it is)
    optimizer = make_optimizer(config)
    slots = tt.tasks_at_once
    rows = 2 * max(p.num_tests for p in problems)  # (test, greedy) rows per slot
    demo_rows = max(p.num_demos for p in problems)  # demonstration pairs per slot

    def update(states: TrainState, task_indices: Int32[Array, " K"]):
        step = lambda s, t: grpo_update(s, config, bank, optimizer, task_index=t)  # noqa: E731
        return eqx.filter_vmap(step)(states, task_indices)

    def attempts(policies: AbstractPolicy, keys, task_indices, pair_indices, greedy):
        def one(p, k, t, q, g):
            states = play_policy_episodes(p, eval_env, bank, k, t, q, g)
            return states.grid, states.grid_shape

        return eqx.filter_vmap(one)(policies, keys, task_indices, pair_indices, greedy)

    def demos_solved(policies: AbstractPolicy, keys, task_indices, pair_indices):
        def one(p, k, t, q):
            greedy = jnp.ones(q.shape, jnp.bool_)
            return play_policy_episodes(p, demo_env, bank, k, t, q, greedy).success

        return eqx.filter_vmap(one)(policies, keys, task_indices, pair_indices)

    update_program = policy_jit(update)
    attempts_program = policy_jit(attempts)
    demos_program = policy_jit(demos_solved)
    init_program = eqx.filter_jit(lambda keys: _stack_slots(learner, optimizer, keys))

    result: Attempts = {}
    infos: dict[str, dict[str, Any]] = {}
    for first in range(0, len(problems), slots):
        progress(first, len(problems))
        members = list(range(first, min(first + slots, len(problems))))
        padded = members + [members[-1]] * (slots - len(members))  # (the last chunk)
        key, init_key, play_key = jax.random.split(key, 3)
        names = [problems[t].task_id for t in members]
        if all(name in finished for name in names):  # (a stopped run learned them)
            for name in names:
                result[name], infos[name] = finished[name]
            continue
        demo_key = jax.random.fold_in(play_key, 1)  # (the attempts keep play_key's stream)
        states = init_program(jax.random.split(init_key, slots))
        task_indices = jnp.asarray(padded, jnp.int32)
        metrics: dict[str, Array] = {}
        for _ in range(tt.updates):
            states, metrics = update_program(states, task_indices)
        # each slot's rows: its test inputs, each greedy then sampled (padded by repeating)
        table = np.asarray(
            [[(r // 2) % problems[t].num_tests for r in range(rows)] for t in padded], np.int32
        )
        greedy = np.tile(np.arange(rows) % 2 == 0, (slots, 1))
        tuned = states.policy.inner  # the tuned weights at temperature 1
        grids, shapes = attempts_program(
            tuned,
            jax.random.split(play_key, slots * rows).reshape(slots, rows),
            jnp.broadcast_to(task_indices[:, None], (slots, rows)),
            jnp.asarray(table),
            jnp.asarray(greedy),
        )
        grids, shapes = np.asarray(grids), np.asarray(shapes)
        demo_table = np.asarray(
            [[q % problems[t].num_demos for q in range(demo_rows)] for t in padded], np.int32
        )
        solved = np.asarray(
            demos_program(
                tuned,
                jax.random.split(demo_key, slots * demo_rows).reshape(slots, demo_rows),
                jnp.broadcast_to(task_indices[:, None], (slots, demo_rows)),
                jnp.asarray(demo_table),
            )
        )
        chunk: Attempts = {}
        for slot, t in enumerate(members):
            problem = problems[t]
            made = [
                grids[slot, r, : shapes[slot, r, 0], : shapes[slot, r, 1]].copy()
                for r in range(rows)
            ]
            chunk[problem.task_id] = [
                (made[2 * q], made[2 * q + 1]) for q in range(problem.num_tests)
            ]
            demos = problem.num_demos
            infos[problem.task_id] = {
                "canvas": side,
                "demos_solved": round(float(solved[slot, :demos].mean()), 4),
            } | {
                label: round(float(metrics[name][slot]), 4)
                for name, label in (
                    ("success_rate", "train_success"),
                    ("mean_return", "train_return"),
                )
                if name in metrics
            }
        result.update(chunk)
        if on_finished is not None:
            on_finished(chunk, {t: infos[t] for t in chunk})
    return result, infos
