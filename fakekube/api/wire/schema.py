"""Upstream's OpenAPI schemas for the built-in types, loaded lazily.

The data comes from the ``kubernetes-validate`` package, which ships the definitions of
every Kubernetes release with the ``x-kubernetes-*`` extensions (patch merge keys and
strategies, list types, group-version-kind). We load one release's ``_definitions.json``
(about 1.4 MB) the first time something needs it — strategic merge patch, field
validation or the OpenAPI documents — so a cluster that never needs it starts instantly.
The parsed data is read-only and shared by every cluster in the process.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from pathlib import Path
from typing import Any

from fakekube.objects import versions

Schema = dict[str, Any]

DEFAULT_KUBERNETES_VERSION = versions.DEFAULT_VERSION
_REF_PREFIX = "#/$defs/"

_cache: dict[str, "SchemaSet"] = {}
_cache_lock = threading.Lock()


class SchemaSet:
    """The definitions of one Kubernetes release, indexed by name and by GVK."""

    def __init__(self, definitions: dict[str, Schema], minor: int | None = None) -> None:
        self._defs = definitions
        #: The release's minor version (``36``), None when the set is not a release's: what
        #: Go's JSON rules of that release keep of a zero struct (``omitzero`` since 1.34).
        self.minor = minor
        self._by_gvk: dict[tuple[str, str, str], str] = {}
        for name in sorted(definitions):
            for gvk in definitions[name].get("x-kubernetes-group-version-kind", []):
                self._by_gvk.setdefault((gvk["group"], gvk["version"], gvk["kind"]), name)

    @property
    def definitions(self) -> dict[str, Schema]:
        """All definitions by name (``io.k8s.api.core.v1.Pod``). Do not mutate."""
        return self._defs

    def definition(self, name: str) -> Schema | None:
        return self._defs.get(name)

    def name_for_gvk(self, group: str, version: str, kind: str) -> str | None:
        return self._by_gvk.get((group, version, kind))

    def for_gvk(self, group: str, version: str, kind: str) -> Schema | None:
        name = self.name_for_gvk(group, version, kind)
        return self._defs.get(name) if name else None

    def resolve(self, schema: Schema | None) -> Schema | None:
        """Follow ``$ref`` links (also through a single-element ``allOf``) to a concrete schema."""
        seen = 0
        while schema is not None and seen < 32:
            ref = schema.get("$ref")
            if ref is None and len(schema.get("allOf", [])) == 1:
                ref = schema["allOf"][0].get("$ref")
            if ref is None:
                return schema
            schema = self._defs.get(ref_name(ref))
            seen += 1
        return schema


def ref_name(ref: str) -> str:
    """``#/$defs/io.k8s.api.core.v1.Pod`` → ``io.k8s.api.core.v1.Pod``."""
    return ref[len(_REF_PREFIX):] if ref.startswith(_REF_PREFIX) else ref.rsplit("/", 1)[-1]


def load(kubernetes_version: str = DEFAULT_KUBERNETES_VERSION) -> SchemaSet:
    """The schema set for ``"1.33"``-style versions, parsed once per process."""
    with _cache_lock:
        cached = _cache.get(kubernetes_version)
        if cached is None:
            cached = SchemaSet(_read_definitions(kubernetes_version), int(kubernetes_version.split(".")[1]))
            _cache[kubernetes_version] = cached
        return cached


def _read_definitions(kubernetes_version: str) -> dict[str, Schema]:
    path = _package_dir() / "kubernetes-json-schema" / f"v{kubernetes_version}.0-local" / "_definitions.json"
    if not path.is_file():
        raise ValueError(f"no schemas for Kubernetes {kubernetes_version} in kubernetes-validate ({path})")
    with path.open("rb") as f:
        return json.load(f)["$defs"]


def _package_dir() -> Path:
    """Where kubernetes-validate is installed, found without importing it (it pulls in
    jsonschema, ~90 ms we do not need: we only read its data files)."""
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("fakekube needs the kubernetes-validate package for its API schemas")
    return Path(list(spec.submodule_search_locations)[0])
