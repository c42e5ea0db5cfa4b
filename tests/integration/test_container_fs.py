"""A container's filesystem, as ``kubectl exec`` and its own program see it, at exact virtual times.

The kubelet's files (/etc/resolv.conf, /etc/hosts, /etc/hostname), the image's layout, and every
volume kind with upstream's content: ConfigMap keys in the AtomicWriter's ``..data`` layout,
updated at the pod's next sync after a change and not before, read-only; emptyDir shared by a
pod's containers; hostPath and PVs outliving pods; writes that last for the container's life
and are gone after a restart. The pod is created at t=0 and its containers start at t=1.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from kubernetes import client
from kubernetes.stream import stream

from fakekube import Cluster
from tests.integration.support import pod
from tests.integration.timeline import at

Obj = dict[str, Any]


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with Cluster(nodes=1) as served:
        yield served


def exec_(cluster: Cluster, name: str, command: list[str], container: str | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``kubectl exec`` through the official client's stream()."""
    core = client.CoreV1Api(cluster.client())
    extra = {"container": container} if container else {}
    session = stream(core.connect_get_namespaced_pod_exec, name, "default", command=command, stderr=True, stdin=False,
                     stdout=True, tty=False, _preload_content=False, **extra)
    session.run_forever(timeout=10)
    return session.returncode, session.read_stdout(), session.read_stderr()


def logs(cluster: Cluster, name: str, container: str | None = None) -> str:
    extra = {"container": container} if container else {}
    return client.CoreV1Api(cluster.client()).read_namespaced_pod_log(name, "default", **extra)


def busybox(name: str = "c", **fields: Any) -> Obj:
    return {"name": name, "image": "busybox:1.36", "command": ["sleep", "infinity"], **fields}


def config_map(name: str, **data: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": data}


def test_the_kubelets_files_follow_the_pods_dns_policy_and_host_aliases(cluster: Cluster) -> None:
    cluster.create(pod("bb", containers=[busybox()], hostAliases=[{"ip": "10.1.2.3", "hostnames": ["db.local"]}]))
    cluster.create(pod("custom", containers=[busybox()], dnsPolicy="None",
                       dnsConfig={"nameservers": ["1.1.1.1"], "searches": ["example.com"],
                                  "options": [{"name": "ndots", "value": "2"}]}))
    at(cluster, 2)
    assert exec_(cluster, "bb", ["cat", "/etc/resolv.conf"]) == (0, (
        "search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"), "")
    assert exec_(cluster, "custom", ["cat", "/etc/resolv.conf"])[1] == (
        "search example.com\nnameserver 1.1.1.1\noptions ndots:2\n")
    ip = cluster.get("v1", "Pod", "bb")["status"]["podIP"]
    hosts = exec_(cluster, "bb", ["cat", "/etc/hosts"])[1]
    assert hosts.startswith("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n")
    assert hosts.endswith(f"{ip}\tbb\n\n# Entries added by HostAliases.\n10.1.2.3\tdb.local\n")
    assert exec_(cluster, "bb", ["cat", "/etc/hostname"]) == (0, "bb\n", "")
    assert exec_(cluster, "bb", ["sh", "-c", "tr '\\0' ' ' < /proc/1/cmdline"]) == (0, "sleep infinity ", "")
    assert exec_(cluster, "bb", ["cat", "/etc/os-release"])[0] == 1  # busybox has none
    cluster.create(pod("alp", containers=[{"name": "c", "image": "alpine:3.20", "command": ["sleep", "1d"]}]))
    at(cluster, 4)
    assert "ID=alpine\n" in exec_(cluster, "alp", ["cat", "/etc/os-release"])[1]


def test_a_config_map_volume_is_laid_out_and_updated_at_the_pods_next_sync(cluster: Cluster) -> None:
    cluster.create(config_map("app", **{"app.conf": "port=80\n", "mode": "fast"}))
    volume = {"name": "config", "configMap": {"name": "app", "items": [{"key": "app.conf", "path": "conf/app.conf"}]}}
    cluster.create(pod("web", containers=[busybox(volumeMounts=[{"name": "config", "mountPath": "/etc/app"}])],
                       volumes=[volume]))
    at(cluster, 2)
    assert exec_(cluster, "web", ["cat", "/etc/app/conf/app.conf"]) == (0, "port=80\n", "")
    written, data, conf = exec_(cluster, "web", ["ls", "-A", "/etc/app"])[1].split()
    assert written.startswith("..2025_01_01_00_00_00.") and (data, conf) == ("..data", "conf")
    assert exec_(cluster, "web", ["readlink", "/etc/app/..data", "/etc/app/conf"])[1] == f"{written}\n..data/conf\n"
    assert exec_(cluster, "web", ["touch", "/etc/app/x"]) == (1, "", "touch: /etc/app/x: Read-only file system\n")
    # The pod was admitted at t=0: its syncs come at 60, 120…; a change at 10 shows from 60.
    at(cluster, 10)
    client.CoreV1Api(cluster.client()).patch_namespaced_config_map("app", "default", {"data": {"app.conf": "port=8080\n"}})
    at(cluster, 59)
    assert exec_(cluster, "web", ["cat", "/etc/app/conf/app.conf"])[1] == "port=80\n"
    at(cluster, 60)
    assert exec_(cluster, "web", ["cat", "/etc/app/conf/app.conf"])[1] == "port=8080\n"
    assert exec_(cluster, "web", ["readlink", "/etc/app/..data"])[1].startswith("..2025_01_01_00_01_00.")


def test_secret_and_downward_api_files(cluster: Cluster) -> None:
    cluster.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds", "namespace": "default"},
                    "data": {"password": "czNjcjN0"}})
    volumes = [{"name": "creds", "secret": {"secretName": "creds", "defaultMode": 0o400}},
               {"name": "info", "downwardAPI": {"items": [
                   {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}},
                   {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}}]
    mounts = [{"name": "creds", "mountPath": "/secrets"}, {"name": "info", "mountPath": "/info"}]
    spec = pod("web", containers=[busybox(volumeMounts=mounts)], volumes=volumes)
    spec["metadata"]["labels"] = {"app": "web", "tier": "front"}
    cluster.create(spec)
    at(cluster, 2)
    assert exec_(cluster, "web", ["cat", "/secrets/password"]) == (0, "s3cr3t", "")
    assert exec_(cluster, "web", ["sh", "-c", "ls -lL /secrets/password | cut -c1-10"])[1] == "-r--------\n"
    assert exec_(cluster, "web", ["sh", "-c", "cat /info/name; echo; cat /info/labels"])[1] == (
        'web\napp="web"\ntier="front"')


def test_an_empty_dir_is_shared_by_the_pods_containers_and_writes_land_at_their_times(cluster: Cluster) -> None:
    writer = busybox("writer", command=["sh", "-c", "echo hello > /shared/msg; while true; do date +%S >> /shared/ticks;"
                                                    " sleep 5; done"], volumeMounts=[{"name": "s", "mountPath": "/shared"}])
    reader = busybox("reader", command=["sh", "-c", "sleep 2; cat /data/msg; sleep infinity"],
                     volumeMounts=[{"name": "s", "mountPath": "/data"}])
    cluster.create(pod("pair", containers=[writer, reader], volumes=[{"name": "s", "emptyDir": {}}]))
    at(cluster, 12)
    assert logs(cluster, "pair", "reader") == "hello\n"
    assert exec_(cluster, "pair", ["cat", "/data/ticks"], "reader") == (0, "01\n06\n11\n", "")
    at(cluster, 16)
    assert exec_(cluster, "pair", ["cat", "/data/ticks"], "reader")[1] == "01\n06\n11\n16\n"


def test_writes_last_for_the_containers_life_and_volumes_outlive_a_restart(cluster: Cluster) -> None:
    mounts = [{"name": "cache", "mountPath": "/cache"}]
    app = busybox(command=["sh", "-c", "ls /cache; ls /tmp; sleep 30; exit 1"], volumeMounts=mounts)
    cluster.create(pod("app", containers=[app], volumes=[{"name": "cache", "emptyDir": {}}]))
    at(cluster, 2)
    assert exec_(cluster, "app", ["sh", "-c", "touch /tmp/scratch /cache/kept"]) == (0, "", "")
    assert exec_(cluster, "app", ["ls", "/tmp", "/cache"])[1] == "/cache:\nkept\n\n/tmp:\nscratch\n"
    at(cluster, 40)  # it exited at 31 and restarted at once (started at 32)
    status = cluster.get("v1", "Pod", "app")["status"]["containerStatuses"][0]
    assert status["restartCount"] == 1 and "running" in status["state"]
    assert exec_(cluster, "app", ["ls", "/tmp", "/cache"])[1] == "/cache:\nkept\n\n/tmp:\n"
    assert logs(cluster, "app") == "kept\n"


def test_host_path_and_persistent_volumes_outlive_their_pods(cluster: Cluster) -> None:
    cluster.create({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
                    "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                             "hostPath": {"path": "/pv1"}, "storageClassName": "manual"}})
    cluster.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data",
                                                                                      "namespace": "default"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "manual", "volumeName": "pv1",
                             "resources": {"requests": {"storage": "1Gi"}}}})
    volumes = [{"name": "host", "hostPath": {"path": "/var/lib/app", "type": "DirectoryOrCreate"}},
               {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    mounts = [{"name": "host", "mountPath": "/host"}, {"name": "data", "mountPath": "/data", "subPath": "db"}]
    writer = busybox(command=["sh", "-c", "echo node > /host/f; echo volume > /data/f"], volumeMounts=mounts)
    cluster.create(pod("first", restartPolicy="Never", containers=[writer], volumes=volumes))
    at(cluster, 3)
    cluster.delete("v1", "Pod", "first")
    at(cluster, 40)
    cluster.create(pod("second", containers=[busybox(volumeMounts=mounts)], volumes=volumes))
    at(cluster, 45)
    assert exec_(cluster, "second", ["cat", "/host/f", "/data/f"]) == (0, "node\nvolume\n", "")


def test_a_volume_mounted_through_a_merged_usr_link_is_seen_at_both_paths(cluster: Cluster) -> None:
    """Debian's /lib is a link to usr/lib: runc mounts at the resolved /usr/lib/app/conf."""
    cluster.create(config_map("conf", key="v1"))
    container = {"name": "c", "image": "debian:12", "command": ["sleep", "infinity"],
                 "volumeMounts": [{"name": "conf", "mountPath": "/lib/app/conf"}]}
    cluster.create(pod("deb", containers=[container], volumes=[{"name": "conf", "configMap": {"name": "conf"}}]))
    at(cluster, 2)
    assert exec_(cluster, "deb", ["cat", "/lib/app/conf/key", "/usr/lib/app/conf/key"]) == (0, "v1v1", "")


def test_the_service_account_volume_serves_a_token_the_apiserver_accepts(cluster: Cluster) -> None:
    """The projected volume the ServiceAccount admission plugin adds: token, ca.crt, namespace."""
    volume = {"name": "kube-api-access-x1y2z", "projected": {"defaultMode": 0o644, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"fieldPath": "metadata.namespace"}}]}}]}}
    mount = {"name": volume["name"], "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True}
    at(cluster, 2)  # the default ServiceAccount exists
    cluster.create(pod("app", containers=[busybox(volumeMounts=[mount])], volumes=[volume]))
    at(cluster, 4)
    directory = "/var/run/secrets/kubernetes.io/serviceaccount"
    assert exec_(cluster, "app", ["ls", directory]) == (0, "ca.crt\nnamespace\ntoken\n", "")
    assert exec_(cluster, "app", ["cat", f"{directory}/namespace"]) == (0, "default", "")
    assert exec_(cluster, "app", ["head", "-n", "1", f"{directory}/ca.crt"])[1] == "-----BEGIN CERTIFICATE-----\n"
    token = exec_(cluster, "app", ["cat", f"{directory}/token"])[1]
    review = client.AuthenticationV1Api(cluster.client()).create_token_review({"spec": {"token": token}})
    assert review.status.authenticated and review.status.user.username == "system:serviceaccount:default:default"
    at(cluster, 3000)  # past 80 % of its hour the kubelet asks for a new one
    assert exec_(cluster, "app", ["cat", f"{directory}/token"])[1] != token


def test_a_prestop_hook_writes_to_the_containers_own_volumes_at_its_times(cluster: Cluster) -> None:
    """The hook runs as an exec does, on the container's filesystem: what it writes to the
    shared emptyDir is there for the other container while the pod is Terminating."""
    hook = {"preStop": {"exec": {"command": ["sh", "-c", "echo draining > /shared/state; sleep 4;"
                                             " echo drained >> /shared/state"]}}}
    app = busybox("app", volumeMounts=[{"name": "s", "mountPath": "/shared"}], lifecycle=hook)
    side = busybox("side", volumeMounts=[{"name": "s", "mountPath": "/data"}])
    cluster.create(pod("drain", containers=[app, side], volumes=[{"name": "s", "emptyDir": {}}]))
    at(cluster, 5)
    cluster.delete("v1", "Pod", "drain")
    at(cluster, 6)
    assert exec_(cluster, "drain", ["cat", "/data/state"], "side") == (0, "draining\n", "")
    at(cluster, 9)
    assert exec_(cluster, "drain", ["cat", "/data/state"], "side") == (0, "draining\ndrained\n", "")


def test_a_running_pods_root_is_kept_packed_between_uses_and_keeps_what_was_written(cluster: Cluster) -> None:
    """Memory (issue 22, 150,000 pods): after each sync of a pod the kubelet keeps its
    container roots packed until a command uses them again; writes are kept across it."""
    cluster.create(pod("app", containers=[busybox()]))
    at(cluster, 2)
    assert exec_(cluster, "app", ["sh", "-c", "echo kept > /tmp/note"]) == (0, "", "")
    core = client.CoreV1Api(cluster.client())
    core.patch_namespaced_pod("app", "default", {"metadata": {"labels": {"synced": "again"}}})  # the kubelet syncs it
    files = cluster.kubelets.pods.filesystems
    roots = [f"root/{cid}" for state in files.pods.values() for cid in state["roots"].values()]
    assert roots and all(files.stores.is_packed(root) for root in roots)
    assert exec_(cluster, "app", ["cat", "/tmp/note"]) == (0, "kept\n", "")
