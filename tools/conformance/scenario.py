"""Scenario files: request sequences as data, the same files for the recorder and the replay.

A scenario is one YAML file under ``tests/conformance/scenarios/`` (its name is the file's
stem)::

    description: ConfigMaps, every verb.
    namespaces: [ns]          # made (and labelled) before the steps, deleted after: ${ns}
    serviceAccounts: true     # also a `default` ServiceAccount in each (a bare apiserver has none)
    mode: AlwaysAllow         # or RBAC: the authorization mode the server must run
    versions: ["1.36"]        # only for these recorded versions (default: all)
    webhook: true             # start the recorder's HTTPS webhook: ${webhook_url}, ${webhook_ca}
    cleanup: [/apis/…/x]      # cluster-scoped objects deleted before and after (POSTed ones are found)
    steps:
      - POST: /api/v1/namespaces/${ns}/configmaps
        body: {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
        capture: {rv: metadata.resourceVersion}
      - GET: /api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${rv}
        watch: {events: 1}

A step is a method key (``GET``/``POST``/``PUT``/``PATCH``/``DELETE``) with its path (query
allowed) and optionally: ``query`` (a mapping appended to the path's), ``headers``,
``accept`` (``table``, ``discovery``, ``metadata``, ``protobuf`` or a media type), ``patch``
(``merge``, ``strategic``, ``json``, ``apply``: the PATCH content type), ``body`` (JSON,
sent as ``application/json`` unless ``contentType`` says otherwise) or ``raw`` (a string sent
as is), ``as`` (``admin``, the default; ``alice``; ``anonymous``; or a captured token's
variable), ``capture`` (``{var: path}`` over the answer, :mod:`.paths`), ``poll`` (repeat until
``{status: N}``, ``{path: p, equals: v}``, ``{path: p}`` (present), ``{absent: p}``,
``{contains: text}`` or ``{warning: text}`` holds; only the last answer is recorded), ``watch``
(``{events: N}``: read a watch stream until N events, the server's end or a few seconds),
``select`` (record only these paths of a JSON body), ``grep`` (record only the lines of a text
body that match this regular expression), ``pad`` (append this many spaces to the body: a
request too large), ``reviews`` (record the admission reviews
the webhook received during the request), ``record: false`` (run it, record nothing),
``expect`` (the status the author expects: the recorder warns otherwise) and ``name``.

Templates: ``${var}`` in a path, query value, header or string of a body is replaced by the
variable (namespaces, ``tok`` — this run's token, ``webhook_url``, ``webhook_ca``, captures); a
body string that is exactly ``${var}`` takes the captured JSON value itself. A body
``{$from: var, $merge: {...}}`` is a captured object with a JSON merge patch applied (how a
step PUTs back what it read).

Macros expand into steps when the file is loaded (so goldens show the expanded requests):
``crud`` (create a minimal object, get, list, Tables, the four patch types, replace, a watch
of it all, delete, get again) and ``invalid`` (one create per case: the object with the case
merged in). See :func:`_expand_crud` and :func:`_expand_invalid`.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml

#: libyaml's safe loader where PyYAML was built with it (10x faster than the pure one on these
#: files; every xdist worker loads them all to collect the replay tests), the same data.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
MODES = ("AlwaysAllow", "RBAC")
USERS = ("admin", "alice", "anonymous")

ACCEPT = {
    "table": "application/json;as=Table;v=v1;g=meta.k8s.io",
    "discovery": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
    "metadata": "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
    "metadatalist": "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
    "protobuf": "application/vnd.kubernetes.protobuf",
}
PATCH_TYPES = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
    "apply": "application/apply-patch+yaml",
}
_STEP_KEYS = {"name", "query", "headers", "accept", "patch", "body", "raw", "contentType", "as", "capture",
              "poll", "watch", "select", "grep", "pad", "reviews", "record", "expect", *METHODS}
_SCENARIO_KEYS = {"description", "namespaces", "serviceAccounts", "mode", "versions", "webhook", "cleanup", "steps"}
_VAR = re.compile(r"\$\{([A-Za-z0-9_.]+)\}")
#: Logical namespace names: no dash, so their order does not depend on the run token.
_NAMESPACE = re.compile(r"^[a-z][a-z0-9]{0,19}$")


@dataclass(frozen=True)
class Step:
    """One request of a scenario, still templated (``${var}``), as the golden file shows it."""

    index: int
    method: str
    path: str
    name: str = ""
    headers: dict[str, Any] = field(default_factory=dict)
    body: Any = None
    raw: str | None = None
    user: str = "admin"
    capture: dict[str, str] = field(default_factory=dict)
    poll: dict[str, Any] | None = None
    watch: dict[str, Any] | None = None
    select: list[str] | None = None
    grep: str | None = None
    pad: int = 0
    reviews: bool = False
    record: bool = True
    expect: int | None = None

    def describe(self) -> dict[str, Any]:
        """The request as a golden file records it (defaults left out)."""
        out: dict[str, Any] = {"method": self.method, "path": self.path}
        if self.name:
            out["name"] = self.name
        if self.user != "admin":
            out["as"] = self.user
        if self.headers:
            out["headers"] = dict(self.headers)
        if self.body is not None:
            out["body"] = self.body
        if self.raw is not None:
            out["raw"] = self.raw
        if self.pad:
            out["pad"] = self.pad
        for key in ("poll", "watch", "select", "grep"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    namespaces: tuple[str, ...]
    service_accounts: bool
    mode: str
    versions: tuple[str, ...] | None
    webhook: bool
    cleanup: tuple[str, ...]
    steps: tuple[Step, ...]

    def applies_to(self, version: str, mode: str | None = None) -> bool:
        return (self.versions is None or version in self.versions) and (mode is None or mode == self.mode)

    @property
    def recorded_steps(self) -> list[Step]:
        return [step for step in self.steps if step.record]


def load_all(directory: Path) -> list[Scenario]:
    """Every scenario of a directory, by name."""
    return [load(path) for path in sorted(directory.glob("*.yaml"))]


def load(path: Path) -> Scenario:
    data = yaml.load(path.read_text(), Loader=SAFE_LOADER) or {}
    name = path.stem
    unknown = set(data) - _SCENARIO_KEYS
    if unknown:
        raise ValueError(f"{name}: unknown keys {sorted(unknown)}")
    namespaces = tuple(data.get("namespaces", ["ns"]))
    for ns in namespaces:
        if not _NAMESPACE.match(ns):
            raise ValueError(f"{name}: namespace variable {ns!r} must be lowercase letters and digits")
    mode = data.get("mode", "AlwaysAllow")
    if mode not in MODES:
        raise ValueError(f"{name}: mode must be one of {MODES}")
    raw_steps: list[dict[str, Any]] = []
    for item in data.get("steps") or []:
        raw_steps.extend(_expand(name, item))
    steps = tuple(_step(name, index, item) for index, item in enumerate(raw_steps))
    versions = data.get("versions")
    return Scenario(name=name, description=str(data.get("description", "")).strip(), namespaces=namespaces,
                    service_accounts=bool(data.get("serviceAccounts", False)), mode=mode,
                    versions=tuple(str(v) for v in versions) if versions else None,
                    webhook=bool(data.get("webhook", False)), cleanup=tuple(data.get("cleanup") or ()),
                    steps=steps)


def _expand(name: str, item: dict[str, Any]) -> list[dict[str, Any]]:
    if "crud" in item:
        return _expand_crud(item["crud"])
    if "invalid" in item:
        return _expand_invalid(item["invalid"])
    return [item]


def _step(scenario: str, index: int, item: dict[str, Any]) -> Step:
    where = f"{scenario} step {index}"
    unknown = set(item) - _STEP_KEYS
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
    methods = [m for m in METHODS if m in item]
    if len(methods) != 1:
        raise ValueError(f"{where}: exactly one of {METHODS} is needed")
    method = methods[0]
    path = str(item[method])
    if item.get("query"):
        joined = "&".join(f"{k}={quote(str(v), safe='${}:/,')}" for k, v in item["query"].items())
        path += ("&" if "?" in path else "?") + joined
    headers: dict[str, Any] = {str(k): v if isinstance(v, list) else str(v) for k, v in (item.get("headers") or {}).items()}
    if "accept" in item:
        headers["Accept"] = ACCEPT.get(item["accept"], item["accept"])
    if "patch" in item:
        headers["Content-Type"] = PATCH_TYPES[item["patch"]]
    elif "contentType" in item:
        headers["Content-Type"] = item["contentType"]
    elif ("body" in item or "raw" in item) and "Content-Type" not in headers:
        headers["Content-Type"] = "application/json"
    if method == "PATCH" and "Content-Type" not in headers:
        raise ValueError(f"{where}: a PATCH needs `patch:` or a Content-Type")
    return Step(index=index, method=method, path=path, name=str(item.get("name", "")), headers=headers,
                body=item.get("body"), raw=item.get("raw"), user=str(item.get("as", "admin")),
                capture=dict(item.get("capture") or {}), poll=item.get("poll"), watch=item.get("watch"),
                select=item.get("select"), grep=item.get("grep"), pad=int(item.get("pad", 0)),
                reviews=bool(item.get("reviews", False)),
                record=bool(item.get("record", True)), expect=item.get("expect"))


# -- macros -----------------------------------------------------------------------------------

def _expand_crud(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The verbs of one resource on a minimal object, 13 exchanges:

    create (the minimal object: every default shows), get, list, get and list as Tables,
    merge / strategic / JSON patches and a server-side apply (each adds a label or
    annotation), a PUT of the applied object with one more label, a watch from the create
    (the five MODIFIED events), delete, and a get after it. ``skip`` names steps to leave
    out (``strategic``, ``apply``, ``table``, ``watch``, ``put``, …); ``as`` is the user."""
    collection = spec["path"]
    obj = spec["object"]
    item = f"{collection}/{obj['metadata']['name']}"
    skip = set(spec.get("skip") or ())
    user = {"as": spec["as"]} if "as" in spec else {}
    patches = [
        ("merge", {"metadata": {"labels": {"conformance": "merge"}}}),
        ("strategic", {"metadata": {"labels": {"conformance": "strategic"}}}),
        ("json", [{"op": "add", "path": "/metadata/annotations", "value": {"conformance": "json"}}]),
        ("apply", {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
                   "metadata": {"name": obj["metadata"]["name"], "labels": {"applied": "yes"}}}),
    ]
    # A cluster-scoped list would show whatever else the server holds: only this object.
    listed = collection if "/namespaces/" in collection else \
        f"{collection}?fieldSelector=metadata.name%3D{obj['metadata']['name']}"
    steps: list[dict[str, Any]] = [
        {"name": "create", "POST": collection, "body": obj, "capture": {"_created_rv": "metadata.resourceVersion"}},
        {"name": "get", "GET": item},
        {"name": "list", "GET": listed},
    ]
    if "table" not in skip:
        steps += [{"name": "get table", "GET": item, "accept": "table"},
                  {"name": "list table", "GET": listed, "accept": "table"}]
    events = 0
    for kind, body in patches:
        if kind in skip:
            continue
        path = item + ("?fieldManager=conformance" if kind == "apply" else "")
        steps.append({"name": f"patch {kind}", "PATCH": path, "patch": kind, "body": body, "capture": {"_obj": "."}})
        events += 1
    if "put" not in skip:
        steps.append({"name": "replace", "PUT": item,
                      "body": {"$from": "_obj", "$merge": {"metadata": {"labels": {"conformance": "put"}}}}})
        events += 1
    if "watch" not in skip:
        steps.append({"name": "watch since create", "GET": f"{collection}?watch=1&resourceVersion=${{_created_rv}}"
                      f"&fieldSelector=metadata.name%3D{obj['metadata']['name']}",
                      "watch": {"events": events}})
    if "delete" not in skip:
        steps += [{"name": "delete", "DELETE": item}, {"name": "get after delete", "GET": item}]
    return [{**step, **user} for step in steps]


def _expand_invalid(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """One create per case: ``object`` with the case JSON-merge-patched in (null deletes).
    Unless a case names the object itself (or ``keepName`` is set: a CRD's name is fixed by its
    spec), case N's object is named ``<name>N``, so a case the server accepts does not turn
    the next ones into AlreadyExists."""
    steps = []
    base = (spec["object"].get("metadata") or {}).get("name")
    for number, case in enumerate(spec["cases"], start=1):
        case = dict(case)
        name = case.pop("$name", "")
        if base and not spec.get("keepName") and "name" not in (case.get("metadata") or {}):
            case = merge_patch(case, {"metadata": {"name": f"{base}{number}"}})
        step = {"name": name or "invalid", "POST": spec["path"], "body": merge_patch(spec["object"], case)}
        if "as" in spec:
            step["as"] = spec["as"]
        if spec.get("query"):
            step["query"] = spec["query"]
        steps.append(step)
    return steps


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch (a copy; the inputs are left alone)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


# -- templates --------------------------------------------------------------------------------

def substitute(value: Any, variables: dict[str, Any]) -> Any:
    """``value`` with every ``${var}`` replaced (see the module docstring); KeyError names a
    variable nobody set."""
    if isinstance(value, str):
        whole = _VAR.fullmatch(value)
        if whole:
            return copy.deepcopy(_lookup(variables, whole.group(1)))
        return _VAR.sub(lambda m: _text(_lookup(variables, m.group(1))), value)
    if isinstance(value, list):
        return [substitute(item, variables) for item in value]
    if isinstance(value, dict):
        if "$from" in value:
            base = copy.deepcopy(_lookup(variables, value["$from"]))
            return merge_patch(base, substitute(value.get("$merge") or {}, variables))
        return {substitute(k, variables): substitute(v, variables) for k, v in value.items()}
    return value


def substitute_text(text: str, variables: dict[str, Any]) -> str:
    return _VAR.sub(lambda m: _text(_lookup(variables, m.group(1))), text)


def _lookup(variables: dict[str, Any], name: str) -> Any:
    if name not in variables:
        raise KeyError(f"template variable ${{{name}}} is not set (captured by an earlier step?)")
    return variables[name]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)
