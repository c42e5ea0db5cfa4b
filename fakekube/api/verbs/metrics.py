"""Reads of ``metrics.k8s.io``: NodeMetrics and PodMetrics as metrics-server answers them.

metrics-server lists nodes and pods from its informers, applies the label selector there
and the field selector to their metadata (``metadata.name``, and ``metadata.namespace``
for pods: any other field reads as empty, so it never errs), then looks up each one's
figures and leaves out those it has none for; items come sorted by namespace and name.
A GET of a node or pod that does not exist is the lister's 404 (``node "x" not found``,
``pods "x" not found``); of one without figures, metrics-server's own
(``podmetrics.metrics.k8s.io "default/x" not found``). The figures come from a
:class:`~fakekube.objects.metrics.UsageReader` the cluster plugs in (the simulated
kubelets); this module only shapes them for the wire (metrics-server's ``pkg/api``).
"""

from __future__ import annotations

import builtins
import functools

from datetime import datetime
from typing import Any, Mapping

from fakekube.api.machinery import errors
from fakekube.api.registry import ResourceType
from fakekube.api.selectors import FieldSelector, LabelSelector, parse_field_selector, parse_label_selector
from fakekube.api.types.metrics import METRICS_GROUP, NODE_METRICS
from fakekube.api.verbs.listing import ListOptions
from fakekube.clock import VirtualClock, format_go_duration, format_rfc3339, parse_time
from fakekube.objects.kinds import NODES, PODS
from fakekube.objects.metrics import ContainerUsage, NodeUsage, PodUsage, UsageReader
from fakekube.objects.quantity import format_binary_si, format_decimal_si
from fakekube.store import Store

Obj = dict[str, Any]

_NANOCORES = -9  # CPU figures are nanocores: 10^-9 cores
#: The resource client-go's generated node lister names in its NotFound (singular, sic).
_NODE_LISTER_RESOURCE = "node"


class MetricsReads:
    """GET and LIST of the metrics types, over the store's nodes and pods and a usage reader."""

    def __init__(self, store: Store, clock: VirtualClock) -> None:
        self._store = store
        self._clock = clock
        #: Where the figures come from; None: no figures at all (every read finds none).
        self.source: UsageReader | None = None

    def get(self, rt: ResourceType, namespace: str, name: str) -> Obj:
        if rt.kind == NODE_METRICS.kind:
            node = self._store.get(NODES, ("", name))
            if node is None:
                raise errors.not_found("", _NODE_LISTER_RESOURCE, name)  # the node lister's NotFound
            found = self._node_items([node])
            if not found:
                raise errors.not_found(METRICS_GROUP, "nodemetrics", name)
        else:
            pod = self._store.get(PODS, (namespace, name))
            if pod is None:
                raise errors.not_found("", "pods", name)  # the pod metadata lister's NotFound
            found = self._pod_items([pod])
            if not found:
                raise errors.not_found(METRICS_GROUP, "podmetrics", f"{namespace}/{name}")
        return {"kind": rt.kind, "apiVersion": rt.api_version, **found[0]}

    def list(self, rt: ResourceType, namespace: str, options: ListOptions) -> Obj:
        labels = parse_label_selector(options.label_selector)
        fields = parse_field_selector(options.field_selector)
        if rt.kind == NODE_METRICS.kind:
            nodes = _selected(self._store.list(NODES, "")[0], labels, fields, namespaced=False)
            items = self._node_items(nodes)
        else:
            pods = _selected(self._store.list(PODS, namespace)[0], labels, fields, namespaced=True)
            items = self._pod_items(pods)
        return {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": {}, "items": items}

    # -- figures to objects --------------------------------------------------------
    def _node_items(self, nodes: builtins.list[Obj]) -> builtins.list[Obj]:
        if self.source is None:
            return []
        registered = [(n["metadata"]["name"], _created(n)) for n in nodes]
        usage = self.source.node_usage(registered)
        now = format_rfc3339(self._clock.now())
        return [_node_metrics(node, usage[name], now)
                for node, (name, _) in sorted(zip(nodes, registered), key=lambda pair: pair[1][0])
                if name in usage]

    def _pod_items(self, pods: builtins.list[Obj]) -> builtins.list[Obj]:
        if self.source is None:
            return []
        keys = [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods]
        usage = self.source.pod_usage(keys)
        now = format_rfc3339(self._clock.now())
        return [_pod_metrics(pod, usage[key], now)
                for pod, key in sorted(zip(pods, keys), key=lambda pair: pair[1]) if key in usage]


def _selected(objects: list[Obj], labels: LabelSelector, fields: FieldSelector, namespaced: bool) -> list[Obj]:
    """metrics-server's filter: labels on the lister, then fields on the object's metadata."""
    chosen = []
    for obj in objects:
        meta = obj["metadata"]
        if not labels.matches(meta.get("labels")):
            continue
        if not fields.empty() and not fields.matches(_meta_fields(meta, namespaced)):
            continue
        chosen.append(obj)
    return chosen


def _meta_fields(meta: Mapping[str, Any], namespaced: bool) -> dict[str, str]:
    """apiserver's ``AddObjectMetaFieldsSet``: the name, and the namespace when namespaced."""
    found = {"metadata.name": str(meta.get("name") or "")}
    if namespaced:
        found["metadata.namespace"] = str(meta.get("namespace") or "")
    return found


def _created(obj: Obj) -> datetime:
    created = parse_time(obj["metadata"].get("creationTimestamp"))
    assert created is not None, "every stored object has a creationTimestamp"
    return created


def _metadata(source: Obj, now: str, namespaced: bool) -> Obj:
    """metrics-server's ObjectMeta: name (namespace), created now, the object's labels."""
    meta = source["metadata"]
    result: Obj = {"name": meta["name"]}
    if namespaced:
        result["namespace"] = meta["namespace"]
    result["creationTimestamp"] = now
    if meta.get("labels"):
        result["labels"] = dict(meta["labels"])
    return result


def _node_metrics(node: Obj, usage: NodeUsage, now: str) -> Obj:
    return {"metadata": _metadata(node, now, namespaced=False), **_time_info(usage),
            "usage": _usage(usage.cpu_nanocores, usage.memory_bytes)}


def _pod_metrics(pod: Obj, usage: PodUsage, now: str) -> Obj:
    return {"metadata": _metadata(pod, now, namespaced=True), **_time_info(usage),
            "containers": [_container(c) for c in usage.containers]}


def _container(usage: ContainerUsage) -> Obj:
    return {"name": usage.name, "usage": _usage(usage.cpu_nanocores, usage.memory_bytes)}


def _time_info(usage: NodeUsage | PodUsage) -> Obj:
    timestamp, window = _time_texts(usage.timestamp, usage.window_s)
    return {"timestamp": timestamp, "window": window}


def _usage(cpu_nanocores: int, memory_bytes: int) -> Obj:
    """A ResourceList as metrics-server builds it: CPU DecimalSI in nanocores, memory BinarySI."""
    cpu, memory = _usage_texts(cpu_nanocores, memory_bytes)
    return {"cpu": cpu, "memory": memory}


#: Distinct figures (and scrape instants) whose strings are kept: a list repeats a few many times.
_TEXT_CACHE_SIZE = 4096


@functools.lru_cache(maxsize=_TEXT_CACHE_SIZE)
def _time_texts(timestamp: datetime, window_s: float) -> tuple[str, str]:
    return format_rfc3339(timestamp), format_go_duration(round(window_s * 1e9))


@functools.lru_cache(maxsize=_TEXT_CACHE_SIZE)
def _usage_texts(cpu_nanocores: int, memory_bytes: int) -> tuple[str, str]:
    return format_decimal_si(cpu_nanocores, _NANOCORES), format_binary_si(memory_bytes)
