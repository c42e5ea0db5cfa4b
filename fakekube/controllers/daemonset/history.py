"""A DaemonSet's ControllerRevisions: one snapshot of the pod template per revision.

Upstream (``pkg/controller/daemon/update.go``, 1.33): a revision is named
``<daemonset>-<hash>`` (``controller.ComputeHash`` of the template and collisionCount),
labelled with the template's labels plus ``controller-revision-hash: <hash>``, annotated
with the DaemonSet's annotations, controlled by the DaemonSet, and holds in ``data`` the
strategic merge patch that restores the template (``getPatch``:
``{"spec":{"template":{..., "$patch":"replace"}}}``, keys sorted as Go marshals a map).
``kubectl rollout history`` and ``rollout undo`` read and apply that patch. The revision
numbers count up (current = highest old + 1); the oldest unused revisions beyond
``revisionHistoryLimit`` are deleted. Pure: the controller does the writes.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from fakekube.objects.constants import LABEL_CONTROLLER_REVISION_HASH
from fakekube.objects.owners import owner_reference
from fakekube.objects.templatehash import template_revision_patch

Obj = dict[str, Any]

DS_API_VERSION = "apps/v1"
DS_KIND = "DaemonSet"


def revision_data(ds: Mapping[str, Any]) -> Obj:
    """``getPatch`` (fakekube/objects/templatehash.py)."""
    return template_revision_patch(ds)


def matches(ds: Mapping[str, Any], revision: Mapping[str, Any]) -> bool:
    """``Match``: is ``revision`` a snapshot of the DaemonSet's current template?"""
    return revision.get("data") == revision_data(ds)


def revision_hash(revision: Mapping[str, Any]) -> str:
    """The revision's ``controller-revision-hash`` label ("" when missing)."""
    return str(((revision.get("metadata") or {}).get("labels") or {}).get(LABEL_CONTROLLER_REVISION_HASH) or "")


def revision_number(revision: Mapping[str, Any]) -> int:
    return int(revision.get("revision") or 0)


def new_revision(ds: Mapping[str, Any], hash_: str, number: int) -> Obj:
    """The ControllerRevision ``snapshot`` creates for the DaemonSet's current template."""
    meta = ds.get("metadata") or {}
    template_labels = (((ds.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}
    revision_meta: Obj = {"name": f"{meta['name']}-{hash_}", "namespace": meta.get("namespace"),
                          "labels": {**template_labels, LABEL_CONTROLLER_REVISION_HASH: hash_}}
    if meta.get("annotations"):
        revision_meta["annotations"] = dict(meta["annotations"])
    revision_meta["ownerReferences"] = [owner_reference(ds, DS_API_VERSION, DS_KIND)]
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": revision_meta,
            "data": revision_data(ds), "revision": number}


def split_current(ds: Mapping[str, Any], revisions: Iterable[Obj]) -> tuple[list[Obj], list[Obj]]:
    """(revisions matching the current template, the others) in the given order."""
    current: list[Obj] = []
    old: list[Obj] = []
    for revision in revisions:
        (current if matches(ds, revision) else old).append(revision)
    return current, old


def newest(revisions: Sequence[Obj]) -> Obj:
    """``dedupCurHistories``' keeper: the highest revision (the last one of equal numbers)."""
    keep = revisions[0]
    for revision in revisions:
        if revision_number(revision) >= revision_number(keep):
            keep = revision
    return keep


def revisions_to_delete(old: Sequence[Obj], live_hashes: set[str], limit: int) -> list[Obj]:
    """``cleanupHistory``: beyond ``limit`` old revisions, the oldest whose hash no pod carries."""
    excess = len(old) - limit
    doomed: list[Obj] = []
    for revision in sorted(old, key=revision_number):
        if excess <= 0:
            break
        if revision_hash(revision) in live_hashes:
            continue
        doomed.append(revision)
        excess -= 1
    return doomed
