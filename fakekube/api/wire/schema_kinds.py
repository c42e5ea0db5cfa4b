"""How walks over an object treat each schema position: struct, map, array, scalar or free-form.

Shared by the strategic-merge and field-validation walks (:mod:`fakekube.api.wire.patch.schema_node`)
and the compiled decoding walk (:mod:`fakekube.api.wire.typed_schema`), which must agree on it.
"""

from __future__ import annotations

from fakekube.api.wire.schema import Schema

# Node kinds.
OBJECT = "object"   # a struct: known properties only
MAP = "map"         # additionalProperties: any key, one value schema
ARRAY = "array"
SCALAR = "scalar"   # strings, numbers, bools, int-or-string, quantities
ANY = "any"         # free-form: RawExtension, FieldsV1, JSON, preserve-unknown-fields


def _types(schema: Schema) -> set[str]:
    t = schema.get("type")
    if isinstance(t, str):
        return {t}
    if isinstance(t, list):
        return {x for x in t if isinstance(x, str)}
    return set()


def kind_of(schema: Schema) -> str:
    """How field walks treat a (resolved) schema: OBJECT, MAP, ARRAY, SCALAR or ANY."""
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return ANY
    types = _types(schema)
    if "properties" in schema:
        return OBJECT
    if "array" in types or "items" in schema:
        return ARRAY
    if "additionalProperties" in schema:
        return MAP if schema["additionalProperties"] is not False else OBJECT
    if "object" in types or not types and not schema.get("oneOf") and not schema.get("anyOf"):
        return ANY  # an object with no declared fields decodes anything (RawExtension, JSON)
    return SCALAR
