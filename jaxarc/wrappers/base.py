"""The wrapper protocol: gymnax's ``reset``/``step`` signatures, composable and jittable.

A wrapper holds the environment it wraps as a static field: it is an equinox module with no
array leaves, hashable and compared by what it wraps, so it can be closed over or passed as
a static argument to ``jax.jit``, and ``jax.vmap`` maps over its states and actions like the
bare environment. Attributes a wrapper does not define are looked up on the wrapped
environment (``wrapper.config``, ``wrapper.num_actions`` ...), as in gymnax.

Every wrapper takes and returns gymnax 1.0's tuples:
``obs, state = reset(key, params)`` and
``obs, state, reward, terminated, truncated, info = step(key, state, action, params)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import equinox as eqx
from jaxtyping import Array, PRNGKeyArray

if TYPE_CHECKING:
    from jaxarc.gymnax.environment import ArcEnvironment


_BRIDGE_ASSIGNED = frozenset({"reset", "step"})


class AbstractEnvWrapper(eqx.Module):
    """Base of every wrapper: forwards everything to ``env`` until overridden."""

    env: Any = eqx.field(static=True)

    def __getattr__(self, name: str) -> Any:
        # gymnax's convention (its GymnaxWrapper does the same): what a wrapper does not
        # define is the wrapped environment's, e.g. ``make_flat(...)[0].flat_index``.
        # jaxarc's own wrappers never rely on it: they use the typed ``unwrapped``.
        if name.startswith("__") or name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)

    def __setattr__(self, name: str, value: Any) -> None:
        # gymnax's GymnaxToVectorGymWrapper deep-copies the environment and replaces the
        # copy's ``reset`` and ``step`` by their jitted vmapped forms, as its own
        # environments (plain objects) allow. Those two names may be set on an instance
        # (never a field: a wrapper stays frozen, hashable and compared by what it wraps).
        if name in _BRIDGE_ASSIGNED:
            object.__setattr__(self, name, value)
        else:
            super().__setattr__(name, value)

    @property
    def unwrapped(self) -> ArcEnvironment:
        """The innermost (non-wrapper) environment."""
        env = self.env
        while isinstance(env, AbstractEnvWrapper):
            env = env.env
        return env

    @property
    def default_params(self) -> Any:
        return self.env.default_params

    def reset(self, key: PRNGKeyArray, params: Any = None) -> tuple[Any, Any]:
        return self.env.reset(key, params)

    def step(
        self, key: PRNGKeyArray, state: Any, action: Any, params: Any = None
    ) -> tuple[Any, Any, Array, Array, Array, dict[str, Any]]:
        return self.env.step(key, state, action, params)

    def observation_space(self, params: Any = None) -> Any:
        return self.env.observation_space(params)

    def action_space(self, params: Any = None) -> Any:
        return self.env.action_space(params)
