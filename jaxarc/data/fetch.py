"""Download public ARC datasets (GitHub archive zips) into the user cache directory.

``fetch_dataset("miniarc")`` downloads the repository archive, extracts it into a temporary
directory next to the destination, checks that the expected task folders are there, and
only then renames it into place (``<cache>/datasets/<name>``): an interrupted fetch never
leaves a half-extracted dataset behind. Fetched datasets load by name:
``fetched/<name>[/<split>]`` (and the short aliases ``conceptarc`` and ``miniarc``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path, PurePosixPath

from jaxarc.data.cache import cache_root

FETCHED_PREFIX = "fetched/"
MARKER_FILE = ".jaxarc-fetch.json"


class FetchError(RuntimeError):
    """A dataset could not be downloaded or extracted (offline, HTTP error, bad archive)."""


@dataclasses.dataclass(frozen=True)
class FetchableDataset:
    """A public dataset: its archive URL and where its task files sit inside the archive.

    ``splits`` maps a split name (``""`` for a dataset without splits) to the folders,
    relative to the archive's top folder, searched recursively for task files.
    """

    name: str
    url: str
    licence: str
    splits: dict[str, tuple[str, ...]]

    def source_name(self, split: str) -> str:
        return f"{FETCHED_PREFIX}{self.name}" + (f"/{split}" if split else "")


DATASETS: dict[str, FetchableDataset] = {
    d.name: d
    for d in (
        FetchableDataset(
            "conceptarc",
            "https://github.com/victorvikram/ConceptARC/archive/refs/heads/main.zip",
            "MIT",
            {"": ("corpus", "MinimalTasks")},
        ),
        FetchableDataset(
            "miniarc",
            "https://github.com/KSB21ST/MINI-ARC/archive/refs/heads/master.zip",
            "Apache-2.0",
            {"": ("data/MiniARC",)},
        ),
        FetchableDataset(
            "arc-agi-1",
            "https://github.com/fchollet/ARC-AGI/archive/refs/heads/master.zip",
            "Apache-2.0",
            {"training": ("data/training",), "evaluation": ("data/evaluation",)},
        ),
        FetchableDataset(
            "arc-agi-2",
            "https://github.com/arcprize/ARC-AGI-2/archive/refs/heads/main.zip",
            "Apache-2.0",
            {"training": ("data/training",), "evaluation": ("data/evaluation",)},
        ),
    )
}

# short names that load a fetched dataset directly (the bundled arc-agi names take precedence)
FETCHED_ALIASES: dict[str, str] = {"conceptarc": "fetched/conceptarc", "miniarc": "fetched/miniarc"}


def datasets_dir() -> Path:
    return cache_root() / "datasets"


def dataset_dir(name: str) -> Path:
    return datasets_dir() / name


def _dataset(name: str) -> FetchableDataset:
    if name not in DATASETS:
        raise FetchError(f"unknown dataset {name!r}; fetchable: {', '.join(DATASETS)}")
    return DATASETS[name]


def is_fetched(name: str) -> bool:
    return (dataset_dir(name) / MARKER_FILE).is_file()


def fetched_source_names(only_present: bool = True) -> list[str]:
    """``fetched/...`` source names (only those already fetched, by default)."""
    return [
        d.source_name(split)
        for d in DATASETS.values()
        for split in d.splits
        if not only_present or is_fetched(d.name)
    ]


def fetched_source_roots(source: str) -> tuple[Path, tuple[Path, ...]] | None:
    """``(dataset root, task folders)`` of a fetched source name; ``None`` if not such a name.

    Raises :class:`FileNotFoundError` when the name is known but not fetched yet.
    """
    source = FETCHED_ALIASES.get(source, source)
    if not source.startswith(FETCHED_PREFIX):
        return None
    name, _, split = source[len(FETCHED_PREFIX) :].partition("/")
    if name not in DATASETS or split not in DATASETS[name].splits:
        return None
    if not is_fetched(name):
        raise FileNotFoundError(
            f"dataset {name!r} is not fetched yet: run `jaxarc data fetch {name}` "
            f"(it goes to {dataset_dir(name)})"
        )
    root = dataset_dir(name)
    return root, tuple(root / rel for rel in DATASETS[name].splits[split])


def _download(url: str, dest: Path, timeout: float) -> str:
    """Stream ``url`` into ``dest``; returns the sha256 of the bytes."""
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, dest.open("wb") as out:
            while chunk := response.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as err:
        raise FetchError(f"download of {url} failed: HTTP {err.code} {err.reason}") from None
    except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
        reason = getattr(err, "reason", err)
        raise FetchError(
            f"could not reach {url} ({reason}); are you offline? "
            "Pass --url to fetch from a mirror or a local file server."
        ) from None
    return digest.hexdigest()


def _extract(archive: Path, into: Path) -> Path:
    """Extract a zip safely into ``into``; returns its single top folder (or ``into``)."""
    try:
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():
                parts = PurePosixPath(member).parts
                if member.startswith("/") or ".." in parts:
                    raise FetchError(f"refusing unsafe path {member!r} in the archive")
            zf.extractall(into)
    except zipfile.BadZipFile as err:
        raise FetchError(f"the download is not a valid zip archive ({err})") from None
    entries = [p for p in into.iterdir() if not p.name.startswith(".")]
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else into


def fetch_dataset(
    name: str, *, url: str | None = None, force: bool = False, timeout: float = 60.0
) -> Path:
    """Download and extract dataset ``name``; returns its directory in the cache.

    ``url`` overrides the archive URL (mirrors, tests). An existing copy is kept unless
    ``force``; it is replaced only after the new copy is fully extracted and checked.
    """
    dataset = _dataset(name)
    dest = dataset_dir(name)
    if is_fetched(name) and not force:
        return dest
    url = url or dataset.url
    datasets_dir().mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=datasets_dir(), prefix=f".tmp-{name}-"))
    try:
        archive = work / "archive.zip"
        sha256 = _download(url, archive, timeout)
        top = _extract(archive, work / "extracted")
        missing = [
            rel for rels in dataset.splits.values() for rel in rels if not (top / rel).is_dir()
        ]
        if missing:
            raise FetchError(
                f"the archive from {url} lacks the task folders {missing} of {name!r}; wrong URL?"
            )
        marker = {"name": name, "url": url, "sha256": sha256}
        (top / MARKER_FILE).write_text(json.dumps(marker, indent=1))
        staged = work / "staged"
        top.rename(staged)
        if dest.exists():  # an older or partial copy: moved aside, deleted with ``work``
            dest.rename(work / "old")
        staged.rename(dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dest
