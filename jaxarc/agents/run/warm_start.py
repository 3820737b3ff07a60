"""Starting a run from another run's policy (``TrainConfig.init_from``).

Pretraining in stages is one run per stage: the next stage names the previous run in
``init_from`` and trains on its own source, canvas and schedule. Its policy and reference
policy start as the named run's policy, set to the new canvas; its optimiser starts afresh
and its update count at 0. What a policy's weights mean depends on its architecture and on
the actions it chooses, so the policy config, the selection format and the allowed
operations must be the same in both runs.
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxarc.agents.run.checkpoint import CheckpointError

MUST_MATCH = ("policy", "selection_format", "allowed_operations")


def check_warm_start(config: Any) -> tuple[Any, Any]:
    """``(saved config, policy)`` of the run ``config.init_from`` names, set to this run's
    canvas. Raises :class:`CheckpointError` (one line: what and where) when it cannot be
    loaded or does not fit this run."""
    from jaxarc.agents.run.evaluate import EvaluationError, load_trained_policy

    try:
        trained, policy, path = load_trained_policy(config.init_from)
    except EvaluationError as err:
        raise CheckpointError(f"init_from: {err}") from None
    differ = [name for name in MUST_MATCH if getattr(trained, name) != getattr(config, name)]
    if differ:
        shown = "; ".join(
            f"{name} {getattr(trained, name)!r} there, {getattr(config, name)!r} here"
            for name in differ
        )
        raise CheckpointError(
            f"init_from {path}: the policy was trained with another {', '.join(differ)} "
            f"({shown}); a warm start needs the same"
        )
    return trained, policy.with_canvas((config.canvas, config.canvas))


def warm_start(state: Any, config: Any) -> Any:
    """``state`` (a fresh :class:`~jaxarc.agents.grpo.train_state.TrainState`) with its policy and
    reference policy replaced by the policy of the run ``config.init_from`` names, placed
    like the fresh ones (replicated over a mesh)."""
    _, policy = check_warm_start(config)
    fresh = eqx.filter(state.policy, eqx.is_array)
    loaded = eqx.filter(policy, eqx.is_array)
    shapes = lambda tree: jax.tree.map(lambda x: (x.shape, x.dtype), tree)  # noqa: E731
    if jax.tree.structure(fresh) != jax.tree.structure(loaded) or shapes(fresh) != shapes(loaded):
        raise CheckpointError(
            f"init_from {config.init_from}: its policy's weights do not have this run's shapes"
        )

    def placed(new: Any, like: Any) -> Any:
        if not eqx.is_array(like):
            return new
        return jax.device_put(jnp.array(new, copy=True), like.sharding)

    policy = jax.tree.map(placed, policy, state.policy)
    reference = jax.tree.map(placed, policy, state.ref_policy)
    return eqx.tree_at(lambda s: (s.policy, s.ref_policy), state, (policy, reference))
