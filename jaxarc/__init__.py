"""jaxarc: JAX-native reinforcement-learning environments for ARC grid puzzles."""

from jaxarc.envs.registry import build_environment, make, register, registered_names
from jaxarc.gym.registration import register_gymnasium_envs

register_gymnasium_envs()  # "jaxarc/<NAME>-v0" ids; entry points are lazy strings

__version__ = "0.1.0"

__all__ = ["__version__", "build_environment", "make", "register", "registered_names"]
