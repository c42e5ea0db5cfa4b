"""The hash of a pod template: names ControllerRevisions and labels pods by template.

Deployments label ReplicaSets and pods with ``pod-template-hash``, DaemonSets and
StatefulSets name ControllerRevisions ``<owner>-<hash>`` and label pods with
``controller-revision-hash``; all of them use upstream's ``controller.ComputeHash``
(``pkg/controller/controller_utils.go``): a 32-bit FNV-1a over the template, then the
``collisionCount`` as 8 little-endian bytes when it is set, written as a decimal number
whose digits are mapped onto ``rand.SafeEncodeString``'s alphabet (no vowels, no 0/1/3,
so a hash never spells a word or looks like a number).

Simplified: upstream hashes the Go struct as ``spew`` prints it, which only a Go program
can reproduce; here the template is hashed as canonical JSON (sorted keys, compact). The
hash is therefore stable, deterministic and changes with the template, but it is not the
value a real cluster would compute for the same template.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

#: ``k8s.io/apimachinery/pkg/util/rand``'s alphabet for safe strings.
SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"

_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def fnv32a(data: bytes, start: int = _FNV32_OFFSET) -> int:
    """``hash/fnv``'s 32-bit FNV-1a, continuing from ``start`` (a previous sum)."""
    value = start
    for byte in data:
        value = ((value ^ byte) * _FNV32_PRIME) & 0xFFFFFFFF
    return value


def fnv32(data: bytes, start: int = _FNV32_OFFSET) -> int:
    """``hash/fnv``'s 32-bit FNV-1 (multiply, then xor): ``history.HashControllerRevision``'s."""
    value = start
    for byte in data:
        value = ((value * _FNV32_PRIME) & 0xFFFFFFFF) ^ byte
    return value


def safe_encode_string(text: str) -> str:
    """``rand.SafeEncodeString``: each character mapped onto :data:`SAFE_ALPHABET` by its code."""
    return "".join(SAFE_ALPHABET[ord(char) % len(SAFE_ALPHABET)] for char in text)


def compute_hash(template: Mapping[str, Any] | None, collision_count: int | None = None) -> str:
    """``controller.ComputeHash(template, collisionCount)``: e.g. ``"5d8f7b9c6"``.

    Upstream hashes the Go struct, where an unset ``creationTimestamp`` is the zero time
    whether a release serialises it as ``null`` (up to 1.33) or leaves it out (from 1.34):
    the template is hashed as 1.33 wrote it, so a template hashes alike in every release."""
    canonical = json.dumps(_as_struct(template or {}), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    value = fnv32a(canonical.encode())
    if collision_count is not None:
        value = fnv32a((collision_count & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4), value)
    return safe_encode_string(str(value))


def _as_struct(template: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = template.get("metadata")
    if isinstance(meta, dict) and "creationTimestamp" not in meta:
        return {**template, "metadata": {**meta, "creationTimestamp": None}}
    return template


def template_revision_patch(owner: Mapping[str, Any]) -> dict[str, Any]:
    """``getPatch`` of the DaemonSet and StatefulSet controllers: the strategic merge patch
    that puts the owner's pod template back (``{"spec": {"template": {..., "$patch":
    "replace"}}}``), every object's keys sorted as Go marshals a map. A ControllerRevision
    stores it as ``data``; ``kubectl rollout history`` and ``undo`` read and apply it."""
    template = dict((owner.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    patch: dict[str, Any] = _sorted_json({"spec": {"template": template}})
    return patch


def _sorted_json(value: Any) -> Any:
    """A JSON value with every object's keys in sorted order."""
    if isinstance(value, Mapping):
        return {key: _sorted_json(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted_json(item) for item in value]
    return value
