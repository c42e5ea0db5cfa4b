"""No schema and no object makes the structural code raise: a CRD write or a custom
resource write gets field errors, never a crash (seeded random schemas and objects)."""

from __future__ import annotations

import random
from typing import Any

from fakekube.api.wire.structural import compile_schema, validate_crd_schema

VALUES: list[Any] = [None, True, False, 0, -1, 1.5, "", "x", "object", "array", "string", "integer", [], [1], ["a"], {},
                     {"type": "string"}, {"a": {}}, 10**30, "map", "set", "atomic", [{"rule": "self > 1"}], [{"rule": 5}],
                     [{"rule": "self == oldSelf", "optionalOldSelf": True}], {"rule": "x"}, "^(a", "date-time"]
KEYWORDS = ["type", "properties", "items", "additionalProperties", "required", "enum", "default", "nullable",
            "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string",
            "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type", "x-kubernetes-validations",
            "pattern", "format", "maxLength", "minimum", "maximum", "maxItems", "minProperties", "allOf", "anyOf", "oneOf",
            "not", "$ref", "multipleOf"]
BASE: dict[str, Any] = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "a": {"type": "integer", "default": 1}, "b": {"type": "array", "items": {"type": "string"}},
    "c": {"type": "object", "additionalProperties": {"type": "string"}}}}}}


def mutate(rng: random.Random, schema: Any, depth: int = 0) -> Any:
    if not isinstance(schema, dict) or depth > 4:
        return rng.choice(VALUES)
    schema = dict(schema)
    for _ in range(rng.randint(0, 2)):
        schema[rng.choice(KEYWORDS)] = rng.choice(VALUES)
    for key in list(schema):
        if isinstance(schema[key], dict) and rng.random() < 0.5:
            schema[key] = ({k: mutate(rng, v, depth + 1) for k, v in schema[key].items()} if key == "properties"
                           else mutate(rng, schema[key], depth + 1))
    return schema


def value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.5:
        return rng.choice(VALUES)
    if roll < 0.75:
        return {rng.choice(["a", "b", "c", "spec", "metadata", "kind"]): value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    return [value(rng, depth + 1) for _ in range(rng.randint(0, 3))]


def test_random_schemas_and_objects_never_raise() -> None:
    rng = random.Random(20251201)
    for _ in range(400):
        schema = mutate(rng, BASE)
        problems = validate_crd_schema(schema, "spec.versions[0].schema.openAPIV3Schema")
        assert all(p.message() for p in problems)
        compiled = compile_schema(schema)
        obj = {"apiVersion": "a/v1", "kind": "A", "metadata": {"name": "x"}, "spec": value(rng)}
        old = {"apiVersion": "a/v1", "kind": "A", "metadata": {"name": "x"}, "spec": value(rng)}
        compiled.prune(obj)
        compiled.default(obj)
        for error in compiled.validate(obj) + compiled.validate_update(obj, old):
            assert error.message() and error.cause()
