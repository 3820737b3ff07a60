"""What a training update changes, :class:`TrainState`, and how its per-episode arrays are
laid out over devices (:func:`episode_constraint`).

Both the GRPO update (:mod:`jaxarc.agents.grpo.train`) and the behaviour-cloning update
(:mod:`jaxarc.agents.grpo.behaviour_cloning`) map ``TrainState -> (TrainState, Metrics)``;
they share these definitions from here, so neither imports the other's module for them.
"""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import jax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P
from jaxtyping import Array, Float32, Int32, PRNGKeyArray, PyTree

from jaxarc.agents.model.policy import AbstractPolicy

Metrics = dict[str, Float32[Array, ""]]
"""An update's metrics: scalar float32 arrays by name."""


class TrainState(eqx.Module):
    """Everything an update changes (a pure function of it: resumable and reproducible).

    ``policy`` is trained; ``ref_policy`` is the KL reference (same structure, own buffers);
    ``opt_state`` is the optimiser's state of ``policy``'s inexact arrays; ``key`` is the
    PRNG key of the next update; ``update_index`` (int32 scalar) counts updates done.
    """

    policy: AbstractPolicy
    ref_policy: AbstractPolicy
    opt_state: PyTree
    key: PRNGKeyArray
    update_index: Int32[Array, ""]


def episode_constraint(mesh: Mesh | None) -> Callable[[PyTree], PyTree]:
    """Constrain per-episode arrays to be sharded over the mesh's ``data`` axis (their
    leading axis, ``[episodes, ...]``); the identity without a mesh. Values are kept."""
    if mesh is None:
        return lambda tree: tree
    sharding = NamedSharding(mesh, P("data"))
    return lambda tree: jax.tree.map(lambda x: jax.lax.with_sharding_constraint(x, sharding), tree)
