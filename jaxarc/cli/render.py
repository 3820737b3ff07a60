"""``jaxarc render`` (a task as an image) and ``jaxarc replay`` (a saved episode as a GIF)."""

from __future__ import annotations

import argparse
import sys
import zipfile
import zlib
from pathlib import Path

from jaxarc.cli.main import CLIError

IMAGE_FORMATS = ("png", "svg", "ansi")
MAX_CELL_SIZE = 64
"""Largest ``--cell-size``: a 30x30 task sheet at 64 px a cell is already ~100 M pixels."""


def _cell_size(text: str) -> int:
    """An argparse type: pixels per cell, ``1..MAX_CELL_SIZE``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 1 <= value <= MAX_CELL_SIZE:
        raise argparse.ArgumentTypeError(f"must be in 1..{MAX_CELL_SIZE} pixels, got {value}")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    render = subparsers.add_parser(
        "render", help="draw a task (demo pairs and test inputs) as PNG, SVG or terminal colours"
    )
    render.add_argument("task_id", metavar="TASK_ID", help="task id in SOURCE, e.g. 007bbfb7")
    render.add_argument(
        "--source",
        default="arc-agi-1/training",
        help="source name, directory or JSON file (default arc-agi-1/training)",
    )
    render.add_argument("--out", default=None, help="output file (default TASK_ID.png)")
    render.add_argument(
        "--format",
        choices=IMAGE_FORMATS,
        default=None,
        help="png or svg (one task sheet file) or ansi (printed; plain digits when piped or "
        "with NO_COLOR set); default from --out",
    )
    render.add_argument(
        "--cell-size",
        type=_cell_size,
        default=16,
        help=f"pixels per cell, 1..{MAX_CELL_SIZE} (default 16)",
    )
    render.add_argument(
        "--show-test-outputs", action="store_true", help="also draw the test outputs"
    )
    render.set_defaults(func=run_render)

    replay = subparsers.add_parser(
        "replay",
        help="draw a saved episode as an animated GIF: an EpisodeRecord (.save()) or a state "
        "saved with jaxarc.envs.serialization.save_state (its action history is replayed)",
    )
    replay.add_argument("episode", metavar="EPISODE", help="episode record or state file (.npz)")
    replay.add_argument(
        "--source", default=None, help="task source of a saved state (default: from its header)"
    )
    replay.add_argument(
        "--env-index",
        type=_non_negative,
        default=None,
        help="which environment of a saved batch of states (default 0; a batch only)",
    )
    replay.add_argument("--out", default=None, help="output GIF (default EPISODE.gif)")
    replay.add_argument(
        "--cell-size",
        type=_cell_size,
        default=16,
        help=f"pixels per cell, 1..{MAX_CELL_SIZE} (default 16)",
    )
    replay.add_argument("--frame-ms", type=int, default=600, help="milliseconds per frame")
    replay.add_argument("--print", action="store_true", help="also print each step as text")
    replay.set_defaults(func=run_replay)


def _format_of(args: argparse.Namespace) -> str:
    """The format from ``--format`` and ``--out``'s suffix, which must agree: an SVG is
    never written into a ``.png`` file, and ``--out`` never silently ignored (ansi)."""
    suffix = None if args.out is None else Path(args.out).suffix.lower().lstrip(".")
    if args.format == "ansi" and args.out is not None:
        raise CLIError("--format ansi prints to the terminal: --out does not apply")
    if args.format is not None:
        if suffix in ("png", "svg") and suffix != args.format:
            raise CLIError(
                f"--format {args.format} but --out {args.out!r} names a .{suffix} file: "
                f"give --out a .{args.format} name (or leave --format out)"
            )
        return args.format
    if args.out is None:
        return "png"
    if suffix not in ("png", "svg"):
        raise CLIError(f"cannot tell the format from --out {args.out!r}: use --format")
    return suffix


def run_render(args: argparse.Namespace) -> int:
    from jaxarc.data import TaskBank, TaskFormatError, load_source
    from jaxarc.data.stacking import generated_bank
    from jaxarc.render import (
        render_task_sheet,
        save_png,
        task_entries,
        task_sheet_svg,
        to_terminal,
    )

    fmt = _format_of(args)
    try:
        bank = load_source(args.source)
    except (TaskFormatError, ValueError, FileNotFoundError) as err:
        raise CLIError(f"cannot load --source {args.source!r}: {err}") from None
    if not isinstance(bank, TaskBank):  # generated: task ids "<source>#<i>", as `jaxarc eval`
        name, _, index = args.task_id.rpartition("#")
        if name != args.source or not index.isdigit() or int(index) > 100_000:
            raise CLIError(
                f"task ids of --source {args.source!r} are {args.source}#<i> (the tasks "
                f"`jaxarc eval --seed 0` scores), got {args.task_id!r}"
            )
        bank = generated_bank(bank, int(index) + 1, 0, args.source)
    stem = args.task_id.replace("/", "_") if "#" in args.task_id else args.task_id
    try:
        task = bank.task_by_id(args.task_id)
    except KeyError as err:
        raise CLIError(f"{err.args[0]} in {args.source!r}") from None

    if fmt == "ansi":  # colour only on a terminal and without NO_COLOR
        for entry_in, entry_out in task_entries(task, args.show_test_outputs):
            for entry in (entry_in, entry_out):
                if entry is not None:
                    print(f"{args.task_id} {entry.kind} {entry.pair} {entry.size_label}")
                    print(to_terminal(entry.grid, stream=sys.stdout))
        return 0

    out = Path(args.out or f"{stem}.{fmt}")
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "png":
        sheet = render_task_sheet(
            task, args.task_id, cell_size=args.cell_size, show_test_outputs=args.show_test_outputs
        )
        save_png(sheet, out)
        print(f"wrote {out} ({sheet.shape[1]}x{sheet.shape[0]} px)")
        return 0
    svg = task_sheet_svg(
        task, args.task_id, cell_size=args.cell_size, show_test_outputs=args.show_test_outputs
    )
    out.write_text(svg, encoding="utf-8")
    print(f"wrote {out} (one SVG task sheet)")
    return 0


def run_replay(args: argparse.Namespace) -> int:
    from jaxarc.grid.operation_ids import OPERATION_NAMES
    from jaxarc.render import save_episode_gif, to_text

    path = Path(args.episode)
    if args.frame_ms < 1:
        raise CLIError(f"--frame-ms must be >= 1, got {args.frame_ms}")
    if not path.is_file():
        raise CLIError(f"no episode file at {path}")
    if not zipfile.is_zipfile(path):  # .npy, text, empty or truncated files
        raise CLIError(
            f"cannot replay {path}: not a complete .npz archive (an EpisodeRecord saved with "
            ".save(), or a state saved with jaxarc.envs.serialization.save_state)"
        )
    try:
        record = _load_episode(path, args.source, args.env_index)
    except (
        ValueError,
        OSError,
        KeyError,
        TypeError,
        EOFError,
        zipfile.BadZipFile,
        zlib.error,
        RecursionError,
    ) as err:
        raise CLIError(f"cannot replay {path}: {type(err).__name__}: {err}") from None
    out = Path(args.out) if args.out else path.with_suffix(".gif")
    save_episode_gif(record, out, cell_size=args.cell_size, frame_ms=args.frame_ms)
    if args.print:
        for t in range(record.num_steps):
            op = int(record.operations[t])
            name = OPERATION_NAMES[op] if 0 <= op < len(OPERATION_NAMES) else str(op)
            print(f"step {t + 1}: {name} reward {record.rewards[t]:+.3f}")
            print(to_text(record.grids[t + 1], shape=record.grid_shapes[t + 1]), file=sys.stdout)
    outcome = "solved" if record.success else "not solved"
    print(f"wrote {out} ({record.num_steps} steps, {outcome})")
    return 0


def _load_episode(path: Path, source: str | None, env_index: int | None):
    """An EpisodeRecord from a record file, or by replaying a saved state's history."""
    import json

    import numpy as np

    from jaxarc.render import EpisodeRecord

    with np.load(path, allow_pickle=False) as data:
        header = json.loads(str(data["__header__"])) if "__header__" in data.files else None
    if header is None:
        if env_index not in (None, 0):
            raise ValueError(f"--env-index {env_index}: {path} holds one recorded episode")
        return EpisodeRecord.load(path)

    import jax

    from jaxarc.data import load_source
    from jaxarc.envs import (
        EnvironmentConfig,
        JaxArcConfig,
        UnifiedActionConfig,
        UnifiedDatasetConfig,
    )
    from jaxarc.envs.serialization import load_state
    from jaxarc.render import replay_history

    config = JaxArcConfig(
        environment=EnvironmentConfig(
            max_episode_steps=int(header["max_episode_steps"]),
            episode_mode=header["episode_mode"],
        ),
        dataset=UnifiedDatasetConfig(*(int(v) for v in header["canvas_shape"])),
        action=UnifiedActionConfig(selection_format=header["selection_format"]),
    )
    source_name = source or header["source_name"]
    task_source = load_source(source_name, canvas_shape=config.dataset.canvas_shape)
    state = load_state(path, config, task_source)
    batch_shape = tuple(header["batch_shape"])
    if not batch_shape and env_index not in (None, 0):
        raise ValueError(f"--env-index {env_index}: {path} holds one environment's state")
    if batch_shape:
        env_index = 0 if env_index is None else env_index
        if not 0 <= env_index < int(np.prod(batch_shape)):
            raise ValueError(f"--env-index {env_index} outside the saved batch {batch_shape}")
        index = np.unravel_index(env_index, batch_shape)
        state = jax.tree.map(lambda leaf: leaf[index], state)
    return replay_history(state, config)
