"""Gymnasium adapters: ``gymnasium.make("jaxarc/ARC-AGI-1-v0")`` and a batched vector env."""

from jaxarc.gym.backend import JaxBackend
from jaxarc.gym.env import ArcGymnasiumEnv, make_gymnasium_env
from jaxarc.gym.flat import FlatCodec
from jaxarc.gym.flat_vector import FlatArcGymnasiumVectorEnv, make_gymnasium_vector_env
from jaxarc.gym.registration import gymnasium_id, register_gymnasium_envs
from jaxarc.gym.spaces import (
    action_from_gymnasium,
    action_space,
    observation_space,
    observation_to_numpy,
)
from jaxarc.gym.vector import ArcGymnasiumVectorEnv

__all__ = [
    "ArcGymnasiumEnv",
    "ArcGymnasiumVectorEnv",
    "FlatArcGymnasiumVectorEnv",
    "FlatCodec",
    "JaxBackend",
    "action_from_gymnasium",
    "action_space",
    "gymnasium_id",
    "make_gymnasium_env",
    "make_gymnasium_vector_env",
    "observation_space",
    "observation_to_numpy",
    "register_gymnasium_envs",
]
