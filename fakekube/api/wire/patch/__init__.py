"""The three patch types the apiserver accepts besides server-side apply.

``apply_json_patch`` (RFC 6902), ``apply_merge_patch`` (RFC 7386) and
``apply_strategic_merge_patch`` (Kubernetes' schema-aware merge) each return a new
object and never change their inputs; failures are :class:`ApiError` with the status
upstream's apiserver gives them. ``apply_operations`` is the RFC 6902 core with neutral
failures, for callers that word them otherwise (a mutating webhook's patch).
"""

from fakekube.api.machinery.jsonutil import deep_copy as copy_json
from fakekube.api.wire.patch._gofmt import go_value
from fakekube.api.wire.patch.json_merge import (
    MAX_JSON_PATCH_OPERATIONS,
    JsonPatchFailure,
    apply_json_patch,
    apply_merge_patch,
    apply_operations,
    merge_patch_text,
    operations_problem,
    parse_patch_body,
)
from fakekube.api.wire.patch.strategic import apply_strategic_merge_patch

__all__ = [
    "MAX_JSON_PATCH_OPERATIONS",
    "JsonPatchFailure",
    "apply_json_patch",
    "apply_merge_patch",
    "apply_operations",
    "apply_strategic_merge_patch",
    "copy_json",
    "merge_patch_text",
    "go_value",
    "operations_problem",
    "parse_patch_body",
]
