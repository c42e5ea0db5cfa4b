"""The cluster's story over virtual time as one self-contained HTML page with an SVG inside.

``Cluster.timeline(path)`` writes it; the pytest plugin writes one for a failing test and
``fakekube serve`` answers it at ``GET /fakekube/v1/timeline``. Nodes are lanes; each pod
is a bar on its node's lane from when it was bound (or created, if never bound) to when it
ended (deleted, finished) or now, coloured by phase, with the part where it was Ready
drawn over it; node condition changes, taints, evictions, rollouts and every Event are
marks whose SVG ``<title>`` shows on hover. No script, font or link leaves the file.

Nothing records history for it: it is derived from what the cluster keeps anyway — the
pods and nodes (bind, start, readiness and termination times, taints' ``timeAdded``,
conditions' ``lastTransitionTime``), the Events (kept for the event TTL, an hour by
default), and the deleted pods still in the store's bounded change log (``history_limit``
changes, docs/reliability.md). A pod deleted before the log's horizon is drawn only
through its Events. The page is XHTML-clean (it parses as XML), so tests read it with
``xml.etree``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from html import escape
from typing import TYPE_CHECKING, Any, NamedTuple

from fakekube.clock.wire import format_rfc3339, parse_time
from fakekube.objects.events import last_seen
from fakekube.objects.kinds import NODES, PODS
from fakekube.objects.pods import is_pod_ready

if TYPE_CHECKING:
    from fakekube.cluster.cluster import Cluster

Obj = dict[str, Any]

#: Pixels: the lane names' column, the plot's width, a pod row's height, a lane header's height.
LABEL_PX, PLOT_PX, ROW_PX, HEADER_PX = 180, 960, 14, 18
#: The lane of pods never bound to a node, and of events about no node's pod.
UNSCHEDULED_LANE, CLUSTER_LANE = "(not scheduled)", "cluster"
#: Event reasons drawn as evictions (the taint manager's, the kubelet's, preemption's; a plain stop, "Killing", is not one).
EVICTION_REASONS = frozenset({"TaintManagerEviction", "Evicted", "Preempted", "Preempting"})
#: Event reasons drawn as rollout steps (the Deployment and ReplicaSet controllers').
ROLLOUT_REASONS = frozenset({"ScalingReplicaSet", "SuccessfulCreate", "SuccessfulDelete"})
PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
#: The most Events drawn (the newest): a page stays a few MB however chatty the cluster was.
MAX_EVENT_MARKS = 5_000

STYLE = """
body{font:13px sans-serif;margin:16px;color:#222}
.lane-name{font-weight:bold}.pod-name{font-size:10px;fill:#333}.axis{font-size:10px;fill:#555}
.grid{stroke:#eee}.lane-line{stroke:#bbb}
.pod{stroke:#555;stroke-width:.5}.phase-Pending{fill:#f6d186}.phase-Running{fill:#a8d5f2}
.phase-Succeeded{fill:#c8c8c8}.phase-Failed{fill:#ef8a8a}.phase-Unknown{fill:#999}
.ready-span{fill:#4caf50;opacity:.85}.deleted{stroke-dasharray:3 2}
.taint{fill:#d9534f;opacity:.18}.condition{stroke:#8e44ad;stroke-width:2}
.event{fill:#777}.event.Warning{fill:#e67e22}.event.rollout{fill:#2c7be5}.event.eviction{fill:#c0392b}
.deletion{stroke:#222;stroke-width:2}
.legend rect{stroke:#555;stroke-width:.5}
"""


class PodBar(NamedTuple):
    """One pod's bar: where, from when to when, and how it is coloured."""

    key: str  # namespace/name
    uid: str
    node: str
    start: datetime
    end: datetime
    phase: str
    ready_spans: tuple[tuple[datetime, datetime], ...]
    ready_at_end: bool  # its last state's readiness
    deleted: bool
    deletion_requested: datetime | None


def build_timeline(cluster: "Cluster") -> str:
    """The page for ``cluster`` as it is now."""
    pods = cluster.store.list(PODS)[0]
    deleted, readiness = _pod_history(cluster, {p["metadata"].get("uid") for p in pods})
    nodes = cluster.store.list(NODES)[0]
    now = cluster.now
    bars = [_bar(pod, now, False, readiness) for pod in pods] + [_bar(pod, now, True, readiness) for pod in deleted]
    all_events = cluster.events()
    events = all_events[-MAX_EVENT_MARKS:]
    start = min([_created(obj, now) for obj in (*nodes, *pods, *deleted)] + [_event_time(e, now) for e in events]
                + [now])
    title = f"fakekube timeline — seed {cluster.config.seed}, {format_rfc3339(start)} to {format_rfc3339(now)}"
    if len(all_events) > len(events):
        title += f" (the newest {len(events)} of {len(all_events)} events)"
    svg = _Svg(start, max(now, start + timedelta(seconds=1)))
    return _page(title, svg.render(nodes, bars, events))


def _pod_history(cluster: "Cluster", live_uids: set[str | None]) -> tuple[list[Obj], dict[str, set[tuple[datetime, bool]]]]:
    """From the store's change log: the last state of each pod deleted within it (in deletion
    order), and each pod's Ready transitions (uid → {(when, ready)}) it saw."""
    history = cluster.store.history
    gone: dict[str, Obj] = {}
    readiness: dict[str, set[tuple[datetime, bool]]] = {}
    for change in history.since(history.horizon_rv()):
        if change.group != "" or change.resource != "pods":
            continue
        uid = change.obj["metadata"].get("uid", "")
        _add_ready(readiness, uid, change.obj)
        if change.type == "DELETED" and uid not in live_uids:
            gone[uid] = change.obj
    return list(gone.values()), readiness


def _add_ready(readiness: dict[str, set[tuple[datetime, bool]]], uid: str, pod: Obj) -> None:
    ready = _condition(pod, "Ready")
    changed = parse_time(ready.get("lastTransitionTime"))
    if changed is not None:
        readiness.setdefault(uid, set()).add((changed, ready.get("status") == "True"))


def _spans(transitions: set[tuple[datetime, bool]], end: datetime) -> tuple[tuple[datetime, datetime], ...]:
    """The intervals a pod was Ready, from its Ready transitions (the last one lasts to ``end``)."""
    spans: list[tuple[datetime, datetime]] = []
    since: datetime | None = None
    for moment, ready in sorted(transitions):
        if ready and since is None:
            since = moment
        elif not ready and since is not None:
            spans.append((since, moment))
            since = None
    if since is not None and since <= end:
        spans.append((since, end))
    return tuple(spans)


def _created(obj: Obj, now: datetime) -> datetime:
    return parse_time(obj["metadata"].get("creationTimestamp")) or now


def _event_time(event: Obj, now: datetime) -> datetime:
    return parse_time(last_seen(event)) or now


def _condition(obj: Obj, kind: str) -> Obj:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == kind), {})


def _bar(pod: Obj, now: datetime, deleted: bool, readiness: dict[str, set[tuple[datetime, bool]]]) -> PodBar:
    """A pod's bar from its timestamps: bound (PodScheduled) or created → deleted, finished or now."""
    meta, status = pod["metadata"], pod.get("status") or {}
    node = (pod.get("spec") or {}).get("nodeName") or UNSCHEDULED_LANE
    scheduled = _condition(pod, "PodScheduled")
    created = _created(pod, now)
    start = (parse_time(scheduled.get("lastTransitionTime")) if scheduled.get("status") == "True" else None) or created
    finished = [parse_time(s["state"]["terminated"].get("finishedAt"))
                for s in status.get("containerStatuses") or [] if "terminated" in (s.get("state") or {})]
    ends = [t for t in finished if t is not None]
    phase = status.get("phase") or "Pending"
    if deleted:
        end = parse_time(meta.get("deletionTimestamp")) or max(ends, default=now)
    elif phase in ("Succeeded", "Failed") and ends:
        end = max(ends)
    else:
        end = now
    transitions = set(readiness.get(meta.get("uid", ""), ()))
    _add_ready({"": transitions}, "", pod)
    if not is_pod_ready(pod) and not deleted:  # not ready now, whatever the condition's time says
        transitions.add((end, False))
    return PodBar(f"{meta.get('namespace', '')}/{meta['name']}", meta.get("uid", ""), node, start,
                  max(end, start), phase if phase in PHASES else "Unknown",
                  _spans(transitions, max(end, start)), is_pod_ready(pod), deleted,
                  parse_time(meta.get("deletionTimestamp")))


class _Svg:
    """Lays lanes out top to bottom and maps cluster time to x."""

    def __init__(self, start: datetime, end: datetime) -> None:
        self.start, self.span_s = start, (end - start).total_seconds()
        self.parts: list[str] = []
        self.y = 24

    def x(self, moment: datetime) -> float:
        offset = min(max((moment - self.start).total_seconds(), 0.0), self.span_s)
        return round(LABEL_PX + PLOT_PX * offset / self.span_s, 1)

    def render(self, nodes: list[Obj], bars: list[PodBar], events: list[Obj]) -> str:
        lanes = [n["metadata"]["name"] for n in nodes]
        lanes += sorted({b.node for b in bars} - set(lanes), key=lambda n: (n == UNSCHEDULED_LANE, n))
        rows = {lane: [b for b in bars if b.node == lane] for lane in lanes}
        by_pod = {b.key: b for b in bars}
        marks = _place_events(events, lanes, by_pod)
        self._lane(CLUSTER_LANE, [], marks.get(CLUSTER_LANE, []), None)
        for node in nodes:
            name = node["metadata"]["name"]
            self._lane(name, rows[name], marks.get(name, []), node)
        for lane in lanes[len(nodes):]:
            self._lane(lane, rows[lane], marks.get(lane, []), None)
        height = self.y + 10
        axis = self._axis(height)
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{LABEL_PX + PLOT_PX + 20}" height="{height}" '
                f'viewBox="0 0 {LABEL_PX + PLOT_PX + 20} {height}">{axis}{"".join(self.parts)}</svg>')

    def _axis(self, height: int) -> str:
        ticks = []
        for i in range(9):
            moment = self.start + timedelta(seconds=self.span_s * i / 8)
            x = self.x(moment)
            label = format_rfc3339(moment)[11:19] if self.span_s < 86400 else format_rfc3339(moment)[5:16]
            ticks.append(f'<line class="grid" x1="{x}" y1="14" x2="{x}" y2="{height}"/>'
                         f'<text class="axis" x="{x}" y="10" text-anchor="middle">{label}</text>')
        return "".join(ticks)

    def _lane(self, name: str, bars: list[PodBar], marks: list[tuple[Obj, str, str | None]], node: Obj | None) -> None:
        """A lane: its header (taints, condition changes, its events) then one row per pod."""
        top = self.y
        rows = {bar.key: top + HEADER_PX + i * ROW_PX for i, bar in enumerate(bars)}
        bottom = top + HEADER_PX + len(bars) * ROW_PX + 4
        self.parts.append(f'<g class="lane" data-lane="{escape(name)}">'
                          f'<line class="lane-line" x1="0" y1="{top}" x2="{LABEL_PX + PLOT_PX}" y2="{top}"/>'
                          f'<text class="lane-name" x="4" y="{top + 13}">{escape(name)}</text>')
        if node is not None:
            self._node_marks(node, top)
        for i, bar in enumerate(bars):
            self._pod(bar, top + HEADER_PX + i * ROW_PX)
        for event, cls, pod in marks:
            self._event(event, cls, rows.get(pod, top + 3) if pod else top + 3)
        self.parts.append("</g>")
        self.y = bottom

    def _node_marks(self, node: Obj, top: int) -> None:
        created = _created(node, self.start)
        for taint in (node.get("spec") or {}).get("taints") or []:
            since = parse_time(taint.get("timeAdded")) or created
            text = f"taint {taint.get('key')}{'=' + taint['value'] if taint.get('value') else ''}:{taint.get('effect')}"
            end = self.start + timedelta(seconds=self.span_s)
            self.parts.append(f'<rect class="taint" x="{self.x(since)}" y="{top + 1}" '
                              f'width="{round(self.x(end) - self.x(since), 1)}" height="{HEADER_PX - 2}">'
                              f'<title>{escape(text)} since {format_rfc3339(since)}</title></rect>')
        for condition in (node.get("status") or {}).get("conditions") or []:
            changed = parse_time(condition.get("lastTransitionTime"))
            if changed is None or changed <= created:
                continue
            x = self.x(changed)
            text = (f"{condition.get('type')}={condition.get('status')} at {format_rfc3339(changed)}: "
                    f"{condition.get('reason', '')} {condition.get('message', '')}")
            self.parts.append(f'<line class="condition" x1="{x}" y1="{top + 1}" x2="{x}" y2="{top + HEADER_PX - 1}">'
                              f'<title>{escape(text)}</title></line>')

    def _pod(self, bar: PodBar, y: int) -> None:
        x0, x1 = self.x(bar.start), self.x(bar.end)
        readiness = "ready" if bar.ready_at_end else "not-ready"
        deleted = " deleted" if bar.deleted else ""
        tip = (f"{bar.key} on {bar.node}: {bar.phase}{', ready' if readiness == 'ready' else ''}{', deleted' if bar.deleted else ''}"
               f" {format_rfc3339(bar.start)} to {format_rfc3339(bar.end)}")
        self.parts.append(f'<g class="pod-row"><rect class="pod phase-{bar.phase} {readiness}{deleted}" '
                          f'data-pod="{escape(bar.key)}" data-start="{format_rfc3339(bar.start)}" '
                          f'data-end="{format_rfc3339(bar.end)}" x="{x0}" y="{y}" width="{max(round(x1 - x0, 1), 1)}" '
                          f'height="{ROW_PX - 3}"><title>{escape(tip)}</title></rect>')
        for since, until in bar.ready_spans:
            rx, rx1 = self.x(max(since, bar.start)), self.x(min(until, bar.end))
            self.parts.append(f'<rect class="ready-span" data-start="{format_rfc3339(since)}" '
                              f'data-end="{format_rfc3339(until)}" x="{rx}" y="{y + ROW_PX - 6}" '
                              f'width="{max(round(rx1 - rx, 1), 1)}" height="3"><title>{escape(bar.key)} Ready '
                              f'{format_rfc3339(since)} to {format_rfc3339(until)}</title></rect>')
        if bar.deletion_requested is not None and not bar.deleted:
            dx = self.x(bar.deletion_requested)
            self.parts.append(f'<line class="deletion" x1="{dx}" y1="{y - 1}" x2="{dx}" y2="{y + ROW_PX - 2}">'
                              f'<title>{escape(bar.key)}: terminating, its deletionTimestamp (grace period ends) '
                              f'{format_rfc3339(bar.deletion_requested)}</title></line>')
        self.parts.append(f'<text class="pod-name" x="14" y="{y + ROW_PX - 4}">{escape(bar.key[-30:])}</text></g>')

    def _event(self, event: Obj, cls: str, y: int) -> None:
        moment = _event_time(event, self.start)
        involved = event.get("involvedObject") or {}
        count = event.get("count") or 1
        text = (f"{format_rfc3339(moment)} {event.get('type', '')} {involved.get('kind', '')} "
                f"{involved.get('namespace', '') + '/' if involved.get('namespace') else ''}{involved.get('name', '')} "
                f"{event.get('reason', '')}{f' (x{count})' if count > 1 else ''}: {event.get('message', '')}")
        x = self.x(moment)
        self.parts.append(f'<polygon class="event {cls} {escape(event.get("type") or "Normal")}" '
                          f'data-reason="{escape(event.get("reason") or "")}" '
                          f'points="{x - 3},{y} {x + 3},{y} {x},{y + 6}"><title>{escape(text)}</title></polygon>')


def _place_events(events: list[Obj], lanes: list[str], pods: dict[str, PodBar]) -> dict[str, list[tuple[Obj, str, str | None]]]:
    """Each event's lane (its pod's node, its node, or the cluster lane), class and pod row."""
    placed: dict[str, list[tuple[Obj, str, str | None]]] = {}
    for event in events:
        involved = event.get("involvedObject") or {}
        reason, kind = event.get("reason") or "", involved.get("kind")
        key = f"{involved.get('namespace', '')}/{involved.get('name', '')}"
        cls = "eviction" if reason in EVICTION_REASONS else "rollout" if reason in ROLLOUT_REASONS else "plain"
        if kind == "Pod" and key in pods:
            lane, pod = pods[key].node, key
        elif kind == "Node" and involved.get("name") in lanes:
            lane, pod = involved["name"], None
        else:
            lane, pod = CLUSTER_LANE, None
        placed.setdefault(lane, []).append((event, cls, pod))
    return placed


def _page(title: str, svg: str) -> str:
    legend = "".join(f'<svg xmlns="http://www.w3.org/2000/svg" width="14" height="10"><rect class="pod phase-{p}" '
                     f'width="14" height="10"/></svg> {p} ' for p in PHASES)
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"/>"
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
            f"<h1 style=\"font-size:16px\">{escape(title)}</h1>"
            f"<p class=\"legend\">{legend} <span style=\"color:#4caf50\">&#9644;</span> Ready "
            "<span style=\"color:#d9534f\">&#9632;</span> tainted <span style=\"color:#8e44ad\">|</span> node "
            "condition <b>|</b> deletion &#9660; event (<span style=\"color:#2c7be5\">rollout</span>, "
            "<span style=\"color:#c0392b\">eviction</span>, <span style=\"color:#e67e22\">Warning</span>)"
            f" &#8212; hover for details</p>{svg}</body></html>\n")
