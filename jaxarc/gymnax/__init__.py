"""The gymnax face: ``ArcEnvironment`` (a ``gymnax`` ``Environment``), its spaces and the
named-environment registry behind ``jaxarc.make``.

Importing ``gymnax`` takes seconds, so the class modules are imported on first use.
"""

from jaxarc.gymnax.registry import build_environment, make, register, registered_names


def __getattr__(name: str):
    if name in ("ArcEnvironment", "ArcEnvParams"):
        from jaxarc.gymnax import environment

        return getattr(environment, name)
    raise AttributeError(f"module 'jaxarc.gymnax' has no attribute {name!r}")


__all__ = [
    "ArcEnvParams",
    "ArcEnvironment",
    "build_environment",
    "make",
    "register",
    "registered_names",
]
