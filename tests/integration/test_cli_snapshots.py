"""``fakekube serve --snapshot-out / --from-snapshot`` and the boot cache, as a user runs them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.integration.test_phased_load import every_list

START = "2030-05-06T07:08:09Z"
BANNER_LINES = 5


def serve(*argv: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str, list[str]]:
    """A running ``fakekube serve`` on a free port, its URL and its banner lines."""
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", "--port", "0", *argv],
                            stdout=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
    assert proc.stdout is not None
    lines = [proc.stdout.readline() for _ in range(BANNER_LINES)]
    assert " at " in lines[0], lines
    return proc, lines[0].split(" at ")[1].strip(), lines


def stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    return out


def call(method: str, url: str, body: Any = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def config_map(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": {"k": "v"}}


def test_snapshot_out_on_sigterm_then_from_snapshot_serves_the_same_cluster(tmp_path: Path) -> None:
    saved = tmp_path / "cluster.snap"
    proc, url, _ = serve("--nodes", "1", "--start-time", START, "--time-scale", "0", "--snapshot-out", str(saved),
                         "--kubeconfig", str(tmp_path / "kc1"))
    try:
        assert call("POST", f"{url}/api/v1/namespaces/default/configmaps", config_map("kept"))[0] == 201
        assert call("POST", f"{url}/fakekube/v1/clock/advance", {"seconds": 30})[0] == 200
        _, pods_before = call("GET", f"{url}/api/v1/pods")
        _, clock_before = call("GET", f"{url}/fakekube/v1/clock")
    finally:
        out = stop(proc)
    assert proc.returncode == 0 and f"snapshot written to {saved}" in out

    proc, url, lines = serve("--from-snapshot", str(saved), "--kubeconfig", str(tmp_path / "kc2"))
    try:
        assert lines[4].strip() == f"fakekube: boot: loaded from {saved}"
        assert call("GET", f"{url}/api/v1/namespaces/default/configmaps/kept")[0] == 200
        assert call("GET", f"{url}/fakekube/v1/clock")[1] == clock_before
        assert call("GET", f"{url}/api/v1/pods")[1]["items"] == pods_before["items"]
        assert url in (tmp_path / "kc2").read_text()
    finally:
        stop(proc)


def test_post_snapshots_save_writes_the_snapshot_out_file(tmp_path: Path) -> None:
    saved = tmp_path / "out.snap"
    proc, url, _ = serve("--no-system-pods", "--start-time", START, "--time-scale", "0", "--snapshot-out", str(saved),
                         "--kubeconfig", str(tmp_path / "kc"))
    try:
        call("POST", f"{url}/api/v1/namespaces/default/configmaps", config_map("at-save"))
        status, described = call("POST", f"{url}/fakekube/v1/snapshots?save=true")
        assert status == 200 and described["file"] == str(saved) and described["id"] == "1"
        assert saved.exists()
        status, bad = call("POST", f"{url}/fakekube/v1/snapshots?save=maybe")
        assert status == 400 and bad["message"] == 'save: "maybe" is not true or false'
    finally:
        stop(proc)
    proc, url, _ = serve("--from-snapshot", str(saved), "--time-scale", "0", "--kubeconfig", str(tmp_path / "kc2"))
    try:
        assert call("GET", f"{url}/api/v1/namespaces/default/configmaps/at-save")[0] == 200
    finally:
        stop(proc)


def test_post_snapshots_save_without_snapshot_out_is_a_400(tmp_path: Path) -> None:
    proc, url, _ = serve("--no-system-pods", "--time-scale", "0", "--kubeconfig", str(tmp_path / "kc"))
    try:
        status, answer = call("POST", f"{url}/fakekube/v1/snapshots?save=true")
        assert status == 400
        assert answer["message"] == "save=true needs a file: start fakekube serve with --snapshot-out FILE"
        assert call("GET", f"{url}/fakekube/v1/snapshots")[1]["snapshots"] == []
    finally:
        stop(proc)


def test_from_snapshot_refuses_state_flags_and_bad_files_with_a_message(tmp_path: Path) -> None:
    garbled = tmp_path / "garbled.snap"
    garbled.write_bytes(b"FAKEKUBE-SNAPSHOT\nnot zlib")
    result = subprocess.run([sys.executable, "-m", "fakekube", "serve", "--from-snapshot", str(garbled)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.startswith(f"fakekube: --from-snapshot {garbled}: the file is garbled")
    assert "Traceback" not in result.stderr
    result = subprocess.run([sys.executable, "-m", "fakekube", "serve", "--from-snapshot", str(garbled),
                             "--nodes", "2", "--seed", "4"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip() == (f"fakekube: --from-snapshot {garbled}: --nodes, --seed cannot be given with it: "
                                     "the snapshot holds its cluster's config")


def test_the_boot_cache_restores_the_same_boot_and_rewrites_a_bad_file(tmp_path: Path) -> None:
    env = {"FAKEKUBE_CACHE_DIR": str(tmp_path / "cache"), "FAKEKUBE_BOOT_CACHE": "1"}
    argv = ("--start-time", START, "--time-scale", "0", "--kubeconfig", str(tmp_path / "kc"))

    def answers_and_boot() -> tuple[dict[str, bytes], str]:
        """Every listable resource as the server answers it (the restored boot serves reads
        before its engine side is in place: docs/snapshots.md "Phased boot"), and the boot line."""
        proc, url, lines = serve(*argv, env=env)
        try:
            return every_list(url), lines[4].strip()
        finally:
            stop(proc)

    built, first = answers_and_boot()
    cached = list((tmp_path / "cache" / "boot").glob("*.snap"))
    assert first == f"fakekube: boot: built; cached in {cached[0]} for the next start" and len(cached) == 1
    restored, second = answers_and_boot()
    assert second == f"fakekube: boot: restored from the boot cache ({cached[0]})"
    assert restored == built and len(json.loads(built["/api/v1/pods"][4:])["items"]) >= 8  # kind's kube-system pods
    assert len(built) > 50 and all(answer.startswith(b"200 ") for answer in built.values())
    cached[0].write_bytes(b"garbage")
    rebuilt, third = answers_and_boot()
    assert third == first and rebuilt == built
    assert cached[0].read_bytes().startswith(b"FAKEKUBE-SNAPSHOT\n")


def test_the_boot_cache_is_off_with_the_flag_the_variable_or_a_start_now(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for extra, env, line in (
            (("--start-time", START, "--no-boot-cache"), {"FAKEKUBE_BOOT_CACHE": "1"}, "built (boot cache off)"),
            (("--start-time", START), {"FAKEKUBE_BOOT_CACHE": "0"}, "built (boot cache off)"),
            ((), {"FAKEKUBE_BOOT_CACHE": "1"}, "built (a boot starting now is not cached: --start-time caches it)")):
        proc, _, lines = serve("--no-metrics-server", "--time-scale", "0", "--kubeconfig", str(tmp_path / "kc"),
                               *extra, env={"FAKEKUBE_CACHE_DIR": str(cache), **env})
        stop(proc)
        assert lines[4].strip() == f"fakekube: boot: {line}"
    assert not cache.exists()
