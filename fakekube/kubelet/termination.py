"""How a simulated container stops: its preStop hook, the stop signal and the grace period.

Upstream's kubelet stops a container in ``killContainer`` (``kuberuntime_container.go``):

1. it records ``Killing`` ("Stopping container c");
2. it runs the container's ``preStop`` hook (exec, HTTP or sleep) and waits for it at most
   the grace period; the seconds the hook took, truncated to whole seconds, are taken from
   the grace (a failed hook records ``FailedPreStopHook`` and the stop goes on);
3. a sidecar then waits for its turn (the app containers and the sidecars declared after it
   have exited), at most what is left of the grace, again taken in whole seconds;
4. whatever is left — but at least :data:`MIN_GRACE_S` — is the runtime's ``StopContainer``
   timeout: the container gets SIGTERM, and SIGKILL when the timeout runs out (exit 137).

Whether the process stops on SIGTERM is the program's business: a process running as PID
1 in its namespace receives only the signals it installed a handler for, so ``sleep``, ``tail
-f``, a shell loop without a ``trap``, ``python`` and ``node`` ignore it and are killed at the
end of the grace; servers install a handler and exit. :data:`PROGRAM_SIGNALS` is the table
of known programs (docs/behaviour.md); a pod with ``shareProcessNamespace`` runs ``pause``
as PID 1, so there a program without a handler dies of SIGTERM at once (exit 143). What a
script's ``trap … TERM`` does depends on the instant the signal arrives (the trap runs once
the foreground command finished): the program model answers that (``programs.stop_response``),
this module only plans around the answer.

Pure: instants in, a :class:`StopPlan` out; nothing here reads a clock or the store.
"""

from __future__ import annotations

import math
import posixpath
import re
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Mapping, NamedTuple, Sequence

from fakekube.kubelet.behaviour import LogLine, Overlay
from fakekube.kubelet.imageref import familiar_repository

#: ``minimumGracePeriodInSeconds``: what a container gets however long its hook or its turn took.
MIN_GRACE_S = 2.0
#: Exit code of a process killed with SIGKILL (grace period over, probe kill).
SIGKILL_EXIT_CODE = 137
#: Exit code of a process ended by SIGTERM's default action (128 + 15).
SIGTERM_EXIT_CODE = 143

#: An instant no cluster reaches: where :func:`after` lands past datetime's range.
NEVER = datetime.max.replace(tzinfo=timezone.utc)


def after(moment: datetime, seconds: float) -> datetime:
    """``moment`` plus ``seconds``; :data:`NEVER` past datetime's range (or for infinity)."""
    try:
        return moment + timedelta(seconds=seconds)
    except (OverflowError, ValueError):
        return NEVER


class StopResponse(NamedTuple):
    """What a running program does when SIGTERM arrives.

    ``exits_after_s``: seconds after the signal it exits (None: it ignores the signal and
    runs on until killed, or until its own end); ``exit_code``: its code then;
    ``log_lines``: when the program model ran the program with the signal (a shell
    ``trap``), its log from the signal on — stamped in seconds since the container started,
    as every log line is — which replaces what it would have written from then on; None
    when the signal changes nothing it writes."""

    exits_after_s: float | None
    exit_code: int = 0
    log_lines: tuple[LogLine, ...] | None = None


#: A program that keeps running through SIGTERM.
IGNORES = StopResponse(None)


class HookOutcome(NamedTuple):
    """How a preStop hook ran: ``duration_s`` (None: it never returns — an endless command),
    and whether it failed (the kubelet then records ``FailedPreStopHook``)."""

    duration_s: float | None
    failed: bool = False


class StopPlan(NamedTuple):
    """One container's stop, decided when the kubelet starts it."""

    #: When SIGTERM is sent (after the hook and, for a sidecar, its turn).
    signal_at: datetime
    #: When the process exits, and with which code (137: killed when the grace ran out).
    exit_at: datetime
    exit_code: int
    #: The program's log from the signal on, up to its exit (seconds since container
    #: start); None: the signal changes nothing it writes (:class:`StopResponse`).
    log_lines: tuple[LogLine, ...] | None
    #: When the hook failed (``FailedPreStopHook``), if it did within the grace.
    hook_failed_at: datetime | None


def plan_stop(now: datetime, grace_s: float, hook: HookOutcome | None, turn_at: datetime | None,
              response_at: Callable[[datetime], StopResponse], started_at: datetime) -> StopPlan:
    """The stop that begins at ``now`` with ``grace_s`` seconds of grace (module docstring).

    ``hook``: the container's preStop hook, if it has one; ``turn_at``: when a sidecar's
    turn comes (None: it does not wait); ``response_at(signal_at)``: what the program does
    with SIGTERM at that instant; ``started_at``: when the process started (log lines count
    from it)."""
    remaining_s = grace_s
    signal_at = now
    failed_at = None
    if hook is not None and grace_s > 0:
        hook_s = grace_s if hook.duration_s is None else min(hook.duration_s, grace_s)
        signal_at = after(now, hook_s)
        remaining_s -= math.floor(hook_s)  # Go: int64(elapsed.Seconds())
        if hook.failed and hook.duration_s is not None and hook.duration_s <= grace_s:
            failed_at = signal_at
    if turn_at is not None and remaining_s > 0:
        wait_s = min(max((turn_at - signal_at).total_seconds(), 0.0), remaining_s)
        signal_at = after(signal_at, wait_s)
        remaining_s -= math.floor(wait_s)
    remaining_s = max(remaining_s, MIN_GRACE_S)
    kill_at = after(signal_at, remaining_s)
    response = response_at(signal_at)
    if response.exits_after_s is not None and response.exits_after_s <= remaining_s:
        exit_at, code = after(signal_at, response.exits_after_s), response.exit_code
    else:
        exit_at, code = kill_at, SIGKILL_EXIT_CODE
    lines = None
    if response.log_lines is not None:
        limit_s = (exit_at - started_at).total_seconds()
        lines = tuple(line for line in response.log_lines if line.at_s <= limit_s)
    return StopPlan(signal_at, exit_at, code, lines, failed_at)


def declared_response(handles_sigterm: bool, stop_delay_s: float, stop_exit_code: int) -> StopResponse:
    """The answer a behaviour declares (for programs the model does not run step by step)."""
    return StopResponse(stop_delay_s, stop_exit_code) if handles_sigterm else IGNORES


# -- which programs handle SIGTERM ------------------------------------------------------------

class Signals(NamedTuple):
    """One row of :data:`PROGRAM_SIGNALS`: does the program handle SIGTERM, and its exit code then."""

    handles: bool
    exit_code: int = 0


_IGNORES_AS_PID1 = Signals(False)
_CLEAN_EXIT = Signals(True, 0)

#: What a known program does with SIGTERM as PID 1, by the basename of its executable
#: (docs/behaviour.md "Termination" lists it). A shell script's ``trap`` on TERM answers
#: for itself (``programs.stop_response``, before this table); anything not listed keeps its behaviour's declaration
#: (``handles_sigterm``, default True: an image's own server).
PROGRAM_SIGNALS: Mapping[str, Signals] = {
    **dict.fromkeys(("sleep", "tail", "cat", "yes", "python", "python3", "node", "ping", "watch",
                     "sh", "bash", "ash", "dash"), _IGNORES_AS_PID1),
    **dict.fromkeys(("nginx", "httpd", "apache2", "redis-server", "postgres", "mysqld", "memcached", "caddy",
                     "pause", "etcd", "coredns", "kube-apiserver", "agnhost"), _CLEAN_EXIT),
    "java": Signals(True, SIGTERM_EXIT_CODE),  # the JVM runs its shutdown hooks, then exits 143
}
#: Images whose own program (no ``command``) is known, by repository (docker.io names short).
IMAGE_PROGRAMS: Mapping[str, str] = {
    "nginx": "nginx", "httpd": "httpd", "redis": "redis-server", "postgres": "postgres", "mysql": "mysqld",
    "memcached": "memcached", "caddy": "caddy", "registry.k8s.io/pause": "pause",
    "registry.k8s.io/e2e-test-images/agnhost": "agnhost",
}
_SHELLS = frozenset({"sh", "bash", "ash", "dash"})
_EXEC = re.compile(r"(?:^|[;&|\n])\s*exec\s+([^\s;&|]+)")


def signal_overlay(argv: Sequence[str], image: str, share_process_namespace: bool = False) -> Overlay:
    """The behaviour fields the program's SIGTERM handling decides, or ``()`` when the
    program is not in the table. ``argv``: the container's program (``[]``: the image's own,
    looked up by ``image`` in :data:`IMAGE_PROGRAMS`)."""
    name = posixpath.basename(argv[0]) if argv else IMAGE_PROGRAMS.get(familiar_repository(image), "")
    signals = PROGRAM_SIGNALS.get(pid1_program(argv) if argv else name)
    if signals is None:
        return ()
    if not signals.handles and share_process_namespace:
        signals = Signals(True, SIGTERM_EXIT_CODE)  # pause is PID 1: the default action applies
    return (("handles_sigterm", signals.handles), ("stop_delay_s", 0.0), ("stop_exit_code", signals.exit_code))


def pid1_program(argv: Sequence[str]) -> str:
    """The basename of the program that ends up as PID 1: ``argv[0]``'s, or for
    ``sh -c '… exec PROGRAM …'`` the last ``exec``'s (the shell becomes that program)."""
    name = posixpath.basename(argv[0]) if argv else ""
    if name in _SHELLS and len(argv) >= 3 and argv[1] == "-c":
        replaced = _EXEC.findall(argv[2])
        if replaced:
            return posixpath.basename(replaced[-1])
    return name


def is_known_server(argv: Sequence[str]) -> bool:
    """Is the program a server this table knows (``nginx``, ``redis-server``…)? Running until
    stopped is what it does, so nothing about it goes unsimulated that its behaviour decides."""
    signals = PROGRAM_SIGNALS.get(pid1_program(argv))
    return signals is not None and signals.handles


def container_shares_pid_namespace(pod: Mapping[str, Any]) -> bool:
    return bool((pod.get("spec") or {}).get("shareProcessNamespace"))
