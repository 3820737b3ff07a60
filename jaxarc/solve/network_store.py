"""A trained program network on disk: ``network.eqx`` (its weights) and ``network.json``
(its widths, the layout of the item kinds it reads, and what it was trained on).

Item kinds are numbered from the content language's paint kinds and mask families
(:func:`kind_layout`); a network saved under another layout would read every language
item as another kind, so it is refused in one line (train it again).

:func:`save_network` writes both atomically; :func:`load_network` reads them back into a
:class:`~jaxarc.agents.model.program_policy.ProgramPolicy` and names the file in one line
(a :class:`NetworkError`) when it is missing, damaged or of other widths.
"""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import equinox as eqx
import jax

from jaxarc.agents.model.program_policy import ProgramPolicy, ProgramPolicyConfig
from jaxarc.solve.prior_store import read_record, seen_in_record, write_file_atomic
from jaxarc.solve.problem import Problem, task_content_hash

NETWORK_FILE = "network.eqx"
NETWORK_INFO = "network.json"


def kind_layout() -> str:
    """How this jaxarc numbers item kinds: the whole-grid kinds, then the content
    language's paint kinds times its mask families, then its view kinds."""
    from jaxarc.solve.language.masks import FAMILY_NAMES
    from jaxarc.solve.language.vocabulary import PAINT_KINDS, VIEW_ITEM_KINDS
    from jaxarc.solve.program_tasks import NUM_KINDS

    return (
        f"{NUM_KINDS} whole-grid; paints {','.join(PAINT_KINDS)}; masks "
        f"{','.join(FAMILY_NAMES)}; views {','.join(VIEW_ITEM_KINDS)}"
    )


class NetworkError(ValueError):
    """A program network that cannot be read (with the file and the reason)."""


def save_network(
    run_dir: Path,
    policy: ProgramPolicy,
    info: dict[str, Any] | None = None,
    trained_on: list[Problem] | None = None,
) -> None:
    """Write ``policy`` and its record (``policy.config``, ``info`` and the content hashes
    of the tasks it was ``trained_on``) into ``run_dir``."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    eqx.tree_serialise_leaves(buffer, policy)
    meta = {
        "policy": dataclasses.asdict(policy.config),
        "kind_layout": kind_layout(),
        **(info or {}),
    }
    if trained_on is not None:
        meta["task_hashes"] = [task_content_hash(p) for p in trained_on]
    write_file_atomic(run_dir / NETWORK_FILE, lambda f: f.write(buffer.getvalue()))
    write_file_atomic(
        run_dir / NETWORK_INFO, lambda f: f.write(json.dumps(meta, indent=1).encode())
    )


def is_network_dir(path: Path) -> bool:
    """Whether ``path`` is a directory holding a saved program network."""
    return (Path(path) / NETWORK_FILE).is_file()


def seen_by_network(run_dir: Path, problems: list[Problem]) -> list[str] | None:
    """The ids of ``problems`` the network in ``run_dir`` was trained on (by content), in
    order; ``None`` when it records no task hashes."""
    meta = read_network_info(run_dir)
    return seen_in_record(meta, problems, Path(run_dir) / NETWORK_INFO, NetworkError)


def read_network_info(run_dir: Path) -> dict[str, Any]:
    """``network.json`` of ``run_dir`` (a :class:`NetworkError` when unreadable)."""
    return read_record(Path(run_dir) / NETWORK_INFO, "policy", "program network", NetworkError)


def load_network(run_dir: Path) -> ProgramPolicy:
    """The network saved in ``run_dir`` (see the module docstring)."""
    meta = read_network_info(run_dir)
    if meta.get("kind_layout") != kind_layout():
        raise NetworkError(
            f"{Path(run_dir) / NETWORK_INFO}: made for another layout of item kinds (the "
            "content language's families differ from this jaxarc's): train it again"
        )
    try:
        config = ProgramPolicyConfig(**meta["policy"])
    except (TypeError, ValueError) as err:
        raise NetworkError(f"{Path(run_dir) / NETWORK_INFO}: bad widths ({err})") from None
    like = ProgramPolicy(jax.random.key(0), config)
    path = Path(run_dir) / NETWORK_FILE
    try:
        with path.open("rb") as f:
            return eqx.tree_deserialise_leaves(f, like)
    except FileNotFoundError:
        raise NetworkError(f"{path}: no such file") from None
    except Exception as err:  # (a truncated or foreign file: any reader error)
        raise NetworkError(f"{path}: damaged ({type(err).__name__}: {err})") from None
