"""Gymnasium ids for every jaxarc environment name: ``"jaxarc/<NAME>-v0"``.

Entry points are strings, so registering imports nothing heavy: the jaxarc environment
(and its task bank) is built only when ``gymnasium.make`` / ``gymnasium.make_vec`` is called.
"""

from __future__ import annotations

import re

import gymnasium

NAMESPACE = "jaxarc"
ENTRY_POINT = "jaxarc.gym.env:make_gymnasium_env"
VECTOR_ENTRY_POINT = "jaxarc.gym.vector:ArcGymnasiumVectorEnv"


def gymnasium_id(name: str) -> str:
    """The Gymnasium id of a jaxarc name: ``"ARC-AGI-1"`` -> ``"jaxarc/ARC-AGI-1-v0"``.

    Characters Gymnasium ids do not allow (``/`` of ``gen/...``) become ``:``.
    """
    safe = re.sub(r"[^\w:.-]", ":", name)
    return f"{NAMESPACE}/{safe}-v0"


def jaxarc_names() -> tuple[str, ...]:
    """Every registered jaxarc name (bundled sets, directory sets, generated families)."""
    from jaxarc.gymnax.registry import registered_names

    return registered_names()


def register_gymnasium_envs(names=None) -> tuple[str, ...]:
    """Register ``jaxarc/<NAME>-v0`` for each jaxarc name (default: all); returns the ids.

    Already registered ids are left as they are, so calling this twice is harmless.
    ``gymnasium.make(id, selection_format=..., render_mode=...)`` then builds an
    :class:`~jaxarc.gym.env.ArcGymnasiumEnv`; ``gymnasium.make_vec(id, num_envs=N)`` an
    :class:`~jaxarc.gym.vector.ArcGymnasiumVectorEnv` (one batched call per step).
    """
    ids = []
    for name in jaxarc_names() if names is None else names:
        env_id = gymnasium_id(name)
        ids.append(env_id)
        if env_id in gymnasium.registry:
            continue
        gymnasium.register(
            id=env_id,
            entry_point=ENTRY_POINT,
            vector_entry_point=VECTOR_ENTRY_POINT,
            kwargs={"env_name": name},
        )
    return tuple(ids)
