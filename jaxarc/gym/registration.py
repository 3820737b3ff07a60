"""Gymnasium ids for every jaxarc environment name: ``"jaxarc/<NAME>-v0"``.

Entry points are strings, so registering imports nothing heavy: the jaxarc environment
(and its task bank) is built only when ``gymnasium.make`` / ``gymnasium.make_vec`` is called.
"""

from __future__ import annotations

import re

import gymnasium

NAMESPACE = "jaxarc"
ENTRY_POINT = "jaxarc.gym.env:make_gymnasium_env"
VECTOR_ENTRY_POINT = "jaxarc.gym.flat_vector:make_gymnasium_vector_env"


def gymnasium_id(name: str) -> str:
    """The Gymnasium id of a jaxarc name: ``"ARC-AGI-1"`` -> ``"jaxarc/ARC-AGI-1-v0"``.

    A name with ``/`` (the generated families) becomes its parts in CamelCase joined by
    ``-``: ``"gen/easy"`` -> ``"jaxarc/Gen-Easy-v0"``, ``"gen/fill_holes"`` ->
    ``"jaxarc/Gen-FillHoles-v0"``. Gymnasium reads ``:`` as a module prefix and allows only
    letters, digits, ``_``, ``-`` and ``.`` in a name, so any other character becomes ``-``.
    """
    if "/" in name:
        name = "-".join(
            "".join(word[:1].upper() + word[1:] for word in part.split("_"))
            for part in name.split("/")
        )
    safe = re.sub(r"[^\w.-]", "-", name)
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
            taken_by = gymnasium.registry[env_id].kwargs.get("env_name")
            if taken_by != name:
                raise ValueError(f"{name!r} maps to {env_id!r}, already the id of {taken_by!r}")
            continue
        gymnasium.register(
            id=env_id,
            entry_point=ENTRY_POINT,
            vector_entry_point=VECTOR_ENTRY_POINT,
            kwargs={"env_name": name},
        )
    return tuple(ids)
