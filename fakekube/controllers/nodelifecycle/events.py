"""The events node lifecycle and the taint manager record, with upstream's exact texts.

Sources checked: pkg/controller/util/node/controller_utils.go (RecordNodeEvent,
RecordNodeStatusChange, MarkPodsNotReady) and pkg/controller/tainteviction/taint_eviction.go.
"""

from __future__ import annotations

from fakekube.engine.events import NORMAL, WARNING, EventText

#: Source components as upstream names them.
NODE_CONTROLLER = "node-controller"
TAINT_EVICTION_CONTROLLER = "taint-eviction-controller"

#: The DisruptionTarget condition's reason and message when the taint manager deletes a pod.
DELETION_BY_TAINT_MANAGER_REASON = "DeletionByTaintManager"
DELETION_BY_TAINT_MANAGER_MESSAGE = "Taint manager: deleting due to NoExecute taint"


def registered_node(node_name: str) -> EventText:
    return EventText(NORMAL, "RegisteredNode", f"Node {node_name} event: Registered Node {node_name} in Controller")


def removing_node(node_name: str) -> EventText:
    return EventText(NORMAL, "RemovingNode", f"Node {node_name} event: Removing Node {node_name} from Controller")


def node_status_change(node_name: str, new_status: str = "NodeNotReady") -> EventText:
    """On the node, once, when its Ready condition leaves True."""
    return EventText(NORMAL, new_status, f"Node {node_name} status is now: {new_status}")


def pod_node_not_ready() -> EventText:
    """On each pod whose Ready condition the controller set False."""
    return EventText(WARNING, "NodeNotReady", "Node is not ready")


def taint_eviction_marked(namespace: str, name: str) -> EventText:
    """On the pod, when the taint manager deletes it."""
    return EventText(NORMAL, "TaintManagerEviction", f"Marking for deletion Pod {namespace}/{name}")


def taint_eviction_cancelled(namespace: str, name: str) -> EventText:
    """On the pod, when a scheduled deletion is cancelled (taint gone, toleration added, pod gone)."""
    return EventText(NORMAL, "TaintManagerEviction", f"Cancelling deletion of Pod {namespace}/{name}")
