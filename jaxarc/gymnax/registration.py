"""jaxarc's names in gymnax's own registry, so ``gymnax.make`` builds them.

gymnax (>= 1.0) keeps a runtime registry (``gymnax.registration.register(env_id, factory)``)
whose ``make(env_id, **kwargs)`` calls ``factory(**kwargs)`` and returns
``(env, env.default_params)``. ``import jaxarc`` calls :func:`register_with_gymnax`, which
puts each name of :func:`jaxarc.registered_names` there under the same id (through
:func:`~jaxarc.gymnax.registry.register_gymnax_envs`), so in either import order::

    import gymnax
    import jaxarc  # noqa: F401 (gymnax.make knows "ARC-AGI-1", "gen/flip", ...)

    env, params = gymnax.make("ARC-AGI-1", selection_format="bbox")

``gymnax.make`` accepts :func:`jaxarc.make`'s options, and the returned params carry the
reward options (``success_bonus=...``). Registering imports ``gymnax.registration``, which
imports every gymnax environment: that is most of the time ``import jaxarc`` takes beyond
JAX itself. Names registered with :func:`jaxarc.register` later reach gymnax when any
environment is built with :func:`jaxarc.make` (or by calling :func:`register_with_gymnax`
again).

Not registered: single task ids (``"007bbfb7"``; over a thousand names whose check needs
the bundled banks loaded): build those with ``jaxarc.make``.
"""

from __future__ import annotations

import warnings

from jaxarc.gymnax.registry import register_gymnax_envs


def register_with_gymnax() -> tuple[str, ...]:
    """Register every jaxarc name with gymnax; returns the names (``()`` when gymnax has no
    runtime registry, or when registering failed: then a warning says why).

    Safe to call again (names gymnax knows are left as they are). A gymnax that cannot be
    imported or registered with is reported as a warning, not raised: ``import jaxarc`` and
    every other face keep working without gymnax's registry.
    """
    try:
        return register_gymnax_envs()
    except Exception as err:  # a broken gymnax must not break `import jaxarc`
        warnings.warn(
            f"jaxarc could not register its names with gymnax "
            f"({type(err).__name__}: {err}); build them with jaxarc.make instead",
            stacklevel=2,
        )
        return ()
