"""Which images a simulated node can pull: a registry catalog and the cluster's image policy.

A real pull asks a registry; a simulated one asks :class:`ImageCatalog`, in this order:

1. the config's ``missing`` globs: never pull;
2. the config's ``images`` globs and declared ``digests``, and the images kind's node image
   preloads (:data:`KIND_PRELOADED`) with fakekube's own system images: always pull;
3. with policy ``exists``, everything else pulls (fakekube's behaviour before images could
   be missing);
4. a registry host that cannot exist (RFC 2606/6761 reserved names: ``*.test``,
   ``*.example``, ``*.invalid``, ``example.com``…) fails as containerd's DNS lookup does;
5. an official Docker Hub image (``docker.io/library/<name>``): a name that is not one of
   the official images (:data:`OFFICIAL_IMAGES`) does not exist; a tag pulls when it is
   made of versions and the variant words official images use (``1.27``, ``stable-alpine``,
   ``3.12-slim-bookworm``: :func:`plausible_official_tag`), any other tag is not found;
   a digest pulls under ``plausible``;
6. any other image: under ``plausible`` (the default) it pulls unless its tag holds a
   version number no release has (a run of 9 or more digits that is not a date, as in
   ``nginx:1.0.23449928384992872784`` or ``fluentd:v2734894949``); under ``missing`` it is
   not found.

So ``image: i_made_this_up:and_this_too`` and a made-up tag of a known image stall as in a
real cluster, ``nginx:1.27`` and ``myorg/app:1.4.2`` run. Failures carry containerd's
messages (:func:`pull_error`). Pure data and rules: no clock, no store.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any, Iterable, Mapping, NamedTuple

from fakekube.kubelet.imageref import DEFAULT_DOMAIN, ImageReference, InvalidReference, parse
from fakekube.record import FrozenRecord

#: The image policies: what an image the catalog cannot judge does.
PLAUSIBLE, EXISTS, MISSING = "plausible", "exists", "missing"
POLICIES = (PLAUSIBLE, EXISTS, MISSING)

#: Images kind's node image holds before any pull (any tag), as normalized globs.
KIND_PRELOADED = (
    "docker.io/kindest/kindnetd:*", "docker.io/kindest/local-path-provisioner:*",
    "docker.io/kindest/local-path-helper:*", "registry.k8s.io/coredns/coredns:*", "registry.k8s.io/etcd:*",
    "registry.k8s.io/kube-apiserver:*", "registry.k8s.io/kube-controller-manager:*",
    "registry.k8s.io/kube-scheduler:*", "registry.k8s.io/kube-proxy:*", "registry.k8s.io/pause:*",
)

#: Docker Hub's official images (``docker.io/library/<name>``), the ones people pull.
OFFICIAL_IMAGES = frozenset("""
adminer aerospike almalinux alpine amazoncorretto amazonlinux api-firewall arangodb archlinux backdrop bash bonita
buildpack-deps busybox caddy cassandra centos chronograf cirros clearlinux clickhouse clojure composer convertigo
couchbase couchdb crate dart debian docker drupal eclipse-mosquitto eclipse-temurin eggdrop elasticsearch elixir
emqx erlang fedora flink fluentd friendica gazebo gcc geonetwork ghost golang gradle groovy haproxy haskell haxe
hello-world hitch httpd hylang ibm-semeru-runtimes ibmjava influxdb irssi jetty jobber joomla jruby julia kapacitor
kibana kong krakend lightstreamer liquibase logstash mageia mariadb matomo maven mediawiki memcached mongo
mongo-express monica mysql nats neo4j neurodebian nextcloud nginx node notary odoo open-liberty openjdk oraclelinux
orientdb percona perl photon php php-zendserver phpmyadmin plone postfixadmin postgres pypy python r-base rabbitmq
rakudo-star redis redmine registry rethinkdb rocket.chat rockylinux ros ruby rust sapmachine satosa scratch silverpeas
solr sonarqube spark spiped storm swift teamspeak telegraf tomcat tomee traefik ubuntu unit varnish websphere-liberty
wordpress xwiki yourls znc zookeeper
""".split())

#: Words official images use in tags besides version numbers (``ea``: openjdk's early-access
#: builds, ``openjdk:27-ea``).
TAG_WORDS = frozenset("""
latest stable mainline edge lts current rc beta alpha slim alpine bookworm bullseye buster stretch jessie trixie sid
focal jammy noble bionic xenial oracular plucky windowsservercore nanoserver ltsc perl otel git jdk jre temurin
corretto openj9 hotspot ea fpm apache cli zts management community enterprise musl glibc uclibc fips full minimal dind
rootless debian ubuntu centos oracle ol ubi azurelinux onbuild browsers unprivileged windows
""".split())

#: RFC 2606 / RFC 6761 names that never resolve.
_RESERVED_SUFFIXES = (".test", ".example", ".invalid", ".localhost")
_RESERVED_DOMAINS = ("example.com", "example.net", "example.org")
#: A version number no release has: nine digits or more (dates have eight; 19xx/20xx
#: dates with a time, 12 or 14 digits, are allowed).
_LONG_NUMBER = re.compile(r"\d{9,}")
_DATE_TIME = re.compile(r"(?:19|20)\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])(?:\d{4}|\d{6})?")
_VERSION = re.compile(r"v?\d{1,8}(?:\.\d{1,8})*(?:(?:rc|beta|alpha|a|b|p|r)\d{0,8})?")
_WORD_VERSION = re.compile(r"([a-z]+)(\d{1,8}(?:\.\d{1,8})*)?")


class PullVerdict(NamedTuple):
    """Does the image pull? When not: containerd's error (the kubelet's ErrImagePull message)."""

    ok: bool
    message: str = ""


PULLS = PullVerdict(True)


class ImageCatalog(FrozenRecord):
    """The cluster's image policy (see the module docstring). ``images`` and ``missing`` are
    fnmatch globs matched against the image as written and its normalized name
    (``docker.io/library/nginx:1.27``); ``digests`` are ``sha256:…`` digests that exist
    (alone, or as ``repo@sha256:…``)."""

    __slots__ = ("policy", "images", "missing", "digests", "preloaded")
    policy: str
    images: tuple[str, ...]
    missing: tuple[str, ...]
    digests: tuple[str, ...]
    #: Images every node holds or can always get (kind's preloads, fakekube's system pods).
    preloaded: tuple[str, ...]

    def __init__(self, policy: str = PLAUSIBLE, images: Iterable[str] = (), missing: Iterable[str] = (),
                 digests: Iterable[str] = (), preloaded: Iterable[str] = KIND_PRELOADED) -> None:
        if policy not in POLICIES:
            raise ValueError(f"imagePolicy: must be one of {', '.join(POLICIES)}, got {policy!r}")
        lists = {"images": tuple(images), "missing": tuple(missing), "digests": tuple(digests),
                 "preloaded": tuple(preloaded)}
        for name, values in lists.items():
            if not all(isinstance(value, str) and value for value in values):
                raise ValueError(f"imagePolicy.{name}: must be a list of non-empty strings")
        self._set("policy", policy)
        for name, values in lists.items():
            self._set(name, values)

    @classmethod
    def from_config(cls, raw: Any) -> ImageCatalog:
        """From ``imagePolicy:`` — a policy name, or ``{policy, images, missing, digests}``."""
        if raw is None:
            return cls()
        if isinstance(raw, str):
            return cls(raw)
        if not isinstance(raw, Mapping):
            raise ValueError(f"imagePolicy: must be one of {', '.join(POLICIES)} or a mapping "
                             f"{{policy, images, missing, digests}}")
        unknown = sorted(map(str, set(raw) - {"policy", "images", "missing", "digests"}))
        if unknown:
            raise ValueError(f"imagePolicy: unknown key(s) {', '.join(unknown)}; known: digests, images, missing, policy")
        lists = {}
        for name in ("images", "missing", "digests"):
            value = raw.get(name) or []
            if isinstance(value, str) or not isinstance(value, list):
                raise ValueError(f"imagePolicy.{name}: must be a list of strings")
            lists[name] = value
        return cls(raw.get("policy", PLAUSIBLE), **lists)

    def with_preloaded(self, images: Iterable[str]) -> ImageCatalog:
        return self.replace(preloaded=self.preloaded + tuple(images))

    def preloaded_image(self, image: str) -> bool:
        """Is ``image`` on every node from the start (kind's node image, fakekube's system pods)?"""
        try:
            names = (image, parse(image).normalized)
        except InvalidReference:
            return False
        return _matches(self.preloaded, names)

    def judge(self, image: str) -> PullVerdict:
        """Does ``image`` (a reference that parses) pull from its registry?"""
        try:
            ref = parse(image)
        except InvalidReference:
            return PULLS  # the kubelet refused it before any pull (InvalidImageName)
        names = (image, ref.normalized)
        if _matches(self.missing, names):
            return PullVerdict(False, _not_found(ref))
        if _matches(self.images, names) or _matches(self.preloaded, names) or self._declared_digest(ref):
            return PULLS
        if self.policy == EXISTS:
            return PULLS
        if _reserved(ref.domain):
            return PullVerdict(False, _no_such_host(ref))
        if ref.official:
            return self._official(ref)
        if self.policy == MISSING:
            return PullVerdict(False, _no_repository(ref) if ref.domain == DEFAULT_DOMAIN else _not_found(ref))
        if ref.tag is not None and not ref.digest and _impossible_number(ref.tag):
            return PullVerdict(False, _not_found(ref))
        return PULLS

    def _official(self, ref: ImageReference) -> PullVerdict:
        if ref.familiar not in OFFICIAL_IMAGES:
            return PullVerdict(False, _no_repository(ref))
        if ref.digest:
            return PULLS if self.policy == PLAUSIBLE else PullVerdict(False, _not_found(ref))
        return PULLS if plausible_official_tag(ref.tag or "latest") else PullVerdict(False, _not_found(ref))

    def _declared_digest(self, ref: ImageReference) -> bool:
        """Is the reference's digest declared, alone or for its repository?"""
        if not ref.digest:
            return False
        for declared in self.digests:
            repository, _, digest = declared.rpartition("@")
            if digest == ref.digest and (not repository or _repository_name(repository) == ref.name):
                return True
        return False


def _repository_name(name: str) -> str | None:
    try:
        return parse(name).name
    except InvalidReference:
        return None


def plausible_official_tag(tag: str) -> bool:
    """Is ``tag`` made of versions and variant words, as official images' tags are?"""
    for part in tag.split("-"):
        if not part or _impossible_number(part):
            return False
        if _VERSION.fullmatch(part) or _DATE_TIME.fullmatch(part):
            continue
        word = _WORD_VERSION.fullmatch(part)
        if word is None or word.group(1) not in TAG_WORDS:
            return False
    return True


def _impossible_number(tag: str) -> bool:
    return any(not _DATE_TIME.fullmatch(run) for run in _LONG_NUMBER.findall(tag))


def _matches(globs: tuple[str, ...], names: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, glob) for glob in globs for name in names)


def _reserved(domain: str) -> bool:
    host = domain.rsplit(":", 1)[0].lower() if not domain.startswith("[") else domain
    return host.endswith(_RESERVED_SUFFIXES) or host in ("test", "example", "invalid") \
        or any(host == name or host.endswith("." + name) for name in _RESERVED_DOMAINS)


# -- containerd's messages --------------------------------------------------------------------

def _failed(ref: ImageReference, code: str, why: str) -> str:
    image = ref.normalized
    return (f'rpc error: code = {code} desc = failed to pull and unpack image "{image}": '
            f'failed to resolve reference "{image}": {why}')


def _not_found(ref: ImageReference) -> str:
    return _failed(ref, "NotFound", f"{ref.normalized}: not found")


def _no_repository(ref: ImageReference) -> str:
    return _failed(ref, "Unknown", "pull access denied, repository does not exist or may require authorization: "
                                   "server message: insufficient_scope: authorization failed")


#: The resolver a kind node asks (Docker's network gateway).
NODE_RESOLVER = "172.18.0.1:53"


def _no_such_host(ref: ImageReference) -> str:
    host = ref.domain.rsplit(":", 1)[0]
    reference = ref.digest or ref.tag or "latest"
    return _failed(ref, "Unknown", f'failed to do request: Head "https://{ref.domain}/v2/{ref.path}/manifests/'
                                   f'{reference}": dial tcp: lookup {host} on {NODE_RESOLVER}: no such host')


def pull_error(image: str, catalog: ImageCatalog) -> str | None:
    """The pull error ``image`` meets under ``catalog``, or None when it pulls."""
    verdict = catalog.judge(image)
    return None if verdict.ok else verdict.message
