"""One call for the flat gymnax environment: ``jaxarc.make_flat(name)``.

The flat environment is what generic RL code (purejaxrl, rejax, an MLP policy) expects: a
``Discrete`` action over the allowed operations times the canvas cells (or a
``MultiDiscrete([K, H, W])``), and a ``Box`` observation of the chosen fields as one
``float32`` vector. It is the stack ``FlatPointActionWrapper`` (or
``MultiDiscretePointActionWrapper``) + ``FlattenObservationWrapper`` over a point-action
environment built with ``allowed_operations`` in its config, so a disallowed operation cannot
be expressed at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from jaxarc.envs.arguments import check_flag, check_names
from jaxarc.wrappers.flat_action import FlatPointActionWrapper, MultiDiscretePointActionWrapper
from jaxarc.wrappers.flatten_observation import FlattenObservationWrapper
from jaxarc.wrappers.gymnax_v0 import GymnaxV0Wrapper
from jaxarc.wrappers.hindsight import HindsightTaskWrapper, check_probability

FlatActionFormat = Literal["discrete", "multi_discrete"]
FLAT_ACTION_FORMATS: tuple[str, ...] = ("discrete", "multi_discrete")
# the working grid and the test input: enough for a generated family with one fixed rule
DEFAULT_FLAT_FIELDS: tuple[str, ...] = ("grid", "input_grid")


def flatten_env(
    env: Any,
    *,
    fields: Sequence[str] = DEFAULT_FLAT_FIELDS,
    action_format: FlatActionFormat = "discrete",
) -> Any:
    """Flat actions and observations over an existing point-action gymnax environment."""
    if action_format not in FLAT_ACTION_FORMATS:
        raise ValueError(
            f"action_format must be one of {FLAT_ACTION_FORMATS}, got {action_format!r}"
        )
    if action_format == "discrete":
        env = FlatPointActionWrapper(env)
    else:
        env = MultiDiscretePointActionWrapper(env)
    return FlattenObservationWrapper(env, tuple(fields))


def make_flat(
    name: str,
    *,
    fields: Sequence[str] = DEFAULT_FLAT_FIELDS,
    action_format: FlatActionFormat = "discrete",
    gymnax_v0: bool = False,
    hindsight: float = 0.0,
    **options: Any,
) -> tuple[Any, Any]:
    """``env, params`` of the flat environment over :func:`jaxarc.make`'s ``name``.

    Args:
        name: any name :func:`jaxarc.make` accepts.
        fields: the observation fields concatenated into the ``Box`` observation (one
            name or a list of distinct names).
        action_format: ``"discrete"`` (``Discrete(K*H*W)``) or ``"multi_discrete"``
            (``MultiDiscrete([K, H, W])``); ``K`` counts the allowed operations only.
        gymnax_v0: ``True`` wraps in :class:`~jaxarc.wrappers.GymnaxV0Wrapper` (five-value
            ``step``, for purejaxrl and rejax).
        hindsight: the probability that an episode is followed by its hindsight task
            (:class:`~jaxarc.wrappers.HindsightTaskWrapper`, under the flat wrappers); 0: off.
            A real number in ``[0, 1]`` (Python, NumPy or JAX scalar); anything else, an
            empty string or list included, is refused.
        **options: :func:`jaxarc.make` options; ``allowed_operations`` takes ids or names
            (``["FLOOD_1", "SUBMIT"]``). ``selection_format`` must be ``"point"`` (default).

    ``env.step`` auto-resets (gymnax); wrap further with ``AutoResetWrapper`` or
    ``EpisodeMetricsWrapper`` as needed.
    """
    from jaxarc.gymnax.registry import make

    gymnax_v0 = check_flag(gymnax_v0, "gymnax_v0", "make_flat")
    hindsight = check_probability(hindsight, "hindsight", "make_flat")
    fields = check_names(fields, "fields", "make_flat")
    if action_format not in FLAT_ACTION_FORMATS:  # (said before the environment is built)
        raise ValueError(
            f"action_format must be one of {FLAT_ACTION_FORMATS}, got {action_format!r}"
        )
    fmt = options.setdefault("selection_format", "point")
    if fmt != "point":
        raise ValueError(f"the flat environment uses point actions, got selection_format={fmt!r}")
    env, params = make(name, **options)
    if hindsight > 0.0:
        env = HindsightTaskWrapper(env, hindsight)
    env = flatten_env(env, fields=fields, action_format=action_format)
    if gymnax_v0:
        env = GymnaxV0Wrapper(env)
    return env, params
