"""What the kubelet writes into ConfigMap, Secret, downward-API and projected volumes, and how.

Pure functions over plain data. :func:`payload` is a volume's files — path → (bytes, mode) — from
its sources (upstream's volume plugins): a ConfigMap's ``data`` and ``binaryData`` keys, a
Secret's decoded ``data``, a downward-API item's field (labels and annotations as
``key="value"`` lines, sorted), a resource field (with its divisor, rounded up), a
ServiceAccount token; ``items`` pick keys and paths, ``mode``/``defaultMode`` the permissions
(``0644`` by default), ``optional`` lets a missing source or key be. :func:`write_atomically`
lays the payload out as the kubelet's AtomicWriter does::

    ..2025_01_01_00_01_00.3482918843/    the payload, in a directory named by when it was written
    ..data -> ..2025_01_01_00_01_00.3482918843
    KEY -> ..data/KEY                    one link per top-level name of the payload

so an update switches ``..data`` at once and readers never see half a change.
"""

from __future__ import annotations

import base64
import hashlib
import math
import posixpath
from datetime import datetime, timezone
from fractions import Fraction
from typing import Any, Callable, Mapping

from fakekube.kubelet.fs import DIR, FILE, LINK, Store, split
from fakekube.objects.quantity import parse_quantity

Obj = dict[str, Any]
Payload = dict[str, tuple[bytes, int]]
#: The permissions of a volume's files when neither ``mode`` nor ``defaultMode`` says (0644).
DEFAULT_MODE = 0o644
#: A projected ServiceAccount token's lifetime when ``expirationSeconds`` is not given.
DEFAULT_TOKEN_EXPIRATION_S = 3600


class MissingSource(Exception):
    """A source that is not optional does not exist (the mount would fail)."""


#: Sources a payload is read from: ``get(kind, name)`` for ``configmaps``/``secrets`` in the
#: pod's namespace; ``token(path, audience, expiration_s)`` a ServiceAccount token.
SourceGetter = Callable[[str, str], Obj | None]
TokenGetter = Callable[[str, str, int], str]


def generated(volume: Mapping[str, Any]) -> bool:
    """Is this a volume whose files the kubelet writes (and rewrites on updates)?"""
    return any(key in volume for key in ("configMap", "secret", "downwardAPI", "projected"))


def sources(volume: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The (kind, name) objects a volume's files come from."""
    found: list[tuple[str, str]] = []
    if "configMap" in volume:
        found.append(("configmaps", str((volume["configMap"] or {}).get("name") or "")))
    if "secret" in volume:
        found.append(("secrets", str((volume["secret"] or {}).get("secretName") or "")))
    for source in ((volume.get("projected") or {}).get("sources") or []):
        if "configMap" in source:
            found.append(("configmaps", str((source["configMap"] or {}).get("name") or "")))
        if "secret" in source:
            found.append(("secrets", str((source["secret"] or {}).get("name") or "")))
    return found


def payload(volume: Mapping[str, Any], pod: Mapping[str, Any], get: SourceGetter, token: TokenGetter,
            container_resources: Callable[[str], Mapping[str, Any]]) -> Payload:
    """The volume's files (module docstring); :class:`MissingSource` for a required source missing."""
    if "configMap" in volume:
        spec = volume["configMap"] or {}
        return _keyed(get("configmaps", spec.get("name") or ""), spec, _config_map_values, spec.get("defaultMode"))
    if "secret" in volume:
        spec = volume["secret"] or {}
        return _keyed(get("secrets", spec.get("secretName") or ""), spec, _secret_values, spec.get("defaultMode"))
    if "downwardAPI" in volume:
        spec = volume["downwardAPI"] or {}
        return _downward(spec.get("items") or [], pod, spec.get("defaultMode"), container_resources)
    spec = volume.get("projected") or {}
    files: Payload = {}
    default = spec.get("defaultMode")
    for source in spec.get("sources") or []:
        if "configMap" in source:
            inner = source["configMap"] or {}
            files.update(_keyed(get("configmaps", inner.get("name") or ""), inner, _config_map_values, default))
        elif "secret" in source:
            inner = source["secret"] or {}
            files.update(_keyed(get("secrets", inner.get("name") or ""), inner, _secret_values, default))
        elif "downwardAPI" in source:
            files.update(_downward((source["downwardAPI"] or {}).get("items") or [], pod, default,
                                   container_resources))
        elif "serviceAccountToken" in source:
            inner = source["serviceAccountToken"] or {}
            expiration = int(inner.get("expirationSeconds") or DEFAULT_TOKEN_EXPIRATION_S)
            value = token(str(inner.get("path") or "token"), str(inner.get("audience") or ""), expiration)
            files[str(inner.get("path") or "token")] = (value.encode(), _mode(None, default))
    return files


def _mode(mode: Any, default: Any) -> int:
    for value in (mode, default):
        if isinstance(value, int) and not isinstance(value, bool):
            return value & 0o777
    return DEFAULT_MODE


def _config_map_values(obj: Obj) -> dict[str, bytes]:
    values = {key: str(value).encode() for key, value in (obj.get("data") or {}).items()}
    for key, value in (obj.get("binaryData") or {}).items():
        values[key] = base64.b64decode(str(value))
    return values


def _secret_values(obj: Obj) -> dict[str, bytes]:
    values = {key: base64.b64decode(str(value)) for key, value in (obj.get("data") or {}).items()}
    for key, value in (obj.get("stringData") or {}).items():
        values[key] = str(value).encode()
    return values


def _keyed(obj: Obj | None, spec: Mapping[str, Any], values_of: Callable[[Obj], dict[str, bytes]],
           default_mode: Any) -> Payload:
    optional = bool(spec.get("optional"))
    if obj is None:
        if optional:
            return {}
        raise MissingSource(str(spec.get("name") or spec.get("secretName") or ""))
    values = values_of(obj)
    items = spec.get("items")
    if not items:
        return {key: (value, _mode(None, default_mode)) for key, value in sorted(values.items())}
    files: Payload = {}
    for item in items:
        key = str(item.get("key") or "")
        if key not in values:
            if optional:
                continue
            raise MissingSource(f"{spec.get('name') or spec.get('secretName')}: key {key}")
        files[str(item.get("path") or key)] = (values[key], _mode(item.get("mode"), default_mode))
    return files


def _downward(items: list[Mapping[str, Any]], pod: Mapping[str, Any], default_mode: Any,
              container_resources: Callable[[str], Mapping[str, Any]]) -> Payload:
    files: Payload = {}
    for item in items:
        path = str(item.get("path") or "")
        field = (item.get("fieldRef") or {}).get("fieldPath")
        if field:
            value = field_value(pod, str(field))
        else:
            resource = item.get("resourceFieldRef") or {}
            value = resource_value(resource, container_resources(str(resource.get("containerName") or "")))
        files[path] = (value.encode(), _mode(item.get("mode"), default_mode))
    return files


def field_value(pod: Mapping[str, Any], path: str) -> str:
    """A downward-API ``fieldRef`` as the volume plugin writes it (``fieldpath.ExtractFieldPathAsString``)."""
    meta = pod.get("metadata") or {}
    if path in ("metadata.labels", "metadata.annotations"):
        values = meta.get(path.split(".")[1]) or {}
        return "\n".join(f"{key}={_go_quote(str(values[key]))}" for key in sorted(values))
    for kind in ("labels", "annotations"):
        prefix = f"metadata.{kind}['"
        if path.startswith(prefix) and path.endswith("']"):
            return str((meta.get(kind) or {}).get(path[len(prefix):-2], ""))
    section, _, name = path.partition(".")
    return str(((pod.get(section) or {}).get(name)) or "")


def _go_quote(text: str) -> str:
    """Go's ``%q`` for the simple strings labels and annotations hold."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def resource_value(reference: Mapping[str, Any], resources: Mapping[str, Any]) -> str:
    """``limits.cpu`` and friends, divided by the divisor and rounded up (``ExtractResourceValueByContainer``);
    an unset limit is reported as the node's allocatable, which a simulated node does not know: 0."""
    resource = str(reference.get("resource") or "")
    section, _, name = resource.partition(".")
    raw = ((resources.get(section) or {}).get(name)) if section in ("limits", "requests") else None
    divisor_text = reference.get("divisor") or "1"
    try:
        value = parse_quantity(raw) if raw is not None else Fraction(0)
        divisor = parse_quantity(divisor_text) or Fraction(1)
    except (ValueError, TypeError):
        return "0"
    return str(math.ceil(value / divisor))


def directory_name(written_s: float, seed: str) -> str:
    """The AtomicWriter's timestamped directory (``..2006_01_02_15_04_05.`` and MkdirTemp's number,
    here derived from ``seed``)."""
    moment = datetime.fromtimestamp(written_s, timezone.utc)
    suffix = int.from_bytes(hashlib.sha256(seed.encode()).digest()[:4], "big")
    return moment.strftime("..%Y_%m_%d_%H_%M_%S.") + str(suffix)


def write_atomically(store: Store, files: Payload, written_s: float, seed: str) -> None:
    """Replace the store's contents with ``files`` in the AtomicWriter's layout (module docstring)."""
    root = store["root"]
    children: dict[str, Any] = {}
    data_dir = directory_name(written_s, seed)
    payload_dir: list[Any] = [DIR, 0o755, written_s, {}]
    used = 0
    for path, (data, mode) in sorted(files.items()):
        parts = split(path)
        if not parts:
            continue
        directory = payload_dir
        for name in parts[:-1]:
            directory = directory[3].setdefault(name, [DIR, 0o755, written_s, {}])
        directory[3][parts[-1]] = [FILE, mode, written_s, data]
        used += len(data)
        top = parts[0]
        children[top] = [LINK, 0o777, written_s, posixpath.join("..data", top)]
    children[data_dir] = payload_dir
    children["..data"] = [LINK, 0o777, written_s, data_dir]
    root[3] = children
    root[1] = 0o1777
    root[2] = written_s
    store["used"] = used
