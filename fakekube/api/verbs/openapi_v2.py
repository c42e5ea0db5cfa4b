"""``/openapi/v2``: the whole API as one Swagger 2.0 document, in JSON and in gnostic's
protobuf (the form kubectl 1.27 and 1.28 read for ``apply`` validation and ``explain``).

Built from the OpenAPI v3 group-version documents (:mod:`.openapi`, and the custom
resources' from :mod:`.openapi_custom`), so both versions describe the same operations and
schemas: v3 refs (``#/components/schemas/X``) become ``#/definitions/X``, an ``allOf``
wrapping one ref becomes the ref itself with its siblings (v2 allows them), request bodies
become ``in: body`` parameters and response content types ``produces``. Built once per
registry state (the built-in part once per process), then served from bytes with
upstream's ETag (quoted uppercase hex sha512 of the JSON form).

Simplified: parameters are written inline (upstream shares some under ``parameters`` and
refers to them) and the document has no ``default``s (the schema source lacks them).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any, Iterable, NamedTuple


Doc = dict[str, Any]

PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
#: What the protobuf answer is labelled (kube-openapi's ``ReturnedContentType``): a valid
#: media type, as Go's ``mime.ParseMediaType`` refuses the ``@`` clients ask with.
PROTOBUF_CONTENT_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
#: The older spelling client-go once sent (kube-openapi still accepts it).
PROTOBUF_OLD = PROTOBUF_CONTENT_TYPE
_V3_REF = "#/components/schemas/"
_V2_REF = "#/definitions/"
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch")
#: Documents kept per process (one per registry state with custom types); past it the least
#: recently served is rebuilt on demand.
MAX_DOCUMENTS = 16
SECURITY_DEFINITIONS = {"BearerToken": {"description": "Bearer Token authentication", "in": "header",
                                        "name": "authorization", "type": "apiKey"}}


class Served(NamedTuple):
    """One state's document: JSON bytes, protobuf bytes and their ETag value (unquoted)."""

    json: bytes
    protobuf: bytes
    etag: str


def v2_schema(schema: Any) -> Any:
    """A v3 schema in v2 form (refs into ``#/definitions/``, no allOf around one ref)."""
    if isinstance(schema, list):
        return [v2_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: Doc = {}
    for key, value in schema.items():
        if key == "$ref" and isinstance(value, str):
            out[key] = value.replace(_V3_REF, _V2_REF, 1)
        elif key in ("properties", "patternProperties") and isinstance(value, dict):
            out[key] = {name: v2_schema(prop) for name, prop in value.items()}
        elif key in ("items", "additionalProperties", "allOf", "oneOf", "anyOf", "not"):
            out[key] = v2_schema(value)
        else:
            out[key] = value
    parts = out.get("allOf")
    if isinstance(parts, list) and len(parts) == 1 and isinstance(parts[0], dict) and set(parts[0]) == {"$ref"}:
        del out["allOf"]
        out = {"$ref": parts[0]["$ref"], **out}
    if "oneOf" in out and "type" not in out:  # IntOrString, Quantity: v2 has no oneOf
        out.pop("oneOf")
        out.setdefault("type", "string")
    return out


def _parameter(p: Doc) -> Doc:
    """A v3 parameter (``schema: {type}``) in v2 form (``type`` beside it)."""
    out = {k: v for k, v in p.items() if k != "schema"}
    for key, value in (p.get("schema") or {}).items():
        out[key] = value
    return dict(sorted(out.items()))


def _operation(op: Doc) -> Doc:
    out: Doc = {k: v for k, v in op.items() if k not in ("parameters", "requestBody", "responses")}
    body = op.get("requestBody")
    if body is not None:
        out["consumes"] = sorted(body.get("content") or {})
    responses: Doc = {}
    produces: list[str] = []
    for code, response in (op.get("responses") or {}).items():
        answer: Doc = {"description": response.get("description", "")}
        content = response.get("content") or {}
        for media in content:
            if media not in produces:
                produces.append(media)
        first = next(iter(content.values()), None)
        if first is not None and "schema" in first:
            answer["schema"] = v2_schema(first["schema"])
        responses[code] = answer
    params = [_parameter(p) for p in op.get("parameters") or []]
    if body is not None:
        first_body: Doc = next(iter((body.get("content") or {}).values()), {})
        params.insert(0, {"in": "body", "name": "body", "required": True, "schema": v2_schema(first_body.get("schema", {}))})
    if params:
        out["parameters"] = params
    out["produces"] = sorted(produces)
    out["responses"] = responses
    out["schemes"] = ["https"]
    return dict(sorted(out.items()))


def swagger(documents: Iterable[Doc], kubernetes_version: str) -> Doc:
    """One Swagger 2.0 document of every v3 group-version document given."""
    paths: Doc = {}
    definitions: Doc = {}
    for doc in documents:
        for name, schema in ((doc.get("components") or {}).get("schemas") or {}).items():
            definitions.setdefault(name, v2_schema(schema))
        for path, item in (doc.get("paths") or {}).items():
            converted: Doc = {}
            for key, value in item.items():
                if key in _METHODS:
                    converted[key] = _operation(value)
                elif key == "parameters":
                    converted[key] = [_parameter(p) for p in value]
                else:
                    converted[key] = value
            paths[path] = converted
    for name in sorted(_dangling_refs(paths, definitions)):
        # A definition the schema source lacks (apiextensions' ``JSON``, any value): an
        # empty schema, which clients read as "arbitrary", rather than a ref nothing answers.
        definitions[name] = {}
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": f"v{kubernetes_version}.0"},
        "paths": dict(sorted(paths.items())),
        "definitions": dict(sorted(definitions.items())),
        "securityDefinitions": SECURITY_DEFINITIONS,
        "security": [{"BearerToken": []}],
    }


def _dangling_refs(*parts: Any) -> set[str]:
    """Definition names referred to in ``parts`` but missing from the last one (definitions)."""
    found: set[str] = set()
    stack: list[Any] = list(parts)
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(_V2_REF):
                found.add(ref[len(_V2_REF):])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found - set(parts[-1])


def served(document: Doc) -> Served:
    data = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    # The protobuf encoder loads with the first /openapi/v2 request (cold start).
    from fakekube.api.wire.protobuf.openapiv2 import encode_document
    return Served(data, encode_document(json.loads(data)), hashlib.sha512(data).hexdigest().upper())


class OpenAPIV2:
    """The served document per set of v3 documents (identified by their ETags: a registry
    state), built on first request and kept (bounded)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._built: OrderedDict[tuple[str, tuple[tuple[str, str], ...]], Served] = OrderedDict()

    def document(self, kubernetes_version: str, v3_documents: Iterable[tuple[str, bytes, str]]) -> Served:
        """The document made of ``v3_documents``: (path, JSON bytes, ETag) of every served
        group-version."""
        documents = sorted(v3_documents)
        key = (kubernetes_version, tuple((path, etag) for path, _, etag in documents))
        with self._lock:
            found = self._built.get(key)
            if found is not None:
                self._built.move_to_end(key)
                return found
            built = served(swagger((json.loads(data) for _, data, _ in documents), kubernetes_version))
            self._built[key] = built
            while len(self._built) > MAX_DOCUMENTS:
                self._built.popitem(last=False)
            return built


def wants_protobuf(accept: str) -> bool:
    """Whether the Accept header asks for the protobuf form before JSON (kubectl sends only it)."""
    for clause in accept.split(","):
        media = clause.split(";")[0].strip().lower()
        if media in (PROTOBUF.lower(), PROTOBUF_OLD.lower()):
            return True
        if media in ("application/json", "*/*", "application/*"):
            return False
    return False
