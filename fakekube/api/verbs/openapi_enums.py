"""Upstream's OpenAPI enums: what kube-openapi publishes for every field of a ``+enum`` Go type.

kubernetes-validate's schemas (fakekube's source) carry neither the ``enum`` lists nor the
"Possible enum values:" paragraph upstream appends to such a field's description, yet
``kubectl explain`` prints both and client generators read them. ``openapi_enums.json`` holds
them per release (and the few definitions' own descriptions the source leaves out) (``tools/gen_openapi_enums.py`` builds it from kubernetes/api's ``+enum``
types at each release's tag, checked against a real kube-apiserver's documents).

Documentation only, as upstream: kube-apiserver validates built-in objects with hand-written
rules (``Unsupported value: …; supported values: …``), never against these lists.
"""

from __future__ import annotations

import functools
import json
import threading
from pathlib import Path
from typing import Any, NamedTuple

_DATA = Path(__file__).with_name("openapi_enums.json")
_lock = threading.Lock()
_by_minor: dict[int, dict[str, dict[str, "FieldEnum"]]] = {}


class FieldEnum(NamedTuple):
    """One field's enum: where it goes (``""``: the property itself, ``items``,
    ``additionalProperties``), the sorted values and, for the property itself, the paragraph."""

    slot: str
    values: tuple[str, ...]
    paragraph: str
    #: What joins the description and the paragraph: a blank line, or two where upstream's
    #: Go doc comment ends with an empty line (kubernetes-validate trimmed its newline).
    separator: str = "\n\n"


def for_release(minor: int | None) -> dict[str, dict[str, FieldEnum]]:
    """Definition name → property → :class:`FieldEnum` of release ``1.<minor>`` (empty for a
    schema set that is not a release's). Read once per release and shared; do not mutate."""
    if minor is None:
        return {}
    with _lock:
        found = _by_minor.get(minor)
        if found is None:
            found = _by_minor[minor] = _load(f"1.{minor}")
        return found


def _load(release: str) -> dict[str, dict[str, FieldEnum]]:
    data = json.loads(_DATA.read_text(encoding="utf-8"))
    variants: dict[str, tuple[tuple[str, ...], str]] = {}
    for typ, forms in data["types"].items():
        for form in forms:
            if release in form["releases"]:
                variants[typ] = (tuple(form["enum"]), form["paragraph"])
    out: dict[str, dict[str, FieldEnum]] = {}
    for definition, props in data["fields"].items():
        for prop, (slot, typ, *separator) in props.items():
            if typ in variants:
                values, paragraph = variants[typ]
                out.setdefault(definition, {})[prop] = FieldEnum(slot, values, paragraph if slot == "" else "",
                                                                 *separator)
    return out


def apply(definition: str, converted: dict[str, Any], minor: int | None) -> None:
    """Add the release's enums to one converted (v3-form) definition, in place, where the
    release's schema has the field: ``enum`` on the property (its description gains the
    paragraph after a blank line), on its ``items`` or on its ``additionalProperties``."""
    fields = for_release(minor).get(definition)
    if not fields:
        return
    props = converted.get("properties")
    if not isinstance(props, dict):
        return
    for prop, enum in fields.items():
        node = props.get(prop)
        if not isinstance(node, dict):
            continue
        if enum.slot == "":
            description = node.get("description", "")
            node["description"] = f"{description}{enum.separator}{enum.paragraph}" if description else enum.paragraph
            node["enum"] = list(enum.values)
        elif isinstance(node.get(enum.slot), dict):
            node[enum.slot] = {**node[enum.slot], "enum": list(enum.values)}


def description_of(definition: str) -> dict[str, str]:
    """``{"description": …}`` of a definition the schema source has without its own text
    (Quantity, IntOrString), as upstream publishes it; else ``{}``."""
    text = _descriptions().get(definition)
    return {"description": text} if text is not None else {}


@functools.lru_cache(maxsize=1)
def _descriptions() -> dict[str, str]:
    found: dict[str, str] = json.loads(_DATA.read_text(encoding="utf-8")).get("descriptions", {})
    return found
