"""``gymnax.make`` knows jaxarc's names after ``import jaxarc``, whatever is imported next.

Registering with gymnax needs ``gymnax.registration``, and importing it imports every gymnax
environment (seconds), so ``import jaxarc`` does not import it. It installs an import hook
instead: when ``gymnax.registration`` is imported (by ``import gymnax``), jaxarc's names are
registered right after that module has run, before anything can call ``gymnax.make``; if it
was imported already, they are registered at once. A script's ``gymnax.make("gen/easy")``
then works after ``import jaxarc`` in either import order, not only once some jaxarc
environment has been built.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

TARGET = "gymnax.registration"


def register_now() -> None:
    """Register every jaxarc name with gymnax (importing the module registers them)."""
    try:
        import jaxarc.gymnax.registration  # noqa: F401
    except Exception as err:  # a broken registration must not break `import gymnax`
        warnings.warn(f"jaxarc could not register its names with gymnax: {err}", stacklevel=2)


class _RegisteringLoader(importlib.abc.Loader):
    """Runs ``gymnax.registration`` with its own loader, then registers jaxarc's names."""

    def __init__(self, loader: importlib.abc.Loader):
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        register_now()


class _Finder(importlib.abc.MetaPathFinder):
    """Finds ``gymnax.registration`` as the path finder does, with a registering loader."""

    def find_spec(self, fullname: str, path=None, target=None):
        if fullname != TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _RegisteringLoader(spec.loader)
        return spec


def install() -> None:
    """Register now if gymnax's registry is loaded, else when it is (idempotent)."""
    if TARGET in sys.modules:
        register_now()
    elif not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
