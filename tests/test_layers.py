"""The package's import contracts (pyproject's import-linter contracts) hold: the layers,
and no import circles between sibling modules; the whole import graph (package ``__init__``
files included) has no circle either. Both checks catch an upward import or a circle planted
in a copy of the package. Every module has one import path."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from limits import SUBPROCESS_TIMEOUT_S

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(package_parent: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=package_parent,
        env={"PYTHONPATH": str(package_parent), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )


def test_layer_contracts_are_kept() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 kept, 0 broken" in result.stdout


def planted(tmp_path: Path, plants: dict[str, str]) -> Path:
    """A copy of the package with each module's text extended by its plant."""
    shutil.copytree(ROOT / "jaxarc", tmp_path / "jaxarc", ignore=shutil.ignore_patterns("*.pyc"))
    for module, text in plants.items():
        path = tmp_path / "jaxarc" / module
        path.write_text(path.read_text() + f"\n{text}\n")
    return tmp_path


@pytest.mark.parametrize(
    ("module", "upward"),
    [
        ("data/bank.py", "import jaxarc.envs.functional"),
        ("grid/operations.py", "import jaxarc.data.bank"),
        ("envs/episode.py", "import jaxarc.agents.grpo.train"),
        ("agents/model/policy.py", "import jaxarc.agents.run.checkpoint"),
    ],
)
def test_an_upward_import_breaks_the_contracts(tmp_path: Path, module: str, upward: str) -> None:
    result = lint_imports(planted(tmp_path, {module: f"{upward}  # an upward import"}))
    assert result.returncode != 0
    assert "BROKEN" in result.stdout


@pytest.mark.parametrize(
    ("module", "back", "package", "edge"),
    [
        # gymnax/environment.py imports spaces at module level
        (
            "gymnax/spaces.py",
            "import jaxarc.gymnax.environment",
            "gymnax",
            ".spaces -> .environment",
        ),
        # data/bank.py imports source; a function-level import back is a circle too
        (
            "data/source.py",
            "def _bank():\n    from jaxarc.data.bank import TaskBank\n\n    return TaskBank",
            "data",
            ".source -> .bank",
        ),
        # the GRPO update and its state: train imports train_state, never the other way
        (
            "agents/grpo/train_state.py",
            "def _update():\n    from jaxarc.agents.grpo.train import grpo_update",
            "agents.grpo",
            ".train_state -> .train",
        ),
        # a circle between two subpackages of agents (model never imports grpo's train)
        (
            "agents/model/features.py",
            "def _train():\n    import jaxarc.agents.grpo.loss",
            "agents",
            ".model -> .grpo",
        ),
    ],
)
def test_an_import_circle_breaks_the_contracts(
    tmp_path: Path, module: str, back: str, package: str, edge: str
) -> None:
    result = lint_imports(planted(tmp_path, {module: back}))
    assert result.returncode != 0
    assert "no import circles BROKEN" in result.stdout, result.stdout
    assert f"No cycles are allowed in jaxarc.{package}." in result.stdout, result.stdout
    importer, imported = edge.split(" -> ")
    # the check names one import of the circle to remove (either way round)
    assert edge in result.stdout or f"{imported} -> {importer}" in result.stdout, result.stdout


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("jaxarc.envs.operations", "jaxarc.grid.operations"),
        ("jaxarc.envs.environment", "jaxarc.gymnax.environment"),
        ("jaxarc.envs.registry", "jaxarc.gymnax.registry"),
        ("jaxarc.agents.policy", "jaxarc.agents.model.policy"),
        ("jaxarc.agents.train", "jaxarc.agents.grpo.train"),
        ("jaxarc.agents.training_loop", "jaxarc.agents.run.training_loop"),
    ],
)
def test_a_module_has_one_import_path(old: str, new: str) -> None:
    importlib.import_module(new)
    sys.modules.pop(old, None)
    with pytest.raises(ModuleNotFoundError, match=old.rpartition(".")[2]):
        importlib.import_module(old)


def test_named_environments_are_the_gymnax_faces_only() -> None:
    import jaxarc.envs
    import jaxarc.gymnax

    for name in ("make", "ArcEnvironment", "ArcEnvParams", "build_environment", "register"):
        assert hasattr(jaxarc.gymnax, name), name
        assert not hasattr(jaxarc.envs, name), name
        assert name not in jaxarc.envs.__all__, name


_CIRCLES = """
import json, sys
import grimp

graph = grimp.build_graph("jaxarc", cache_dir=None)
imports = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
index, low, stack, on_stack, circles = {}, {}, [], set(), []

def visit(module):  # Tarjan's strongly connected components
    index[module] = low[module] = len(index)
    stack.append(module)
    on_stack.add(module)
    for other in imports[module]:
        if other not in index:
            visit(other)
            low[module] = min(low[module], low[other])
        elif other in on_stack:
            low[module] = min(low[module], index[other])
    if low[module] == index[module]:
        component = []
        while not component or component[-1] != module:
            component.append(stack.pop())
            on_stack.discard(component[-1])
        if len(component) > 1:
            circles.append(sorted(component))

sys.setrecursionlimit(10_000)
for module in imports:
    if module not in index:
        visit(module)
print(json.dumps(sorted(circles)))
"""


def import_circles(package_parent: Path) -> list[list[str]]:
    """The groups of modules that import each other in a circle (package ``__init__`` files
    included; module-level, function-level and TYPE_CHECKING imports all count)."""
    result = subprocess.run(
        [sys.executable, "-c", _CIRCLES],
        cwd=package_parent,
        env={"PYTHONPATH": str(package_parent), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_no_module_is_in_an_import_circle() -> None:
    assert import_circles(ROOT) == []


def test_a_circle_through_a_package_init_is_found(tmp_path: Path) -> None:
    # data/__init__.py imports data/source.py: a name imported back from the package is a
    # circle that the contracts (which compare sibling modules) do not see
    back = "def _load():\n    from jaxarc.data import load_bank\n\n    return load_bank"
    circles = import_circles(planted(tmp_path, {"data/source.py": back}))
    (new,) = circles
    assert {"jaxarc.data", "jaxarc.data.source"} <= set(new)
