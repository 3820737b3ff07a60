"""The Jumanji face: ARC environments as ``jumanji.Environment`` s (needs the ``jumanji`` extra).

>>> from jaxarc.jumanji import make
>>> env = make("ARC-AGI-1", max_episode_steps=20)
>>> state, timestep = jax.jit(env.reset)(jax.random.key(0))

``make`` accepts every name and option of :func:`jaxarc.make`; Jumanji's wrappers
(``AutoResetWrapper``, ``VmapAutoResetWrapper``, ``JumanjiToGymWrapper``, ...) apply to what
it returns. Actions are int32 vectors (:mod:`jaxarc.jumanji.specs`).
"""

from __future__ import annotations

from typing import Any

from jaxarc.jumanji.environment import ArcJumanjiEnv
from jaxarc.jumanji.specs import (
    action_from_vector,
    action_num_values,
    action_spec,
    action_to_vector,
    observation_spec,
)


def make(name: str, **options: Any) -> ArcJumanjiEnv:
    """The Jumanji face of a registered environment (same names and options as ``jaxarc.make``)."""
    from jaxarc.gymnax.registry import make as make_gymnax

    env, params = make_gymnax(name, **options)
    return ArcJumanjiEnv(env.config, env.task_source, reward=params.reward, name=name)


__all__ = [
    "ArcJumanjiEnv",
    "action_from_vector",
    "action_num_values",
    "action_spec",
    "action_to_vector",
    "make",
    "observation_spec",
]
