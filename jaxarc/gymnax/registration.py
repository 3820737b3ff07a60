"""Every jaxarc environment name in gymnax's own registry, so ``gymnax.make`` builds them.

gymnax (>= 1.0) keeps a runtime registry (``gymnax.registration.register(env_id, factory)``)
whose ``make(env_id, **kwargs)`` calls ``factory(**kwargs)`` and returns
``(env, env.default_params)``. Importing this module registers each name of
:func:`jaxarc.registered_names` under the same id, so after::

    import gymnax
    import jaxarc.gymnax.registration  # noqa: F401 (registers "ARC-AGI-1", "gen/flip", ...)

    env, params = gymnax.make("ARC-AGI-1", selection_format="bbox")

``gymnax.make`` accepts :func:`jaxarc.make`'s options, and the returned params carry the
reward options (``success_bonus=...``). Building any gymnax-face environment
(:class:`~jaxarc.gymnax.environment.ArcEnvironment`) also imports this module.

Not registered: single task ids (``"007bbfb7"``; over a thousand names whose check needs
the bundled banks loaded): build those with ``jaxarc.make``. ``import jaxarc`` alone does not
register, because importing ``gymnax.registration`` imports every gymnax environment
(seconds); importing ``gymnax`` first costs the same.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import gymnax.registration as gymnax_registration

from jaxarc.gymnax.registry import make, registered_names


def _build(name: str, **options: Any):
    env, _ = make(name, **options)
    return env  # gymnax.make returns (env, env.default_params): the reward options are in it


def register_gymnax_envs(names: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """Register each jaxarc name (default: all) with gymnax; returns the names.

    Names gymnax already knows are left as they are, so calling this twice is harmless.
    """
    if not hasattr(gymnax_registration, "register"):
        raise RuntimeError(
            "this gymnax has no runtime registry (gymnax.registration.register, gymnax >= 1.0); "
            "build environments with jaxarc.make(name) instead"
        )
    names = registered_names() if names is None else tuple(names)
    for name in names:
        if name not in gymnax_registration.registered_envs:
            gymnax_registration.register(name, partial(_build, name))
    return names


# on a gymnax without the runtime registry the face still works, through jaxarc.make only
GYMNAX_IDS: tuple[str, ...] = (
    register_gymnax_envs() if hasattr(gymnax_registration, "register") else ()
)
"""The names registered with gymnax when this module was imported."""
