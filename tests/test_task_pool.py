"""Generated curricula through the faces: what resets draw from, and how it changes.

Third-party loops (SB3 and SBX through the ``VecEnv``, Gymnasium's ``make_vec``,
purejaxrl and rejax through the gymnax face) are run here as they run: many times the task
pool's size in resets, counting the distinct tasks their episodes played. The Gymnasium
vector env and the SB3 ``VecEnv`` renew the pool by themselves; the gymnax face's pool is
the caller's (in its params) and says so in its repr, with the one line that renews it.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxarc.data.generators import make_generator
from jaxarc.gym.vector import DEFAULT_TASK_REFRESH
from jaxarc.gymnax import build_environment

POOL = 16
NAME = "gen/ladder-1"  # (its tasks are the cheapest to make: the test stays fast)


def task_keys(tasks) -> list[bytes]:
    """One key per task of a batch (its demonstration and test grids)."""
    arrays = [np.asarray(tasks.demo_inputs), np.asarray(tasks.demo_outputs)]
    arrays.append(np.asarray(tasks.test_inputs))
    flat = np.concatenate([a.reshape(a.shape[0], -1) for a in arrays], axis=1)
    return [row.tobytes() for row in flat]


@functools.cache
def source():
    return make_generator(NAME)


def sb3_loop(task_refresh: int | None, resets: int, num_envs: int = 4) -> set[bytes]:
    """SB3's rollout loop over ``ArcSB3VecEnv`` (random actions, one-step episodes: every
    environment resets at every step); the tasks of every episode started."""
    pytest.importorskip("stable_baselines3")
    from jaxarc.gym.sb3 import ArcSB3VecEnv

    refresh = {} if task_refresh is None else {"task_refresh": task_refresh}
    venv = ArcSB3VecEnv(NAME, num_envs=num_envs, max_episode_steps=1, task_pool=POOL, **refresh)
    venv.action_space.seed(0)
    venv.reset()
    seen = set(task_keys(venv.venv.states.episode_store))
    for _ in range(resets // num_envs):
        actions = np.array([venv.action_space.sample() for _ in range(num_envs)])
        _, _, dones, _ = venv.step(actions)
        assert dones.all()  # (one-step episodes)
        seen.update(task_keys(venv.venv.states.episode_store))
    venv.close()
    return seen


def test_an_sb3_loop_meets_new_tasks_far_beyond_the_pool():
    resets = 10 * POOL
    seen = sb3_loop(None, resets)  # the default
    # old: every episode drew from the same 16 tasks made by make (at most 16 distinct)
    assert len(seen) > 5 * POOL, len(seen)
    assert len(sb3_loop(0, resets)) <= POOL  # task_refresh=0: the fixed pool, as asked


def test_make_vec_renews_at_most_task_refresh_tasks_per_step_and_replays_by_seed():
    import gymnasium

    import jaxarc  # noqa: F401  (registers the ids)
    from jaxarc.gym import gymnasium_id

    def run(seed: int, steps: int, num_envs: int = 12, **kwargs):
        venv = gymnasium.make_vec(
            gymnasium_id(NAME), num_envs=num_envs, max_episode_steps=1, task_pool=POOL, **kwargs
        )
        venv.reset(seed=seed)
        venv.action_space.seed(seed)
        starts = [task_keys(venv.unwrapped.states.episode_store)]
        pools = [task_keys(venv.unwrapped.task_pool)]
        for _ in range(steps):
            venv.step(venv.action_space.sample())  # NEXT_STEP: the second step resets them
            starts.append(task_keys(venv.unwrapped.states.episode_store))
            pools.append(task_keys(venv.unwrapped.task_pool))
        venv.close()
        return starts, pools

    starts, pools = run(0, 6)
    for before, after in zip(pools, pools[1:], strict=False):
        renewed = sum(a != b for a, b in zip(before, after, strict=True))
        assert renewed <= DEFAULT_TASK_REFRESH  # the cost of a step stays bounded
    assert set(pools[-1]) - set(pools[0])  # the pool changed by itself
    # with one-step episodes every other step resets all 12 environments (NEXT_STEP): the
    # first DEFAULT_TASK_REFRESH of them play new tasks, the others draw from the pool
    for start, old, pool in zip(starts[2::2], pools[1::2], pools[2::2], strict=True):
        assert all(s in pool for s in start)
        assert not any(s in old for s in start[:DEFAULT_TASK_REFRESH])
    again, _ = run(0, 6)
    assert again == starts  # a seeded reset starts again from the first pool: same episodes
    fixed_starts, fixed_pools = run(0, 6, task_refresh=0)
    assert all(p == fixed_pools[0] for p in fixed_pools)


def test_the_gymnax_face_says_its_pool_is_fixed_and_how_to_renew_it():
    import jaxarc

    env, params = jaxarc.make("gen/easy")
    assert "a fixed pool of 1024 generated tasks" in repr(env)
    assert "env.refresh_task_pool(key, params)" in repr(env)
    flat, _ = jaxarc.make_flat("gen/easy")
    assert "a fixed pool of 1024 generated tasks" in repr(flat)  # (the wrappers show it too)
    assert "a new one generated at every reset" in repr(jaxarc.make("gen/easy", task_pool=0)[0])
    assert "pool" not in repr(jaxarc.make("ARC-AGI-1")[0])  # a bank has none


def test_a_purejaxrl_loop_plays_the_pool_it_is_given_and_one_line_renews_it():
    env, params = build_environment(source(), name=NAME, max_episode_steps=1, task_pool=POOL)
    num_envs, steps_per_update, updates = 8, 10, 12  # 960 resets: 60 times the pool
    step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
    space = env.action_space(params)

    @jax.jit
    def update(states, key, params):
        def body(states, key):
            act_key, step_key = jax.random.split(key)
            actions = jax.vmap(space.sample)(jax.random.split(act_key, num_envs))
            _, states, *_ = step(jax.random.split(step_key, num_envs), states, actions, params)
            return states, states.episode_store

        return jax.lax.scan(body, states, jax.random.split(key, steps_per_update))

    def train(renew: bool) -> set[bytes]:
        keys = jax.random.split(jax.random.key(0), num_envs)
        _, states = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
        loop_params, seen = params, set()
        for k in range(updates):
            key = jax.random.key(100 + k)
            states, stores = update(states, key, loop_params)
            seen.update(task_keys(jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), stores)))
            if renew:  # the one line (docs/ecosystem.md): a few new tasks per update
                loop_params = env.refresh_task_pool(key, loop_params, count=8)
        return seen

    assert len(train(renew=False)) <= POOL  # the documented fixed pool
    assert len(train(renew=True)) > 4 * POOL


def test_refresh_task_pool_renews_the_slots_it_is_asked_to():
    env, params = build_environment(source(), name=NAME, task_pool=POOL)
    before = task_keys(params.task_pool)
    renewed = env.refresh_task_pool(jax.random.key(3), params, count=5)
    after = task_keys(renewed.task_pool)
    changed = [b != a for b, a in zip(before, after, strict=True)]
    assert sum(changed) == 5
    assert task_keys(env.refresh_task_pool(jax.random.key(3), params, count=5).task_pool) == after
    assert (
        sum(
            b != a
            for b, a in zip(
                before,
                task_keys(env.refresh_task_pool(jax.random.key(4), params).task_pool),
                strict=True,
            )
        )
        == POOL
    )
    for bad in (0, -2, 2.5, True):
        with pytest.raises((TypeError, ValueError), match="count"):
            env.refresh_task_pool(jax.random.key(3), params, count=bad)
    # (shapes kept: a renewed pool runs the same compiled step)
    shapes = jax.tree.map(jnp.shape, params.task_pool)
    assert jax.tree.map(jnp.shape, renewed.task_pool) == shapes
