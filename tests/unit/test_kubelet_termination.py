"""kubelet/termination.py: the stop plan (hook, turn, SIGTERM, SIGKILL) and which programs
handle SIGTERM; kubelet/programs.py's answer for a script's trap."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from fakekube.kubelet.behaviour import LogLine
from fakekube.kubelet.programs import scratch_run, stop_response
from fakekube.kubelet.termination import (
    IGNORES,
    HookOutcome,
    StopResponse,
    plan_stop,
    signal_overlay,
)

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def plan(grace_s: float, hook: HookOutcome | None = None, turn_s: float | None = None,
         response: StopResponse = IGNORES) -> tuple[float, float, int]:
    """(signal, exit, code) in seconds after the stop began at t=10 (started at 0)."""
    result = plan_stop(at(10), grace_s, hook, None if turn_s is None else at(turn_s), lambda signal: response, T0)
    return ((result.signal_at - at(10)).total_seconds(), (result.exit_at - at(10)).total_seconds(), result.exit_code)


def test_the_grace_period_kills_a_program_that_ignores_sigterm() -> None:
    assert plan(30) == (0, 30, 137)
    assert plan(30, response=StopResponse(3, 0)) == (0, 3, 0)
    assert plan(30, response=StopResponse(40, 0)) == (0, 30, 137)
    assert plan(1) == (0, 2, 137)  # the kubelet's minimum
    assert plan(0) == (0, 2, 137)


def test_a_hooks_whole_seconds_come_off_the_grace() -> None:
    assert plan(30, HookOutcome(5)) == (5, 30, 137)
    assert plan(30, HookOutcome(5.5)) == (5.5, 30.5, 137)  # Go truncates the elapsed seconds
    assert plan(30, HookOutcome(None)) == (30, 32, 137)    # an endless hook is cut; 2 s still follow
    assert plan(30, HookOutcome(40)) == (30, 32, 137)
    assert plan(0, HookOutcome(5)) == (0, 2, 137)          # no grace: the hook does not run
    assert plan(30, HookOutcome(5), response=StopResponse(0, 0)) == (5, 5, 0)


def test_a_sidecars_turn_waits_within_the_grace() -> None:
    assert plan(30, turn_s=15) == (5, 30, 137)
    assert plan(30, turn_s=100) == (30, 32, 137)


def test_a_failed_hook_is_noted_when_it_ends_within_the_grace() -> None:
    assert plan_stop(at(10), 30, HookOutcome(2, True), None, lambda s: IGNORES, T0).hook_failed_at == at(12)
    assert plan_stop(at(10), 30, HookOutcome(None, True), None, lambda s: IGNORES, T0).hook_failed_at is None


@pytest.mark.parametrize(("argv", "image", "shared", "fields"), [
    (["sleep", "600"], "busybox", False, (False, 0)),
    (["sleep", "600"], "busybox", True, (True, 143)),
    (["tail", "-f", "/dev/null"], "busybox", False, (False, 0)),
    (["sh", "-c", "while true; do sleep 1; done"], "busybox", False, (False, 0)),
    (["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"], "busybox", False, (False, 0)),  # its trap answers
    (["sh", "-c", "echo start; exec nginx -g 'daemon off;'"], "nginx", False, (True, 0)),
    (["java", "-jar", "app.jar"], "eclipse-temurin:21", False, (True, 143)),
    ([], "nginx:1.27", False, (True, 0)),
    ([], "example/app:1", False, None),
])
def test_the_program_table(argv: list[str], image: str, shared: bool, fields: tuple[bool, int] | None) -> None:
    overlay = dict(signal_overlay(argv, image, shared))
    assert (None if not overlay else (overlay["handles_sigterm"], overlay["stop_exit_code"])) == fields


def test_a_trap_runs_after_the_foreground_command_and_its_exit_ends_the_script() -> None:
    pod = {"metadata": {"name": "p"}, "spec": {}}
    loop = {"name": "c", "command": ["sh", "-c", "trap 'echo bye; exit 3' TERM; while true; do echo tick; sleep 5; done"]}
    assert stop_response(scratch_run(pod, loop, T0), 12) == StopResponse(3, 3, (LogLine(15, "bye"),))
    # an hour in: the rounds before it are skipped, the trap still waits for the sleep to end
    assert stop_response(scratch_run(pod, loop, T0), 3600 + 2) == StopResponse(3, 3, (LogLine(3605, "bye"),))
    # ten hours in, past the simulated rounds (2.8 hours): the loop's period carries on
    assert stop_response(scratch_run(pod, loop, T0), 36000 + 2) == StopResponse(3, 3, (LogLine(36005, "bye"),))
    long_sleep = {"name": "c", "command": ["sh", "-c", "trap 'exit 0' TERM; sleep 600"]}
    assert stop_response(scratch_run(pod, long_sleep, T0), 10) == StopResponse(590, 0, ())
    forever = {"name": "c", "command": ["sh", "-c", "trap 'exit 0' TERM; sleep infinity"]}
    assert stop_response(scratch_run(pod, forever, T0), 10) == StopResponse(None, 0, ())
    assert stop_response(scratch_run(pod, {"name": "c", "command": ["sleep", "600"]}, T0), 10) is None


def test_a_sigterm_before_the_trap_is_set_meets_a_shell_without_it() -> None:
    """``sleep 10; trap … TERM; sleep 100``: a SIGTERM at 5 finds no trap (PID 1 ignores it),
    one at 20 finds the trap, which runs when the foreground ``sleep 100`` ends (110)."""
    pod = {"metadata": {"name": "p"}, "spec": {}}
    late = {"name": "c", "command": ["sh", "-c", "sleep 10; trap 'echo bye; exit 3' TERM; sleep 100"]}
    assert stop_response(scratch_run(pod, late, T0), 5) is None
    assert stop_response(scratch_run(pod, late, T0), 20) == StopResponse(90, 3, (LogLine(110, "bye"),))
