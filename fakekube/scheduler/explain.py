"""Why a pod goes where it goes: one dry-run scheduling cycle over every node, reported.

What kube-scheduler-simulator shows, as one call: for each node in node-tree order,
either the filter plugin that rejected it with its reasons, or — for the nodes that fit —
each score plugin's normalized score (0…100), its weight and the weighted total; then the
node(s) with the highest total and, when nothing fits, the FailedScheduling message the
scheduler gives (its preemption part left out: the explanation never preempts).

A bound pod is explained as if it were still pending (its ``spec.nodeName`` set aside;
its own resources still count on its node). It runs on the engine thread with the scheduler's cache as it is now and writes nothing:
every node is evaluated (no percentageOfNodesToScore sampling), pods nominated to a node
count there as in a real cycle, and the cycle state is thrown away. Reserve, Permit,
PreBind and Bind do not run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakekube.engine import Context
from fakekube.scheduler.framework import Code, CycleState, Diagnosis, NodeInfo, PodInfo, Status

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Framework
    from fakekube.scheduler.scheduler import Scheduler

Obj = dict[str, Any]


def explain(scheduler: "Scheduler", pod: Obj, ctx: Context) -> Obj:
    """The explanation of ``pod`` (a dict ready for JSON; see the module docstring)."""
    from fakekube.scheduler.scheduler import FitError, scheduler_name  # scheduler imports this module

    meta = pod.get("metadata") or {}
    name = scheduler_name(pod)
    report: Obj = {"pod": f"{meta.get('namespace', '')}/{meta.get('name', '')}", "schedulerName": name,
                   "nodeName": (pod.get("spec") or {}).get("nodeName") or None}
    framework = scheduler.frameworks.get(name)
    if framework is None:
        report["message"] = f"no profile of this scheduler is named {name!r}: the pod is left to another scheduler"
        return report
    framework.handle.use(ctx)
    unbound = dict(pod, spec={k: v for k, v in (pod.get("spec") or {}).items() if k != "nodeName"})
    info, state, nodes = PodInfo(unbound), CycleState(), scheduler.snapshot.node_infos()
    names, status = framework.run_pre_filter(state, info)
    if status is not None:
        report["preFilter"] = _status(status)
        report["nodes"] = [{"name": node.name, "filter": _status(status)} for node in nodes]
        diagnosis = Diagnosis(pre_filter_msg=status.message)
        report["message"] = str(FitError(len(nodes), diagnosis))
        return report
    entries, feasible, diagnosis = _filter_all(framework, state, info, nodes, names)
    if feasible:
        _score_all(framework, state, info, feasible, entries)
        best = max(entry["total"] for entry in entries.values() if "total" in entry)
        report["best"] = [node.name for node in feasible if entries[node.name]["total"] == best]
    else:
        report["message"] = str(FitError(len(nodes), diagnosis)) if nodes else "no nodes available to schedule pods"
    report["nodes"] = [entries[node.name] for node in nodes]
    return report


def _filter_all(framework: "Framework", state: CycleState, info: PodInfo, nodes: list[NodeInfo],
                names: set[str] | None) -> tuple[dict[str, Obj], list[NodeInfo], Diagnosis]:
    entries: dict[str, Obj] = {}
    feasible: list[NodeInfo] = []
    diagnosis = Diagnosis()
    for node in nodes:
        if names is not None and node.name not in names:
            entries[node.name] = {"name": node.name, "filter": {
                "plugin": ",".join(state.node_name_plugins), "code": "UnschedulableAndUnresolvable",
                "reasons": [f"node(s) didn't satisfy plugin(s) [{' '.join(state.node_name_plugins)}]"]}}
            diagnosis.node_statuses[node.name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                                        tuple(entries[node.name]["filter"]["reasons"]))
            continue
        status = framework.run_filters_with_nominated(state, info, node)
        if status is None:
            entries[node.name] = {"name": node.name, "fits": True}
            feasible.append(node)
        else:
            entries[node.name] = {"name": node.name, "filter": _status(status)}
            diagnosis.node_statuses[node.name] = status
    return entries, feasible, diagnosis


def _score_all(framework: "Framework", state: CycleState, info: PodInfo, feasible: list[NodeInfo],
               entries: dict[str, Obj]) -> None:
    """Each score plugin's normalized scores and weights, as run_score sums them."""
    status = framework.run_pre_score(state, info, feasible)
    for node in feasible:
        entries[node.name]["scores"] = {}
        entries[node.name]["total"] = 0
    if status is not None:
        for node in feasible:
            entries[node.name]["preScore"] = _status(status)
        return
    for plugin in framework.score:
        if plugin.name in state.skip_score:
            continue
        scores = framework.plugin_scores(plugin, state, info, feasible)
        weight = framework.weights.get(plugin.name, 1)
        for node, score in zip(feasible, scores):
            entries[node.name]["scores"][plugin.name] = {"score": score, "weight": weight, "weighted": score * weight}
            entries[node.name]["total"] += score * weight


def _status(status: Status) -> Obj:
    return {"plugin": status.plugin, "code": _CODE_NAMES.get(int(status.code), str(status.code)),
            "reasons": list(status.reasons)}


_CODE_NAMES = {0: "Success", 1: "Error", 2: "Unschedulable", 3: "UnschedulableAndUnresolvable", 4: "Wait",
               5: "Skip", 6: "Pending"}
