"""The rules every resource type shares, knowing no type: apimachinery, re-expressed.

Errors as ``Status`` objects with upstream's codes, reasons and field-error wording;
apimachinery's string validators and ObjectMeta validation, worded exactly as upstream
words them (clients match on the text); the JSON helpers every layer above uses. The
bottom layer of the api part: it imports nothing else from it.

- :mod:`.errors`: :class:`ApiError` (a ``Status``), :class:`FieldError` and their constructors.
- :mod:`.validation`: Go-style quoting, name/label validators, ObjectMeta validation.
- :mod:`.jsonutil`: copying and walking JSON values.
- :mod:`.warning`: ``Warning`` headers and the per-request recorder that deduplicates and bounds them.
- :mod:`.sizedcache`: :class:`SizedLRU`, a cache bounded by the bytes of its values.

The main names are re-exported here; the modules hold the rest.
"""

from fakekube.api.machinery.errors import ApiError, FieldError
from fakekube.api.machinery.jsonutil import deep_copy, get_path
from fakekube.api.machinery.sizedcache import SizedLRU
from fakekube.api.machinery.validation import (
    GoText,
    NameRule,
    go_quote,
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
    name_is_path_segment,
    validate_object_meta,
    validate_object_meta_update,
)

__all__ = [
    "ApiError", "FieldError", "GoText", "NameRule", "SizedLRU",
    "deep_copy", "get_path", "go_quote", "name_is_dns1035_label", "name_is_dns_label", "name_is_dns_subdomain",
    "name_is_path_segment", "validate_object_meta", "validate_object_meta_update",
]
