"""Task pools of generated sources: making them, and refreshing some of their slots.

A generated source (``gen/...``) makes a task in about a millisecond of CPU (``gen/easy``;
tens of microseconds for the 4x4 ladder rungs), thousands of times slower than a bank reads
one. The batched faces therefore reset from a **pool** of generated tasks (``N`` tasks with
a leading axis, :class:`~jaxarc.data.source.Task` leaves), choosing a slot per reset as a
bank chooses a task (:func:`~jaxarc.envs.reset.pool_slot`). The functions here make a
pool and renew it:

* :func:`generate_task_pool`: one task per key (``N`` keys: a whole pool);
* :func:`refresh_random_slots`: ``count`` slots, chosen at random, made anew;
* :func:`refresh_drawn_slots`: the refresh *as environments finish*: for the first
  ``count`` of the environments that reset, the slot that environment's reset draws is made
  anew from that reset's own task key, before the reset reads it. The environment plays a
  newly generated task (the one a reset without a pool would make), and the pool keeps it
  for later draws.

Every function is traceable; generation runs in a ``fori_loop`` whose trip count is the
number of tasks made, so its cost follows the number of new tasks.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Int32, PRNGKeyArray

from jaxarc.data.source import AbstractTaskSource, Task
from jaxarc.envs.reset import pool_slot, reset_draws


def pool_size(pool: Task) -> int:
    """``N``: the tasks in a pool (static)."""
    return int(jax.tree.leaves(pool)[0].shape[0])


@eqx.filter_jit
def generate_task_pool(source: AbstractTaskSource, keys: PRNGKeyArray) -> Task:
    """One task of ``source`` per key, stacked (leading axis ``len(keys)``)."""
    return jax.vmap(lambda key: source.sample_task(key, jnp.int32(-1))[0])(keys)


def _write(pool: Task, slot: Int32[Array, ""], task: Task) -> Task:
    return jax.tree.map(lambda p, t: p.at[slot].set(t), pool, task)


def refresh_random_slots(
    pool: Task, source: AbstractTaskSource, key: PRNGKeyArray, count: int
) -> Task:
    """``pool`` with ``count`` distinct slots, chosen uniformly, holding new tasks."""
    count = min(int(count), pool_size(pool))
    slot_key, task_key = jax.random.split(key)
    slots = jax.random.permutation(slot_key, pool_size(pool))[:count].astype(jnp.int32)
    tasks = generate_task_pool(source, jax.random.split(task_key, count))
    return jax.tree.map(lambda p, t: p.at[slots].set(t), pool, tasks)


def refresh_drawn_slots(
    pool: Task, source: AbstractTaskSource, keys: PRNGKeyArray, count: Int32[Array, ""]
) -> Task:
    """``pool`` with the slots drawn by the resets of ``keys[:count]`` made anew, each from
    its reset's task key (see the module docstring). Two of them drawing one slot leave the
    later one's task there (both environments play it)."""

    def renew(i, pool):
        _, task_key, draws = reset_draws(keys[i])
        task, _ = source.sample_task(task_key, jnp.int32(-1))
        return _write(pool, pool_slot(draws, pool), task)

    return jax.lax.fori_loop(0, count, renew, pool)
