"""``fakekube serve`` as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from fakekube.clock import DEFAULT_EPOCH
from fakekube.cluster import ClusterConfig


def test_serve_prints_url_and_kubeconfig_and_serves_nodes(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc.yaml"
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", "--nodes", "2", "--seed", "3",
                             "--kubeconfig", str(kubeconfig)], stdout=subprocess.PIPE, text=True)
    try:
        lines = [proc.stdout.readline() for _ in range(3)]
        url = lines[0].split(" at ")[1].strip()
        assert lines[1].strip().endswith(str(kubeconfig))
        assert f"kubectl --kubeconfig {kubeconfig} get nodes" in lines[2]
        assert url in kubeconfig.read_text()
        with urllib.request.urlopen(url + "/api/v1/nodes", timeout=5) as response:
            nodes = json.load(response)
        # Like `kind create cluster` with two workers: the control-plane node, then node-1, node-2.
        assert [n["metadata"]["name"] for n in nodes["items"]] == ["fakekube-control-plane", "node-1", "node-2"]
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert "stopped" in out


def test_serve_no_system_pods_is_an_empty_cluster(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", "--nodes", "2", "--no-system-pods",
                             "--kubeconfig", str(tmp_path / "kc")], stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split(" at ")[1].strip()
        with urllib.request.urlopen(url + "/api/v1/nodes", timeout=5) as response:
            nodes = json.load(response)
        with urllib.request.urlopen(url + "/api/v1/pods", timeout=5) as response:
            pods = json.load(response)
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    assert [n["metadata"]["name"] for n in nodes["items"]] == ["node-1", "node-2"]
    assert pods["items"] == []


def test_serve_rejects_negative_nodes() -> None:
    result = subprocess.run([sys.executable, "-m", "fakekube", "serve", "--nodes", "-1"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert result.stderr == "fakekube: --nodes: must be >= 0, got -1\n"


def test_serve_start_time_sets_cluster_time(tmp_path: Path) -> None:
    """With --time-scale 0 (manual time) the clock stays exactly where the flag put it."""
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", "--start-time", "2030-05-06T07:08:09Z",
                             "--time-scale", "0", "--kubeconfig", str(tmp_path / "kc")], stdout=subprocess.PIPE,
                            text=True)
    try:
        url = proc.stdout.readline().split(" at ")[1].strip()
        with urllib.request.urlopen(url + "/fakekube/v1/clock", timeout=5) as response:
            assert json.load(response)["now"] == "2030-05-06T07:08:09Z"
        with urllib.request.urlopen(url + "/api/v1/namespaces/default", timeout=5) as response:
            namespace = json.load(response)
        # The cluster booted for 30 s before the start time, as kind hands over a running cluster.
        assert namespace["metadata"]["creationTimestamp"] == "2030-05-06T07:07:39Z"
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_serve_rejects_a_start_time_without_timezone() -> None:
    result = subprocess.run([sys.executable, "-m", "fakekube", "serve", "--start-time", "2030-05-06T07:08:09"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2 and "needs a timezone" in result.stderr


def test_serve_auto_advance_moves_time_while_nobody_asks(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", "--nodes", "1", "--auto-advance",
                             "--kubeconfig", str(tmp_path / "kc")], stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split(" at ")[1].strip()
        # A watch is a client waiting, not talking: it sees the Lease renewals auto-advance lets
        # happen, 10 virtual s apart (its timeout is wall-clock transport time, a safety net).
        path = ("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases?watch=true&timeoutSeconds=10"
                "&fieldSelector=metadata.name%3Dnode-1")  # not the control-plane node's
        with urllib.request.urlopen(url + path, timeout=15) as stream:
            renewals = [datetime.fromisoformat(json.loads(stream.readline())["object"]["spec"]["renewTime"])
                        for _ in range(3)]
        assert [(b - a).total_seconds() for a, b in zip(renewals, renewals[1:])] == [10.0, 10.0]
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_serve_controllers_flag_is_kube_controller_manager_s() -> None:
    from fakekube.cli.main import build_parser, cluster_config

    args = build_parser().parse_args(["serve", "--controllers", "*,-podgc"])
    assert cluster_config(args, None).controllers == ("*", "-podgc")
    default = build_parser().parse_args(["serve"])
    assert cluster_config(default, None).controllers == ("*",)


def test_serve_rejects_an_unknown_controller() -> None:
    result = subprocess.run([sys.executable, "-m", "fakekube.cli.main", "serve", "--controllers", "*,-nope"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert '"nope" is not in the list of known controllers' in result.stderr


def config_of(*argv: str) -> ClusterConfig:
    from fakekube.cli.main import build_parser, cluster_config, parse_start_time

    args = build_parser().parse_args(["serve", *argv])
    return cluster_config(args, parse_start_time(args.start_time) if args.start_time else None)


def test_serve_defaults_to_real_time_from_now_where_python_keeps_manual_time() -> None:
    before = datetime.now(timezone.utc).replace(microsecond=0)
    config = config_of()
    assert (config.time_scale, config.auto_advance) == (1.0, False)
    assert before <= config.start_time <= datetime.now(timezone.utc) and config.start_time.microsecond == 0
    assert (ClusterConfig().time_scale, ClusterConfig().start_time) == (0.0, DEFAULT_EPOCH)


def test_auto_advance_alone_means_manual_time_and_a_given_scale_still_counts() -> None:
    assert (config_of("--auto-advance").time_scale, config_of("--auto-advance").auto_advance) == (0.0, True)
    assert config_of("--auto-advance", "--time-scale", "2").time_scale == 2.0
    assert config_of("--time-scale", "0").time_scale == 0.0


def test_a_clock_that_jumps_starts_a_day_back_so_kubectl_s_own_ages_stay_in_the_past() -> None:
    now = datetime.now(timezone.utc)
    for argv in (("--auto-advance",), ("--time-scale", "0"), ("--auto-advance", "--time-scale", "1")):
        start = config_of(*argv).start_time
        assert timedelta(hours=24) <= now - start <= timedelta(hours=24, seconds=2), argv
    assert abs(config_of().start_time - now) <= timedelta(seconds=2)  # real time: from now, as before
    assert abs(config_of("--time-scale", "60").start_time - now) <= timedelta(seconds=2)
    assert abs(config_of("--auto-advance", "--start-time", "now").start_time - now) <= timedelta(seconds=2)
    assert config_of("--auto-advance", "--start-time", "2030-01-01T00:00:00Z").start_time.year == 2030
    longer = now - config_of("--auto-advance", "--start-time", "now-72h").start_time  # the horizon, chosen
    assert timedelta(hours=72) <= longer <= timedelta(hours=72, seconds=2)


def test_serve_rejects_a_start_time_before_now_that_is_no_duration() -> None:
    result = subprocess.run([sys.executable, "-m", "fakekube", "serve", "--start-time", "now-3days"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert result.stderr == ("fakekube: bad --start-time: now-DURATION: must be a duration such as 40s, 1m30s or "
                             "500ms, got '3days'\n")


def test_the_config_file_s_time_wins_over_serve_s_defaults_and_flags_over_the_file(tmp_path: Path) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text("timeScale: 0\nstartTime: 2030-01-01T00:00:00Z\n")
    from_file = config_of("--config", str(config))
    assert (from_file.time_scale, from_file.start_time.isoformat()) == (0.0, "2030-01-01T00:00:00+00:00")
    flags = config_of("--config", str(config), "--time-scale", "5", "--start-time", "2031-02-03T04:05:06Z")
    assert (flags.time_scale, flags.start_time.isoformat()) == (5.0, "2031-02-03T04:05:06+00:00")
    config.write_text("autoAdvance: true\n")
    assert (config_of("--config", str(config)).time_scale, config_of("--config", str(config)).auto_advance) == (0, True)
    no_jumps = config_of("--config", str(config), "--no-auto-advance")
    assert (no_jumps.time_scale, no_jumps.auto_advance) == (1.0, False)  # serve's real time again


@pytest.mark.parametrize(("argv", "line"), [
    ((), "real time (1x); --time-scale 0 for manual time, --auto-advance to skip idle waits"),
    (("--time-scale", "60"), "60x real time; --time-scale 0 for manual time, --auto-advance to skip idle waits"),
    (("--time-scale", "0"), "manual: moves only through the control API (/fakekube/v1/clock/advance); "
                            "--time-scale 1 for real time"),
    (("--auto-advance",), "auto-advance: jumps to the next timer while a client waits on a watch and no "
                          "request is in flight; --time-scale 1 (without --auto-advance) for real time"),
    (("--auto-advance", "--time-scale", "1"), "real time (1x), and jumps to the next timer while a client waits "
                                              "on a watch and no request is in flight; --time-scale 0 for manual time"),
])
def test_the_banner_says_which_time_mode_runs_and_how_to_change_it(argv: tuple[str, ...], line: str) -> None:
    from fakekube.cli.main import describe_time

    assert describe_time(config_of(*argv)) == line


def test_serve_time_flows_without_any_control_api_call(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", "--no-system-pods",
                             "--kubeconfig", str(tmp_path / "kc")], stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split(" at ")[1].strip()
        deadline = time.monotonic() + 10
        with urllib.request.urlopen(url + "/fakekube/v1/clock", timeout=5) as response:
            first = datetime.fromisoformat(json.load(response)["now"])
        later = first
        while later == first and time.monotonic() < deadline:  # polling, bounded by the wall clock
            with urllib.request.urlopen(url + "/fakekube/v1/clock", timeout=5) as response:
                later = datetime.fromisoformat(json.load(response)["now"])
        assert later > first
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_serve_image_policy_flag_names_the_policy_and_keeps_the_files_lists(tmp_path: Path) -> None:
    from fakekube.kubelet.registry import ImageCatalog

    assert config_of().image_policy == ImageCatalog()
    assert config_of("--image-policy", "missing").image_policy.policy == "missing"
    config = tmp_path / "cluster.yaml"
    config.write_text("imagePolicy: {policy: plausible, images: ['registry.internal/*'], missing: ['nginx:1.26*']}\n")
    chosen = config_of("--config", str(config), "--image-policy", "exists").image_policy
    assert (chosen.policy, chosen.images, chosen.missing) == ("exists", ("registry.internal/*",), ("nginx:1.26*",))
