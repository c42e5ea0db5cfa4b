"""The verbs: get, list, watch, create, update, patch, delete over the store, for any type.

:class:`APIServer` is what the REST layer (:mod:`fakekube.api.http`) and the Python API
call: it applies a type's declaration (strategy, name rule, special cases) and the
generic rules every write keeps (ObjectMeta, the admission chain of
:mod:`fakekube.api.admission`, optimistic concurrency, graceful deletion), so handlers
stay the same for every type. Discovery and OpenAPI
documents describe the registry the verbs serve.

- :mod:`.apiserver`: :class:`APIServer`, the verbs themselves.
- :mod:`.objectmeta`: server-owned metadata on create and update.
- :mod:`.listing`: list options, selectors, pages and continue tokens.
- :mod:`.deletion`: delete options, preconditions, graceful deletion and finalizers.
- :mod:`.subresources`: status, scale, binding, eviction, log and token.
- :mod:`.tokenrequest`: ``serviceaccounts/token``.
- :mod:`.encoding`: the cached JSON bytes of stored object versions.
- :mod:`.discovery`, :mod:`.openapi`: the discovery and OpenAPI v2/v3 documents.

The main names are re-exported here; the modules hold the rest. ``OpenAPIV3`` and
``Subresources`` load at their first use (with the OpenAPI documents' and the subresources'
modules), which a server's first answers do not need.
"""

from typing import TYPE_CHECKING, Any

from fakekube.api.verbs.apiserver import (
    JSON_PATCH,
    MERGE_PATCH,
    PATCH_TYPES,
    STRATEGIC_MERGE_PATCH,
    APIServer,
    WriteOptions,
    WriteResult,
)
from fakekube.api.verbs.deletion import DeleteOptions
from fakekube.api.verbs.encoding import EncodedObjects
from fakekube.api.verbs.listing import ListOptions

if TYPE_CHECKING:
    from fakekube.api.verbs.openapi import OpenAPIV3
    from fakekube.api.verbs.subresources import Subresources

__all__ = [
    "JSON_PATCH", "MERGE_PATCH", "PATCH_TYPES", "STRATEGIC_MERGE_PATCH",
    "APIServer", "DeleteOptions", "EncodedObjects", "ListOptions", "OpenAPIV3", "Subresources", "WriteOptions",
    "WriteResult",
]


def __getattr__(name: str) -> Any:
    """``OpenAPIV3`` and ``Subresources``, imported on first use (see the module docstring)."""
    if name == "OpenAPIV3":
        from fakekube.api.verbs.openapi import OpenAPIV3
        return OpenAPIV3
    if name == "Subresources":
        from fakekube.api.verbs.subresources import Subresources
        return Subresources
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
