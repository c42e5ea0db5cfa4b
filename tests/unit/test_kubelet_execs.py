"""Exec commands as behaviour data (kubelet/behaviour.py) and what the kubelet answers
(kubelet/execs.py): declared commands first, then the built-ins, else not found."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from fakekube.kubelet import execs, shell
from fakekube.kubelet.behaviour import (
    MAX_EXEC_OUTPUT_BYTES, BehaviourCatalog, ExecCommand, behaviour_from_dict, parse_annotation)

POD = {"metadata": {"name": "web", "namespace": "default"}, "spec": {"containers": [{"name": "app"}]}}
CONTAINER = {"name": "app", "env": [{"name": "A", "value": "1"}, {"name": "B", "valueFrom": {"fieldRef": {}}},
                                    {"name": "PATH", "value": "/opt/bin"}]}


def run(argv: list[str], commands: tuple[ExecCommand, ...] = (), pod: dict = POD, stdin: bytes = b"") -> execs.ExecResult:
    return execs.run(commands, argv, pod, CONTAINER, "id", stdin=stdin)


def test_declared_commands_match_a_glob_over_the_argv_in_order() -> None:
    behaviour = behaviour_from_dict({"exec_commands": [
        {"command": "cat /etc/*", "stdout": "conf\n"},
        {"command": ["echo", "hi"], "stdout": "declared\n", "stderr": "e\n", "exit_code": 4},
        {"command": "cat *", "exit_code": 1}]})
    commands = behaviour.exec_commands
    assert run(["cat", "/etc/hosts"], commands) == execs.ExecResult(b"conf\n")
    assert run(["cat", "x"], commands).exit_code == 1
    assert run(["echo", "hi"], commands) == execs.ExecResult(b"declared\n", b"e\n", 4)  # before the built-in
    assert run(["echo", "hi", "there"], commands).stdout == b"hi there\n"


def test_built_ins() -> None:
    assert run(["true"]) == execs.ExecResult() and run(["/bin/false"]).exit_code == 1
    assert run(["echo", "-n", "a", "b"]).stdout == b"a b"
    assert run(["hostname"]).stdout == b"web\n"
    assert run(["hostname"], pod={**POD, "spec": {"hostname": "h1"}}).stdout == b"h1\n"
    assert run(["env"]).stdout == b"PATH=/opt/bin\nHOSTNAME=web\nA=1\nHOME=/root\n"
    assert run(["printenv", "A", "HOME"]) == execs.ExecResult(b"1\n/root\n")
    assert run(["printenv", "A", "B"]) == execs.ExecResult(b"1\n", exit_code=1)
    assert run(["sleep", "3600"]) == execs.ExecResult()
    assert run(["printf", "%s=%03d\\n", "a", "7"]).stdout == b"a=007\n"
    assert run(["sh", "-c", 'printf %s "$A"']).stdout == b"1"
    assert (run(["pwd"]).stdout, run(["uname"]).stdout, run(["whoami"]).stdout) == (b"/\n", b"Linux\n", b"root\n")
    assert run(["id"]).stdout == b"uid=0(root) gid=0(root) groups=0(root),10(wheel)\n"
    as_user = {**POD, "spec": {"securityContext": {"runAsUser": 1000}}}
    assert run(["whoami"], pod=as_user) == execs.ExecResult(stderr=b"whoami: unknown uid 1000\n", exit_code=1)
    assert run(["id"], pod=as_user).stdout == b"uid=1000 gid=0(root) groups=0(root)\n"
    assert {b"bin", b"etc", b"tmp", b"usr", b"var"} <= set(run(["sh", "-c", "ls /"]).stdout.split())
    assert run(["ls", "/nope"]) == execs.ExecResult(
        stderr=b"ls: cannot access '/nope': No such file or directory\n", exit_code=2)


def test_date_reads_the_cluster_time() -> None:
    now = datetime(2025, 1, 1, 0, 0, 5, 250000, tzinfo=timezone.utc)

    def date(*args: str) -> execs.ExecResult:
        return execs.run((), ["date", *args], POD, CONTAINER, "id", now)

    assert date().stdout == b"Wed Jan  1 00:00:05 UTC 2025\n"
    assert date("-u", "+%Y-%m-%dT%H:%M:%S %s.%N").stdout == b"2025-01-01T00:00:05 1735689605.250000000\n"
    assert date("-R").stdout == b"Wed, 01 Jan 2025 00:00:05 +0000\n"
    assert date("foo") == execs.ExecResult(stderr=b"date: invalid date 'foo'\n", exit_code=1)
    assert execs.run((), ["sh", "-c", "date +%H:%M"], POD, CONTAINER, "id", now).stdout == b"00:00\n"
    assert execs.run((), ["sh", "-c", "date +%S; sleep 5; date +%S"], POD, CONTAINER, "id", now).stdout == b"05\n10\n"


def test_sh_c_runs_lines_comments_and_for_loops() -> None:
    script = "echo start  # first\n\nfor n in a $A 'b c'; do\n  echo $n\ndone && echo after\nexit 3"
    assert run(["sh", "-c", script]) == execs.ExecResult(b"start\na\n1\nb c\nafter\n", exit_code=3)
    nested = "for a in 1 2; do for b in x y; do printf %s $a$b; done; done"
    assert run(["sh", "-c", nested]).stdout == b"1x1y2x2y"


def test_a_script_stops_after_its_command_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execs, "MAX_SCRIPT_COMMANDS", 5)
    result = run(["sh", "-c", "for n in 1 2 3 4 5 6 7; do true; done"])
    assert result == execs.ExecResult(stderr=b"sh: fakekube stops simulating a script after 5 commands\n", exit_code=2)


def test_sh_c_runs_the_scripts_simple_commands_in_turn() -> None:
    commands = behaviour_from_dict({"exec_commands": [{"command": "migrate *", "stdout": "done\n", "exit_code": 3}]})
    assert run(["sh", "-c", "echo $A ${HOME}x '$A' \"$A\""]).stdout == b"1 /rootx $A 1\n"
    assert run(["/bin/bash", "-c", "migrate --all || echo failed $?"], commands.exec_commands) == (
        execs.ExecResult(b"done\nfailed 3\n"))
    assert run(["sh", "-c", "false && echo no; echo yes"]) == execs.ExecResult(b"yes\n")
    assert run(["sh", "-c", "nope 1; hostname"]) == execs.ExecResult(b"web\n", b"sh: 1: nope: not found\n")
    assert run(["sh", "-c", "nope"]).exit_code == 127
    assert run(["sh", "-c", "echo a; exit 4; echo b"]) == execs.ExecResult(b"a\n", exit_code=4)
    assert run(["sh", "-c", "sh -c 'printenv A'"]).stdout == b"1\n"
    assert run(["sh"]) == execs.ExecResult()  # its script is its stdin: empty here, so it ends at once
    assert run(["sh"], stdin=b"echo from stdin; exit 5") == execs.ExecResult(b"from stdin\n", exit_code=5)
    assert run(["sh", "-c"]) == execs.ExecResult(stderr=b"sh: -c requires an argument\n", exit_code=2)


def test_sh_c_is_bounded_in_depth_and_output(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shell, "MAX_DEPTH", 2)
    assert run(["sh", "-c", "sh -c 'echo two'"]).stdout == b"two\n"
    assert run(["sh", "-c", "sh -c 'sh -c \"echo three\"'"]) == execs.ExecResult(
        stderr=b"sh: fakekube does not simulate shells nested more than 2 deep\n", exit_code=2)
    big = behaviour_from_dict({"exec_commands": [{"command": "big", "stdout": "x" * MAX_EXEC_OUTPUT_BYTES}]})
    assert run(["sh", "-c", "big; big; echo end"], big.exec_commands) == execs.ExecResult(
        b"x" * MAX_EXEC_OUTPUT_BYTES * 2 + b"end\n")
    monkeypatch.setattr(execs, "MAX_EXEC_STREAM_BYTES", 10)
    assert run(["sh", "-c", "echo 0123456789abcdef0123456789"]) == execs.ExecResult(
        stderr=b"sh: fakekube stops simulating a script after 20 bytes of output\n", exit_code=2)


@pytest.mark.parametrize("script,stderr", [
    ("x=(a b)", "sh: fakekube does not simulate arrays"),
    ("select x in a; do :; done", "sh: fakekube does not simulate select loops"),
    ("cat <(echo hi)", "sh: fakekube does not simulate process substitution"),
    ("echo 'open", "sh: 1: Syntax error: Unterminated quoted string"),
    ("&& true", 'sh: 1: Syntax error: "&&" unexpected'),
    ("for i in 1; do echo", 'sh: 1: Syntax error: end of file unexpected (expecting "done")'),
    ("while true; do sleep 1; done", "sh: fakekube stops simulating a script after 100000 commands"),
])
def test_sh_c_names_the_syntax_it_does_not_simulate(script: str, stderr: str) -> None:
    assert run(["sh", "-c", script]) == execs.ExecResult(stderr=f"{stderr}\n".encode(), exit_code=2)


def test_gzip_compresses_a_pipe_as_the_python_clients_e2e_test_reads_it() -> None:
    """kubernetes-client/python's test_pod_apis runs ``echo -n "…" | gzip`` and gunzips the bytes."""
    import gzip
    compressed = run(["sh", "-c", 'echo -n "This is a test string" | gzip'])
    assert (gzip.decompress(compressed.stdout), compressed.exit_code) == (b"This is a test string", 0)
    assert run(["sh", "-c", "printf 'a\\nb\\n' > /tmp/f; gzip /tmp/f; ls /tmp; zcat /tmp/f.gz; gunzip /tmp/f.gz; "
                            "cat /tmp/f; ls /tmp"]).stdout == b"f.gz\na\nb\na\nb\nf\n"
    assert run(["gunzip"], stdin=b"plain") == execs.ExecResult(stderr=b"gunzip: stdin: not in gzip format\n", exit_code=1)


def test_anything_else_is_not_found_as_containerd_says() -> None:
    assert run(["psql", "-c", "x"]).error == (
        'failed to exec in container: failed to start exec "id": OCI runtime exec failed: exec failed: unable to start '
        'container process: exec: "psql": executable file not found in $PATH: unknown')
    assert execs.exec_id("containerd://abc", 1) == execs.exec_id("containerd://abc", 1) != execs.exec_id("containerd://abc", 2)
    assert len(execs.exec_id("c", 1)) == 64


@pytest.mark.parametrize(("raw", "message"), [
    ("echo", "exec_commands: must be a list"),
    ([{"stdout": "x"}], "command: must be a non-empty string"),
    ([{"command": "x", "exit_code": 256}], "exit_code: must be an integer from 0 to 255"),
    ([{"command": "x", "exit_code": True}], "exit_code: must be an integer from 0 to 255"),
    ([{"command": "x", "stdout": 5}], "stdout: must be a string"),
    ([{"command": "x", "stdout": "a" * (MAX_EXEC_OUTPUT_BYTES + 1)}], f"stdout: at most {MAX_EXEC_OUTPUT_BYTES} bytes"),
    ([{"command": "x", "out": "y"}], "unknown field(s) out"),
])
def test_bad_declarations_are_refused_with_the_field(raw: object, message: str) -> None:
    with pytest.raises(ValueError) as error:
        behaviour_from_dict({"exec_commands": raw})
    assert message in str(error.value)


def test_exec_commands_come_from_image_rules_and_the_annotation() -> None:
    catalog = BehaviourCatalog.from_config({"images": [{"image": "db*", "exec_commands": [{"command": "ready", "stdout": "y"}]}]})
    pod = {"metadata": {"annotations": {"fakekube.io/behaviour": '{"side": {"exec_commands": [{"command": "x"}]}}'}},
           "spec": {"containers": [{"name": "db", "image": "db:1"}, {"name": "side", "image": "db:1"}]}}
    assert catalog.for_container(pod, "db").exec_commands == (ExecCommand("ready", "y"),)
    assert catalog.for_container(pod, "side").exec_commands == (ExecCommand("x"),)
    assert parse_annotation('{"exec_commands": [{"command": "a"}]}')[0] == (("exec_commands", (ExecCommand("a"),)),)
