"""Which of a CRD's requested names it may have: upstream's NamingConditionController
(``pkg/controller/status/naming_controller.go``), as a pure function.

A requested name is accepted when it is the one already accepted or no CRD of the same
group has it (plurals, singulars and short names share one space, kinds and list kinds
another); a conflict keeps the old accepted name and says which name is taken.
"""

from __future__ import annotations

from typing import Any, Iterable, NamedTuple

Obj = dict[str, Any]


class Naming(NamedTuple):
    """The accepted names, and the NamesAccepted condition's status, reason and message."""

    accepted: Obj
    status: str
    reason: str
    message: str


def _taken(requested: str, accepted: str, used: set[str]) -> str | None:
    """``equalToAcceptedOrFresh``: why ``requested`` may not be had, or None."""
    if requested == accepted or requested not in used:
        return None
    return f'"{requested}" is already in use'


def names_in_use(crds: Iterable[Obj], group: str) -> tuple[set[str], set[str]]:
    """(resource names, kinds) the group's CRDs have accepted (itself included, as upstream)."""
    resources: set[str] = set()
    kinds: set[str] = set()
    for crd in crds:
        if (crd.get("spec") or {}).get("group") != group:
            continue
        accepted = (crd.get("status") or {}).get("acceptedNames") or {}
        resources.update([accepted.get("plural") or "", accepted.get("singular") or "", *(accepted.get("shortNames") or [])])
        kinds.update([accepted.get("kind") or "", accepted.get("listKind") or ""])
    return resources, kinds


_NAME_FIELDS = ("plural", "singular", "shortNames", "kind", "listKind", "categories")


def names_settled(crd: Obj) -> bool:
    """The requested names are the accepted ones (upstream's first check in ``sync``:
    ``Semantic.DeepEqual(Spec.Names, Status.AcceptedNames)``, missing and empty alike):
    nothing to calculate, so re-checking a whole group costs a comparison per CRD."""
    requested = (crd.get("spec") or {}).get("names") or {}
    accepted = (crd.get("status") or {}).get("acceptedNames") or {}
    return all((requested.get(field) or None) == (accepted.get(field) or None) for field in _NAME_FIELDS)


def calculate_names(crd: Obj, resources: set[str], kinds: set[str]) -> Naming:
    requested = (crd.get("spec") or {}).get("names") or {}
    accepted = (crd.get("status") or {}).get("acceptedNames") or {}
    names = dict(accepted)
    status, reason, message = "Unknown", "", ""

    def conflict(why: str | None, field: str, conflict_reason: str) -> None:
        nonlocal status, reason, message
        if why is None:
            if requested.get(field) is not None:
                names[field] = requested.get(field)
            return
        status, reason, message = "False", conflict_reason, why

    conflict(_taken(requested.get("plural") or "", accepted.get("plural") or "", resources), "plural", "PluralConflict")
    conflict(_taken(requested.get("singular") or "", accepted.get("singular") or "", resources), "singular",
             "SingularConflict")
    if (requested.get("shortNames") or []) != (accepted.get("shortNames") or []):
        mine = set(accepted.get("shortNames") or [])
        problems = [why for short in requested.get("shortNames") or [] if short not in mine
                    if (why := _taken(short, "", resources)) is not None]
        if problems:
            status, reason = "False", "ShortNamesConflict"
            message = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
        elif requested.get("shortNames"):
            names["shortNames"] = list(requested["shortNames"])
        else:
            names.pop("shortNames", None)
    conflict(_taken(requested.get("kind") or "", accepted.get("kind") or "", kinds), "kind", "KindConflict")
    conflict(_taken(requested.get("listKind") or "", accepted.get("listKind") or "", kinds), "listKind",
             "ListKindConflict")
    if requested.get("categories"):
        names["categories"] = list(requested["categories"])
    else:
        names.pop("categories", None)
    if status == "Unknown":
        status, reason, message = "True", "NoConflicts", "no conflicts found"
    return Naming(_ordered(names), status, reason, message)


def _ordered(names: Obj) -> Obj:
    """CustomResourceDefinitionNames in its JSON field order (plural and kind always there)."""
    out: Obj = {"plural": names.get("plural") or ""}
    for field in ("singular", "shortNames"):
        if names.get(field):
            out[field] = names[field]
    out["kind"] = names.get("kind") or ""
    for field in ("listKind", "categories"):
        if names.get(field):
            out[field] = names[field]
    return out
