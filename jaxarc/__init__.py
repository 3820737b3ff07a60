"""jaxarc: JAX-native reinforcement-learning environments for ARC grid puzzles."""

from jaxarc.gym.registration import register_gymnasium_envs
from jaxarc.gymnax.auto_registration import install as _register_with_gymnax_on_import
from jaxarc.gymnax.registry import build_environment, make, register, registered_names

register_gymnasium_envs()  # "jaxarc/<NAME>-v0" ids; entry points are lazy strings
_register_with_gymnax_on_import()  # gymnax.make("gen/easy") works after `import jaxarc`

__version__ = "0.1.0"


def make_flat(name: str, **options):
    """The flat gymnax environment in one call: see :func:`jaxarc.wrappers.make_flat`.

    Imported lazily (the wrappers import gymnax).
    """
    from jaxarc.wrappers.flat_env import make_flat as _make_flat

    return _make_flat(name, **options)


__all__ = ["__version__", "build_environment", "make", "make_flat", "register", "registered_names"]
