"""Request bodies in, as upstream's decoders read them: schemas, decoding, patches.

Everything between the bytes a client sends and the object a verb works on, for any
type: the OpenAPI schemas of the Kubernetes version served, JSON/YAML/protobuf body
decoding with Go's error texts, strict field validation (unknown and duplicate fields),
and the three patch formats. Knows schemas, not resource types.

- :mod:`.schema`: the served version's OpenAPI schemas (:class:`SchemaSet`, :func:`load`).
- :mod:`.schema_kinds`, :mod:`.typed_schema`: schema nodes as the decoders walk them.
- :mod:`.decoding`: JSON and YAML bodies decoded the way Go's typed decoder does
  (:mod:`.yamlbody` reads YAML, loading PyYAML with the first YAML body).
- :mod:`.fieldvalidation`: ``fieldValidation=Strict/Warn``: unknown and duplicate fields.
- :mod:`.protobuf`: ``application/vnd.kubernetes.protobuf`` bodies to the JSON they stand for.
- :mod:`.patch`: JSON patch, JSON merge patch and strategic merge patch.
- :mod:`.structural`: CustomResourceDefinition schemas: checks, pruning, defaulting, validation.
- :mod:`.cel`: CEL expressions (CRD validation rules, admission policies) with Kubernetes' libraries.

The main names are re-exported here; the modules hold the rest.
"""

from fakekube.api.wire.decoding import SyntaxFailure, decode_and_find_unknown, decode_body, decode_into, parse_json
from fakekube.api.wire.schema import DEFAULT_KUBERNETES_VERSION, SchemaSet, load

__all__ = [
    "DEFAULT_KUBERNETES_VERSION", "SchemaSet", "SyntaxFailure",
    "decode_and_find_unknown", "decode_body", "decode_into", "load", "parse_json",
]
