"""Named environments: ``jaxarc.make(name, **options) -> (env, params)``.

Built-in names:

* ``"ARC-AGI-1"`` / ``"ARC-AGI-2"`` (training tasks, train mode; ``-train`` is an alias) and
  ``"ARC-AGI-1-eval"`` / ``"ARC-AGI-2-eval"`` (evaluation tasks, eval mode: test pairs);
* ``"MiniARC"`` (5x5 canvas) and ``"ConceptARC"``, with ``-eval`` variants: the copy that
  ``jaxarc data fetch miniarc|conceptarc`` stored, or ``data_dir=`` (a directory of JSON
  task files);
* every generated family ``"gen/..."``;
* any single task id of the bundled ARC-AGI sets, e.g. ``"007bbfb7"`` (``-eval`` for its
  test pairs).

Options (all keyword): ``selection_format``, ``max_episode_steps``, ``episode_mode``,
``allowed_operations``, ``start_from_empty``, ``validate``, ``episode_context``
(``"every_step"``/``"at_reset"``), ``task_pool`` (generated sources: tasks in the reset
pool, fixed until ``env.refresh_task_pool``; 0 for none: a generation per reset),
``data_dir``, ``reward_preset`` (``"default"`` or ``"generic"``: see
:meth:`~jaxarc.envs.config.RewardParams.preset`), and the reward
weights ``success_bonus``, ``failed_submit_penalty``, ``step_penalty``,
``similarity_weight`` (traced: they go into the returned params; they override the preset).

The same names are put in gymnax's own registry (:func:`register_gymnax_envs`), so
``gymnax.make(name, **options)`` builds them too: ``import jaxarc`` does it when gymnax is
imported already, :func:`jaxarc.gymnax.registration.register_with_gymnax` does it at any
time, and so does building any environment here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from jaxarc.data.source import AbstractTaskSource
from jaxarc.envs.config import config_from_options

if TYPE_CHECKING:  # importing gymnax is slow: the class is imported when an env is built
    from jaxarc.gymnax.environment import ArcEnvironment, ArcEnvParams

EnvFactory = Callable[..., "tuple[ArcEnvironment, ArcEnvParams]"]
_REGISTRY: dict[str, EnvFactory] = {}

_BUNDLED = {
    "ARC-AGI-1": ("arc-agi-1/training", "train"),
    "ARC-AGI-1-train": ("arc-agi-1/training", "train"),
    "ARC-AGI-1-eval": ("arc-agi-1/evaluation", "eval"),
    "ARC-AGI-2": ("arc-agi-2/training", "train"),
    "ARC-AGI-2-train": ("arc-agi-2/training", "train"),
    "ARC-AGI-2-eval": ("arc-agi-2/evaluation", "eval"),
}
_DIRECTORY_SETS = {  # name: (canvas, episode mode, fetchable dataset)
    "MiniARC": ((5, 5), "train", "miniarc"),
    "MiniARC-eval": ((5, 5), "eval", "miniarc"),
    "ConceptARC": ((30, 30), "train", "conceptarc"),
    "ConceptARC-eval": ((30, 30), "eval", "conceptarc"),
}


def register(name: str, factory: EnvFactory, *, overwrite: bool = False) -> None:
    """Register ``factory(**options) -> (env, params)`` under ``name``."""
    if name in _REGISTRY and not overwrite:
        raise ValueError(f"environment {name!r} is already registered (pass overwrite=True)")
    _REGISTRY[name] = factory


def registered_factory(name: str) -> EnvFactory | None:
    """The factory registered under ``name`` (``None`` for single task ids and unknowns)."""
    _register_generators()
    return _REGISTRY.get(name)


def registered_names() -> tuple[str, ...]:
    """Every name :func:`make` accepts, except single task ids."""
    _register_generators()
    return tuple(sorted(_REGISTRY))


def make(name: str, **options: Any) -> tuple[ArcEnvironment, ArcEnvParams]:
    """Build a registered environment: ``env, params = jaxarc.make("ARC-AGI-1")``."""
    _register_generators()
    if name in _REGISTRY:
        return _REGISTRY[name](**options)
    mode = "eval" if name.endswith("-eval") else "train"
    task_id = name.removesuffix("-eval")
    source = _single_task_bank(task_id)
    if source is None:
        known = ", ".join(registered_names())
        raise ValueError(
            f"unknown environment {name!r}: not a registered name ({known}) "
            "nor a task id of the bundled ARC-AGI sets"
        )
    return build_environment(source, name=name, episode_mode=mode, **options)


def build_environment(
    source: AbstractTaskSource, name: str = "ARC", **options: Any
) -> tuple[ArcEnvironment, ArcEnvParams]:
    """An environment over ``source`` with :func:`make`'s options."""
    from jaxarc.gymnax.environment import ArcEnvironment  # imports gymnax (seconds)

    options = dict(options)
    task_pool = options.pop("task_pool", None)
    config, reward = config_from_options(
        source.canvas_shape, owner=repr(name), also_accepted=("task_pool",), **options
    )
    env = ArcEnvironment(config, source, name=name, reward=reward, task_pool_size=task_pool)
    register_gymnax_envs()  # gymnax is imported by now: gymnax.make knows every name too
    return env, env.default_params


def _build_for_gymnax(name: str, **options: Any) -> ArcEnvironment:
    env, _ = make(name, **options)
    return env  # gymnax.make returns (env, env.default_params): the reward options are in it


def register_gymnax_envs(names: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """Register each jaxarc name (default: all) with gymnax's runtime registry (gymnax >=
    1.0), so ``gymnax.make(name, **options)`` calls :func:`make`; returns the names.

    Names gymnax already knows are left as they are, so calling this again is harmless. On a
    gymnax without the runtime registry nothing is registered and ``()`` is returned (the
    face still works through :func:`make`). Single task ids are not registered (over a
    thousand names whose check needs the bundled banks loaded).
    """
    import gymnax.registration as gymnax_registration  # every gymnax environment (seconds)

    if not hasattr(gymnax_registration, "register"):
        return ()
    names = registered_names() if names is None else tuple(names)
    for name in names:
        if name not in gymnax_registration.registered_envs:
            gymnax_registration.register(name, partial(_build_for_gymnax, name))
    return names


def _bundled_factory(name: str, source_name: str, mode: str) -> EnvFactory:
    def factory(**options: Any) -> tuple[ArcEnvironment, ArcEnvParams]:
        from jaxarc.data import load_bank

        options.setdefault("episode_mode", mode)
        return build_environment(load_bank(source_name), name=name, **options)

    return factory


def _directory_factory(name: str, canvas: tuple[int, int], mode: str, dataset: str) -> EnvFactory:
    def factory(data_dir: str | None = None, **options: Any):
        from jaxarc.data import load_bank
        from jaxarc.data.fetch import dataset_dir, is_fetched

        if data_dir is None:
            if not is_fetched(dataset):
                raise TypeError(
                    f"{name!r} needs its tasks: run `jaxarc data fetch {dataset}` (stored in "
                    f"{dataset_dir(dataset)}) or pass data_dir=, a directory of ARC JSON files"
                )
            data_dir = f"fetched/{dataset}"
        options.setdefault("episode_mode", mode)
        return build_environment(load_bank(data_dir, canvas_shape=canvas), name=name, **options)

    return factory


def _generator_factory(name: str) -> EnvFactory:
    def factory(**options: Any):
        from jaxarc.data import load_source

        return build_environment(load_source(name), name=name, **options)

    return factory


def _register_generators() -> None:
    from jaxarc.data.generators import generator_names

    for gen_name in generator_names():
        if gen_name not in _REGISTRY:
            register(gen_name, _generator_factory(gen_name))


def _single_task_bank(task_id: str) -> AbstractTaskSource | None:
    from jaxarc.data import load_bank

    for source_name in dict.fromkeys(source for source, _ in _BUNDLED.values()):
        bank = load_bank(source_name)
        if task_id in bank.task_ids:
            return bank.subset([bank.task_ids.index(task_id)], name=task_id)
    return None


for _name, (_source, _mode) in _BUNDLED.items():
    register(_name, _bundled_factory(_name, _source, _mode))
for _name, (_canvas, _mode, _dataset) in _DIRECTORY_SETS.items():
    register(_name, _directory_factory(_name, _canvas, _mode, _dataset))
