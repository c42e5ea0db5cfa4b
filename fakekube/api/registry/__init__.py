"""The resource registry: what resource types exist and how each behaves.

One :class:`ResourceType` declaration per type drives every generic part of the
apiserver — REST routing, discovery, OpenAPI, Table output, field selectors, name
validation and defaulting — so adding a type never means copying handler code or adding
a row to a table keyed by name elsewhere (see STYLE.md, "one registry"). Type-specific
behaviour lives in its :class:`Strategy`. The built-in declarations are in
:mod:`fakekube.api.types`.

- :mod:`.strategy`: :class:`Strategy` and the :class:`WriteContext` it is handed.
- :mod:`.resource`: :class:`ResourceType`, the verb and subresource names, :class:`Registry` (and
  :class:`RegistryView`, one state of it).

Everything public is re-exported here; import from ``fakekube.api.registry``.
"""

from fakekube.api.registry.resource import (
    ALL_VERBS,
    APPROVAL,
    ATTACH,
    BINDING,
    CONNECT_SUBRESOURCES,
    CREATE_ONLY,
    EPHEMERAL_CONTAINERS,
    EVICTION,
    EXEC,
    FINALIZE,
    GET_LIST,
    LOG,
    NO_DELETECOLLECTION,
    PORTFORWARD,
    PROXY,
    READ_VERBS,
    RESIZE,
    SCALE,
    STATUS,
    SUBRESOURCES,
    TOKEN,
    CustomResource,
    Registry,
    RegistryView,
    ResourceType,
    ScalePaths,
    kube_version_sort_key,
)
from fakekube.api.registry.strategy import DEFAULT_STRATEGY, Obj, Rng, StoreReader, Strategy, WriteContext

__all__ = [
    "ALL_VERBS", "APPROVAL", "ATTACH", "BINDING", "CONNECT_SUBRESOURCES", "CREATE_ONLY", "DEFAULT_STRATEGY",
    "EPHEMERAL_CONTAINERS", "EVICTION", "EXEC", "FINALIZE", "GET_LIST", "LOG", "NO_DELETECOLLECTION", "PORTFORWARD",
    "PROXY", "READ_VERBS", "RESIZE", "SCALE", "STATUS", "SUBRESOURCES", "TOKEN",
    "CustomResource", "Obj", "Registry", "RegistryView", "ResourceType", "ScalePaths", "kube_version_sort_key", "Rng", "StoreReader", "Strategy", "WriteContext",
]
