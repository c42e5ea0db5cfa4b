"""Content negotiation: which representation a client asked for and sent.

Kubernetes clients ask for alternative shapes through Accept parameters —
``application/json;as=Table;v=v1;g=meta.k8s.io`` for kubectl's tables,
``as=PartialObjectMetadata`` for metadata-only clients, ``g=apidiscovery.k8s.io`` for
aggregated discovery — each with a plain ``application/json`` fallback. We serve JSON
(and YAML when asked); protobuf is answered with JSON when the client accepts it, and
406 when it accepts nothing else. Protobuf *request* bodies of built-in types are read
(kubectl >= 1.32 sends them), see :mod:`fakekube.api.wire.protobuf`.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from fakekube.api.machinery import errors

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"


class MediaRange(NamedTuple):
    """One entry of an ``Accept`` header: a media type and its parameters."""

    type: str
    params: dict[str, str]


def parse_accept(header: str | None) -> list[MediaRange]:
    if not header:
        return [MediaRange("*/*", {})]
    ranges = []
    for item in header.split(","):
        pieces = [p.strip() for p in item.split(";")]
        if not pieces[0]:
            continue
        params = {}
        for piece in pieces[1:]:
            if "=" in piece:
                key, value = piece.split("=", 1)
                params[key.strip()] = value.strip()
        ranges.append(MediaRange(pieces[0].lower(), params))
    return ranges or [MediaRange("*/*", {})]


class Representation(NamedTuple):
    """What to send: ``as_kind`` is "" for the plain object, else Table / PartialObjectMetadata(List)."""

    media_type: str
    as_kind: str = ""
    as_version: str = ""


_AS_KINDS = {"Table", "PartialObjectMetadata", "PartialObjectMetadataList"}
_AS_VERSIONS = ("v1", "v1beta1")
_INCLUDE_OBJECT = ("Metadata", "Object", "None")
_BOOLS = {"true": True, "1": True, "t": True, "True": True, "TRUE": True, "T": True,
          "false": False, "0": False, "f": False, "False": False, "FALSE": False, "F": False}


class TableOptions(NamedTuple):
    """``metav1.TableOptions`` from the query: what each Table row carries, and headers or not."""

    include_object: str = "Metadata"
    no_headers: bool = False

    @classmethod
    def from_query(cls, query: dict[str, str]) -> "TableOptions":
        include_object = query.get("includeObject") or "Metadata"
        if include_object not in _INCLUDE_OBJECT:
            raise errors.bad_request(f'Unable to convert to Table as requested: includeObject: Invalid value: '
                                     f'"{include_object}": must be \'Metadata\', \'Object\', \'None\', or empty')
        no_headers = _BOOLS.get(query.get("noHeaders") or "false")
        if no_headers is None:
            raise errors.bad_request(f'strconv.ParseBool: parsing "{query["noHeaders"]}": invalid syntax')
        return cls(include_object, no_headers)


#: What a built-in type's serializer offers (named in a 406), and a custom resource's.
BUILTIN_MEDIA_TYPES = (JSON, YAML, PROTOBUF)
CUSTOM_MEDIA_TYPES = (JSON, YAML)


@functools.lru_cache(maxsize=256)
def choose(header: str | None, allow_as: bool = True, offered: tuple[str, ...] = BUILTIN_MEDIA_TYPES) -> Representation:
    """The first acceptable representation in the client's order of preference; a 406
    naming ``offered`` when there is none.

    Remembered per arguments (256 kept): clients send the same few Accept headers on
    every request, and the answer is immutable. A refusal is not kept.
    """
    for media in parse_accept(header):
        as_kind = media.params.get("as", "")
        if as_kind:
            group = media.params.get("g", "")
            version = media.params.get("v", "")
            if allow_as and as_kind in _AS_KINDS and group == "meta.k8s.io" and version in _AS_VERSIONS \
                    and media.type in (JSON, YAML):
                return Representation(media.type, as_kind, version)
            continue  # an unknown kind or version, or none: the next entry (else 406, as upstream)
        if media.type in (JSON, YAML):
            return Representation(media.type)
        if media.type in ("*/*", "application/*"):
            return Representation(JSON)
    raise errors.ApiError(406, "NotAcceptable", "only the following media types are accepted: " + ", ".join(offered))


#: The body formats a built-in type's create/update route decodes, in upstream's order.
BODY_MEDIA_TYPES = (JSON, YAML, PROTOBUF)
#: What a built-in type's go-restful routes produce (installer.go's ``mediaTypes``), and
#: what its LIST and WATCH routes produce besides (the stream types).
ROUTE_MEDIA_TYPES = (JSON, YAML, PROTOBUF)
LIST_MEDIA_TYPES = ROUTE_MEDIA_TYPES + (JSON + ";stream=watch", PROTOBUF + ";stream=watch")


def check_route_accepts(header: str | None, produces: tuple[str, ...]) -> None:
    """go-restful's route selection (``Route.matchesAccept``), which runs before a handler
    negotiates: some media type of the Accept header, its parameters cut off and spaces
    trimmed, is ``*/*`` or exactly one the route produces (case counts; ``application/*``
    matches nothing); no header is ``*/*``. Else the router's 406 (a Table request with an
    unknown version passes here and is refused by :func:`choose`)."""
    for item in (header or "*/*").split(","):
        media = item.split(";", 1)[0].strip(" ")
        if media == "*/*" or media in produces:
            return
    raise errors.not_acceptable_route(produces)


def check_route_consumes(content_type: str | None, consumes: tuple[str, ...]) -> None:
    """go-restful's ``Route.matchesContentType`` for a route that declares what it consumes
    (a built-in type's PATCH: the patch types): no Content-Type reads as
    ``application/octet-stream``; else the router's 415, before the Accept check."""
    for item in (content_type or "application/octet-stream").split(","):
        if item.split(";", 1)[0].strip(" ") in consumes:
            return
    raise errors.unsupported_media_type_route()


def body_format(content_type: str | None) -> str:
    """``json``, ``yaml`` or ``protobuf`` for a request body; 415 for anything else.

    As ``NegotiateInputSerializerForMediaType``: no Content-Type means JSON; otherwise
    its media type (parameters aside, any case) must be exactly one of the three
    (``text/plain``, ``*/*``, ``application/x-yaml``: 415)."""
    if not content_type:
        return "json"
    media = content_type.split(";")[0].strip().lower()
    if media == JSON:
        return "json"
    if media == YAML:
        return "yaml"
    if media == PROTOBUF:
        return "protobuf"
    raise errors.unsupported_media_type(accepted=BODY_MEDIA_TYPES)
