"""``GET /metrics``: kube-apiserver's Prometheus metrics for what fakekube does.

The names, labels and help texts are upstream's (k8s.io/apiserver endpoints/metrics,
storage/etcd3/metrics, client-go's workqueue metrics), counted as upstream counts them:

* ``apiserver_request_total`` and ``apiserver_request_duration_seconds``: each request a
  resource handler answered (an unknown path, an unauthenticated or forbidden request
  is not), plus the health endpoints and the OpenAPI v3 documents, which upstream
  instruments too. The verb is upstream's reported verb (``LIST`` for a collection's GET,
  ``WATCH``, ``APPLY``, ``CONNECT`` for log/exec/attach/portforward/proxy), the scope its
  route's (``resource``, ``namespace``, ``cluster``); a watch is counted when it ends.
* ``apiserver_longrunning_requests``: the watches open right now.
* ``apiserver_current_inflight_requests``: requests being handled (watches apart), by kind.
* ``apiserver_storage_objects`` / ``apiserver_resource_objects``: the store's object
  counts, read when scraped.
* ``workqueue_depth`` / ``workqueue_adds_total``: the engine's controllers' queue
  (``name`` is the controller's name), read when scraped.
* ``etcd_request_duration_seconds``: each write to the store (``create``, ``update``,
  ``delete``, by group and resource), as the etcd3 store times its etcd calls. Reads are
  not counted: fakekube answers them from memory, as upstream's watch cache answers most.

Counting costs a request one dict update under a lock: the series are plain tuples kept
here, and the Prometheus text is made only by a scrape, through ``prometheus_client``'s
exposition (a collector over a per-app ``CollectorRegistry``: never the process-global
one, so two clusters in one process never share a series). Label values come only from
the registry's types and a fixed set of verbs, scopes and codes, so the series stay
bounded (docs/reliability.md).
"""

from __future__ import annotations

import bisect
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

if TYPE_CHECKING:
    from prometheus_client.core import HistogramMetricFamily

    from fakekube.api.registry import RegistryView, ResourceType
    from fakekube.api.http.request import RequestView
    from fakekube.api.http.routing import ResourcePath
    from fakekube.store.memory import Store

#: What the scrape answers with (kube-apiserver's, the Prometheus text format 0.0.4).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"
#: ``apiserver_request_duration_seconds``'s buckets (endpoints/metrics requestLatencies).
DURATION_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
                    10.0, 15.0, 20.0, 30.0, 45.0, 60.0)
#: Subresources upstream reports as ``CONNECT`` (endpoints/metrics validConnectRequests).
CONNECT_SUBRESOURCES = frozenset(("log", "exec", "portforward", "attach", "proxy"))
APPLY_PATCH = "application/apply-patch+yaml"
#: The user agents upstream reports as ``system_client`` (their first ``/``-part).
SYSTEM_CLIENTS = frozenset(("kube-apiserver", "kube-controller-manager", "kube-scheduler", "cluster-policy-controller"))
MUTATING = frozenset(("POST", "PUT", "PATCH", "DELETE"))

#: Labels of a request series, in upstream's (sorted) order.
REQUEST_LABELS = ("code", "component", "dry_run", "group", "resource", "scope", "subresource", "system_client",
                  "verb", "version")
DURATION_LABELS = ("component", "dry_run", "group", "resource", "scope", "subresource", "verb", "version")
LONGRUNNING_LABELS = ("component", "group", "resource", "scope", "subresource", "verb", "version")

HELP = {
    "apiserver_request_total": "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, "
                               "group, version, resource, scope, component, and HTTP response code.",
    "apiserver_request_duration_seconds": "[STABLE] Response latency distribution in seconds for each verb, dry run "
                                          "value, group, version, resource, subresource, scope and component.",
    "apiserver_longrunning_requests": "[STABLE] Gauge of all active long-running apiserver requests broken out by "
                                      "verb, group, version, resource, scope and component. Not all requests are "
                                      "tracked this way.",
    "apiserver_current_inflight_requests": "[STABLE] Maximal number of currently used inflight request limit of this "
                                           "apiserver per request kind in last second.",
    "apiserver_resource_objects": "[ALPHA] Number of stored objects at the time of last check split by kind. In case "
                                  "of a fetching error, the value will be -1.",
    "etcd_request_duration_seconds": "[ALPHA] Etcd request latency in seconds for each operation and object type.",
    "workqueue_adds_total": "[BETA] Total number of adds handled by workqueue",
    "workqueue_depth": "[BETA] Current depth of workqueue",
}
#: ``apiserver_storage_objects``: deprecated for ``apiserver_resource_objects`` from 1.34.
STORAGE_OBJECTS_HELP = ("[STABLE] Number of stored objects at the time of last check split by kind. In case of a "
                        "fetching error, the value will be -1.")
STORAGE_OBJECTS_DEPRECATED_HELP = ("[STABLE] (Deprecated since 1.34.0) [DEPRECATED, consider using "
                                   "apiserver_resource_objects instead] " + STORAGE_OBJECTS_HELP[len("[STABLE] "):])

#: A controller's queue as the engine reports it: (name, depth, adds so far).
QueueStat = tuple[str, int, int]


class RequestInfo:
    """What a request's series are labelled with, worked out once its route is known:
    ``series`` is its ``apiserver_request_duration_seconds`` labels then ``system_client``
    (the request counter's, but the code)."""

    __slots__ = ("series", "long_running")

    def __init__(self, series: tuple[str, ...], long_running: tuple[str, ...] | None = None) -> None:
        self.series = series
        #: The ``apiserver_longrunning_requests`` labels of a watch (None: not long-running).
        self.long_running = long_running


def resource_info(request: RequestView, rt: ResourceType, target: ResourcePath) -> RequestInfo:
    """Upstream's labels for a request its resource handlers serve (MonitorRequest)."""
    method = request.method
    query = request.query
    watch = target.legacy_watch or (method in ("GET", "HEAD") and query_watch(query))
    if rt.custom is not None:
        scope = _clean_scope(target, method, query)  # the CRD handler's: CleanScope
    elif target.name or method == "POST":
        scope = "resource"  # the route's (installer.go)
    elif target.namespace and rt.namespaced:
        scope = "namespace"
    else:
        scope = "cluster"
    verb = method
    if method in ("GET", "HEAD"):
        verb = "GET" if scope == "resource" else "LIST"
    if watch:
        verb = "WATCH"
    elif method == "PATCH" and request.headers.get("Content-Type") == APPLY_PATCH:
        verb = "APPLY"
    if target.subresource in CONNECT_SUBRESOURCES:
        verb = "CONNECT"
    dry_run = ""
    if "dryRun" in query:
        values = sorted(set(request.args.getlist("dryRun")))
        dry_run = "invalid" if any(value != "All" for value in values) else ",".join(values)
    long_running = None
    if watch:
        real_scope = _clean_scope(target, method, query)
        # RecordLongRunning: the verb from the method and the request's own scope alone (a
        # legacy ``/watch/`` path without ``?watch`` is a GET or LIST there).
        running_verb = "WATCH" if query_watch(query) else ("GET" if real_scope == "resource" else "LIST")
        long_running = ("apiserver", rt.group, target.plural, real_scope, target.subresource, running_verb,
                        target.version)
    # DURATION_LABELS' order, then system_client.
    return RequestInfo(("apiserver", dry_run, rt.group, target.plural, scope, target.subresource, verb, target.version,
                        _system_client(request)), long_running)


def path_info(request: RequestView, subresource: str, component: str) -> RequestInfo:
    """The labels of a non-resource handler upstream instruments (health, aggregated
    discovery, OpenAPI v3): the path as ``subresource``, no scope."""
    verb = "GET" if request.method == "HEAD" else request.method
    if query_watch(request.query) and verb == "GET":
        verb = "WATCH"
    return RequestInfo((component, "", "", "", "", subresource, verb, "", _system_client(request)))


def query_watch(query: dict[str, str]) -> bool:
    value = query.get("watch")
    return value is not None and value.lower() not in ("0", "false")


def _clean_scope(target: ResourcePath, method: str, query: dict[str, str]) -> str:
    """CleanScope over the request's RequestInfo: a list or watch naming one object by
    ``fieldSelector=metadata.name=`` is of that object."""
    if target.name or (method == "POST" and not target.subresource):
        return "resource"
    if method == "GET" and _selected_name(query.get("fieldSelector", "")):
        return "resource"
    if target.namespace:
        return "namespace"
    return "cluster"


def _selected_name(selector: str) -> bool:
    for term in selector.split(","):
        field, _, value = term.partition("=")
        if field.strip() == "metadata.name" and value.lstrip("=").strip():
            return True
    return False


def _system_client(request: RequestView) -> str:
    agent = request.environ.get("HTTP_USER_AGENT") or ""
    first, slash, _ = agent.partition("/")
    return first if slash and first in SYSTEM_CLIENTS else ""


class ServerMetrics:
    """One apiserver's series and their scrape.

    ``store`` and ``queues`` are asked for at scrape time (the cluster's current store and
    engine: a reset replaces both)."""

    def __init__(self, kubernetes_version: Callable[[], str], registry: Callable[[], RegistryView],
                 store: Callable[[], Store]) -> None:
        self._kubernetes_version = kubernetes_version
        self._registry = registry
        self._store = store
        #: The engine's queues; the cluster sets it (None: no controllers run here).
        self.queues: Callable[[], Iterable[QueueStat]] | None = None
        self._lock = threading.Lock()
        #: Per request series (:attr:`RequestInfo.series`): the count per HTTP code, the
        #: count per duration bucket (the last is +Inf) and the durations' sum, in a list.
        self._series: dict[tuple[str, ...], list[Any]] = {}
        self._long_running: dict[tuple[str, ...], int] = {}
        #: Requests being handled per kind (``apiserver_current_inflight_requests``).
        self._inflight = {"mutating": 0, "readOnly": 0}
        #: Store writes by (operation, group, resource): duration bucket counts and their sum.
        self._storage: dict[tuple[str, str, str], list[Any]] = {}

    def reset(self) -> None:
        """Forget the counts (a cluster reset: as if just started). Open watches stay counted
        until they end."""
        with self._lock:
            self._series.clear()
            self._storage.clear()

    def watch_store(self) -> None:
        """Have the current store report its writes here (a reset brings a new store:
        called on every request, it costs one comparison when nothing changed)."""
        store = self._store()
        if store.write_timing is None or store.write_timing[1] != self._stored:
            store.write_timing = (time.perf_counter, self._stored)

    def _stored(self, operation: str, resource: tuple[str, str], seconds: float) -> None:
        """One store write (called under the store's lock; takes only this one's)."""
        bucket = bisect.bisect_left(DURATION_BUCKETS, seconds)
        key = (operation, resource[0], resource[1])
        with self._lock:
            series = self._storage.get(key)
            if series is None:
                series = self._storage[key] = [[0] * (len(DURATION_BUCKETS) + 1), 0.0]
            series[0][bucket] += 1
            series[1] += seconds

    # -- counting ---------------------------------------------------------------
    def begin(self, method: str) -> str:
        """A request is being handled: its kind, for :meth:`end`."""
        self.watch_store()
        kind = "mutating" if method in MUTATING else "readOnly"
        with self._lock:
            self._inflight[kind] += 1
        return kind

    def end(self, kind: str) -> None:
        with self._lock:
            self._inflight[kind] -= 1

    def observe(self, info: RequestInfo, code: int, seconds: float) -> None:
        """Count an answered request (``code``) that took ``seconds``."""
        bucket = bisect.bisect_left(DURATION_BUCKETS, seconds)
        with self._lock:
            series = self._series.get(info.series)
            if series is None:
                series = self._series[info.series] = [{}, [0] * (len(DURATION_BUCKETS) + 1), 0.0]
            codes = series[0]
            codes[code] = codes.get(code, 0) + 1
            series[1][bucket] += 1
            series[2] += seconds

    def watch_started(self, info: RequestInfo) -> None:
        if info.long_running is not None:
            with self._lock:
                self._long_running[info.long_running] = self._long_running.get(info.long_running, 0) + 1

    def watch_ended(self, info: RequestInfo, seconds: float) -> None:
        if info.long_running is not None:
            with self._lock:
                self._long_running[info.long_running] -= 1
        self.observe(info, 200, seconds)

    # -- the scrape -------------------------------------------------------------
    def render(self) -> bytes:
        """The Prometheus text of every series, as ``GET /metrics`` answers (the scrape
        itself is among the requests in flight, as upstream's)."""
        from prometheus_client import CollectorRegistry, generate_latest  # loaded by the first scrape

        registry = CollectorRegistry(auto_describe=False)
        registry.register(_Collector(self))
        return generate_latest(registry)

    def families(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

        requests: dict[tuple[str, ...], int] = {}
        durations: dict[tuple[str, ...], tuple[list[int], float]] = {}
        with self._lock:
            for labels, (codes, buckets, total) in self._series.items():
                durations[labels[:-1]] = _add_durations(durations.get(labels[:-1]), buckets, total)
                component, dry_run, group, resource, scope, subresource, verb, version, client = labels
                for code, count in codes.items():
                    requests[(str(code), component, dry_run, group, resource, scope, subresource, client, verb,
                              version)] = count
            long_running = sorted(self._long_running.items())
            inflight = sorted(self._inflight.items())
            storage = sorted((key, (list(counts), total)) for key, (counts, total) in self._storage.items())
        # Read now (upstream's is the last second's high-water mark).
        family: Any = GaugeMetricFamily("apiserver_current_inflight_requests",
                                        HELP["apiserver_current_inflight_requests"], labels=("request_kind",))
        for kind, count in inflight:
            family.add_metric((kind,), max(count, 0))
        yield family
        family = GaugeMetricFamily("apiserver_longrunning_requests", HELP["apiserver_longrunning_requests"],
                                   labels=LONGRUNNING_LABELS)
        for labels, count in long_running:
            family.add_metric(labels, count)
        yield family
        family = HistogramMetricFamily("apiserver_request_duration_seconds",
                                       HELP["apiserver_request_duration_seconds"], labels=DURATION_LABELS)
        bounds = [f"{bound:g}" for bound in DURATION_BUCKETS] + ["+Inf"]
        _add_histograms(family, bounds, sorted(durations.items()))
        yield family
        family = CounterMetricFamily("apiserver_request_total", HELP["apiserver_request_total"],
                                     labels=REQUEST_LABELS)
        for labels, count in sorted(requests.items()):
            family.add_metric(labels, count)
        yield family
        yield from self._object_families()
        family = HistogramMetricFamily("etcd_request_duration_seconds", HELP["etcd_request_duration_seconds"],
                                       labels=("operation", "group", "resource"))
        _add_histograms(family, bounds, storage)
        yield family
        yield from self._queue_families()

    def _object_families(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        counts: dict[tuple[str, str], int] = {}
        store = self._store()
        for rt in self._registry():
            if rt.persisted and rt.stored_as is None and rt.key not in counts:
                counts[rt.key] = store.count(rt.key)
        ordered = sorted(counts.items())
        release = tuple(int(part) for part in self._kubernetes_version().split(".")[:2])
        if release >= (1, 34):
            family = GaugeMetricFamily("apiserver_resource_objects", HELP["apiserver_resource_objects"],
                                       labels=("group", "resource"))
            for (group, plural), count in ordered:
                family.add_metric((group, plural), count)
            yield family
        family = GaugeMetricFamily("apiserver_storage_objects",
                                   STORAGE_OBJECTS_DEPRECATED_HELP if release >= (1, 34) else STORAGE_OBJECTS_HELP,
                                   labels=("resource",))
        for resource, count in sorted((f"{plural}.{group}" if group else plural, count)
                                      for (group, plural), count in ordered):
            family.add_metric((resource,), count)
        yield family

    def _queue_families(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        stats = sorted(self.queues()) if self.queues is not None else []
        adds = CounterMetricFamily("workqueue_adds_total", HELP["workqueue_adds_total"], labels=("name",))
        depth = GaugeMetricFamily("workqueue_depth", HELP["workqueue_depth"], labels=("name",))
        for name, waiting, added in stats:
            adds.add_metric((name,), added)
            depth.add_metric((name,), waiting)
        yield adds
        yield depth


def _add_durations(into: tuple[list[int], float] | None, buckets: list[int],
                   total: float) -> tuple[list[int], float]:
    """One duration series' buckets and sum, added to another's (series apart only by
    ``system_client`` are one duration series)."""
    if into is None:
        return list(buckets), total
    return [mine + theirs for mine, theirs in zip(into[0], buckets)], into[1] + total


class _Collector:
    """The series of one :class:`ServerMetrics`, for a scrape's registry."""

    def __init__(self, metrics: ServerMetrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Any]:
        return self._metrics.families()


def _add_histograms(family: "HistogramMetricFamily", bounds: list[str],
                    series: Iterable[tuple[Any, tuple[list[int], float]]]) -> None:
    """Each series' per-bucket counts as Prometheus' cumulative buckets, with its sum."""
    for labels, (counts, total) in series:
        cumulative, buckets = 0, []
        for bound, count in zip(bounds, counts):
            cumulative += count
            buckets.append((bound, cumulative))
        family.add_metric(labels, buckets, total)
