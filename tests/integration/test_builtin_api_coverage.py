"""fakekube's discovery against the list a real apiserver of each supported release serves.

The expected list is built from ``lightkube-models`` 1.36 (generated from upstream's
OpenAPI: every group/version/resource, its scope, verbs and subresources) plus what
OpenAPI does not carry and upstream's REST storage declares in code: short names,
categories, the connect subresources (exec, attach, port-forward, proxy) and the
verbs discovery lists where they differ from OpenAPI's paths. Only APIs an apiserver
enables by default are expected (GA versions; alpha and beta ones are off). An older
release serves 1.36's list less :data:`ADDED_IN` (measured at a real kube-apiserver
emulating 1.33, 1.34 and 1.35: nothing 1.33 serves is gone by 1.36).

:data:`NOT_SERVED_YET` names, explicitly, what fakekube still lacks. The test fails
when a served resource goes missing, when anything served differs from upstream, and
when something listed there starts being served (then delete it from the list).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import urllib.request
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from fakekube import Cluster

#: The release each resource first appears in, where that is after 1.33 (the references'
#: /apis: resource.k8s.io/v1 and VolumeAttributesClass are GA in 1.34, MutatingAdmissionPolicy
#: in 1.36). Written here from the measurement, apart from fakekube's own table.
ADDED_IN: dict[str, str] = {
    **{f"resource.k8s.io/v1/{r}": "1.34"
       for r in ("deviceclasses", "resourceclaims", "resourceclaimtemplates", "resourceslices")},
    "storage.k8s.io/v1/volumeattributesclasses": "1.34",
    "admissionregistration.k8s.io/v1/mutatingadmissionpolicies": "1.36",
    "admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings": "1.36",
}
RELEASES = ("1.33", "1.34", "1.35", "1.36")

#: Resources and subresources an apiserver serves that fakekube does not yet
#: ("group/version/resource[/subresource]", core group as "v1/..."). Issue 10.
NOT_SERVED_YET = frozenset({
})

#: Short names by (group, resource), from each type's REST storage (ShortNames()).
SHORT_NAMES: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "componentstatuses"): ("cs",), ("", "configmaps"): ("cm",), ("", "endpoints"): ("ep",),
    ("", "events"): ("ev",), ("", "limitranges"): ("limits",), ("", "namespaces"): ("ns",), ("", "nodes"): ("no",),
    ("", "persistentvolumeclaims"): ("pvc",), ("", "persistentvolumes"): ("pv",), ("", "pods"): ("po",),
    ("", "replicationcontrollers"): ("rc",), ("", "resourcequotas"): ("quota",), ("", "serviceaccounts"): ("sa",),
    ("", "services"): ("svc",),
    ("apiextensions.k8s.io", "customresourcedefinitions"): ("crd", "crds"),
    ("apps", "daemonsets"): ("ds",), ("apps", "deployments"): ("deploy",), ("apps", "replicasets"): ("rs",),
    ("apps", "statefulsets"): ("sts",),
    ("autoscaling", "horizontalpodautoscalers"): ("hpa",),
    ("batch", "cronjobs"): ("cj",),
    ("certificates.k8s.io", "certificatesigningrequests"): ("csr",),
    ("events.k8s.io", "events"): ("ev",),
    ("networking.k8s.io", "ingresses"): ("ing",), ("networking.k8s.io", "ipaddresses"): ("ip",),
    ("networking.k8s.io", "networkpolicies"): ("netpol",),
    ("policy", "poddisruptionbudgets"): ("pdb",),
    ("scheduling.k8s.io", "priorityclasses"): ("pc",),
    ("storage.k8s.io", "storageclasses"): ("sc",), ("storage.k8s.io", "volumeattributesclasses"): ("vac",),
}

#: Categories by (group, resource), from each type's REST storage (Categories()).
_ALL = ("all",)
_EXT = ("api-extensions",)
CATEGORIES: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "pods"): _ALL, ("", "replicationcontrollers"): _ALL, ("", "services"): _ALL,
    ("apps", "daemonsets"): _ALL, ("apps", "deployments"): _ALL, ("apps", "replicasets"): _ALL,
    ("apps", "statefulsets"): _ALL, ("autoscaling", "horizontalpodautoscalers"): _ALL,
    ("batch", "cronjobs"): _ALL, ("batch", "jobs"): _ALL,
    ("admissionregistration.k8s.io", "mutatingadmissionpolicies"): _EXT,
    ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings"): _EXT,
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): _EXT,
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"): _EXT,
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"): _EXT,
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): _EXT,
    ("apiextensions.k8s.io", "customresourcedefinitions"): _EXT,
    ("apiregistration.k8s.io", "apiservices"): _EXT,
}

#: Verbs discovery lists where OpenAPI's paths say otherwise: ComponentStatus storage
#: implements no Watcher, so discovery has no watch (OpenAPI still has the path).
VERB_OVERRIDES: dict[tuple[str, str], tuple[str, ...]] = {("", "componentstatuses"): ("get", "list")}

_PROXY_VERBS = ("create", "delete", "get", "patch", "update")
#: The connect subresources (no model in OpenAPI): name → (kind, verbs).
CONNECT_SUBRESOURCES: dict[tuple[str, str], dict[str, tuple[str, tuple[str, ...]]]] = {
    ("", "pods"): {"attach": ("PodAttachOptions", ("create", "get")), "exec": ("PodExecOptions", ("create", "get")),
                   "portforward": ("PodPortForwardOptions", ("create", "get")),
                   "proxy": ("PodProxyOptions", _PROXY_VERBS)},
    ("", "nodes"): {"proxy": ("NodeProxyOptions", _PROXY_VERBS)},
    ("", "services"): {"proxy": ("ServiceProxyOptions", _PROXY_VERBS)},
}

_HTTP_VERBS = {"post": "create", "put": "update"}
_SKIPPED_VERBS = {"global_list", "global_watch"}  # lightkube's all-namespaces list and watch


class Resource(NamedTuple):
    """What discovery says of one resource, in a form both sides can be compared in."""

    kind: str
    singular: str
    namespaced: bool
    verbs: tuple[str, ...]
    short_names: tuple[str, ...]
    categories: tuple[str, ...]
    #: subresource name → (group/version/kind it answers with, sorted verbs)
    subresources: tuple[tuple[str, str, tuple[str, ...]], ...]


def _verbs(raw: list[str]) -> tuple[str, ...]:
    return tuple(sorted(_HTTP_VERBS.get(v, v) for v in raw if v not in _SKIPPED_VERBS))


def _lightkube_entries() -> list[dict[str, Any]]:
    """Every ``_api_info`` of lightkube-models' GA modules, read from its source.

    Parsed rather than imported: the classes import ``lightkube`` itself, which fakekube
    does not need; the declarations are plain literals."""
    spec = importlib.util.find_spec("lightkube.resources")
    assert spec is not None and spec.submodule_search_locations, "lightkube-models is a test dependency"
    entries = []
    for path in sorted(Path(next(iter(spec.submodule_search_locations))).glob("*_v[0-9].py")):
        for cls in ast.parse(path.read_text()).body:
            if not isinstance(cls, ast.ClassDef):
                continue
            base = ast.unparse(cls.bases[0])
            for stmt in cls.body:
                if isinstance(stmt, ast.Assign) and ast.unparse(stmt.targets[0]) == "_api_info":
                    assert isinstance(stmt.value, ast.Call)
                    kw = {k.arg: k.value for k in stmt.value.keywords}
                    assert isinstance(kw["resource"], ast.Call)
                    group, version, kind = (ast.literal_eval(a) for a in kw["resource"].args)
                    entries.append({
                        "group": group, "version": version, "kind": kind,
                        "plural": ast.literal_eval(kw["plural"]), "verbs": ast.literal_eval(kw["verbs"]),
                        "action": ast.literal_eval(kw["action"]) if "action" in kw else None,
                        "parent": [ast.literal_eval(a) for a in getattr(kw["parent"], "args")]
                        if "parent" in kw else None,
                        "namespaced": base.startswith("res.Namespaced"),
                    })
    return entries


def upstream_resources(release: str = "1.36") -> dict[str, Resource]:
    """"group/version/resource" → Resource, as ``release``'s apiserver's discovery lists it."""
    entries = _lightkube_entries()
    subs: dict[tuple[str, str, str], list[tuple[str, str, tuple[str, ...]]]] = {}
    for e in entries:
        if e["action"] is not None:
            group, version, _ = e["parent"] if e["parent"] else (e["group"], e["version"], e["kind"])
            answer = f"{e['group']}/{e['version']}/{e['kind']}".lstrip("/")
            subs.setdefault((group, version, e["plural"]), []).append((e["action"], answer, _verbs(e["verbs"])))
    result = {}
    for e in entries:
        if e["action"] is not None:
            continue
        group, version, plural = e["group"], e["version"], e["plural"]
        gv = f"{group}/{version}" if group else version
        own = list(subs.get((group, version, plural), []))
        own += [(name, f"{gv}/{kind}", tuple(sorted(verbs)))
                for name, (kind, verbs) in CONNECT_SUBRESOURCES.get((group, plural), {}).items()]
        result[f"{gv}/{plural}"] = Resource(
            kind=e["kind"], singular=e["kind"].lower(), namespaced=e["namespaced"],
            verbs=tuple(sorted(VERB_OVERRIDES.get((group, plural), _verbs(e["verbs"])))),
            short_names=SHORT_NAMES.get((group, plural), ()), categories=CATEGORIES.get((group, plural), ()),
            subresources=tuple(sorted(own)),
        )
    return {key: resource for key, resource in result.items() if _minor(ADDED_IN.get(key, "1.33")) <= _minor(release)}


def _minor(release: str) -> int:
    return int(release.split(".")[1])


def _get(cluster: Cluster, path: str) -> Any:
    with urllib.request.urlopen(cluster.url + path, timeout=30) as response:
        return json.loads(response.read())


def served_resources(cluster: Cluster) -> dict[str, Resource]:
    """"group/version/resource" → Resource, from fakekube's (legacy) discovery over HTTP."""
    lists = [_get(cluster, "/api/v1")]
    for group in _get(cluster, "/apis")["groups"]:
        lists += [_get(cluster, f"/apis/{v['groupVersion']}") for v in group["versions"]]
    result = {}
    for doc in lists:
        gv = doc["groupVersion"]
        entries = doc["resources"]
        for entry in (e for e in entries if "/" not in e["name"]):
            subs = []
            for sub in (e for e in entries if e["name"].startswith(entry["name"] + "/")):
                answer_gv = f"{sub['group']}/{sub['version']}".lstrip("/") if "group" in sub else gv
                subs.append((sub["name"].split("/", 1)[1], f"{answer_gv}/{sub['kind']}", tuple(sorted(sub["verbs"]))))
            result[f"{gv}/{entry['name']}"] = Resource(
                kind=entry["kind"], singular=entry["singularName"], namespaced=entry["namespaced"],
                verbs=tuple(sorted(entry["verbs"])), short_names=tuple(entry.get("shortNames", ())),
                categories=tuple(entry.get("categories", ())), subresources=tuple(sorted(subs)),
            )
    return result


def _without_missing(key: str, resource: Resource) -> Resource:
    subs = tuple(s for s in resource.subresources if f"{key}/{s[0]}" not in NOT_SERVED_YET)
    return resource._replace(subresources=subs)


def test_the_expected_list_is_upstreams() -> None:
    """A sanity check of the expected list itself, so a change of lightkube-models shows."""
    upstream = upstream_resources()
    assert len(upstream) == 68
    assert [len(upstream_resources(release)) for release in RELEASES] == [61, 66, 66, 68]
    assert set(ADDED_IN) <= set(upstream)
    assert upstream["v1/pods"].subresources[0] == ("attach", "v1/PodAttachOptions", ("create", "get"))
    assert ("scale", "autoscaling/v1/Scale", ("get", "patch", "update")) in upstream["apps/v1/deployments"].subresources
    assert not any("alpha" in key or "beta" in key for key in upstream)
    assert NOT_SERVED_YET <= set(upstream) | {f"{k}/{s[0]}" for k, r in upstream.items() for s in r.subresources}


@pytest.mark.parametrize("release", RELEASES)
def test_discovery_serves_what_the_releases_apiserver_serves(release: str) -> None:
    upstream = upstream_resources(release)
    with Cluster(kubernetes_version=release) as cluster:
        served = served_resources(cluster)
    expected = {k: _without_missing(k, r) for k, r in upstream.items() if k not in NOT_SERVED_YET}
    missing = sorted(set(expected) - set(served))
    assert not missing, f"served by {release} but not by fakekube (and not in NOT_SERVED_YET): {missing}"
    extra = sorted(set(served) - set(upstream))
    assert not extra, f"served by fakekube but not by a {release} apiserver: {extra}"
    differ = {k: (served[k], expected[k]) for k in expected if served.get(k) != expected[k]}
    assert not differ, "served (left) differs from upstream (right):\n" + "\n".join(
        f"{k}:\n  {s}\n  {u}" for k, (s, u) in differ.items())
    now_served = sorted(k for k in NOT_SERVED_YET if k in served
                        or any(k == f"{r}/{s[0]}" for r, res in served.items() for s in res.subresources))
    assert not now_served, f"served now; delete from NOT_SERVED_YET: {now_served}"
