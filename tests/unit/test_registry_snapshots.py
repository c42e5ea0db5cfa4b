"""The registry's copy-on-write snapshots: a CRD change re-indexes only its groups, and
every lookup equals what a from-scratch build of the same types gives, whatever the
order of changes (seeded sequences of creates, updates, deletes and refused URLs)."""

from __future__ import annotations

import random

import pytest

from fakekube.api.registry import CustomResource, Registry, ResourceType, kube_version_sort_key
from fakekube.api.registry import resource as registry_module
from fakekube.api.types import BUILTIN_TYPES, METRICS_TYPES

GROUPS = ("a.example.com", "b.example.com", "apps", "metrics.k8s.io", "z.example.com")
VERSIONS = ("v1", "v2", "v1beta1", "v1alpha1", "foo")
PLURALS = ("widgets", "gadgets", "deployments")
KINDS = ("Widget", "Gadget", "Deployment")


def custom_type(owner: str, group: str, version: str, plural: str, kind: str) -> ResourceType:
    return ResourceType(group, version, kind, plural, namespaced=True,
                        custom=CustomResource(owner, kind.lower(), kind + "List", version))


class Reference:
    """The registry as a from-scratch build sees it: every index recomputed from all types."""

    def __init__(self, custom: dict[str, tuple[ResourceType, ...]]) -> None:
        ordered = sorted((rt for types in custom.values() for rt in types),
                         key=lambda rt: (rt.group, kube_version_sort_key(rt.version), rt.plural))
        self.all = tuple(BUILTIN_TYPES) + tuple(ordered) + tuple(METRICS_TYPES)
        paths = [(rt.group, rt.version, rt.plural) for rt in self.all]
        self.valid = len(paths) == len(set(paths))
        self.by_kind: dict[tuple[str, str], ResourceType] = {}
        self.by_group_resource: dict[tuple[str, str], ResourceType] = {}
        for rt in self.all:
            self.by_kind.setdefault((rt.api_version, rt.kind), rt)
            self.by_group_resource.setdefault((rt.group, rt.plural), rt)
        self.group_versions = list(dict.fromkeys((rt.group, rt.version) for rt in self.all))


def assert_same(registry: Registry, ref: Reference) -> None:
    assert tuple(registry) == ref.all
    assert registry.group_versions() == ref.group_versions
    assert registry.groups() == tuple(dict.fromkeys(group for group, _ in ref.group_versions))
    for group, version in ref.group_versions:
        wanted = [rt for rt in ref.all if (rt.group, rt.version) == (group, version)]
        assert registry.in_group_version(group, version) == wanted
        assert registry.group_version_types(group, version) == tuple(wanted)
    for group in registry.groups():
        assert registry.group_types(group) == tuple(rt for rt in ref.all if rt.group == group)
    for rt in ref.all:
        assert registry.find(rt.group, rt.version, rt.plural) is rt
    for key, rt in ref.by_kind.items():
        assert registry.by_kind(*key) is rt
    for key, rt in ref.by_group_resource.items():
        assert registry.by_group_resource(*key) is rt
    assert registry.served_kinds() == frozenset(ref.by_kind)
    assert registry.custom_group_versions() == list(dict.fromkeys(
        (rt.group, rt.version) for rt in ref.all if rt.custom is not None))


@pytest.mark.parametrize("seed", range(8))
def test_every_lookup_equals_a_from_scratch_build(seed: int) -> None:
    rng = random.Random(seed)
    registry = Registry(BUILTIN_TYPES, METRICS_TYPES)
    custom: dict[str, tuple[ResourceType, ...]] = {}
    for step in range(60):
        owner = f"crd{rng.randrange(12)}"
        types = tuple(custom_type(owner, rng.choice(GROUPS), rng.choice(VERSIONS), rng.choice(PLURALS),
                                  rng.choice(KINDS)) for _ in range(rng.choice((0, 1, 1, 2, 3))))
        wanted = {k: v for k, v in custom.items() if k != owner} | ({owner: types} if types else {})
        generation = registry.generation
        if Reference(wanted).valid:
            changed = registry.set_custom(owner, types)
            assert changed == bool(custom.get(owner) or types)
            assert registry.generation == generation + changed
            custom = wanted
        else:
            with pytest.raises(ValueError, match="resource declared twice"):
                registry.set_custom(owner, types)
            assert registry.generation == generation
        assert_same(registry, Reference(custom))
        assert registry.custom_owners() == sorted(custom)
    registry.clear_custom()
    assert_same(registry, Reference({}))


def test_a_pinned_view_keeps_its_state() -> None:
    registry = Registry(BUILTIN_TYPES, METRICS_TYPES)
    before = registry.pinned()
    registry.set_custom("widgets.a.example.com", [custom_type("widgets.a.example.com", "a.example.com", "v1",
                                                              "widgets", "Widget")])
    assert before.find("a.example.com", "v1", "widgets") is None
    assert registry.find("a.example.com", "v1", "widgets") is not None
    assert registry.generation == before.generation + 1


def many_groups(count: int) -> Registry:
    registry = Registry(BUILTIN_TYPES, METRICS_TYPES)
    for i in range(count):
        owner = f"widgets.g{i}.example.com"
        registry.set_custom(owner, [custom_type(owner, f"g{i}.example.com", "v1", "widgets", "Widget")])
    return registry


def test_a_change_places_only_its_own_types(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CRD change costs its own group, not every CRD: only the changed types are placed
    in serving order (the 200 others keep their places)."""
    registry = many_groups(200)
    ordered: list[str] = []
    monkeypatch.setattr(registry_module, "kube_version_sort_key",
                        lambda version: ordered.append(version) or kube_version_sort_key(version))
    owner = "widgets.new.example.com"
    registry.set_custom(owner, [custom_type(owner, "new.example.com", "v1", "widgets", "Widget")])
    assert len(ordered) <= 3  # the new type's place (and its group's order), never all 200
    assert [rt.group for rt in registry][-len(METRICS_TYPES) - 1] == "new.example.com"


def test_a_change_shares_every_other_groups_index() -> None:
    registry = many_groups(20)
    before = registry.pinned()
    owner = "gadgets.g7.example.com"
    registry.set_custom(owner, [custom_type(owner, "g7.example.com", "v1", "gadgets", "Gadget")])
    assert registry.group_types("g8.example.com") is before.group_types("g8.example.com")
    assert registry.group_version_types("g8.example.com", "v1") is before.group_version_types("g8.example.com", "v1")
    assert registry.group_types("g7.example.com") is not before.group_types("g7.example.com")
    assert [rt.plural for rt in registry.group_types("g7.example.com")] == ["gadgets", "widgets"]
