"""The ReplicaSet and ReplicationController controllers (one implementation, two kinds)."""

from fakekube.controllers.replicaset.controller import ReplicaSetController
from fakekube.controllers.replicaset.manage import BURST_REPLICAS
from fakekube.controllers.replicaset.workload import REPLICA_SET, REPLICATION_CONTROLLER, Workload

__all__ = ["BURST_REPLICAS", "REPLICA_SET", "REPLICATION_CONTROLLER", "ReplicaSetController", "Workload"]
