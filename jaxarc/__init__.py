"""jaxarc: JAX-native reinforcement-learning environments for ARC grid puzzles.

Importing the package registers its environment names with Gymnasium
(``"jaxarc/<NAME>-v0"``) and with gymnax (``gymnax.make("ARC-AGI-1")``), by two explicit
calls below; no import hook is installed.
"""

from jaxarc.gym.registration import register_gymnasium_envs
from jaxarc.gymnax.registration import register_with_gymnax
from jaxarc.gymnax.registry import build_environment, make, register, registered_names

register_gymnasium_envs()  # "jaxarc/<NAME>-v0" ids; entry points are lazy strings
register_with_gymnax()  # gymnax.make("gen/easy") works after `import jaxarc`, in either order

__version__ = "0.1.0"


def make_flat(name: str, **options):
    """The flat gymnax environment in one call: see :func:`jaxarc.wrappers.make_flat`.

    The wrappers are imported on the first call, not by ``import jaxarc``.
    """
    from jaxarc.wrappers.flat_env import make_flat as _make_flat

    return _make_flat(name, **options)


__all__ = ["__version__", "build_environment", "make", "make_flat", "register", "registered_names"]
