"""Install every dependency at its declared lower bound and run a smoke test on it.

    python scripts/check_lower_bounds.py [--venv /tmp/jaxarc-lowest] [--tests tests/test_x.py ...]

Each ``name>=X`` of ``[project].dependencies`` in pyproject.toml is installed as
``name==X`` in a fresh virtual environment (unbounded ones, e.g. ``six``, at their newest),
with pytest and hypothesis at their dev lower bounds; the project itself is installed without
its dependencies; then the chosen test files run there (default: the environment, gymnax,
Gymnasium and wrapper tests). It prints one line per dependency and exits non-zero when the
install or a test fails. This is what CI's "lowest versions" job would run; it needs the
package registry (the install takes a few minutes).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TESTS = (
    "tests/test_env_gymnax.py",
    "tests/test_gym.py",
    "tests/test_wrappers.py",
    "tests/test_ecosystem_gymnax.py::test_make_flat_multi_discrete_option",
)
TEST_TOOLS = ("pytest", "hypothesis", "pytest-xdist")


def lowest_pins(requirements: list[str]) -> list[tuple[str, str]]:
    """``(requirement, pin)`` pairs: ``name>=X`` -> ``name==X``, others unchanged."""
    pins = []
    for requirement in requirements:
        spec = requirement.split(";")[0].strip()
        match = re.fullmatch(r"([A-Za-z0-9_.\-\[\]]+)\s*>=\s*([^,\s]+)", spec)
        pins.append((spec, f"{match[1]}=={match[2]}" if match else spec))
    return pins


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", default="/tmp/jaxarc-lowest")
    parser.add_argument("--tests", nargs="*", default=list(DEFAULT_TESTS))
    args = parser.parse_args(argv)

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = lowest_pins(project["dependencies"])
    dev = dict(lowest_pins(project["optional-dependencies"]["dev"]))
    tools = [pin for spec, pin in dev.items() if spec.split(">=")[0] in TEST_TOOLS]

    env_dir = Path(args.venv)
    venv.create(env_dir, with_pip=True, clear=True)
    python = str(env_dir / "bin" / "python")
    install = [python, "-m", "pip", "install", "-q", *(pin for _, pin in pins), *tools]
    print("$", " ".join(install[1:]), flush=True)
    if subprocess.run(install).returncode != 0:
        print("FAILED: the lowest versions do not install together")
        return 1
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", str(ROOT)], check=True)
    listed = subprocess.run(
        [python, "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True
    ).stdout
    installed = dict(line.lower().split("==", 1) for line in listed.splitlines() if "==" in line)
    for spec, _ in pins:
        name = re.split(r"[<>=\[; ]", spec)[0].lower()
        got = installed.get(name) or installed.get(name.replace("-", "_")) or "?"
        print(f"  {spec:28s} installed {got}")
    tests = [python, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *args.tests]
    print("$", " ".join(tests[1:]), flush=True)
    result = subprocess.run(tests, cwd=ROOT)
    print("lowest versions:", "PASS" if result.returncode == 0 else "FAIL")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
