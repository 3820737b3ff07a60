"""A task as the program network reads it, and tasks made by relabelling its programs.

:func:`network_task` pads a task's program-rl arrays (:func:`~jaxarc.solve.program_tasks.
task_arrays`, with the content language's items) and computes what the network reads of
it: each item's kind, its parent and what it does on the demonstrations (alone, or after
its parent view). :func:`relabelled_task` makes a new task of a sampled program and the
grids it made (hindsight relabelling).

Static and traced: each task keeps program-rl's buckets (canvas, demonstrations,
vocabulary rows, mask actions; one compile each), and what the network reads is padded to
:data:`ITEM_SLOTS` items, so the network's update compiles once.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float32

from jaxarc.agents.model.program_policy import ProgramTask
from jaxarc.solve.problem import Problem
from jaxarc.solve.program_play import program_grids, program_returns
from jaxarc.solve.program_rl import ProgramRLConfig
from jaxarc.solve.program_tasks import VOCABULARY_SLOTS, TaskArrays, task_arrays, task_language

ITEM_SLOTS = VOCABULARY_SLOTS[-1]  # every task's items, padded for the network


@dataclasses.dataclass(frozen=True)
class NetworkTask:
    """A task ready for the network: its program-rl arrays and canvas side, and what the
    network reads of it (padded to :data:`ITEM_SLOTS`)."""

    task_id: str
    arrays: TaskArrays
    side: int
    reads: ProgramTask


@functools.cache
def _item_stats_fn(reward: ProgramRLConfig, side: int) -> Callable:
    """Each item played on the demonstrations after its parent (a paint after its view;
    an item with none alone): ``[C, 4]`` (score, gain over the input, solves every pair,
    changes the score)."""

    def stats(task: TaskArrays) -> Float32[Array, "C 4"]:
        items = jnp.arange(task.valid.shape[0], dtype=jnp.int32)
        programs = jnp.stack([task.parents, items], axis=1)  # parent 0: the no-op
        _, _, prefix, solved = program_returns(task, programs, reward, side)
        gain = prefix[:, 2] - prefix[:, 0]
        changes = (jnp.abs(gain) > 1e-6).astype(jnp.float32)
        return jnp.stack([prefix[:, 2], gain, solved[:, 2].astype(jnp.float32), changes], 1)

    return jax.jit(stats)


def network_reads(arrays: TaskArrays, side: int, reward: ProgramRLConfig) -> ProgramTask:
    """What the network reads of a task (its items' kinds, statistics and parents, padded
    to :data:`ITEM_SLOTS`, and the task's statistics)."""
    stats = np.asarray(_item_stats_fn(reward, side)(arrays), np.float32)
    rows = stats.shape[0]
    valid = np.asarray(arrays.valid)
    padded = np.zeros((ITEM_SLOTS, stats.shape[1]), np.float32)
    padded[:rows] = np.where(valid[:, None], stats, 0.0)
    kinds = np.zeros(ITEM_SLOTS, np.int32)
    kinds[:rows] = np.asarray(arrays.kinds)
    mask = np.zeros(ITEM_SLOTS, bool)
    mask[:rows] = valid
    parents = np.zeros(ITEM_SLOTS, np.int32)
    parents[:rows] = np.asarray(arrays.parents)
    demos = float(np.sum(np.asarray(arrays.demo)))
    task = np.asarray([stats[0, 0], valid.sum() / ITEM_SLOTS, demos / 10, side / 30], np.float32)
    return ProgramTask(*(jnp.asarray(x) for x in (kinds, padded, mask, task, parents)))


def network_task(problem: Problem, reward: ProgramRLConfig) -> NetworkTask:
    """``problem`` with its language items, as the network trains and solves on it."""
    arrays, _, side = task_arrays(problem, task_language(problem))
    return NetworkTask(problem.task_id, arrays, side, network_reads(arrays, side, reward))


@functools.cache
def _grids_fn(side: int) -> Callable:
    return jax.jit(lambda task, program: program_grids(task, program, side))


def relabelled_task(
    task: NetworkTask, program: np.ndarray, reward: ProgramRLConfig
) -> NetworkTask | None:
    """``task`` with the grids ``program`` makes of its demonstration inputs as their
    outputs (hindsight relabelling, as CodeIt does): a task ``program`` solves, with the
    same vocabulary and the network's reads made again for the new outputs. ``None`` when
    ``program`` leaves some demonstration input as it is."""
    grids, shapes = map(np.asarray, _grids_fn(task.side)(task.arrays, jnp.asarray(program)))
    demo = np.asarray(task.arrays.demo)
    inputs = np.asarray(task.arrays.inputs)
    same = np.all(grids == inputs, axis=(1, 2)) & np.all(
        shapes == np.asarray(task.arrays.shapes), axis=1
    )
    if (same & demo).any():
        return None
    targets = np.where(demo[:, None, None], grids, -1).astype(np.int8)
    arrays = eqx.tree_at(lambda a: a.targets, task.arrays, jnp.asarray(targets))
    acted = "-".join(str(int(k)) for k in program if k != 0)
    return NetworkTask(
        f"{task.task_id}+{acted}", arrays, task.side, network_reads(arrays, task.side, reward)
    )


__all__ = ["ITEM_SLOTS", "NetworkTask", "network_reads", "network_task", "relabelled_task"]
