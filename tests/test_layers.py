"""The package's import layers (pyproject's import-linter contracts) hold, and the check
would catch an upward import; the module paths from before the re-layering still import."""

from __future__ import annotations

import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(package_parent: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=package_parent,
        env={"PYTHONPATH": str(package_parent), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_layer_contracts_are_kept() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


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
    shutil.copytree(ROOT / "jaxarc", tmp_path / "jaxarc", ignore=shutil.ignore_patterns("*.pyc"))
    path = tmp_path / "jaxarc" / module
    path.write_text(path.read_text() + f"\n{upward}  # an upward import\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "BROKEN" in result.stdout


def test_pre_relayering_module_paths_still_import() -> None:
    import jaxarc  # noqa: F401  (installs the moved-module finder)
    from jaxarc._moved import MOVED_MODULES

    for old, new in MOVED_MODULES.items():
        sys.modules.pop(old, None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = __import__(old, fromlist=["_"])
        assert module is sys.modules[new], old
        assert any(new in str(w.message) for w in caught), old
