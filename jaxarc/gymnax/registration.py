"""Every jaxarc environment name in gymnax's own registry, so ``gymnax.make`` builds them.

gymnax (>= 1.0) keeps a runtime registry (``gymnax.registration.register(env_id, factory)``)
whose ``make(env_id, **kwargs)`` calls ``factory(**kwargs)`` and returns
``(env, env.default_params)``. Importing this module registers each name of
:func:`jaxarc.registered_names` under the same id
(:func:`~jaxarc.gymnax.registry.register_gymnax_envs`), so after::

    import gymnax
    import jaxarc  # noqa: F401 (gymnax.make knows "ARC-AGI-1", "gen/flip", ...)

    env, params = gymnax.make("ARC-AGI-1", selection_format="bbox")

``gymnax.make`` accepts :func:`jaxarc.make`'s options, and the returned params carry the
reward options (``success_bonus=...``). ``import jaxarc`` does not import this module (nor
gymnax: importing ``gymnax.registration`` imports every gymnax environment, seconds); it
installs the hook of :mod:`jaxarc.gymnax.auto_registration`, which imports this module as
soon as ``gymnax.registration`` is imported, or at once if it already is. Building any
environment with :func:`jaxarc.make` (or
:func:`~jaxarc.gymnax.registry.build_environment`) registers the names too.

Not registered: single task ids (``"007bbfb7"``; over a thousand names whose check needs
the bundled banks loaded): build those with ``jaxarc.make``.
"""

from __future__ import annotations

from jaxarc.gymnax.registry import register_gymnax_envs

GYMNAX_IDS: tuple[str, ...] = register_gymnax_envs()
"""The names registered with gymnax when this module was imported (``()`` on a gymnax
without the runtime registry)."""
