"""The api part's sub-packages are layers: each imports only the ones below it.

The order is the one ``fakekube/api/__init__.py`` documents. A new sub-package must be
placed in it here, and each one shows a public face (a docstring and ``__all__``).
"""

from __future__ import annotations

import ast
import importlib
import pathlib

import pytest

import fakekube.api

#: Bottom up: a module in one of these may import from its own sub-package or an earlier one.
LAYERS = ("machinery", "wire", "selectors", "table", "registry", "auth", "types", "admission", "verbs", "http")

API_DIR = pathlib.Path(fakekube.api.__file__).parent


def _sub_packages() -> list[str]:
    return sorted(p.name for p in API_DIR.iterdir() if (p / "__init__.py").exists())


def _package_of(path: pathlib.Path) -> str:
    dotted = ".".join(path.relative_to(API_DIR.parent.parent).with_suffix("").parts)
    return dotted.removesuffix(".__init__") if path.name == "__init__.py" else dotted.rpartition(".")[0]


def _imported_api_modules(source: str, package: str) -> list[tuple[int, str]]:
    """(line, dotted name under fakekube.api) of every import of the api part in a module
    of ``package``, relative imports resolved."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            if module == "fakekube.api":  # `from fakekube.api import x`: x is the sub-package
                found += [(node.lineno, f"fakekube.api.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, module))
    prefix = "fakekube.api."
    return [(line, name[len(prefix):]) for line, name in found if name.startswith(prefix)]


def test_every_sub_package_has_a_layer():
    assert _sub_packages() == sorted(LAYERS)


@pytest.mark.parametrize("layer", LAYERS)
def test_imports_point_down_the_layers(layer):
    allowed = set(LAYERS[:LAYERS.index(layer) + 1])
    wrong = []
    for path in sorted((API_DIR / layer).rglob("*.py")):
        for line, target in _imported_api_modules(path.read_text(), _package_of(path)):
            if target.split(".")[0] not in allowed:
                wrong.append(f"{path.relative_to(API_DIR)}:{line} imports fakekube.api.{target}")
    assert wrong == []


def test_the_check_sees_every_form_of_import():
    source = ("from fakekube.api.verbs import APIServer\nfrom ..types import core\nimport fakekube.api.http.app\n"
              "from fakekube.api import table\nfrom . import errors\nfrom fakekube.clock import now\n")
    found = [t for _, t in _imported_api_modules(source, "fakekube.api.machinery")]
    assert found == ["verbs", "types", "http.app", "table", "machinery"]


@pytest.mark.parametrize("layer", LAYERS)
def test_each_sub_package_shows_a_public_face(layer):
    package = importlib.import_module(f"fakekube.api.{layer}")
    assert (package.__doc__ or "").strip(), f"fakekube.api.{layer} has no docstring"
    names = getattr(package, "__all__", None)
    assert names, f"fakekube.api.{layer} has no __all__"
    assert [n for n in names if not hasattr(package, n)] == []
