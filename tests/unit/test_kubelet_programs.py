"""kubelet/programs.py: what a container's own command does, when the pod alone says it."""

from __future__ import annotations

import math
from typing import Any

import pytest

from fakekube.kubelet.behaviour import LogLine
from fakekube.kubelet.execs import expand_references, spec_environment
from fakekube.kubelet.programs import program_argv, scratch_run, sleep_seconds

POD = {"metadata": {"name": "web-0"}, "spec": {}}


def overlay(**container: Any) -> dict[str, Any]:
    """The behaviour fields the program decides, run on a scratch copy of the image's files."""
    result = scratch_run(POD, {"name": "c", "image": "busybox", **container})
    return dict(result.overlay()) if result is not None else {}


@pytest.mark.parametrize(("args", "seconds"), [
    (["5"], 5.0), (["1.5"], 1.5), ([".5"], 0.5), (["2m"], 120.0), (["1h", "30s"], 3630.0), (["1d"], 86400.0),
    (["infinity"], math.inf), (["inf"], math.inf), ([], None), (["soon"], None), (["-1"], None), (["5x"], None),
])
def test_sleep_reads_durations_as_coreutils_and_busybox_do(args: list[str], seconds: float | None) -> None:
    assert sleep_seconds(args) == seconds


def test_references_expand_from_defined_variables_only() -> None:
    env = {"A": "1", "EMPTY": ""}
    assert expand_references("$(A)-$(EMPTY)-$(B)-$$(A)-$$$(A)-$A-$(A", env) == "1--$(B)-$(A)-$1-$A-$(A"


def test_args_alone_are_the_program_only_when_they_start_with_a_known_command() -> None:
    assert program_argv(POD, {"args": ["echo", "$(X)"], "env": [{"name": "X", "value": "y"}]}) == ["echo", "y"]
    assert program_argv(POD, {"args": ["-conf", "/etc/Corefile"]}) == []
    assert program_argv(POD, {"command": ["/app/server"], "args": ["--port=1"]}) == ["/app/server", "--port=1"]
    assert program_argv(POD, {"command": ["echo", 5]}) == []  # not a string: not a program this model reads


def test_env_values_expand_earlier_variables_and_field_refs_read_the_pod() -> None:
    pod = {"metadata": {"name": "web-0", "namespace": "shop", "labels": {"app": "web"},
                        "annotations": {"batch.kubernetes.io/job-completion-index": "3"}},
           "spec": {"nodeName": "node-1"}, "status": {}}
    env = [{"name": "A", "value": "x"}, {"name": "B", "value": "$(A)-y-$(C)"}, {"name": "C", "value": "late"},
           {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
           {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
           {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
           {"name": "INDEX", "valueFrom": {"fieldRef": {
               "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
           {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
           {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},       # not known yet: left out
           {"name": "CM", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}]     # not simulated
    assert spec_environment(pod, {"env": env}) == {"A": "x", "B": "x-y-$(C)", "C": "late", "POD": "web-0", "NS": "shop",
                                                   "APP": "web", "INDEX": "3", "NODE": "node-1"}


def test_a_script_keeps_time_across_nested_shells_and_stops_at_exit() -> None:
    script = "echo a; sh -c 'sleep 2; echo b; exit 4'; echo code $?; sleep 1; exit 7; echo never"
    assert overlay(command=["/bin/sh", "-c", script]) == {
        "exit_code": 7, "run_for_s": 3.0,
        "log_lines": (LogLine(0.0, "a"), LogLine(2.0, "b"), LogLine(2.0, "code 4"))}


def test_stderr_goes_to_the_log_and_a_program_past_the_duration_bound_runs_forever() -> None:
    assert overlay(command=["printenv", "NOPE"]) == {"exit_code": 1, "run_for_s": 0.0, "log_lines": ()}
    assert overlay(command=["sh", "-c", "echo x; sleep 1000000d"]) == {
        "run_for_s": None, "log_lines": (LogLine(0.0, "x"),)}


def test_pipes_substitutions_and_files_run_like_a_shell() -> None:
    assert overlay(command=["sh", "-c", "echo x | tr x y; echo $(echo sub); echo hi > /tmp/f; cat /tmp/f"]) == {
        "exit_code": 0, "run_for_s": 0.0,
        "log_lines": (LogLine(0.0, "y"), LogLine(0.0, "sub"), LogLine(0.0, "hi"))}
    assert overlay(command=["sh", "-c", "tar cf - /data > /dev/null"]) == {
        "exit_code": 2, "run_for_s": 0.0,
        "log_lines": (LogLine(0.0, "tar: Removing leading `/' from member names"),
                      LogLine(0.0, "tar: /data: Cannot stat: No such file or directory"),
                      LogLine(0.0, "tar: Exiting with failure status due to previous errors"))}


def test_an_unknown_command_is_missing_from_a_base_image_and_the_software_of_an_application_image() -> None:
    assert overlay(command=["sh", "-c", "echo starting; unknown"]) == {
        "exit_code": 127, "run_for_s": 0.0, "log_lines": (LogLine(0.0, "starting"), LogLine(0.0, "sh: 1: unknown: not found"))}
    assert overlay(command=["bash"]) == {}  # busybox has no bash: it never runs (StartError, kubelet/pods.py)
    assert overlay(command=["nginx"], image="nginx:1.27") == {}
    assert overlay(command=["sh", "-c", "echo starting; exec nginx -g 'daemon off;'"], image="nginx:1.27") == {
        "log_lines": (LogLine(0.0, "starting"),)}  # from there on the image's behaviour decides


def test_shells_nest() -> None:
    nested = ["sh", "-c", "sh -c 'ash -c \"echo deep\"'"]
    assert overlay(command=nested)["log_lines"] == (LogLine(0.0, "deep"),)


def test_a_program_is_missing_only_where_the_model_knows_every_program_the_image_holds() -> None:
    from fakekube.kubelet.programs import is_missing
    assert is_missing("myserver", "busybox") and is_missing("python3", "alpine") and is_missing("bash", "busybox")
    assert not is_missing("httpd", "busybox") and not is_missing("apk", "alpine") and is_missing("apk", "busybox")
    assert not is_missing("/bin/busybox", "busybox") and not is_missing("/usr/sbin/nc", "busybox")
    assert is_missing("/app/run", "busybox")                                 # no filesystem says it is there
    assert not is_missing("apt-get", "debian") and not is_missing("myserver", "debian")   # debian holds more
