"""``/openapi/v2``: the whole API as one Swagger 2.0 document, in JSON and in gnostic's
protobuf (the form kubectl 1.27 and 1.28 read for ``apply`` validation and ``explain``).

Built from the OpenAPI v3 group-version documents (:mod:`.openapi`, and the custom
resources' from :mod:`.openapi_custom`), so both versions describe the same operations and
schemas: v3 refs (``#/components/schemas/X``) become ``#/definitions/X``, an ``allOf``
wrapping one ref becomes the ref itself with its siblings (v2 allows them), request bodies
become ``in: body`` parameters and response content types ``produces``.

Assembled as kube-aggregator merges its cached per-API specs: each group-version's v3
document is converted once into a :class:`Piece` (its paths as JSON members and protobuf
entries, its definitions shared by content), and a registry state's document is those
pieces spliced in order, byte for byte what :func:`swagger` would build from scratch. A
CRD change converts one group-version; a GET costs the bytes it sends. Served with
upstream's ETag (quoted uppercase hex sha512 of the JSON form, the protobuf form's too).

Parameters are shared as upstream's builder shares them (:func:`shared_name`: one entry of
``parameters`` per distinct parameter, operations refer to it). Like upstream's, the
document has no ``default``s (v3 has them).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import weakref
from typing import Any, Callable, Iterable

from fakekube.api.machinery.sizedcache import SizedLRU


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
#: Documents kept per process (one per registry state), and their JSON bytes in all; past
#: either the least recently served is assembled again on demand (the newest always stays).
MAX_DOCUMENTS = 16
MAX_DOCUMENT_BYTES = 256 * 1024 * 1024
#: Pieces (group-versions) kept per process, each charged twice the JSON of its paths and
#: of the definitions it brought (the protobuf form comes to about three quarters of the
#: JSON); past it the least recently used are converted again when a document needs them.
MAX_PIECE_BYTES = 256 * 1024 * 1024
SECURITY_DEFINITIONS = {"BearerToken": {"description": "Bearer Token authentication", "in": "header",
                                        "name": "authorization", "type": "apiKey"}}
_SECURITY: list[dict[str, list[str]]] = [{"BearerToken": []}]


def v2_schema(schema: Any) -> Any:
    """A v3 schema in v2 form (refs into ``#/definitions/``, no allOf around one ref), with
    what v2 cannot say of a custom resource's schema left out as apiextensions'
    ToStructuralOpenAPIV2 leaves it out (:func:`_structural_v2`)."""
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
        elif key == "default":
            continue  # upstream's v2 document publishes no defaults (v3 does)
        else:
            out[key] = value
    parts = out.get("allOf")
    if isinstance(parts, list) and len(parts) == 1 and isinstance(parts[0], dict) and set(parts[0]) == {"$ref"}:
        del out["allOf"]
        out = {"$ref": parts[0]["$ref"], **out}
    choices = out.get("oneOf")
    if isinstance(choices, list) and "type" not in out and all(isinstance(c, dict) and "type" in c for c in choices):
        out.pop("oneOf")  # IntOrString, Quantity: v2 has no oneOf
        out.setdefault("type", "string")
    return _structural_v2(out, schema)


def _structural_v2(out: Doc, source: Doc) -> Doc:
    """ToStructuralOpenAPIV2 on one node of a custom resource's schema: no value
    validations under allOf/anyOf/oneOf/not; a ``nullable`` node untyped and open; a node
    preserving unknown fields without properties or items (nor ``type: object``); an array
    without items untyped; nullable properties not required. Built-in schemas have none of
    these keywords (a single-ref allOf, IntOrString's oneOf are converted above), so they
    pass unchanged."""
    for key in ("allOf", "anyOf", "oneOf", "not"):
        out.pop(key, None)
    if out.get("nullable") is True:
        for key in ("type", "nullable", "items", "properties"):
            out.pop(key, None)
    if out.get("x-kubernetes-preserve-unknown-fields") is True:
        out.pop("items", None)
        out.pop("properties", None)
        if out.get("type") == "object":
            del out["type"]
        if out.get("x-kubernetes-embedded-resource") is True and isinstance(out.get("required"), list):
            # v2 adds an embedded resource's type meta only where it keeps properties
            out["required"] = [name for name in out["required"] if name not in ("kind", "apiVersion")]
            if not out["required"]:
                del out["required"]
    if out.get("type") == "array" and "items" not in out:
        del out["type"]
    required = out.get("required")
    if isinstance(required, list):
        props: Doc = source["properties"] if isinstance(source.get("properties"), dict) else {}
        extra = source.get("additionalProperties")
        if isinstance(extra, dict) and extra.get("nullable") is True:
            del out["required"]
        else:
            kept = [name for name in required if not (isinstance(props.get(name), dict) and props[name].get("nullable") is True)]
            if len(kept) != len(required):
                if kept:
                    out["required"] = kept
                else:
                    del out["required"]
    return out


def v2_definition(schema: Any) -> Any:
    """A definition in v2 form: a custom resource whose root preserves unknown fields is an
    object and nothing more (apiextensions' v2 builder: any property listed would make
    kubectl refuse every other field, as in a ``kind: List`` of them)."""
    if isinstance(schema, dict) and schema.get("x-kubernetes-preserve-unknown-fields") is True \
            and "x-kubernetes-group-version-kind" in schema:
        return {"type": "object", **{k: v for k, v in schema.items() if k.startswith("x-kubernetes-group-version-kind")}}
    return v2_schema(schema)


_PARAM_REF = "#/parameters/"
#: Go's field order of a spec.Parameter (the bytes its shared name hashes).
_GO_PARAM_ORDER = ("uniqueItems", "type", "format", "description", "name", "in", "required", "schema")


def shared_name(param: Doc) -> str | None:
    """The name kube-openapi shares a v2 parameter under (``fieldManager-Qy4HdaTW``), or None
    for one it keeps inline: ``name``, ``fieldValidation`` and ``dryRun`` (kubectl looks for
    the last two), and a body naming the kind's own schema. The suffix is the first six bytes
    of the FNV-1 64-bit hash of the parameter's Go JSON, base64url: every operation with the
    same parameter refers to one entry of the document's ``parameters``."""
    name, where = param.get("name"), param.get("in")
    if name == "name" and where in ("query", "path") or where == "query" and name in ("fieldValidation", "dryRun"):
        return None
    if where == "body" and not str((param.get("schema") or {}).get("$ref", "")).startswith(
            _V2_REF + "io.k8s.apimachinery"):
        return None
    ordered = {key: param[key] for key in _GO_PARAM_ORDER if key in param}
    ordered.update((key, value) for key, value in param.items() if key not in ordered)
    text = json.dumps(ordered, separators=(",", ":"), ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")  # Go's HTML-safe JSON
    digest = 0xCBF29CE484222325
    for byte in text.encode():
        digest = (digest * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
        digest ^= byte
    return f"{name or 'param'}-{base64.urlsafe_b64encode(digest.to_bytes(8, 'big')[:6]).decode()}"


def _shared(params: list[Doc], found: dict[str, Doc]) -> list[Doc]:
    """``params`` with each shareable one replaced by its ``$ref`` (recorded in ``found``)."""
    out = []
    for param in params:
        name = shared_name(param)
        if name is None:
            out.append(param)
        else:
            found[name] = param
            out.append({"$ref": _PARAM_REF + name})
    return out


def _parameter(p: Doc) -> Doc:
    """A v3 parameter (``schema: {type}``) in v2 form (``type`` beside it)."""
    out = {k: v for k, v in p.items() if k != "schema"}
    for key, value in (p.get("schema") or {}).items():
        out[key] = value
    return dict(sorted(out.items()))


#: Where a patch type comes in an operation's ``consumes``: the order the patch handler
#: registers them (JSON patch, merge, strategic, apply); other media types after, sorted.
_PATCH_ORDER = ("application/json-patch+json", "application/merge-patch+json",
                "application/strategic-merge-patch+json", "application/apply-patch+yaml",
                "application/apply-patch+cbor")


def _consumes_order(media: str) -> tuple[int, str]:
    return (_PATCH_ORDER.index(media), "") if media in _PATCH_ORDER else (len(_PATCH_ORDER), media)


#: The order upstream's routes list what they produce (restful's ``Produces``): the
#: serializers' media types, then their streaming forms; any other type (``text/plain`` of
#: pods/log, ``*/*`` of connect) first.
_PRODUCES_ORDER = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf",
                   "application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch")


def _produces_order(media: str) -> int:
    return _PRODUCES_ORDER.index(media) if media in _PRODUCES_ORDER else -1


def _produces_and_consumes(op: Doc, produces: list[str]) -> tuple[list[str], list[str] | None]:
    """What the v2 operation produces and, without a request body, consumes, as upstream's
    v2 builder lists them from the route: a resource's operation consumes ``*/*``; a
    discovery or ``/version`` one consumes what it produces; the issuer's OIDC documents
    consume nothing."""
    ordered = sorted(produces, key=_produces_order)
    if "x-kubernetes-action" in op:
        return ordered, ["*/*"]
    answer = ((op.get("responses") or {}).get("200") or {}).get("content") or {}
    typed = any("$ref" in (media.get("schema") or {}) for media in answer.values())
    return ordered, (list(ordered) if typed else None)


def _operation(op: Doc, shared: dict[str, Doc]) -> Doc:
    out: Doc = {k: v for k, v in op.items() if k not in ("parameters", "requestBody", "responses")}
    body = op.get("requestBody")
    if body is not None:
        out["consumes"] = sorted(body.get("content") or {}, key=_consumes_order)
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
        body_param: Doc = {"in": "body", "name": "body", "schema": v2_schema(first_body.get("schema", {}))}
        if body.get("required"):
            body_param["required"] = True
        params.insert(0, dict(sorted(body_param.items())))
    if params:
        out["parameters"] = _shared(params, shared)
    out["produces"], consumes = _produces_and_consumes(op, produces)
    if body is None and consumes is not None:
        out["consumes"] = consumes
    out["responses"] = responses
    out["schemes"] = ["https"]
    return dict(sorted(out.items()))


def _path_item(item: Doc, shared: dict[str, Doc] | None = None) -> Doc:
    """A v3 path item in v2 form; the parameters it shares are added to ``shared``."""
    shared = {} if shared is None else shared
    converted: Doc = {}
    for key, value in item.items():
        if key in _METHODS:
            converted[key] = _operation(value, shared)
        elif key == "parameters":
            converted[key] = _shared([_parameter(p) for p in value], shared)
        else:
            converted[key] = value
    return converted


def _info(kubernetes_version: str) -> Doc:
    return {"title": "Kubernetes", "version": kubernetes_version}


def swagger(documents: Iterable[Doc], kubernetes_version: str) -> Doc:
    """One Swagger 2.0 document of every v3 group-version document given, built from
    scratch: what :class:`OpenAPIV2` assembles from cached pieces (the tests hold the two
    equal)."""
    paths: Doc = {}
    definitions: Doc = {}
    parameters: Doc = {}
    for doc in documents:
        for name, schema in ((doc.get("components") or {}).get("schemas") or {}).items():
            definitions.setdefault(name, v2_definition(schema))
        for path, item in (doc.get("paths") or {}).items():
            paths[path] = _path_item(item, parameters)
    for name in sorted(_dangling_refs(paths, parameters, definitions)):
        # A definition the schema source lacks (apiextensions' ``JSON``, any value): an
        # empty schema, which clients read as "arbitrary", rather than a ref nothing answers.
        definitions[name] = {}
    return {
        "swagger": "2.0",
        "info": _info(kubernetes_version),
        **({"parameters": dict(sorted(parameters.items()))} if parameters else {}),
        "paths": dict(sorted(paths.items())),
        "definitions": dict(sorted(definitions.items())),
        "securityDefinitions": SECURITY_DEFINITIONS,
        "security": _SECURITY,
    }


def _dangling_refs(*parts: Any) -> set[str]:
    """Definition names referred to in ``parts`` but missing from the last one (definitions)."""
    return _refs(parts) - set(parts[-1])


def _refs(node: Any) -> set[str]:
    """Every definition name a ``$ref`` in ``node`` names, at any depth."""
    found: set[str] = set()
    stack: list[Any] = [node]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(_V2_REF):
                found.add(ref[len(_V2_REF):])
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
    return found


#: A ``"$ref"`` member whose value names a definition, in compact JSON. A key's opening
#: quote follows ``{`` or ``,``, and inside a string every quote is escaped (``\"``), so
#: ``{"$ref":"`` and ``,"$ref":"`` are only ever real members.
_REF_MEMBER = re.compile(rb'[{,]"\$ref":"#/definitions/((?:[^"\\]|\\.)*)"')


def _refs_in_json(data: bytes) -> set[str]:
    """:func:`_refs` of a value, read from its JSON (:func:`_json`) without decoding it."""
    return {json.loads(b'"' + found + b'"') for found in _REF_MEMBER.findall(data)}


def _json(value: Any) -> bytes:
    """The document's JSON form (Go's: sorted keys, compact, UTF-8); a value's bytes are the
    same alone as inside the document, which is what lets pieces be spliced."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def served(document: Doc) -> tuple[bytes, bytes, str]:
    """A from-scratch document's (JSON, protobuf, ETag value): the reference the tests
    compare :class:`OpenAPIV2`'s spliced answers with."""
    data = _json(document)
    from fakekube.api.wire.protobuf.openapiv2 import encode_document
    return data, encode_document(json.loads(data)), hashlib.sha512(data).hexdigest().upper()


# ----------------------------------------------------------------- pieces and assembly

class Member:
    """One member of the document in v2 form, a definition or a path, shared by every
    piece whose v3 document has the same one (every custom resource's document carries
    ObjectMeta and its closure; a group-version's unchanged paths stay the same when
    another CRD of its group changes): its JSON (``"name":{...}``), the definition names
    it refers to, and its protobuf entry, made on first use."""

    __slots__ = ("name", "is_path", "json", "refs", "parameters", "_protobuf", "__weakref__")

    def __init__(self, name: str, v2: Doc, is_path: bool, parameters: dict[str, Doc] | None = None) -> None:
        self.name = name
        self.is_path = is_path
        self.json = _json(name) + b":" + _json(v2)
        #: The shared parameters a path refers to, by name.
        self.parameters = dict(parameters or {})
        self.refs = frozenset(_refs_in_json(self.json) | _refs(self.parameters))
        self._protobuf: bytes | None = None

    def protobuf(self) -> bytes:
        if self._protobuf is None:
            from fakekube.api.wire.protobuf.openapiv2 import definition_entry, path_entry
            value = json.loads(self.json[len(_json(self.name)) + 1:])
            self._protobuf = path_entry(self.name, value) if self.is_path else definition_entry(self.name, value)
        return self._protobuf


class Piece:
    """One group-version's share of the document: its paths (in path order) and the
    definitions its v3 document has, as shared :class:`Member` s."""

    __slots__ = ("paths", "definitions", "refs", "size_bytes")

    def __init__(self, paths: tuple[Member, ...], definitions: tuple[Member, ...], new_bytes: int) -> None:
        self.paths = paths
        self.definitions = definitions
        #: The definition names its paths refer to.
        self.refs = frozenset().union(*(path.refs for path in paths))
        #: What the cache charges for it: the JSON of the members it brought (not those it
        #: shares with pieces converted before it), and as much again for the protobuf
        #: entries they may make (about three quarters of the JSON).
        self.size_bytes = 2 * new_bytes


class Served:
    """One state's document, as references to its members: the JSON and protobuf forms are
    joined from them per request (the cost of the bytes sent), the ETag (upstream's:
    uppercase hex sha512 of the JSON, shared by both forms) computed once."""

    __slots__ = ("kubernetes_version", "etag", "size_bytes", "_definitions", "_paths", "_parameters")

    def __init__(self, kubernetes_version: str, definitions: list[Member], paths: list[Member],
                 parameters: dict[str, Doc] | None = None) -> None:
        self.kubernetes_version = kubernetes_version
        self._definitions = definitions
        self._paths = paths
        self._parameters = parameters or {}
        self.etag = ""
        self.size_bytes = 0

    def json(self) -> bytes:
        head, middle, tail = _frame(self.kubernetes_version, self._parameters)
        return b"".join([head, b",".join([d.json for d in self._definitions]), middle,
                         b",".join([p.json for p in self._paths]), tail])

    def protobuf(self) -> bytes:
        from fakekube.api.wire.protobuf.openapiv2 import document_parts
        skeleton = {"swagger": "2.0", "info": _info(self.kubernetes_version), "security": _SECURITY,
                    "securityDefinitions": SECURITY_DEFINITIONS}
        if self._parameters:
            skeleton["parameters"] = self._parameters
        return b"".join(document_parts(skeleton, [p.protobuf() for p in self._paths],
                                       [d.protobuf() for d in self._definitions]))


def _frame(kubernetes_version: str, parameters: dict[str, Doc]) -> tuple[bytes, bytes, bytes]:
    """The JSON document around its definitions and its paths (keys in sorted order)."""
    shared = b',"parameters":' + _json(parameters) if parameters else b""
    return (b'{"definitions":{',
            b'},"info":' + _json(_info(kubernetes_version)) + shared + b',"paths":{',
            b'},"security":' + _json(_SECURITY) + b',"securityDefinitions":'
            + _json(SECURITY_DEFINITIONS) + b',"swagger":"2.0"}')


#: A member of a v3 document: its name, its JSON text as served, and its value.
Entry = tuple[str, str, Any]
_DECODER = json.JSONDecoder()
_SCHEMAS = '{"components":{"schemas":'


def _split_v3(data: bytes) -> tuple[list[Entry], list[Entry]]:
    """A v3 document's definitions and paths, each with its JSON text as cut from the
    document as served (compact, keys sorted: ``components`` first, ``paths`` last), so a
    member another document (or another state) has is recognised by its text without
    being encoded again; a document in another layout is decoded whole and encoded."""
    text = data.decode()
    if text.startswith(_SCHEMAS):
        schemas, at = _object_entries(text, len(_SCHEMAS))
        if text[at] == "}":  # components holds schemas only
            paths: list[Entry] = []
            at += 1
            while text[at] == ",":  # the other top-level members: info, openapi, paths
                name, at = json.decoder.scanstring(text, at + 2)  # type: ignore[attr-defined]
                if name == "paths":
                    paths, at = _object_entries(text, at + 1)
                else:
                    at = _DECODER.raw_decode(text, at + 1)[1]
            return schemas, paths
    doc = json.loads(text)
    return ([(name, _json(value).decode(), value) for name, value in
             ((doc.get("components") or {}).get("schemas") or {}).items()],
            [(path, _json(value).decode(), value) for path, value in (doc.get("paths") or {}).items()])


def _object_entries(text: str, at: int) -> tuple[list[Entry], int]:
    """The members of the compact JSON object at ``text[at]``, and where it ends."""
    entries: list[Entry] = []
    at += 1
    while text[at] != "}":
        name, at = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
        value, end = _DECODER.raw_decode(text, at + 1)  # after the colon
        entries.append((name, text[at + 1:end], value))
        at = end + 1 if text[end] == "," else end
    return entries, at + 1


#: A v3 group-version for the v2 document: (path, its v3 ETag, a function giving its
#: v3 JSON bytes, called only when its piece is not cached).
Source = tuple[str, str, Callable[[], bytes]]


class OpenAPIV2:
    """``/openapi/v2`` assembled from per-group-version pieces, as kube-aggregator merges
    cached per-API specs: a piece is built once per v3 document (keyed by its ETag, so
    clusters in one process share them), a member (definition or path) converted once per
    content, and a state's document is the cached members spliced. After a CRD change only
    that CRD's members are converted; a GET costs the bytes it sends. Bounded:
    :data:`MAX_PIECE_BYTES` of pieces (least recently used dropped, converted again when
    needed; a member lives while a kept piece or document refers to it) and
    :data:`MAX_DOCUMENTS` states (:data:`MAX_DOCUMENT_BYTES` of their JSON; a kept state
    keeps its members alive). Nothing is built under the lock, so one client's first build
    never holds up another's request."""

    def __init__(self, max_piece_bytes: int = 0, max_documents: int = 0, max_document_bytes: int = 0) -> None:
        self._lock = threading.Lock()
        self._pieces: SizedLRU[tuple[str, str], Piece] = SizedLRU(max_piece_bytes or MAX_PIECE_BYTES)
        #: Members by (is a path, name, digest of their v3 text), kept while a piece refers to them.
        self._members: weakref.WeakValueDictionary[tuple[bool, str, bytes], Member] = weakref.WeakValueDictionary()
        self._built: SizedLRU[tuple[str, tuple[tuple[str, str], ...]], Served] = SizedLRU(
            max_document_bytes or MAX_DOCUMENT_BYTES, max_documents or MAX_DOCUMENTS)
        #: Pieces and members converted so far (tests read them: a change converts its own).
        self.pieces_built = 0
        self.members_built = 0

    def document(self, kubernetes_version: str, sources: Iterable[Source]) -> tuple[Served, bytes | None]:
        """The document made of ``sources`` (one per served group-version, any order), and
        its JSON bytes when this call assembled it (joined already: send them)."""
        ordered = sorted(sources, key=lambda source: source[0])
        key = (kubernetes_version, tuple((path, etag) for path, etag, _ in ordered))
        with self._lock:
            found = self._built.get(key)
        if found is not None:
            return found, None
        served_now = self._assemble(kubernetes_version, [self._piece(*source) for source in ordered])
        data = served_now.json()
        served_now.etag = hashlib.sha512(data).hexdigest().upper()
        served_now.size_bytes = len(data)
        with self._lock:
            self._built.put(key, served_now)
        return served_now, data

    def _piece(self, path: str, etag: str, load: Callable[[], bytes]) -> Piece:
        with self._lock:
            found = self._pieces.get((path, etag))
        if found is not None:
            return found
        schemas, paths = _split_v3(load())
        converted = [self._member(entry, True) for entry in sorted(paths, key=lambda entry: entry[0])]
        converted += [self._member(entry, False) for entry in schemas]
        new_bytes = sum(len(member.json) for member, new in converted if new)
        piece = Piece(tuple(m for m, _ in converted[:len(paths)]), tuple(m for m, _ in converted[len(paths):]),
                      new_bytes)
        with self._lock:
            self._pieces.put((path, etag), piece)
            self.pieces_built += 1
        return piece

    def _member(self, entry: Entry, is_path: bool) -> tuple[Member, bool]:
        """The member of this content (converted now when no kept piece has it), and
        whether it was converted now."""
        name, text, value = entry
        key = (is_path, name, hashlib.sha256(text.encode()).digest())
        with self._lock:
            found = self._members.get(key)
        if found is not None:
            return found, False
        shared: dict[str, Doc] = {}
        member = Member(name, _path_item(value, shared) if is_path else v2_definition(value), is_path, shared)
        with self._lock:
            self._members[key] = member
            self.members_built += 1
        return member, True

    @staticmethod
    def _assemble(kubernetes_version: str, pieces: list[Piece]) -> Served:
        """``swagger``'s rules over pieces: a definition from the first group-version (in
        path order) that has it, an empty one for a name referred to but defined nowhere,
        paths in order (a later group-version's path replacing an earlier one)."""
        chosen: dict[str, Member] = {}
        refs: set[str] = set()
        for piece in pieces:
            for definition in piece.definitions:
                chosen.setdefault(definition.name, definition)
            refs |= piece.refs
        for definition in chosen.values():
            refs |= definition.refs
        for name in sorted(refs - chosen.keys()):
            chosen[name] = Member(name, {}, False)
        placed: dict[str, Member] = {}
        for piece in pieces:
            for path in piece.paths:
                placed[path.name] = path
        parameters: dict[str, Doc] = {}
        for path in placed.values():
            parameters.update(path.parameters)
        return Served(kubernetes_version, [chosen[name] for name in sorted(chosen)],
                      [placed[name] for name in sorted(placed)], dict(sorted(parameters.items())))


def wants_protobuf(accept: str) -> bool:
    """Whether the Accept header asks for the protobuf form before JSON (kubectl sends only it)."""
    return accepted_form(accept) == "protobuf"


#: kube-openapi's v2 handler's media types, in the order it tries them against a clause.
_FORMS = (("application", "json", "json"),
          ("application", PROTOBUF.split("/", 1)[1].lower(), "protobuf"),
          ("application", PROTOBUF_CONTENT_TYPE.split("/", 1)[1].lower(), "protobuf"))


def accepted_form(accept: str) -> str | None:
    """``json``, ``protobuf`` or None (406) for an Accept header, as kube-openapi's v2
    handler chooses: clauses by quality, the more specific first (goautoneg), each
    matched against JSON then the protobuf spellings, wildcards matching anything; no
    header is ``*/*``."""
    clauses = []
    for position, item in enumerate((accept or "*/*").split(",")):
        pieces = [p.strip() for p in item.split(";")]
        media_type, _, subtype = pieces[0].lower().partition("/")
        if not media_type or not subtype:
            continue
        quality = 1.0
        for piece in pieces[1:]:
            key, _, value = piece.partition("=")
            if key.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        clauses.append((-quality, media_type == "*", subtype == "*", position, media_type, subtype))
    for *_, media_type, subtype in sorted(clauses):
        for form_type, form_subtype, form in _FORMS:
            if media_type in (form_type, "*") and subtype in (form_subtype, "*"):
                return form
    return None
