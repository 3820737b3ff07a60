"""What a Gymnasium adapter runs on: a jaxarc environment's config, task source and rewards."""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from jaxarc.data.bank import TaskBank
from jaxarc.data.source import AbstractTaskSource, Task
from jaxarc.envs.config import JaxArcConfig, RewardParams
from jaxarc.envs.integers import check_integers

RENDER_MODES: tuple[str, ...] = ("rgb_array", "ansi")
SINGLE_RENDER_MODES: tuple[str, ...] = ("rgb_array", "rgb_array_list", "ansi")
"""The single environment also collects frames (``rgb_array_list``), as Gymnasium defines."""
RESET_OPTION_KEYS: tuple[str, ...] = ("task_id", "task_index", "pair")


def check_render_mode(render_mode: str | None, modes: tuple[str, ...] = RENDER_MODES) -> None:
    """``ValueError`` for a render mode the adapters cannot draw (``"human"`` included)."""
    if render_mode is None or render_mode in modes:
        return
    if render_mode == "human":
        raise ValueError(
            "render_mode='human' is not supported: jaxarc opens no window. Use "
            "render_mode='rgb_array' (frames as uint8 arrays, e.g. for a video recorder) or "
            "'ansi' (coloured terminal text)."
        )
    raise ValueError(f"unknown render_mode {render_mode!r}; supported: {modes}")


def episode_length_option(episode_steps: int | None, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with the deprecated ``episode_steps`` read as ``max_episode_steps``.

    The episode length is ``max_episode_steps`` on every face. Through ``gymnasium.make``
    that keyword is Gymnasium's own (its ``TimeLimit`` wrapper truncates at N steps, which
    is what a Gymnasium user means by it); ``gymnasium.make_vec`` and the adapters'
    constructors pass it to the environment.
    """
    if episode_steps is None:
        return options
    warnings.warn(
        "episode_steps is deprecated: the episode length is max_episode_steps on every face",
        DeprecationWarning,
        stacklevel=3,
    )
    if "max_episode_steps" in options:
        raise TypeError("give max_episode_steps only (episode_steps is its deprecated name)")
    return {**options, "max_episode_steps": episode_steps}


def require_bare_env(env: Any, adapter: str) -> None:
    """``TypeError`` unless ``env`` is a bare ``ArcEnvironment`` (see
    :meth:`JaxBackend.from_env`), naming ``adapter`` and its own options."""
    from jaxarc.gymnax.environment import ArcEnvironment

    if not isinstance(env, ArcEnvironment):
        raise TypeError(
            f"{adapter} takes a bare jaxarc environment as jax_env (from jaxarc.make), got "
            f"{type(env).__name__}, whose behaviour it would drop: give {adapter} its own "
            "options instead (env_name with allowed_operations=[...] and the other "
            "jaxarc.make options, flat=True, action_format=, fields=(...))"
        )


@dataclasses.dataclass(frozen=True)
class JaxBackend:
    """A jaxarc environment taken apart for the adapters (all static)."""

    name: str
    config: JaxArcConfig
    source: AbstractTaskSource
    reward_params: RewardParams
    task_pool: Task | None = None  # generated sources: the tasks resets choose from

    @classmethod
    def from_name(cls, env_name: str, **options: Any) -> JaxBackend:
        """``jaxarc.make(env_name, **options)`` taken apart.

        Environments made with the same name and options share one backend (one task
        source object): the compiled reset is keyed on the source's identity, so N separate
        ``gymnasium.make`` calls (SB3's ``DummyVecEnv``, ``make_vec_env``) compile it once,
        not N times.
        """
        from jaxarc.gymnax.registry import registered_factory

        # the factory is in the key: re-registering a name (overwrite=True) is a new backend
        key = _options_key(env_name, registered_factory(env_name), options)
        if key is None:
            return cls._make(env_name, options)
        return _shared_backend(cls, key)

    @classmethod
    def _make(cls, env_name: str, options: dict[str, Any]) -> JaxBackend:
        from jaxarc.gymnax.registry import make

        env, params = make(env_name, **options)
        return cls.from_env(env, params)

    @classmethod
    def from_env(cls, env, params=None, adapter: str = "the Gymnasium adapter") -> JaxBackend:
        """From a bare gymnax ``ArcEnvironment`` and its params (defaults when ``None``).

        A wrapped environment is refused: the adapters run the core on the environment's
        config and task source, so a wrapper's behaviour (restricted operations, flat
        spaces, chosen fields) would be dropped without a word. The message names the
        adapter's own options that do the same.
        """
        require_bare_env(env, adapter)
        params = env.default_params if params is None else params
        return cls(env.name, env.config, env.task_source, params.reward, params.task_pool)

    def task_index(self, task_id: str) -> int:
        """Bank index of ``task_id``; ``ValueError`` when the source has no ids."""
        if not isinstance(self.source, TaskBank):
            raise ValueError(
                f"options['task_id'] needs a task bank; {self.name!r} generates its tasks"
            )
        try:
            return self.source.task_ids.index(task_id)
        except KeyError as err:
            raise ValueError(f"{err.args[0]} in {self.name!r}") from None

    def task_id(self, task_index: int) -> str:
        """The id of a bank index (``""`` for generated tasks)."""
        if isinstance(self.source, TaskBank) and 0 <= task_index < self.source.num_tasks:
            return self.source.task_ids[task_index]
        return ""

    def reset_indices(self, options: Mapping | None, batch: int | None = None):
        """``(task_index, pair_index)`` from reset options (``-1``: sample); arrays for a batch.

        ``options`` may hold ``task_id`` (a str, or a list of ``batch`` strs), ``task_index``
        and ``pair`` (ints or lists). Unknown keys are an error naming the known ones.
        """
        options = dict(options or {})
        options.pop("reset_mask", None)
        unknown = sorted(set(options) - set(RESET_OPTION_KEYS))
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown}; known: {RESET_OPTION_KEYS}")
        if "task_id" in options and "task_index" in options:
            raise ValueError("give options['task_id'] or options['task_index'], not both")
        task = options.get("task_index", -1)
        if "task_id" in options:
            ids = options["task_id"]
            task = [self.task_index(i) for i in ids] if _is_list(ids) else self.task_index(ids)
        pair = options.get("pair", -1)
        if "task_id" not in options:
            check_integers(task, "options['task_index']")
        check_integers(pair, "options['pair']")
        if batch is None:
            if _is_list(task) or _is_list(pair):
                raise ValueError("a single environment takes one task_id/task_index/pair")
            return int(task), int(pair)
        return _per_env(task, batch, "task"), _per_env(pair, batch, "pair")


def _options_key(env_name: str, factory: Any, options: dict[str, Any]) -> tuple | None:
    """A hashable key of ``make``'s arguments (lists as tuples); ``None`` when unhashable."""
    items = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in options.items()))
    try:
        hash(items)
    except TypeError:
        return None
    return (env_name, factory, items)


@functools.lru_cache(maxsize=32)
def _shared_backend(cls: type[JaxBackend], key: tuple) -> JaxBackend:
    env_name, _, items = key
    return cls._make(env_name, dict(items))


def _is_list(value) -> bool:
    return isinstance(value, list | tuple | np.ndarray)


def _per_env(value, batch: int, what: str) -> np.ndarray:
    array = np.asarray(value, dtype=np.int32)
    if array.ndim == 0:
        return np.full((batch,), int(array), dtype=np.int32)
    if array.shape != (batch,):
        raise ValueError(f"reset option for {what} has {array.shape[0]} entries for {batch} envs")
    return array
