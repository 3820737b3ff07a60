"""jaxarc's names in gymnax's own registry, so ``gymnax.make`` builds them.

gymnax (>= 1.0) keeps a runtime registry (``gymnax.registration.register(env_id, factory)``)
whose ``make(env_id, **kwargs)`` calls ``factory(**kwargs)`` and returns
``(env, env.default_params)``. :func:`register_with_gymnax` puts each name of
:func:`jaxarc.registered_names` there under the same id (through
:func:`~jaxarc.gymnax.registry.register_gymnax_envs`)::

    import gymnax
    import jaxarc  # noqa: F401 (gymnax.make knows "ARC-AGI-1", "gen/flip", ...)

    env, params = gymnax.make("ARC-AGI-1", selection_format="bbox")

``import jaxarc`` calls it when gymnax is imported already (as above). It does not import
gymnax itself: gymnax's import creates a JAX array (``gymnax.environments.misc``), which
starts JAX's backends, after which ``jax.distributed.initialize`` (``jaxarc train
--coordinator-address``) is refused and a GPU's memory is taken before the program chose its
devices. So a script that imports jaxarc first registers by one call (or by building any
environment with :func:`jaxarc.make`, which imports gymnax and registers every name)::

    import jaxarc
    from jaxarc.gymnax.registration import register_with_gymnax

    register_with_gymnax()  # imports gymnax
    env, params = gymnax.make("ARC-AGI-1")

``gymnax.make`` accepts :func:`jaxarc.make`'s options, and the returned params carry the
reward options (``success_bonus=...``). Not registered: single task ids (``"007bbfb7"``;
over a thousand names whose check needs the bundled banks loaded): build those with
``jaxarc.make``.
"""

from __future__ import annotations

import sys
import warnings

from jaxarc.gymnax.registry import register_gymnax_envs

GYMNAX_REGISTRY_MODULE = "gymnax.registration"


def register_with_gymnax() -> tuple[str, ...]:
    """Register every jaxarc name with gymnax (importing gymnax); returns the names (``()``
    when gymnax has no runtime registry, or when registering failed: then a warning says
    why). Safe to call again: names gymnax knows are left as they are."""
    try:
        return register_gymnax_envs()
    except Exception as err:  # a broken gymnax must not break `import jaxarc`
        warnings.warn(
            f"jaxarc could not register its names with gymnax "
            f"({type(err).__name__}: {err}); build them with jaxarc.make instead",
            stacklevel=2,
        )
        return ()


def register_if_gymnax_is_imported() -> tuple[str, ...]:
    """:func:`register_with_gymnax` if gymnax's registry is imported already, else nothing
    (``()``): what ``import jaxarc`` calls, so that it never imports gymnax itself."""
    if GYMNAX_REGISTRY_MODULE not in sys.modules:
        return ()
    return register_with_gymnax()
