"""Hindsight groups: GRPO groups relabelled with a task one of their own rollouts solved.

On a rung where fresh rollouts almost never succeed, every group's rollouts fail alike and
the group-relative advantage carries little signal. Hindsight relabelling makes successes:
pick one rollout of a group (the *donor*: one that changed the grid, preferring one that
submitted), replay its actions on the task's demonstration inputs, and the replayed grids
become a new task (:mod:`jaxarc.envs.hindsight`) on which the donor's actions are a
solution. Every rollout of the group is then re-scored against that task's target (the
donor's final grid) with the environment's own reward, so the relabelled group holds a
success and a spread of partial ones, and the advantage says which actions reproduce what
the demonstrations show. Since the policy only reads the demonstrations when it encodes
the task, the relabelled group needs a new task-table row only; the recorded steps are
reused.

The relabelled steps are off-policy (their actions were sampled for the original task), so
the loss treats their sampling log-probabilities as the current ones (ratio 1, no clipping,
no KL; see :class:`~jaxarc.agents.grpo.loss.TrainingBatchJAX`'s ``relabelled``): their
gradient is the advantage-weighted log-likelihood of the recorded actions under the new task.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float32, PRNGKeyArray

from jaxarc.agents.grpo.rollout import Trajectories
from jaxarc.envs.config import JaxArcConfig, RewardParams
from jaxarc.envs.episode import similarity_and_match
from jaxarc.envs.hindsight import hindsight_outputs, rescore_steps
from jaxarc.envs.transition import effective_operation
from jaxarc.envs.types import ArcObservation
from jaxarc.grid.operation_ids import SUBMIT


class HindsightGroups(eqx.Module):
    """``K`` relabelled groups of ``G`` rollouts (episodes ``[K * G]``, groups contiguous)."""

    task_obs: ArcObservation  # [K]: each group's first observation, demonstrations relabelled
    rewards: Float32[Array, "KG T"]  # the recorded steps re-scored against the new targets
    success: Bool[Array, " KG"]  # the rollout solves its group's hindsight task
    has_donor: Bool[Array, " K"]  # False: no rollout changed the grid (the group is unused)


def choose_donor(
    key: PRNGKeyArray, changed: Bool[Array, " G"], submitted: Bool[Array, " G"]
) -> Array:
    """The donor of one group: a random rollout among those that changed the grid and
    submitted, else among those that changed it (index 0 when none did)."""
    noise = jax.random.uniform(key, changed.shape, dtype=jnp.float32)
    as_float = lambda mask: mask.astype(jnp.float32)  # noqa: E731
    score = 2.0 * as_float(changed) + as_float(changed & submitted) + 0.5 * noise
    return jnp.argmax(score)


def relabel_group(
    key: PRNGKeyArray,
    first_obs: ArcObservation,
    trajectories: Trajectories,
    env_config: JaxArcConfig,
    reward_params: RewardParams,
) -> tuple[ArcObservation, Float32[Array, "G T"], Bool[Array, " G"], Bool[Array, ""]]:
    """One group (``trajectories`` with leading axes ``[G, T]``) relabelled with its donor's
    hindsight task: ``(task row, rewards, success, has_donor)``."""
    operations = jax.vmap(jax.vmap(lambda op, taken: effective_operation(op, taken, env_config)))(
        trajectories.actions.operation, trajectories.valid
    )
    submitted = jnp.any(operations == SUBMIT, axis=1)
    _, unchanged = jax.vmap(
        lambda g, s: similarity_and_match(g, s, first_obs.input_grid, first_obs.input_shape)
    )(trajectories.final_grid, trajectories.final_shape)
    changed = ~unchanged
    donor = choose_donor(key, changed, submitted)
    donor_actions = jax.tree.map(lambda x: x[donor], trajectories.actions)
    outputs, output_shapes = hindsight_outputs(
        first_obs.demo_inputs,
        first_obs.demo_input_shapes,
        first_obs.demo_mask,
        donor_actions,
        trajectories.valid[donor],
        env_config,
    )
    task_row = eqx.tree_at(
        lambda o: (o.demo_outputs, o.demo_output_shapes), first_obs, (outputs, output_shapes)
    )
    target, target_shape = trajectories.final_grid[donor], trajectories.final_shape[donor]
    grids = jnp.concatenate([trajectories.obs.grid, trajectories.final_grid[:, None]], axis=1)
    shapes = jnp.concatenate(
        [trajectories.obs.grid_shape, trajectories.final_shape[:, None]], axis=1
    )
    rewards, success = jax.vmap(
        lambda g, s, op, taken: rescore_steps(
            g, s, op, taken, target, target_shape, reward_params, env_config
        )
    )(grids, shapes, operations, trajectories.valid)
    return task_row, rewards, success, jnp.any(changed)


def hindsight_groups(
    key: PRNGKeyArray,
    trajectories: Trajectories,
    task_obs: ArcObservation,
    num_groups: int,
    group_size: int,
    env_config: JaxArcConfig,
    reward_params: RewardParams,
    failed_only: bool = False,
) -> HindsightGroups:
    """The first ``num_groups`` groups of ``trajectories`` (``[B * G, T]``) relabelled;
    ``task_obs`` is the batch's task table (``[B]``, each group's first observation). With
    ``failed_only`` a group with a successful rollout gets no donor (it is left unused)."""
    episodes = num_groups * group_size
    grouped = jax.tree.map(
        lambda x: x[:episodes].reshape(num_groups, group_size, *x.shape[1:]), trajectories
    )
    rows = jax.tree.map(lambda x: x[:num_groups], task_obs)
    keys = jax.random.split(key, num_groups)
    task_rows, rewards, success, has_donor = jax.vmap(
        lambda k, o, t: relabel_group(k, o, t, env_config, reward_params)
    )(keys, rows, grouped)
    if failed_only:
        has_donor = has_donor & ~jnp.any(grouped.success, axis=1)
    return HindsightGroups(
        task_obs=task_rows,
        rewards=rewards.reshape(episodes, -1),
        success=success.reshape(episodes) & jnp.repeat(has_donor, group_size),
        has_donor=has_donor,
    )
