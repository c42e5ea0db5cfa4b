"""docs/python.md's examples, as tests: if these break, the page is wrong."""

from __future__ import annotations

import pytest


def test_howto_change_objects(capsys: pytest.CaptureFixture[str]) -> None:
    # docs:begin docs/python.md#change-objects
    from fakekube import Cluster

    cluster = Cluster(nodes=2)
    web = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}
    cluster.apply(web, field_manager="my-operator")                  # server-side apply: creates it
    cluster.patch("apps/v1", "Deployment", "web", {"metadata": {"labels": {"tier": "front"}}})  # strategic
    cluster.patch("apps/v1", "Deployment", "web",
                  [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:1.28"}],
                  patch_type="json")                                  # or "merge"
    scale = cluster.scale("apps/v1", "Deployment", "web", 3)          # the scale subresource
    print(scale["spec"]["replicas"])                                  # 3

    current = cluster.get("apps/v1", "Deployment", "web")
    current["spec"]["minReadySeconds"] = 5
    cluster.update(current)                                           # PUT: resourceVersion must match
    # docs:end
    assert capsys.readouterr().out == "3\n"
    stored = cluster.get("apps/v1", "Deployment", "web")
    assert stored["spec"]["minReadySeconds"] == 5 and stored["metadata"]["labels"] == {"tier": "front"}
    assert stored["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.28"


def test_howto_errors_are_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    # docs:begin docs/python.md#errors
    from fakekube import Cluster
    from fakekube.cluster import ApiError

    cluster = Cluster()
    config = cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
                             "data": {"mode": "fast"}})
    cluster.patch("v1", "ConfigMap", "settings", {"data": {"mode": "slow"}}, patch_type="merge")
    try:
        cluster.update(config)                                        # still the first resourceVersion
    except ApiError as error:
        print(error.code, error.reason)                               # 409 Conflict
        print(error.status()["message"])                              # upstream's words, as over HTTP

    owned = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "flags"}, "data": {"mode": "fast"}}
    cluster.apply(owned, field_manager="a")
    try:
        cluster.apply({**owned, "data": {"mode": "safe"}}, field_manager="b")
    except ApiError as error:
        print(error.message)                                          # Apply failed with 1 conflict: ...
    cluster.apply({**owned, "data": {"mode": "safe"}}, field_manager="b", force=True)   # takes the field over
    # docs:end
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "409 Conflict"
    assert lines[1].startswith('Operation cannot be fulfilled on configmaps "settings": the object has been modified')
    assert lines[2] == 'Apply failed with 1 conflict: conflict with "a": .data.mode'
    assert cluster.get("v1", "ConfigMap", "flags")["data"] == {"mode": "safe"}


def test_howto_wait_for(capsys: pytest.CaptureFixture[str]) -> None:
    # docs:begin docs/python.md#wait-for
    from fakekube import Cluster
    from fakekube.cluster import WaitTimeout

    cluster = Cluster(nodes=1)
    job = cluster.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once"},
                          "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                              {"name": "c", "image": "busybox", "command": ["sh", "-c", "echo done"]}]}}}})
    cluster.wait_for(job, "Complete", timeout_virtual_s=60)           # kubectl wait --for=condition=Complete
    print(cluster.now.time())                                         # 00:00:01: when it held

    pod = cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sleeper"},
                          "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    cluster.wait_for(pod, "Ready", 30)                                # a condition type
    cluster.wait_for(pod, "jsonpath={.status.phase}=Running", 30)     # kubectl's jsonpath form
    cluster.wait_for(pod, lambda p: p["status"]["containerStatuses"][0]["started"], 30)  # any test
    try:
        cluster.wait_for(pod, "Succeeded", timeout_virtual_s=120)     # nginx never ends
    except WaitTimeout as timeout:
        print(timeout)
    # docs:end
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "00:00:01"
    assert lines[1].startswith("Pod default/sleeper: phase=Succeeded did not hold within 120 virtual seconds "
                               "(now 2025-01-01T00:02:02+00:00); last status: phase=Running, ")


def test_howto_logs_and_exec(capsys: pytest.CaptureFixture[str]) -> None:
    # docs:begin docs/python.md#logs-and-exec
    from fakekube import Cluster

    cluster = Cluster(nodes=1)
    pod = cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "greeter"},
                          "spec": {"containers": [{"name": "c", "image": "busybox",
                                                   "command": ["sh", "-c", "echo hello; sleep 3600"]}]}})
    cluster.wait_for(pod, "Running", 30)
    print(cluster.logs("greeter"), end="")                            # hello
    result = cluster.exec("greeter", ["sh", "-c", "echo $((6 * 7)); ls /nope"])
    print(result.stdout, end="")                                      # 42
    print(result.exit_code, result.stderr, end="")                    # 2 ls: cannot access '/nope': ...
    print(cluster.exec("greeter", ["wc", "-l"], stdin="a\nb\n").stdout, end="")   # 2
    # docs:end
    assert capsys.readouterr().out.splitlines() == ["hello", "42", "2 ls: cannot access '/nope': No such file or directory", "2"]
