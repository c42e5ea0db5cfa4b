"""Each built-in type is declared once, and nothing keyed by a type's name can miss it.

Every per-type rule (strategy, printer, field selectors, name rule, create-on-update,
delete answer) is a field of the type's one ``ResourceType`` declaration, so there is no
separate table keyed by "group/plural" to fall out of step. These tests hold the rest
of the contract: every declaration is served, every printer and field set is used by a
declaration, a literal (group, plural) anywhere in the code names a served type, and a
declaration or lookup with a misspelt name fails loudly.
"""

from __future__ import annotations

import ast
import importlib
import pathlib
import pkgutil
import re

import pytest

import fakekube
from fakekube.api import selectors, table, types
from fakekube.api.registry import Registry, ResourceType
from fakekube.api.types import BUILTIN_TYPES, METRICS_TYPES, builtin_registry

#: Every type a registry can serve: the built-ins, and the add-on types (metrics-server's).
DECLARED = BUILTIN_TYPES + METRICS_TYPES
SERVED = {(rt.group, rt.plural) for rt in DECLARED}
GROUPS = {rt.group for rt in DECLARED}
PACKAGE_DIR = pathlib.Path(fakekube.__file__).parent


def _declared_in_types_modules() -> dict[str, ResourceType]:
    found = {}
    for info in pkgutil.iter_modules(types.__path__):
        module = importlib.import_module(f"{types.__name__}.{info.name}")
        for name, value in vars(module).items():
            if isinstance(value, ResourceType):
                found[f"{info.name}.{name}"] = value
    return found


def test_every_declaration_is_served_once_in_order():
    declared = _declared_in_types_modules()
    missing = sorted(name for name, rt in declared.items() if not any(rt is b for b in DECLARED))
    assert missing == [], "declared but not listed in types.BUILTIN_TYPES (or METRICS_TYPES)"
    assert len({id(rt) for rt in DECLARED}) == len(DECLARED)
    assert list(builtin_registry()) == list(BUILTIN_TYPES)
    assert list(builtin_registry(metrics_server=True)) == list(DECLARED)


def test_every_printer_and_field_set_belongs_to_a_declared_type():
    tables = {name: getattr(table, name) for name in table.__all__ if name.endswith("_TABLE")}
    used_tables = {id(rt.table) for rt in DECLARED if rt.table is not None}
    assert sorted(n for n, spec in tables.items() if n != "DEFAULT_TABLE" and id(spec) not in used_tables) == []
    field_sets = {name: getattr(selectors, name) for name in selectors.__all__ if name.endswith("_FIELD_SET")}
    used_sets = {id(rt.field_set) for rt in BUILTIN_TYPES if rt.field_set is not None}
    assert sorted(n for n, fs in field_sets.items() if n != "DEFAULT_FIELD_SET" and id(fs) not in used_sets) == []


_PLURAL = re.compile(r"[a-z]+\Z")
_VERSION = re.compile(r"v\d+((alpha|beta)\d+)?\Z")


def _group_resource_literals(tree: ast.AST):
    """(line, group, plural) for every literal pair of strings that reads as a type's name:
    a tuple or call arguments ``(group, plural)`` or ``(group, version, plural)``. A class's
    ``__slots__`` names attributes (``("policy", "binding", ...)``), never a type."""
    slots = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Assign)
             and any(isinstance(target, ast.Name) and target.id == "__slots__" for target in node.targets)}
    for node in ast.walk(tree):
        if id(node) in slots:
            continue
        if isinstance(node, ast.Tuple):
            items = node.elts
        elif isinstance(node, ast.Call):
            items = node.args
        else:
            continue
        texts = [n.value if isinstance(n, ast.Constant) and isinstance(n.value, str) else None for n in items]
        for i, group in enumerate(texts):
            if group is None or group not in GROUPS:
                continue
            rest = texts[i + 1:i + 3]
            if rest and rest[0] is not None and _PLURAL.match(rest[0]):
                yield node.lineno, group, rest[0]
            elif len(rest) == 2 and rest[0] and _VERSION.match(rest[0]) and rest[1] and _PLURAL.match(rest[1]):
                yield node.lineno, group, rest[1]


def test_every_group_resource_literal_in_the_code_names_a_served_type():
    unknown = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for line, group, plural in _group_resource_literals(tree):
            if (group, plural) not in SERVED:
                unknown.append(f"{path.relative_to(PACKAGE_DIR.parent)}:{line}: {group}/{plural}")
    assert unknown == []


def test_the_literal_scan_sees_a_typo():
    tree = ast.parse('registry.by_group_resource("", "pod")\nKEY = ("apps", "deploymnets")\n'
                     'registry.lookup("", "v1", "sevices")')
    found = sorted((g, p) for _, g, p in _group_resource_literals(tree))
    assert found == [("", "pod"), ("", "sevices"), ("apps", "deploymnets")]


def test_a_misspelt_lookup_fails_loudly():
    registry = builtin_registry()
    assert registry["", "pods"] is types.PODS
    with pytest.raises(KeyError, match="no resource type /pod is registered"):
        registry["", "pod"]
    assert registry.lookup("", "v1", "pods") is types.PODS
    with pytest.raises(KeyError, match="no resource type /v1/pod is registered"):
        registry.lookup("", "v1", "pod")
    assert registry.find("", "v1", "pod") is None  # a URL naming no type: the REST layer's 404


@pytest.mark.parametrize("kwargs,problem", [
    ({"subresources": ("stauts",)}, "unknown subresource 'stauts'"),
    ({"verbs": ("get", "lsit")}, "unknown verb 'lsit'"),
    ({"verbs": ("get", "list"), "create_on_update": True}, "create_on_update without the update verb"),
    ({"persisted": False}, "a type that is never stored can only be created"),
])
def test_a_self_contradicting_declaration_is_refused(kwargs, problem):
    with pytest.raises(ValueError, match=f"resource example.com/widgets: .*{re.escape(problem)}"):
        ResourceType("example.com", "v1", "Widget", "widgets", True, **kwargs)


def test_a_type_declared_twice_is_refused():
    with pytest.raises(ValueError, match="declared twice"):
        Registry([types.PODS, types.PODS])
