"""A CRD's names accepted, then the CRD established: upstream's NamingConditionController
and EstablishingController (apiextensions-apiserver ``pkg/controller/{status,establish}``).

For each CRD, at the instant it is written: the naming pass writes ``status.acceptedNames``
and ``NamesAccepted`` (``NoConflicts``, or ``PluralConflict``/... with ``"foos" is already
in use``) with ``Established`` False/``Installing``; the establishing pass then sets
``Established`` True/``InitialNamesAccepted`` ("the initial names have been accepted").
Two status writes, as upstream makes them. The apiserver serves a CRD's types once it is
established (``api/verbs/customresources.py``), and since the apiserver settles the engine
after every write, a client's next request after ``kubectl apply -f crd.yaml`` finds them.
A change of accepted names re-checks every CRD of the group (a released name may free
another CRD's conflict); a CRD whose requested names are all accepted is skipped at once,
as upstream's sync does, so a group of many CRDs costs a comparison per CRD, not a
naming pass over the group for each.
"""

from __future__ import annotations

from typing import Any, Iterable

from fakekube.api.types.apiextensions import condition, condition_true, set_condition
from fakekube.clock import format_rfc3339
from fakekube.controllers.apiextensions.naming import calculate_names, names_in_use, names_settled
from fakekube.engine import Context
from fakekube.objects.kinds import CUSTOM_RESOURCE_DEFINITIONS
from fakekube.store import DELETED, Change

Obj = dict[str, Any]

NAME = "crd-establishing-controller"
_GROUP = "group:"
#: CRDs by ``spec.group``: names conflict only within a group, so a CRD's naming pass reads
#: its group's CRDs, never every CRD (a create costs the same with 10 CRDs or 1,000).
BY_GROUP = "crd-group"


def crd_group(crd: Obj) -> list[str]:
    return [(crd.get("spec") or {}).get("group") or ""]


class CRDEstablishingController:
    """Accepts a CRD's names and establishes it."""

    name = NAME
    resources = (CUSTOM_RESOURCE_DEFINITIONS,)
    indexes = ((CUSTOM_RESOURCE_DEFINITIONS, BY_GROUP, crd_group),)

    def keys_for(self, change: Change) -> Iterable[str]:
        obj = change.obj if change.type != DELETED else change.prev
        group = ((obj or {}).get("spec") or {}).get("group") or ""
        if change.type == DELETED:
            return [_GROUP + group]
        before = ((change.prev or {}).get("status") or {}).get("acceptedNames")
        after = ((change.obj or {}).get("status") or {}).get("acceptedNames")
        return [change.name, _GROUP + group] if change.prev is not None and before != after else [change.name]

    def reconcile(self, key: str, ctx: Context) -> None:
        if key.startswith(_GROUP):
            group = key[len(_GROUP):]
            for member in ctx.by_index(CUSTOM_RESOURCE_DEFINITIONS, BY_GROUP, group):
                ctx.enqueue(member["metadata"]["name"])
            return
        crd = ctx.get(CUSTOM_RESOURCE_DEFINITIONS, key)
        if crd is None:
            return
        self._establish(self._accept_names(crd, ctx), ctx)

    def _accept_names(self, crd: Obj, ctx: Context) -> Obj:
        if names_settled(crd):
            return crd
        group = (crd.get("spec") or {}).get("group") or ""
        naming = calculate_names(crd, *names_in_use(ctx.by_index(CUSTOM_RESOURCE_DEFINITIONS, BY_GROUP, group), group))
        current = condition(crd, "NamesAccepted") or {}
        if naming.accepted == ((crd.get("status") or {}).get("acceptedNames") or {}) and \
                (current.get("status"), current.get("reason"), current.get("message")) == \
                (naming.status, naming.reason, naming.message):
            return crd
        now = format_rfc3339(ctx.now)
        updated = dict(crd, status=dict(crd.get("status") or {}, acceptedNames=naming.accepted))
        updated = set_condition(updated, "NamesAccepted", naming.status, naming.reason, naming.message, now)
        established = condition(crd, "Established")
        if established is None or established.get("status") != "True":
            if naming.status == "True":
                updated = set_condition(updated, "Established", "False", "Installing",
                                        "the initial names have been accepted", now)
            elif established is None:
                updated = set_condition(updated, "Established", "False", "NotAccepted", "not all names are accepted", now)
        return ctx.client.update_status(CUSTOM_RESOURCE_DEFINITIONS, updated)

    def _establish(self, crd: Obj, ctx: Context) -> None:
        if not condition_true(crd, "NamesAccepted") or condition_true(crd, "Established"):
            return
        established = set_condition(crd, "Established", "True", "InitialNamesAccepted",
                                    "the initial names have been accepted", format_rfc3339(ctx.now))
        ctx.client.update_status(CUSTOM_RESOURCE_DEFINITIONS, established)
