"""A StatefulSet's ControllerRevisions (upstream ``stateful_set_utils.go`` ``newRevision``,
``getPatch``, ``ApplyRevision``, ``nextRevision`` and ``pkg/controller/history``). Pure.

A revision holds in ``data`` the strategic merge patch that puts the set's pod template back
(``{"spec":{"template":{..., "$patch":"replace"}}}``, keys sorted as Go marshals a map);
``kubectl rollout history`` and ``undo`` read and apply it. It is named ``<set>-<hash>``,
where the hash is ``HashControllerRevision``: 32-bit FNV-1 over the patch's JSON, then the
collisionCount in decimal when it is set, written in ``rand.SafeEncodeString``'s alphabet.
Labels: the template's plus ``controller-revision-hash: <hash>``; annotations: the set's;
the set as controller. Revision numbers count up; a template that returns to an older
revision renumbers that revision instead of making a new one (a rollback).
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from fakekube.controllers.statefulset.identity import API_VERSION, KIND
from fakekube.objects.constants import LABEL_CONTROLLER_REVISION_HASH
from fakekube.objects.owners import owner_reference
from fakekube.objects.templatehash import fnv32, safe_encode_string, template_revision_patch

Obj = dict[str, Any]

#: ``ControllerRevisionName`` keeps at most this much of the owner's name.
MAX_PREFIX_CHARS = 223


def revision_data(sts: Mapping[str, Any]) -> Obj:
    """``getPatch`` (fakekube/objects/templatehash.py)."""
    return template_revision_patch(sts)


def _go_json(value: Any) -> bytes:
    """``json.Marshal`` of a decoded map: sorted keys, compact, HTML characters escaped."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text.encode()


def revision_hash(data: Mapping[str, Any], collision_count: int | None) -> str:
    """``HashControllerRevision`` of a revision holding ``data``."""
    value = fnv32(_go_json(data))
    if collision_count is not None:
        value = fnv32(str(collision_count).encode(), value)
    return safe_encode_string(str(value))


def new_revision(sts: Mapping[str, Any], number: int, collision_count: int | None) -> Obj:
    """``newRevision``: the ControllerRevision of the set's current template."""
    meta = sts["metadata"]
    data = revision_data(sts)
    hash_ = revision_hash(data, collision_count)
    labels = ((((sts.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {})
    revision_meta: Obj = {"name": f"{meta['name'][:MAX_PREFIX_CHARS]}-{hash_}", "namespace": meta["namespace"],
                          "labels": {**labels, LABEL_CONTROLLER_REVISION_HASH: hash_}}
    if meta.get("annotations"):
        revision_meta["annotations"] = dict(meta["annotations"])
    revision_meta["ownerReferences"] = [owner_reference(sts, API_VERSION, KIND)]
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": revision_meta,
            "data": data, "revision": number}


def template_of(revision: Mapping[str, Any]) -> Obj:
    """``ApplyRevision``'s effect on the template: the one the revision saved."""
    template = dict((((revision.get("data") or {}).get("spec") or {}).get("template")) or {})
    template.pop("$patch", None)
    return template


def number(revision: Mapping[str, Any]) -> int:
    return int(revision.get("revision") or 0)


def sort_revisions(revisions: Sequence[Obj]) -> list[Obj]:
    """``SortControllerRevisions``: by revision number, then creation time, then name."""
    return sorted(revisions, key=lambda r: (number(r), r["metadata"].get("creationTimestamp") or "",
                                            r["metadata"]["name"]))


def next_number(revisions: Sequence[Obj]) -> int:
    """``nextRevision`` (``revisions`` sorted): one past the last, 1 for none."""
    return number(revisions[-1]) + 1 if revisions else 1


def equal(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """``EqualRevision``: the same data (upstream compares the raw bytes and the hash label)."""
    return a.get("data") == b.get("data")


def to_truncate(revisions: Sequence[Obj], live: set[str], limit: int) -> list[Obj]:
    """``truncateHistory``: the oldest revisions no pod, nor status, uses beyond ``limit``."""
    history = [r for r in revisions if r["metadata"]["name"] not in live]
    return history[:max(0, len(history) - limit)]
