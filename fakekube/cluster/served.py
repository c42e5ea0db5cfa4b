"""The apiserver's stored resources as discovery lists them, for the controllers that walk
every type (garbage collector, namespace controller): fakekube's set of types is fixed, so
they get it once, when the cluster builds them."""

from __future__ import annotations

from fakekube.api.types import builtin_types
from fakekube.objects import Resource
from fakekube.objects.kinds import APIResource
from fakekube.objects.versions import Release


def served_resources(release: Release) -> tuple[APIResource, ...]:
    """Every persisted type ``release`` serves (reviews are never stored), in discovery order."""
    return tuple(APIResource(Resource(rt.group, rt.plural), rt.api_version, rt.kind, rt.namespaced, rt.verbs,
                             Resource(*rt.key))
                 for rt in builtin_types(release) if rt.persisted)
