"""jaxarc: JAX-native reinforcement-learning environments for ARC grid puzzles.

Importing the package registers its environment names with Gymnasium
(``"jaxarc/<NAME>-v0"``) and, when gymnax is imported already, with gymnax
(``gymnax.make("ARC-AGI-1")``; see :mod:`jaxarc.gymnax.registration`): two explicit calls
below, no import hook.
"""

from jaxarc.gym.registration import register_gymnasium_envs
from jaxarc.gymnax.registration import register_if_gymnax_is_imported
from jaxarc.gymnax.registry import build_environment, make, register, registered_names

register_gymnasium_envs()  # "jaxarc/<NAME>-v0" ids; entry points are lazy strings
register_if_gymnax_is_imported()  # never imports gymnax (it would start JAX's backends)

__version__ = "0.1.0"


def make_flat(name: str, **options):
    """The flat gymnax environment in one call: see :func:`jaxarc.wrappers.make_flat`.

    The wrappers are imported on the first call, not by ``import jaxarc``.
    """
    from jaxarc.wrappers.flat_env import make_flat as _make_flat

    return _make_flat(name, **options)


__all__ = ["__version__", "build_environment", "make", "make_flat", "register", "registered_names"]
