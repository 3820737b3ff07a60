"""A pretrained program prior on disk: its run directory, written after every round of
pretraining, read back by ``jaxarc solve --prior DIR``, and resumed after a stop.

The directory holds ``prior.npz`` (the ``[K, K]`` logits) and ``prior.json``: every
setting the prior was made with (:meth:`~jaxarc.solve.program_prior.PriorConfig.record`),
the source, seed and tasks (their ids, and in ``task_hashes`` their content hashes,
:func:`~jaxarc.solve.problem.task_content_hash`), per round the tasks solved, and per task
the programs found so far (what :func:`resume_point` needs to go on after the last finished
round with the result of an uninterrupted run). Each file is written atomically.

:func:`seen_by_prior` reads ``task_hashes`` back: the tasks of a source the prior was
pretrained on, which ``jaxarc solve`` leaves out of its score.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import numpy as np
from jaxtyping import Float32

from jaxarc.solve.problem import Problem, task_content_hash
from jaxarc.solve.program_prior import (
    PretrainState,
    PriorConfig,
    PriorError,
    train_prior,
)
from jaxarc.solve.program_tasks import NUM_KINDS

PRIOR_FILE = "prior.npz"
PRIOR_INFO = "prior.json"


def write_file_atomic(path: Path, write: Callable[[Any], None]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_prior(run_dir: Path, prior: np.ndarray, config: PriorConfig, info: dict[str, Any]) -> None:
    """Write ``prior.npz`` and ``prior.json`` (``config.record()`` and ``info``) into
    ``run_dir``, each atomically."""
    run_dir.mkdir(parents=True, exist_ok=True)
    meta = {"config": config.record(), **info}
    write_file_atomic(run_dir / PRIOR_FILE, lambda f: np.savez(f, prior=prior))
    write_file_atomic(run_dir / PRIOR_INFO, lambda f: f.write(json.dumps(meta, indent=1).encode()))


def is_prior_dir(path: Path) -> bool:
    """Whether ``path`` is a directory holding a saved prior."""
    return (Path(path) / PRIOR_FILE).is_file()


def read_record(path: Path, required: str, what: str, error: type[Exception]) -> dict[str, Any]:
    """The JSON object at ``path`` (a saved prior's or network's record), which must hold a
    ``required`` object; an ``error`` naming the file and ``what`` it should be otherwise."""
    try:
        meta = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise error(f"{path}: not a readable {what} ({err})") from None
    if not isinstance(meta, dict) or not isinstance(meta.get(required), dict):
        raise error(f"{path}: not a {what}'s record (no '{required}' object)")
    return meta


def seen_in_record(
    meta: dict[str, Any], problems: list[Problem], path: Path, error: type[Exception]
) -> list[str] | None:
    """The ids of ``problems`` whose content hash a record's ``task_hashes`` holds, in
    order; ``None`` when it holds none; an ``error`` naming ``path`` when they are not a
    list of strings."""
    hashes = meta.get("task_hashes")
    if hashes is None:
        return None
    if not isinstance(hashes, list) or not all(isinstance(h, str) for h in hashes):
        raise error(f"{path}: 'task_hashes' is not a list of strings")
    seen = set(hashes)
    return [p.task_id for p in problems if task_content_hash(p) in seen]


def read_prior_info(run_dir: Path) -> dict[str, Any]:
    """``prior.json`` of ``run_dir``; a :class:`PriorError` naming it when it is missing or
    not a JSON object."""
    return read_record(Path(run_dir) / PRIOR_INFO, "config", "program prior", PriorError)


def load_prior(run_dir: Path) -> tuple[Float32[np.ndarray, "K K"], PriorConfig]:
    """The prior and the settings it was made with from ``run_dir``; a :class:`PriorError`
    naming the file when it is missing, damaged, of another shape, or does not record
    every setting (see :meth:`PriorConfig.from_record`)."""
    path = Path(run_dir) / PRIOR_FILE
    if Path(run_dir).exists() and not Path(run_dir).is_dir():
        raise PriorError(f"{run_dir}: a file; a prior is a directory with {PRIOR_FILE}")
    try:
        with np.load(path, allow_pickle=False) as data:
            prior = np.asarray(data["prior"], np.float32)
    except FileNotFoundError:
        raise PriorError(
            f"{path}: no such file (make a prior with jaxarc pretrain-programs)"
        ) from None
    except (OSError, KeyError, ValueError, TypeError, EOFError, zipfile.BadZipFile) as err:
        reason = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
        raise PriorError(f"{path}: damaged, not a readable program prior ({reason})") from None
    if prior.shape != (NUM_KINDS, NUM_KINDS) or not np.isfinite(prior).all():
        raise PriorError(
            f"{path}: a prior of shape {prior.shape} (finite: {np.isfinite(prior).all()}); "
            f"expected finite ({NUM_KINDS}, {NUM_KINDS})"
        )
    info = Path(run_dir) / PRIOR_INFO
    config = PriorConfig.from_record(read_prior_info(run_dir)["config"], str(info))
    return prior, config


def _run_record(config: PriorConfig, source: str, seed: int, problems: list[Problem]):
    return {
        "config": config.record(),
        "source": source,
        "seed": seed,
        "tasks": [p.task_id for p in problems],
        "task_hashes": [task_content_hash(p) for p in problems],
    }


def seen_by_prior(run_dir: Path, problems: list[Problem]) -> list[str] | None:
    """The ids of ``problems`` whose content hash the prior in ``run_dir`` records as a
    task it was pretrained on, in order; ``None`` when it records no ``task_hashes`` (made
    before priors recorded them: what it saw is unknown). A :class:`PriorError` naming the
    file when ``task_hashes`` is not a list of strings."""
    meta = read_prior_info(run_dir)
    return seen_in_record(meta, problems, Path(run_dir) / PRIOR_INFO, PriorError)


def resume_point(
    run_dir: Path, problems: list[Problem], config: PriorConfig, *, seed: int, source: str
) -> PretrainState | None:
    """What a stopped pretraining of the same run left in ``run_dir`` (``None``: nothing
    there); a :class:`PriorError` when ``run_dir`` holds another run's prior (naming what
    differs) or as many rounds as asked for already."""
    if not (Path(run_dir) / PRIOR_FILE).exists() and not (Path(run_dir) / PRIOR_INFO).exists():
        return None
    meta = read_prior_info(run_dir)
    ours = _run_record(config, source, seed, problems)
    ours["config"] = {**ours["config"], "rounds": meta["config"].get("rounds")}
    if "task_hashes" not in meta:  # (recorded before priors kept them: the ids must do)
        del ours["task_hashes"]
    differs = [k for k, v in ours.items() if meta.get(k) != v]
    if differs or "found" not in meta:
        what = ", ".join(differs) if differs else "no programs recorded"
        raise PriorError(f"{run_dir} holds the prior of another run (differs in: {what})")
    done = int(meta.get("rounds_done", 0))
    if done >= config.rounds:
        raise PriorError(f"{run_dir} already holds this run's {done} rounds")
    prior, _ = load_prior(run_dir)
    found = {
        int(k): [np.asarray(p, np.int32) for p in programs] for k, programs in meta["found"].items()
    }
    return PretrainState(prior, list(meta["history"])[:done], found)


def pretrain_and_save(
    problems: list[Problem],
    config: PriorConfig,
    run_dir: Path,
    *,
    seed: int = 0,
    source: str = "",
    progress: Callable[[int, int], None] | None = None,
    resume: PretrainState | None = None,
) -> dict[str, Any]:
    """:func:`train_prior` on ``problems``, saved in ``run_dir`` after every round (a
    stopped run keeps its last finished round: ``rounds_done`` in ``prior.json``, which
    :func:`resume_point` reads back to go on from); returns the saved info."""
    start = time.perf_counter()
    earlier = sum(record["seconds"] for record in resume.history) if resume else 0.0
    info = _run_record(config, source, seed, problems)
    del info["config"]  # (save_prior writes it)

    def keep(state: PretrainState) -> None:
        info.update(
            rounds_done=len(state.history),
            seconds=round(earlier + time.perf_counter() - start, 1),
            history=state.history,
            found={str(k): [p.tolist() for p in ps] for k, ps in state.found.items() if ps},
        )
        save_prior(run_dir, state.prior, config, info)

    train_prior(
        problems, config, jax.random.key(seed), progress=progress, on_round=keep, resume=resume
    )
    return info
