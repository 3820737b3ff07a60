"""Group rollouts: B tasks x G rollouts from identical start states, T steps in ``lax.scan``.

The G rollouts of a task share everything at the start (task, pair, start grid: the reset
state is copied G times) and differ only in the actions sampled. So the policy acts on the
first step once per task, and each of the G episodes samples from that distribution with its
own key. Steps taken after an episode ended are marked invalid (the environment freezes
finished episodes and pays 0).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float32, Int8, Int32, PRNGKeyArray

from jaxarc.agents.model.policy import AbstractPolicy
from jaxarc.data.source import AbstractTaskSource
from jaxarc.envs.config import JaxArcConfig, RewardParams
from jaxarc.envs.functional import batch_reset
from jaxarc.envs.rollout import play
from jaxarc.envs.structured_actions import AbstractAction
from jaxarc.envs.types import ArcObservation, ArcState


class Trajectories(eqx.Module):
    """Rollouts with leading axes ``[N, T]`` (``N = B * G``, groups contiguous)."""

    obs: ArcObservation  # the observation each action was chosen from
    actions: AbstractAction
    log_probs: Float32[Array, "N T"]  # under the policy that acted
    rewards: Float32[Array, "N T"]
    valid: Bool[Array, "N T"]  # the episode was still running when the action was taken
    success: Bool[Array, " N"]
    final_grid: Int8[Array, "N H W"]  # the working grid when the episode ended
    final_shape: Int32[Array, "N 2"]

    @property
    def returns(self) -> Float32[Array, " N"]:
        return jnp.sum(jnp.where(self.valid, self.rewards, 0.0), axis=1)

    @property
    def lengths(self) -> Float32[Array, " N"]:
        return jnp.sum(self.valid.astype(jnp.float32), axis=1)


def repeat_groups(tree, group_size: int):
    """Every leaf's leading axis ``B`` repeated to ``B * G`` (each item G times in a row)."""
    return jax.tree.map(lambda x: jnp.repeat(x, group_size, axis=0), tree)


def group_rollout(
    policy: AbstractPolicy,
    key: PRNGKeyArray,
    env_config: JaxArcConfig,
    source: AbstractTaskSource,
    reward_params: RewardParams,
    batch_tasks: int,
    group_size: int,
    steps: int,
    constrain=lambda x: x,
    task_index: Int32[Array, ""] | None = None,
) -> Trajectories:
    """Play ``batch_tasks * group_size`` episodes of ``steps`` steps with ``policy``.

    ``constrain`` is applied to per-episode arrays (e.g. a sharding constraint over the
    episode axis); it must keep values unchanged. ``task_index`` (a bank's task, traced or
    not) plays every group on that task, each on a pair of its own; ``None`` samples a task
    per group.
    """
    reset_key, act_key = jax.random.split(key)
    task_indices = None if task_index is None else jnp.full((batch_tasks,), task_index)
    states, obs = batch_reset(
        jax.random.split(reset_key, batch_tasks),
        env_config,
        source,
        task_indices,
        reward_params=reward_params,
    )
    first_obs, first_tasks = obs, jax.vmap(policy.encode_task)(obs)  # once per task
    states, obs, tasks = constrain(repeat_groups((states, obs, first_tasks), group_size))
    episodes = batch_tasks * group_size
    group = jnp.arange(episodes, dtype=jnp.int32) // group_size

    def act(states, obs, step_key):
        dists = jax.vmap(policy.act)(obs, tasks)
        actions = jax.vmap(lambda d, k: d.sample(k))(dists, jax.random.split(step_key, episodes))
        return actions, jax.vmap(lambda d, a: d.log_prob(a))(dists, actions)

    def first_act(states, obs, step_key):
        """The first step: the G episodes of a group see the same observation, so the
        policy acts once per task and each episode samples from its task's distribution."""
        dists = jax.vmap(policy.act)(first_obs, first_tasks)  # [B]
        keys = jax.random.split(step_key, episodes)
        actions = jax.vmap(lambda g, k: dists.row(g).sample(k))(group, keys)
        return actions, jax.vmap(lambda g, a: dists.row(g).log_prob(a))(group, actions)

    states, _, record = play(
        states,
        obs,
        env_config,
        act,
        jax.random.split(act_key, steps),
        constrain=constrain,
        unroll=True,  # XLA:CPU runs convolutions inside while loops several times slower
        first_act=first_act,
    )
    record = record.batch_major()
    return Trajectories(
        obs=record.obs,
        actions=record.actions,
        log_probs=record.extra,
        rewards=record.rewards,
        valid=record.valid,
        success=states.success,
        final_grid=states.grid,
        final_shape=states.grid_shape,
    )


def final_states(
    policy: AbstractPolicy,
    key: PRNGKeyArray,
    env_config: JaxArcConfig,
    source: AbstractTaskSource,
    num_tasks: int,
    steps: int,
    greedy: bool = True,
) -> ArcState:
    """The states after ``steps`` steps of ``policy`` (greedy or sampled) on ``num_tasks``
    fresh episodes; finished episodes stay as they ended."""
    reset_key, act_key = jax.random.split(key)
    states, obs = batch_reset(jax.random.split(reset_key, num_tasks), env_config, source)
    tasks = jax.vmap(policy.encode_task)(obs)

    def act(states, obs, step_key):
        dists = jax.vmap(policy.act)(obs, tasks)
        if greedy:
            return jax.vmap(lambda d: d.mode())(dists), None
        keys = jax.random.split(step_key, num_tasks)
        return jax.vmap(lambda d, k: d.sample(k))(dists, keys), None

    states, _, _ = play(states, obs, env_config, act, jax.random.split(act_key, steps))
    return states


def evaluate_success(
    policy: AbstractPolicy,
    key: PRNGKeyArray,
    env_config: JaxArcConfig,
    source: AbstractTaskSource,
    num_tasks: int,
    steps: int,
    greedy: bool = True,
) -> dict[str, Float32[Array, ""]]:
    """``policy`` on ``num_tasks`` fresh episodes (greedy or sampled): success rate, mean final
    similarity of the grid to the target, and mean episode length."""
    states = final_states(policy, key, env_config, source, num_tasks, steps, greedy)
    return {
        "success": jnp.mean(states.success.astype(jnp.float32)),
        "similarity": jnp.mean(states.similarity),
        "length": jnp.mean(states.step_count.astype(jnp.float32)),
    }
