"""A cluster's state as a text a person reads in a CI log when a test fails.

``Cluster.report()`` builds it; the pytest plugin attaches it to a failing test's report,
and anything else (a script, a notebook, a custom harness) may print it. It says what a
reader needs to understand the failure without re-running it — the seed and cluster time,
the last events, each node's conditions and taints, the pods per node, why each Pending
pod is not placed, the controllers' errors — and how to replay it. Every line fits
:data:`WIDTH` columns (long texts wrap under their first column, so a CI log never scrolls
sideways). It only reads: the cluster is the same after it.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any, Callable

from fakekube.clock.wire import format_rfc3339
from fakekube.objects.events import last_seen
from fakekube.objects.kinds import NODES, PODS
from fakekube.objects.pods import is_pod_ready

if TYPE_CHECKING:
    from fakekube.cluster.cluster import Cluster

Obj = dict[str, Any]

#: The widest line of the report (a CI log's usual width).
WIDTH = 100
#: How many of the newest events the report lists.
EVENTS_SHOWN = 20
#: How many controller errors the report lists (the rest are counted).
ERRORS_SHOWN = 10
#: How many pods the report lists per node (those not ready first; the rest are counted).
PODS_SHOWN_PER_NODE = 10
#: How many unscheduled Pending pods get the scheduler's explanation (each is one scheduling
#: cycle's worth of filtering; the rest are counted).
PENDING_EXPLAINED = 10
#: A row never takes more lines than this (long messages are cut with "…").
MAX_ROW_LINES = 4
UNSCHEDULED = "(not scheduled)"


def build_report(cluster: "Cluster", replay: str | None = None) -> str:
    """The whole report; ``replay`` is the command that runs the same test again (the pytest
    plugin's), shown last."""
    pods = cluster.store.list(PODS)[0]
    parts = [_header(cluster), _events(cluster.events()), _nodes(cluster.store.list(NODES)[0]), _pods_per_node(pods),
             _pending(pods, lambda pod: _why_pending(cluster, pod)), _errors(cluster)]
    if replay:
        parts.append(_section("replay", _wrap(replay, "  ")))
    return "\n".join(line for part in parts for line in part)


def build_real_report(header: str, events: list[Obj], nodes: list[Obj], pods: list[Obj], replay: str) -> str:
    """The same report for a test that ran on a real cluster (pytest_fakekube/remote.py), from
    what its API gives: no seed or cluster time, no controller errors; a Pending pod's reason
    is what the real scheduler wrote in its PodScheduled condition."""
    parts = [_wrap(header, ""), _events(events), _nodes(nodes), _pods_per_node(pods),
             _pending(pods, _recorded_reason, "the scheduler's last word"), _section("replay", _wrap(replay, "  "))]
    return "\n".join(line for part in parts for line in part)


def _header(cluster: "Cluster") -> list[str]:
    return _wrap(f"seed {cluster.config.seed}, cluster time {format_rfc3339(cluster.now)}, "
                 f"resourceVersion {cluster.store.resource_version}, "
                 f"nodes {cluster.store.count(NODES)}, pods {cluster.store.count(PODS)}", "")


def _section(title: str, lines: list[str]) -> list[str]:
    return [f"-- {title} " + "-" * max(0, WIDTH - len(title) - 4), *lines]


def _wrap(text: str, indent: str, hang: int = 4) -> list[str]:
    """``text`` as lines of at most WIDTH columns, continuation lines indented by ``hang``
    more than ``indent``, at most MAX_ROW_LINES of them."""
    lines = textwrap.wrap(" ".join(text.split()), WIDTH, initial_indent=indent,
                          subsequent_indent=indent + " " * hang, break_long_words=True,
                          break_on_hyphens=False, max_lines=MAX_ROW_LINES, placeholder=" …")
    return lines or [indent.rstrip()]


def _events(events: list[Obj]) -> list[str]:
    """The newest events, oldest first: time, object, reason, message (and ×count)."""
    shown = events[-EVENTS_SHOWN:]
    counted = f"last {len(shown)} of {len(events)}" if len(events) > len(shown) else f"{len(events)}"
    title = f"events ({counted}; N Normal, W Warning)"
    lines: list[str] = []
    for event in shown:
        involved = event.get("involvedObject") or {}
        where = f"{involved.get('kind', '?')} {_qualified(involved.get('namespace'), involved.get('name', '?'))}"
        when = last_seen(event) or "?"
        count = event.get("count") or 1
        repeat = f" (x{count})" if count > 1 else ""
        lines += _wrap(f"{_time(when)} {event.get('type', '')[:1]} {where} {event.get('reason', '')}{repeat}: "
                       f"{event.get('message', '')}", "  ", hang=12)
    return _section(title, lines or ["  none"])


def _time(stamp: str) -> str:
    """An RFC 3339 stamp's ``HH:MM:SS`` with the day when it is not the epoch's first."""
    text = str(stamp)
    return text[11:19] if text.startswith("2025-01-01") else text[:19].replace("T", " ")


def _qualified(namespace: str | None, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def _nodes(nodes: list[Obj]) -> list[str]:
    """Each node: its conditions (the unhealthy ones first named), unschedulable, taints."""
    lines: list[str] = []
    for node in nodes:
        spec, status = node.get("spec") or {}, node.get("status") or {}
        conditions = " ".join(f"{c.get('type')}={c.get('status')}" for c in status.get("conditions") or [])
        taints = ", ".join(_taint(t) for t in spec.get("taints") or []) or "none"
        cordoned = " unschedulable" if spec.get("unschedulable") else ""
        lines += _wrap(f"{node['metadata']['name']}{cordoned}: {conditions or 'no conditions'}; taints: {taints}",
                       "  ")
    return _section("nodes", lines or ["  none"])


def _taint(taint: Obj) -> str:
    value = f"={taint['value']}" if taint.get("value") else ""
    since = f" since {_time(taint['timeAdded'])}" if taint.get("timeAdded") else ""
    return f"{taint.get('key')}{value}:{taint.get('effect')}{since}"


def _pods_per_node(pods: list[Obj]) -> list[str]:
    """Pods grouped by node (unscheduled last), those not ready first: phase, readiness, restarts."""
    by_node: dict[str, list[Obj]] = {}
    for pod in pods:
        by_node.setdefault((pod.get("spec") or {}).get("nodeName") or UNSCHEDULED, []).append(pod)
    lines: list[str] = []
    for node in sorted(by_node, key=lambda name: (name == UNSCHEDULED, name)):
        lines.append(f"  {node}")
        held = sorted(by_node[node], key=is_pod_ready)  # stable: store order within each group
        for pod in held[:PODS_SHOWN_PER_NODE]:
            lines += _wrap(_pod_line(pod), "    ")
        if len(held) > PODS_SHOWN_PER_NODE:
            lines.append(f"    ... and {len(held) - PODS_SHOWN_PER_NODE} more, all ready"
                         if is_pod_ready(held[PODS_SHOWN_PER_NODE]) else
                         f"    ... and {len(held) - PODS_SHOWN_PER_NODE} more")
    return _section("pods per node", lines or ["  none"])


def _pod_line(pod: Obj) -> str:
    meta, status = pod["metadata"], pod.get("status") or {}
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for s in statuses if s.get("ready"))
    restarts = sum(int(s.get("restartCount") or 0) for s in statuses)
    waiting = [s["state"]["waiting"].get("reason", "") for s in statuses if "waiting" in (s.get("state") or {})]
    why = f" ({', '.join(sorted(set(waiting)))})" if any(waiting) else ""
    deleting = " terminating" if meta.get("deletionTimestamp") else ""
    return (f"{_qualified(meta.get('namespace'), meta['name'])} {status.get('phase', '?')}{why}{deleting} "
            f"ready={'yes' if is_pod_ready(pod) else 'no'} "
            f"(containers ready {ready}/{len(pod['spec'].get('containers') or [])}) restarts={restarts}")


def _pending(pods: list[Obj], why: Callable[[Obj], str], source: str = "the scheduler says why") -> list[str]:
    """Every Pending pod no node holds, with ``why`` it waits (the scheduler's explanation)."""
    lines: list[str] = []
    waiting = [pod for pod in pods if (pod.get("status") or {}).get("phase") == "Pending"
               and not (pod.get("spec") or {}).get("nodeName")]
    for pod in waiting[:PENDING_EXPLAINED]:
        meta = pod["metadata"]
        lines += _wrap(f"{_qualified(meta.get('namespace'), meta['name'])}: {why(pod)}", "  ")
    if len(waiting) > PENDING_EXPLAINED:
        lines.append(f"  ... and {len(waiting) - PENDING_EXPLAINED} more")
    return _section(f"pending pods no node holds ({source})", lines or ["  none"])


def _recorded_reason(pod: Obj) -> str:
    """The message of the pod's PodScheduled condition (what the scheduler last wrote)."""
    condition: Obj = next((c for c in (pod.get("status") or {}).get("conditions") or []
                           if c.get("type") == "PodScheduled"), {})
    return str(condition.get("message") or condition.get("reason") or "not tried yet")


def _why_pending(cluster: "Cluster", pod: Obj) -> str:
    """The scheduler's diagnosis now (as ``/fakekube/v1/scheduling/...``), or the pod's last
    FailedScheduling message when no scheduler runs here."""
    recorded = _recorded_reason(pod)
    scheduler = cluster.scheduler
    if scheduler is None or (pod.get("spec") or {}).get("schedulerName", scheduler.name) != scheduler.name:
        return recorded
    try:
        explained = cluster.explain_scheduling(pod)
    except Exception as error:  # a report never hides the failure it explains
        return f"{recorded} (explain failed: {error!r})"
    return str(explained.get("message") or recorded)


def _errors(cluster: "Cluster") -> list[str]:
    """The controllers' reconcile errors, first ones first (the later ones counted)."""
    engine = cluster.engine
    kept = list(engine.errors)
    lines = [line for error in kept[:ERRORS_SHOWN] for line in _wrap(str(error), "  ")]
    hidden = max(0, len(kept) - ERRORS_SHOWN) + engine.errors_dropped
    if hidden:
        lines.append(f"  ... and {hidden} more")
    return _section(f"controller errors ({len(kept) + engine.errors_dropped})", lines or ["  none"])

