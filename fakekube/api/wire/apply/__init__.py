"""Server-side apply and managedFields, pure: structured-merge-diff's field sets, typed
walks and the apiserver's field managers, over JSON dicts.

- :mod:`.fieldsets`: field sets in their ``FieldsV1`` form, and their algebra.
- :mod:`.types`: the typed view of an object from its schema (list and map types).
- :mod:`.typed`: ToFieldSet, Compare, Merge and RemoveItems over an object.
- :mod:`.managers`: managedFields entries, Update and Apply with conflicts.
"""

from fakekube.api.wire.apply.managers import (APPLY, UPDATE, Conflicts, Managers, apply, create_fields, decode, encode,
                                              identifier, is_reset, update)
from fakekube.api.wire.apply import typed
from fakekube.api.wire.apply.typed import TypedError
from fakekube.api.wire.apply.types import TypeNode, builtin_root, custom_root

__all__ = ["APPLY", "UPDATE", "Conflicts", "Managers", "TypeNode", "TypedError", "apply", "builtin_root",
           "create_fields", "custom_root", "decode", "encode", "identifier", "is_reset", "typed", "update"]
