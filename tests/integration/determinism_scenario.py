"""A fixed sequence of API calls whose full resulting state is printed as JSON.

Run by test_determinism in fresh interpreters with different PYTHONHASHSEEDs.
"""

from __future__ import annotations

import json
import sys

from fakekube import Cluster


def scenario(seed: int, system_pods: bool = False) -> str:
    with Cluster(seed=seed, nodes=3, system_pods=system_pods) as cluster:
        cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
        for i in range(3):
            cluster.create({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"generateName": "cfg-", "namespace": "team"}, "data": {"i": str(i)}})
        for name in ("web", "api"):
            cluster.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "team"},
                            "spec": {"selector": {"app": name}, "ports": [{"port": 80}], "type": "NodePort"}})
        cluster.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once", "namespace": "team"},
                        "spec": {"template": {"spec": {"restartPolicy": "Never",
                                                       "containers": [{"name": "c", "image": "busybox"}]}}}})
        cluster.delete("v1", "ConfigMap", cluster.list("v1", "ConfigMap", "team")[0]["metadata"]["name"], "team")
        # The engine's part: timers, heartbeats, node failure, taints, evictions and events.
        cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "on-node-1", "namespace": "team"},
                        "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}})
        cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
                            "name": "crashing", "namespace": "team",
                            "annotations": {"fakekube.io/behaviour": '{"run_for_s": 3, "exit_code": 1}'}},
                        "spec": {"nodeName": "node-2", "containers": [{"name": "c", "image": "busybox"}]}})
        cluster.advance(25)
        cluster.fail_node("node-1")
        cluster.set_node_condition("node-2", "MemoryPressure", "True")
        cluster.partition_node("node-3")
        cluster.advance(200)
        cluster.heal_node("node-3")
        cluster.advance(200)
        dump = {f"{group}/{resource}": cluster.store.list((group, resource))[0] for group, resource in cluster.store.resources()}
        dump["events"] = [(c.rv, c.type, c.resource, c.namespace, c.name) for c in cluster.store.changes_since(0)]
        return json.dumps(dump, sort_keys=False)


if __name__ == "__main__":
    print(scenario(int(sys.argv[1]), system_pods=sys.argv[2:] == ["--system-pods"]))
