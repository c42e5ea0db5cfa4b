"""Normalization: what an exchange looks like once the values that differ between two correct
apiservers (or two runs of one) are masked. The recorder and the replay both use this module,
so a golden file and a replayed answer are compared in the same form.

A masked value becomes a placeholder that still shows *consistency*: within one scenario
the same uid is the same placeholder everywhere, so a fake that answers another object's uid
still differs. Numbering walks dict keys in sorted order, so it does not depend on the order
a server writes keys in. What is masked, and why:

==========================  =====================================  ==============================================
value                       placeholder                            why it varies
==========================  =====================================  ==============================================
an object's uid             ``<uid:NAME>`` (``NAME~2`` for the      random in every apiserver
                            second object of that name)
other UUIDs                 ``<uid:N>``                            random (review uids, preconditions, …)
an object's resourceVersion ``<rv:NAME.K>``: its K-th version      etcd's revision, shared with every other write
other resourceVersions      ``<rv>`` (lists, bookmarks)            a list's is the store's latest revision
``metadata.continue``       ``<continue>``                         opaque, holds a revision
RFC 3339 times              ``<time>``, ``<microtime>``            the clock (the format is kept apart)
Table age columns           ``<age>``                              the clock
``generateName`` suffixes   ``prefix<gen:N>`` (N counts per prefix) random (the alphabet is checked)
JWTs                        ``<jwt {header, claims}>``             keys, times, ids; claims are kept, masked
PEM blocks, base64 PEM      ``<pem:TYPE>``, ``<base64-pem:TYPE>``  keys made per run
``caBundle``                ``<ca-bundle>``                        the webhook server's CA, made per run
Service ``clusterIP(s)``    ``<ip:NAME>`` (its Service's name)     random allocation upstream, seeded in fakekube
``nodePort``s               ``<port:NAME:PORT>``                   random allocation
OpenAPI ``?hash=``          ``hash=<hash>``                        a hash of the document
``serverAddress``           ``<server-address>``                   the server's own host:port (discovery)
the run's literals          ``${tok}``, ``${webhook_host}``        the run token in names, the webhook's port
==========================  =====================================  ==============================================

Objects' uids and resourceVersions are named after the object (the name where the uid first
appears as ``metadata.uid``), not numbered in order of appearance: an extra object or an
extra write on one side then changes that object's placeholders only, not every later one.

Nothing else is masked: a difference anywhere else is a difference. Two orders are not
compared: ``managedFields`` entries are sorted (by manager, operation, subresource), since
upstream orders entries of the same second as a Go map iterates, and a
SelfSubjectRulesReview's rules, which follow the order the authorizer visits bindings in.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any, Callable

import yaml

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
_PEM = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----.*?-----END \1-----\n?", re.DOTALL)
_HASH = re.compile(r"hash=[0-9A-Fa-f]+")
#: upstream's ``utilrand.String`` alphabet (no vowels, no 0/1/3): a suffix outside it is not masked.
_SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"
#: Messages that carry resourceVersions.
_RV_MESSAGES = (
    re.compile(r"(too old resource version: )(\d+)( \()(\d+)(\))"),
    re.compile(r"(ResourceVersion in (?:precondition|storage): )(\d+)"),
    re.compile(r"(Too large resource version: )(\d+)(, current: )(\d+)"),
    re.compile(r"(ResourceVersion in (?:the )?(?:precondition|record) \()(\d+)(\))"),
    re.compile(r'(resourceVersion\\*"\s*:\s*\\*")(\d+)'),  # an object quoted in a message, escaped or not
)
#: A Service's node port as a Table cell shows it (``80:30080/TCP``).
_NODE_PORT_CELL = re.compile(r"(:)(3\d{4})(/(?:TCP|UDP|SCTP))")
#: A Table cell that is an age (``5s``, ``3m20s``, ``<invalid>``).
_AGE = re.compile(r"^(\d+[smhdy])+$|^<invalid>$|^<unknown>$")
#: Table columns that show the clock.
AGE_COLUMNS = frozenset({"Age", "Last Seen", "First Seen", "Duration", "Last Schedule", "Active"})
#: Names the apiserver generates itself, with a random suffix: ServiceAccount admission's
#: projected token volume.
SERVER_PREFIXES = ["kube-api-access-"]
_IP_KEYS = frozenset({"clusterIP", "clusterIPs"})
_PORT_KEYS = frozenset({"nodePort", "healthCheckNodePort"})


class Masker:
    """The masks of one scenario run: numbering is shared by all its exchanges.

    ``literals`` maps run-specific strings (the run token, the webhook's ``host:port``) to
    the template text they came from; :meth:`note_request` learns ``generateName`` prefixes."""

    def __init__(self, literals: dict[str, str]) -> None:
        self._literals = sorted(literals.items(), key=lambda kv: -len(kv[0]))
        self._numbers: dict[str, dict[str, int]] = {}
        #: uid → ``<uid:NAME>`` for objects; name → how many objects of that name were seen.
        self._object_uids: dict[str, str] = {}
        self._names: dict[str, int] = {}
        #: resourceVersion → placeholder, and each object's versions in order.
        self._rvs: dict[str, str] = {}
        self._object_rvs: dict[str, list[str]] = {}
        self._prefixes: list[str] = []
        self._generated: re.Pattern[str] | None = None
        #: ("ip" | "port", value) → a placeholder named after the Service that holds it.
        self._labels: dict[tuple[str, str], str] = {}
        #: The column names of the last Table seen (a watch of Tables sends them once).
        self._columns: list[Any] = []
        self.note_request({"generateName": SERVER_PREFIXES})

    # -- numbering ------------------------------------------------------------------------
    def number(self, kind: str, value: str) -> str:
        table = self._numbers.setdefault(kind, {})
        if value not in table:
            table[value] = len(table) + 1
        return f"<{kind}:{table[value]}>"

    def object_uid(self, uid: str, name: str) -> str:
        """The placeholder of an object's uid, named after the object the first time it is seen."""
        if uid not in self._object_uids and uid in self._numbers.get("uid", {}):
            self._object_uids[uid] = self.number("uid", uid)  # seen before its object: keep its placeholder
        if uid not in self._object_uids:
            label = self.text(name) if name else "?"
            count = self._names.get(label, 0) + 1
            self._names[label] = count
            self._object_uids[uid] = f"<uid:{label}{'' if count == 1 else f'~{count}'}>"
        return self._object_uids[uid]

    def object_rv(self, uid: str, value: str) -> str:
        """The placeholder of one of an object's resourceVersions: its K-th distinct one."""
        if value not in self._rvs:
            label = self._object_uids.get(uid) or self.number("uid", uid)
            versions = self._object_rvs.setdefault(label, [])
            versions.append(value)
            self._rvs[value] = f"<rv:{label[5:-1]}.{len(versions)}>"
        return self._rvs[value]

    def note_request(self, body: Any) -> None:
        """Learn the ``generateName`` prefixes a request body carries (already templated text)."""
        for found in _find_key(body, "generateName"):
            for prefix in found if isinstance(found, list) else [found]:
                prefix = prefix[:58] if isinstance(prefix, str) else ""
                if prefix and prefix not in self._prefixes:
                    self._prefixes.append(prefix)
        if self._prefixes:
            alternatives = "|".join(re.escape(p) for p in sorted(self._prefixes, key=len, reverse=True))
            self._generated = re.compile(f"(?<![a-z0-9.-])({alternatives})({_SUFFIX})(?![a-z0-9])")

    # -- values ---------------------------------------------------------------------------
    def value(self, value: Any) -> Any:
        """A JSON value, masked (a new value; the input is left alone)."""
        return self._walk(value, None, None)

    def text(self, value: str) -> str:
        for actual, placeholder in self._literals:
            value = value.replace(actual, placeholder)
        value = _JWT.sub(lambda m: self._jwt(m.group(0)), value)
        value = _PEM.sub(lambda m: f"<pem:{m.group(1)}>", value)
        value = _UUID.sub(lambda m: self._object_uids.get(m.group(0)) or self.number("uid", m.group(0)), value)
        value = _TIME.sub(_time, value)
        if self._generated is not None:
            value = self._generated.sub(lambda m: m.group(1) + self.number(f"gen:{m.group(1)}", m.group(0))
                                        .replace(f"gen:{m.group(1)}:", "gen:"), value)
        known = {*self._numbers.get("ip", {}), *(address for kind, address in self._labels if kind == "ip")}
        for actual in sorted(known, key=len, reverse=True):
            if actual in value:
                value = re.sub(rf"(?<![0-9.]){re.escape(actual)}(?![0-9])", self._ip(actual), value)
        for pattern in _RV_MESSAGES:
            value = pattern.sub(self._rv_message, value)
        value = _NODE_PORT_CELL.sub(lambda m: m.group(1) + self._port(int(m.group(2))) + m.group(3), value)
        decoded = _base64_pem(value)
        return decoded if decoded is not None else value

    def _rv_message(self, match: re.Match[str]) -> str:
        parts = list(match.groups())
        for i, part in enumerate(parts):
            if part is not None and part.isdigit():
                parts[i] = self._known_rv(part)
        return "".join(p or "" for p in parts)

    def _known_rv(self, value: str) -> str:
        return self._rvs.get(value, "<rv>")

    def _walk(self, value: Any, key: str | None, parent: dict[str, Any] | None) -> Any:
        if isinstance(value, dict):
            return self._dict(value)
        if isinstance(value, list):
            if key in _IP_KEYS:
                return [self._ip(v) for v in value]
            if key == "managedFields":
                value = sorted(value, key=_managed_fields_order)
            return [self._walk(v, None, None) for v in value]
        if isinstance(value, str):
            return self._string(value, key, parent)
        if key in _PORT_KEYS and isinstance(value, int) and value:
            return self._port(value)
        return value

    def _dict(self, value: dict[str, Any]) -> dict[str, Any]:
        meta = value.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("uid"), str) and isinstance(meta.get("name"), str):
            self.object_uid(meta["uid"], meta["name"])
        if isinstance(meta, dict) and isinstance(meta.get("name"), str) and isinstance(value.get("spec"), dict):
            self._service_addresses(self.text(meta["name"]), value["spec"])
        masked = {k: self._walk(value[k], k, value) for k in sorted(value)}
        if value.get("kind") == "SelfSubjectRulesReview" and isinstance(masked.get("status"), dict):
            # the rules come in the order the authorizer visits bindings: an informer's, unordered
            for rules in ("resourceRules", "nonResourceRules"):
                if isinstance(masked["status"].get(rules), list):
                    masked["status"][rules] = sorted(masked["status"][rules], key=lambda r: json.dumps(r, sort_keys=True))
        if value.get("kind") == "Table":
            # a watch's later Table events carry no columnDefinitions: the first event's apply
            if value.get("columnDefinitions"):
                self._columns = [c.get("name") if isinstance(c, dict) else None for c in value["columnDefinitions"]]
            _mask_age_cells(masked, self._columns)
        return {k: masked[k] for k in value}  # the server's key order, numbered in sorted order

    def _string(self, value: str, key: str | None, parent: dict[str, Any] | None) -> str:
        if key == "resourceVersion" and value not in ("", "0"):
            if parent is not None and isinstance(parent.get("uid"), str):
                return self.object_rv(parent["uid"], value)
            return "<rv>"
        if key == "continue" and value:
            return "<continue>"
        if key in _IP_KEYS:
            return self._ip(value)
        if key == "caBundle" and value:
            return "<ca-bundle>"
        if key == "serverAddress":  # where the reference listened (discovery's serverAddressByClientCIDRs)
            return "<server-address>"
        if key == "serverRelativeURL":
            return _HASH.sub("hash=<hash>", value)
        return self.text(value)

    def _ip(self, value: Any) -> Any:
        if not isinstance(value, str) or value in ("", "None"):
            return value
        return self._labels.get(("ip", value)) or self.number("ip", value)

    def _port(self, value: int) -> str:
        return self._labels.get(("port", str(value))) or self.number("port", str(value))

    def _service_addresses(self, name: str, spec: dict[str, Any]) -> None:
        """A Service's allocated addresses and node ports are named after it (``<ip:NAME>``,
        ``<port:NAME:80>``), so one extra allocation on one side shifts no other placeholder."""
        addresses = [a for a in [spec.get("clusterIP"), *(spec.get("clusterIPs") or [])]
                     if isinstance(a, str) and a not in ("", "None")]
        for address in addresses:
            if ("ip", address) not in self._labels and address not in self._numbers.get("ip", {}):
                family = sum(1 for (kind, _), label in self._labels.items() if kind == "ip" and label.startswith(f"<ip:{name}"))
                self._labels[("ip", address)] = f"<ip:{name}{'' if family == 0 else f'.{family + 1}'}>"
        for port in spec.get("ports") or []:
            node_port = port.get("nodePort") if isinstance(port, dict) else None
            if isinstance(node_port, int) and node_port and ("port", str(node_port)) not in self._labels:
                self._labels[("port", str(node_port))] = f"<port:{name}:{port.get('port')}>"
        health = spec.get("healthCheckNodePort")
        if isinstance(health, int) and health and ("port", str(health)) not in self._labels:
            self._labels[("port", str(health))] = f"<port:{name}:health>"

    def _jwt(self, token: str) -> str:
        parts = token.split(".")
        try:
            header = json.loads(_b64url(parts[0]))
            claims = json.loads(_b64url(parts[1]))
        except (ValueError, binascii.Error):
            return "<jwt:undecodable>"
        if isinstance(claims, dict) and isinstance(claims.get("iat"), int) and isinstance(claims.get("exp"), int):
            claims["exp-iat"] = claims["exp"] - claims["iat"]
        for name in ("iat", "exp", "nbf"):
            if isinstance(claims, dict) and name in claims:
                claims[name] = f"<{name}>"
        if isinstance(header, dict) and "kid" in header:
            header["kid"] = "<kid>"
        shown = {"header": self.value(header), "claims": self.value(claims),
                 "signatureBytes": len(_b64url(parts[2])) if len(parts) > 2 else 0}
        return "<jwt " + json.dumps(shown, sort_keys=True) + ">"


def _managed_fields_order(entry: Any) -> tuple[str, ...]:
    """managedFields are a set keyed by manager, operation and subresource: upstream orders
    entries written in the same second as a Go map iterates, so both sides are sorted."""
    if not isinstance(entry, dict):
        return ("", "", "", "", json.dumps(entry, sort_keys=True))
    return (str(entry.get("manager")), str(entry.get("operation")), str(entry.get("subresource", "")),
            str(entry.get("apiVersion")), json.dumps(entry, sort_keys=True))


def _time(match: re.Match[str]) -> str:
    """``<time>`` (seconds), ``<microtime>`` (six digits, metav1.MicroTime) or ``<time.fN>``."""
    fraction = match.group(1)
    if not fraction:
        return "<time>"
    return "<microtime>" if len(fraction) == 7 else f"<time.f{len(fraction) - 1}>"


def _mask_age_cells(table: dict[str, Any], names: list[Any]) -> None:
    ages = [i for i, name in enumerate(names) if name in AGE_COLUMNS]
    for row in table.get("rows") or []:
        cells = row.get("cells") if isinstance(row, dict) else None
        if isinstance(cells, list):
            for i, cell in enumerate(cells):
                # a cell past the columns (upstream's IPAddress printer has one) is an age if it looks like one
                if isinstance(cell, str) and (i in ages or i >= len(names) and _AGE.match(cell)):
                    cells[i] = "<age>"


def _b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _base64_pem(value: str) -> str | None:
    """``<base64-pem:TYPE>`` for a string that is base64 of a PEM block, else None."""
    if len(value) < 40 or not value.startswith("LS0tLS1CRUdJTi"):
        return None
    try:
        decoded = base64.b64decode(value, validate=True).decode("ascii")
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    match = _PEM.search(decoded)
    return f"<base64-pem:{match.group(1)}>" if match else None


def _find_key(value: Any, wanted: str) -> list[Any]:
    found: list[Any] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key == wanted:
                found.append(item)
            else:
                found.extend(_find_key(item, wanted))
    elif isinstance(value, list):
        for item in value:
            found.extend(_find_key(item, wanted))
    return found


def content_type(headers: list[tuple[str, str]]) -> str:
    values = [v for k, v in headers if k.lower() == "content-type"]
    return values[0] if values else ""


def body(raw: bytes, media_type: str, masker: Masker, select: Callable[[Any], Any] | None = None) -> Any:
    """A response body, masked: JSON as a value, YAML as ``{"<yaml>": value}`` (its formatting is
    not compared), text as a string, anything else as its size."""
    if not raw:
        return None
    if "json" in media_type or "yaml" in media_type:
        try:
            parsed = json.loads(raw) if "json" in media_type else {"<yaml>": yaml.safe_load(raw)}
        except (ValueError, yaml.YAMLError):
            return masker.text(raw.decode("utf-8", "replace"))
        if select is not None:
            parsed = select(parsed)
        return masker.value(parsed)
    if media_type.startswith("text/") or not media_type:
        try:
            return masker.text(raw.decode("utf-8"))
        except UnicodeDecodeError:
            pass
    return f"<{len(raw)} bytes of {media_type or 'unknown'}>"
