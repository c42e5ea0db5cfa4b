"""Image references, parsed as the kubelet and containerd parse them.

The kubelet's image manager first applies the default tag (``applyDefaultImageTag``, which
parses the reference with ``github.com/distribution/reference``'s
``ParseNormalizedNamed``); a reference that does not parse never reaches the runtime: the
container waits with reason ``InvalidImageName`` and the message
``Failed to apply default image tag "<image>": couldn't parse image name "<image>": <why>``.
The grammar and the error texts below are that library's (``regexp.go``, ``normalize.go``,
``reference.go``, and ``go-digest`` for digests); :func:`parse` returns the parsed parts
or raises :class:`InvalidReference` with the library's text.

Normalization is Docker's: a name without a domain is on ``docker.io``, and a single path
component there is an official image under ``library/`` (``nginx`` →
``docker.io/library/nginx``); without a tag or digest the tag is ``latest``.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

DEFAULT_DOMAIN = "docker.io"
LEGACY_DEFAULT_DOMAIN = "index.docker.io"
OFFICIAL_PREFIX = "library/"
#: ``RepositoryNameTotalLengthMax``: the path (without the domain) may not be longer.
MAX_PATH_LENGTH = 255

_ALPHANUMERIC = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_PATH_COMPONENT = rf"{_ALPHANUMERIC}(?:{_SEPARATOR}{_ALPHANUMERIC})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[(?:[a-fA-F0-9:]+)\])"
_DOMAIN_AND_PORT = rf"{_HOST}(?::[0-9]+)?"
_REMOTE_NAME = rf"{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_NAME = rf"(?:{_DOMAIN_AND_PORT}/)?{_REMOTE_NAME}"
_TAG = r"[0-9A-Za-z_][0-9A-Za-z_.-]{0,127}"  # Go's \w is ASCII
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}"
_REFERENCE = re.compile(rf"^({_NAME})(?::({_TAG}))?(?:@({_DIGEST}))?$")
_ANCHORED_NAME = re.compile(rf"^(?:({_DOMAIN_AND_PORT})/)?({_REMOTE_NAME})$")
_IDENTIFIER = re.compile(r"^[a-f0-9]{64}$")
_ANCHORED_DIGEST = re.compile(rf"^{_DIGEST}$")
#: go-digest's algorithms and the length of their hex encoding.
_DIGEST_HEX_LENGTHS = {"sha256": 64, "sha384": 96, "sha512": 128}


class InvalidReference(ValueError):
    """A reference ``ParseNormalizedNamed`` refuses; ``str()`` is the library's error."""


class ImageReference(NamedTuple):
    """A parsed reference: ``domain`` (``docker.io`` when none was given), ``path``
    (``library/nginx``), ``tag`` (None when not given) and ``digest`` (None when not given)."""

    domain: str
    path: str
    tag: str | None
    digest: str | None

    @property
    def name(self) -> str:
        """The fully qualified repository: ``docker.io/library/nginx``."""
        return f"{self.domain}/{self.path}"

    @property
    def normalized(self) -> str:
        """What containerd pulls: the name with its digest, else its tag (``latest`` by default)."""
        if self.digest:
            return f"{self.name}@{self.digest}"
        return f"{self.name}:{self.tag or 'latest'}"

    @property
    def familiar(self) -> str:
        """The repository as Docker's UI writes it: ``nginx``, ``bitnami/redis``, ``quay.io/x/y``."""
        if self.domain != DEFAULT_DOMAIN:
            return self.name
        path = self.path
        if path.startswith(OFFICIAL_PREFIX) and "/" not in path[len(OFFICIAL_PREFIX):]:
            return path[len(OFFICIAL_PREFIX):]
        return path

    @property
    def official(self) -> bool:
        """An official Docker Hub image (``docker.io/library/<name>``)."""
        return self.domain == DEFAULT_DOMAIN and self.path.startswith(OFFICIAL_PREFIX) \
            and "/" not in self.path[len(OFFICIAL_PREFIX):]


#: Distinct references whose parse is kept (pods of one template share their images).
PARSE_CACHE_SIZE = 4096


def parse(image: str) -> ImageReference:
    """``ParseNormalizedNamed``; :class:`InvalidReference` with the library's message."""
    parsed = _parse_cached(image)
    if isinstance(parsed, str):
        raise InvalidReference(parsed)
    return parsed


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def _parse_cached(image: str) -> ImageReference | str:
    """The parse, or its error's text (kept: every start of every container asks)."""
    try:
        return _parse(image)
    except InvalidReference as error:
        return str(error)


def _parse(image: str) -> ImageReference:
    if _IDENTIFIER.match(image):
        raise InvalidReference(f"invalid repository name ({image}), cannot specify 64-byte hexadecimal strings")
    domain, remainder = _split_domain(image)
    remote = remainder.split(":", 1)[0]
    if remote.lower() != remote:
        raise InvalidReference(f"invalid reference format: repository name ({remote}) must be lowercase")
    return _parse_named(f"{domain}/{remainder}")


def kubelet_parse_error(image: str) -> str | None:
    """The waiting message of a container whose image does not parse (``InvalidImageName``),
    or None when it parses."""
    try:
        parse(image)
    except InvalidReference as error:
        return f'Failed to apply default image tag "{image}": couldn\'t parse image name "{image}": {error}'
    return None


def familiar_repository(image: str) -> str:
    """:attr:`ImageReference.familiar` of ``image``, or the image itself when it does not parse."""
    try:
        return parse(image).familiar
    except InvalidReference:
        return image


def _split_domain(name: str) -> tuple[str, str]:
    """``splitDockerDomain``: the domain (docker.io by default) and the rest."""
    first, slash, rest = name.partition("/")
    if not slash:
        return DEFAULT_DOMAIN, OFFICIAL_PREFIX + name
    if first == "localhost" or ("." in first or ":" in first) and first != LEGACY_DEFAULT_DOMAIN \
            or first.lower() != first:
        domain, remote = first, rest
    elif first == LEGACY_DEFAULT_DOMAIN:
        domain, remote = DEFAULT_DOMAIN, rest
    else:
        domain, remote = DEFAULT_DOMAIN, name
    if domain == DEFAULT_DOMAIN and "/" not in remote:
        remote = OFFICIAL_PREFIX + remote
    return domain, remote


def _parse_named(text: str) -> ImageReference:
    """``reference.Parse`` of a name that has its domain."""
    match = _REFERENCE.match(text)
    if match is None:
        if not text:
            raise InvalidReference("repository name must have at least one component")
        if _REFERENCE.match(text.lower()) is not None:
            raise InvalidReference("repository name must be lowercase")
        raise InvalidReference("invalid reference format")
    name, tag, digest = match.group(1), match.group(2), match.group(3)
    parts = _ANCHORED_NAME.match(name)
    domain, path = (parts.group(1) or "", parts.group(2)) if parts is not None else ("", name)
    if len(path) > MAX_PATH_LENGTH:
        raise InvalidReference(f"repository name must not be more than {MAX_PATH_LENGTH} characters")
    if digest:
        _check_digest(digest)
    return ImageReference(domain, path, tag, digest)


def _check_digest(digest: str) -> None:
    """go-digest's ``Validate``: a known algorithm and its exact lowercase hex length."""
    algorithm, _, encoded = digest.partition(":")
    length = _DIGEST_HEX_LENGTHS.get(algorithm)
    if length is None:
        raise InvalidReference("unsupported digest algorithm" if _ANCHORED_DIGEST.match(digest)
                               else "invalid checksum digest format")
    if len(encoded) != length:
        raise InvalidReference("invalid checksum digest length")
    if not re.fullmatch(r"[a-f0-9]+", encoded):
        raise InvalidReference("invalid checksum digest format")
