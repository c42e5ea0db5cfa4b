"""A container's own program, when the kubelet can tell what it does from the pod alone.

A simulated container runs no process: its behaviour is data (behaviour.py), and an image
the data does not name runs forever. But a container whose ``command``/``args`` is a short
script of commands whose effect is known — ``echo hello``, ``sleep 30``, ``sh -c 'echo start;
sleep 5; exit 3'`` — should do what that script does, as it would in a real cluster: write
its output to the log, take the time its ``sleep``\\ s take, and exit with its exit code. That
is what makes ``kubectl run --restart=Never … -- echo hi`` succeed and
``kubectl create job … -- echo hello`` complete.

:func:`program_overlay` reads the program from the container spec:

* its argv is ``command`` + ``args``, with the kubelet's ``$(VAR)`` expansion from the
  container's ``env`` (execs.expand_references); with ``args`` alone (the image's
  entrypoint unknown) the args are the program when their first word is a known command, as
  in an image without an entrypoint (busybox, alpine) or whose entrypoint runs ``"$@"``;
* the known commands are ``true``, ``false``, ``echo``, ``printf``, ``hostname``, ``env``,
  ``printenv``, ``pwd``, ``whoami``, ``id``, ``uname`` (answered as an exec answers them,
  kubelet/execs.py), ``sleep`` (seconds with an optional ``s``/``m``/``h``/``d`` suffix,
  several summed; ``infinity``: runs forever), and ``sh -c``
  (also bash, ash, dash) scripts of those, with ``;``, ``&&``, ``||``, lines, ``$VARIABLES``,
  ``exit N``, ``for NAME in WORDS`` loops and endless ``while true`` loops (their first
  :data:`MAX_LOOP_ROUNDS` rounds; kubelet/shell.py);
* stdout and stderr lines go to the log at the second they are written (since the start).

Anything else — an unknown command anywhere in the script, syntax the shell model does not
simulate, a shell without ``-c`` — makes the program unknown, and the container keeps the
behaviour its image and annotations give (by default: runs forever), as before. Pure: the
same pod gives the same answer.
"""

from __future__ import annotations

import math
import posixpath
import re
from datetime import datetime, timedelta
from typing import Any, Mapping, Sequence

from fakekube.kubelet import execs, shell
from fakekube.kubelet.behaviour import MAX_DURATION_S, LogLine, Overlay
from fakekube.kubelet.execs import ExecResult
from fakekube.kubelet.termination import StopResponse

#: Commands a program may run besides ``sleep`` and the shells: their output depends only on
#: the pod, and ``date``'s on when the program runs (``tar``, which only ``kubectl cp`` uses,
#: is left out).
PROGRAM_COMMANDS = frozenset({"true", "false", "echo", "hostname", "env", "printenv", "printf", "pwd", "whoami", "id",
                              "uname", "date"})
#: The signal names a ``trap`` may name for SIGTERM.
_TERM = frozenset({"TERM", "SIGTERM", "15"})
#: How many rounds of an endless loop (``while true; do …; done``) are simulated: enough for
#: hours of a periodic log line; after them the container runs on with no more output.
MAX_LOOP_ROUNDS = 1000
#: What a program's first word must name for the program to be simulated at all.
_FIRST_WORDS = PROGRAM_COMMANDS | execs.SHELLS | {"sleep"}

#: ``sleep`` suffixes (GNU coreutils and busybox): seconds per unit.
_SLEEP_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_SLEEP_ARG = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([smhd]?)")
_INFINITY = frozenset({"inf", "infinity"})
#: Does a trap's action end the program?
_EXITS = re.compile(r"(?:^|[;&|\s])exit(?:\s|$|;)")


class _Unknown(Exception):
    """The program does something this model does not simulate."""


class _Forever(Exception):
    """The program reached ``sleep infinity``: it runs until stopped."""


def program_overlay(pod: Mapping[str, Any], container: Mapping[str, Any],
                    started_at: datetime | None = None) -> Overlay:
    """The behaviour fields the container's own program decides (``run_for_s``, ``exit_code``,
    ``log_lines``), or ``()`` when its program is not known. ``started_at``: when this run
    starts (``date`` prints the time; without it, a program that runs ``date`` is not known)."""
    argv = program_argv(pod, container)
    if not argv or _name(argv[0]) not in _FIRST_WORDS:
        return ()
    process = _Process(pod, container, started_at)
    try:
        result = process.run(argv)
    except _Unknown:
        return ()
    except _Forever:
        return (("log_lines", tuple(process.lines)), ("run_for_s", None))
    if process.clock_s > MAX_DURATION_S:
        return (("log_lines", tuple(process.lines)), ("run_for_s", None))
    return (("exit_code", result.exit_code), ("log_lines", tuple(process.lines)), ("run_for_s", process.clock_s))


def program_argv(pod: Mapping[str, Any], container: Mapping[str, Any]) -> list[str]:
    """``command`` + ``args`` after the kubelet's ``$(VAR)`` expansion; ``[]`` when the
    program is the image's (no command, and args whose first word is not a known command)."""
    command, args = container.get("command") or [], container.get("args") or []
    if not all(isinstance(word, str) for word in list(command) + list(args)):
        return []
    env = execs.spec_environment(pod, container)
    argv = [execs.expand_references(word, env) for word in list(command) + list(args)]
    if not command and (not argv or _name(argv[0]) not in _FIRST_WORDS):
        return []
    return argv


def sleep_seconds(args: Sequence[str]) -> float | None:
    """How long ``sleep ARGS`` sleeps (``math.inf`` for ``infinity``); None when an argument
    is not a duration (the real ``sleep`` would fail: not simulated)."""
    if not args:
        return None
    total = 0.0
    for arg in args:
        if arg.lower() in _INFINITY:
            return math.inf
        match = _SLEEP_ARG.fullmatch(arg)
        if match is None:
            return None
        total += float(match.group(1)) * _SLEEP_UNITS[match.group(2)]
    return total


def _name(word: str) -> str:
    return posixpath.basename(word)


def stop_response(pod: Mapping[str, Any], container: Mapping[str, Any], started_at: datetime,
                  signal_s: float) -> StopResponse | None:
    """What the container's program does when SIGTERM arrives ``signal_s`` seconds after it
    started, when its script installed a ``trap`` for TERM; None otherwise (its behaviour's
    ``handles_sigterm`` then decides). The kubelet's interface to the shell model
    (kubelet/termination.py): the program is run again with the signal arriving at that
    instant. As in ``sh``, the trap runs once the foreground command has finished (a ``sleep
    600`` finishes first); its output is logged then, its ``exit N`` ends the program with N,
    and a trap that does not exit lets the script go on."""
    argv = program_argv(pod, container)
    if not argv or _name(argv[0]) not in execs.SHELLS:
        return None
    process = _Process(pod, container, started_at, signal_s)
    try:
        result = process.run(argv)
        process.take_signal()  # the script's last command finished: a pending trap runs now
    except _Signalled as signalled:
        return StopResponse(max(process.clock_s - signal_s, 0.0), signalled.code, process.stop_lines())
    except (_Unknown, _Forever):
        return None if process.trap is None else StopResponse(None, 0, process.stop_lines())
    if process.trap is None:
        return None
    return StopResponse(max(process.clock_s - signal_s, 0.0), result.exit_code, process.stop_lines())


class _Signalled(Exception):
    """The TERM trap ran ``exit``: the program ends with ``code``."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class _Process:
    """One run of a program: a clock (seconds since the container started) and its log;
    with ``signal_s``, SIGTERM arrives then (see :func:`stop_response`)."""

    def __init__(self, pod: Mapping[str, Any], container: Mapping[str, Any], started_at: datetime | None = None,
                 signal_s: float | None = None) -> None:
        self.pod, self.container = pod, container
        self.started_at = started_at
        self.clock_s = 0.0
        self.lines: list[LogLine] = []
        self._depth = 0
        self.signal_s = signal_s
        self._round_starts: list[float] = []
        #: The TERM trap's action (None: no trap), and whether it has run.
        self.trap: str | None = None
        self._trapped = False

    def stop_lines(self) -> tuple[LogLine, ...]:
        """What the program wrote from the signal on (it replaces, in the log, what the
        program would have written from then on had no signal come)."""
        assert self.signal_s is not None
        return tuple(line for line in self.lines if line.at_s >= self.signal_s)

    def run(self, argv: list[str]) -> ExecResult:
        """Run one command (the program itself, or a command of a script)."""
        name = _name(argv[0]) if argv else ""
        if name in execs.SHELLS:
            return self._shell(argv)
        self.take_signal()
        if name == "trap":
            return self._set_trap(argv[1:])
        if name == "sleep":
            seconds = sleep_seconds(argv[1:])
            if seconds is None:
                raise _Unknown
            if math.isinf(seconds):
                if self.signal_s is not None and self.trap is not None:
                    self.clock_s = max(self.clock_s, self.signal_s)
                raise _Forever
            self.clock_s += seconds
            return ExecResult()
        if name not in PROGRAM_COMMANDS or (name == "date" and self.started_at is None):
            raise _Unknown
        now = self.started_at + timedelta(seconds=self.clock_s) if self.started_at is not None else None
        result = execs.run((), argv, self.pod, self.container, exec_id_="", now=now)
        self._log(result.stdout + result.stderr)
        return result

    def _set_trap(self, args: list[str]) -> ExecResult:
        """``trap ACTION SIGNAL...``: only TERM's action matters to the kubelet; ``trap - TERM``
        or an empty action resets or ignores it."""
        if len(args) >= 2 and _TERM & set(args[1:]):
            self.trap = args[0] if args[0] not in ("-", "") else None
        return ExecResult()

    def take_signal(self) -> None:
        """Between two commands: a SIGTERM that arrived meanwhile runs the trap now."""
        if self.signal_s is None or self._trapped or self.trap is None or self.clock_s < self.signal_s:
            return
        self._trapped = True
        result = execs.run_script(self.trap, self.pod, self.container, self.run)
        if _EXITS.search(self.trap):
            raise _Signalled(result.exit_code)

    def _shell(self, argv: list[str]) -> ExecResult:
        if len(argv) < 3 or argv[1] != "-c" or self._depth >= execs.MAX_SHELL_DEPTH:
            raise _Unknown  # a shell reading stdin, or nested past the exec model's bound
        try:
            shell.parse(argv[2])
        except shell.ScriptError:
            raise _Unknown from None  # syntax the shell model does not simulate
        self._depth += 1
        result = execs.run_script(argv[2], self.pod, self.container, self.run, self._endless_round)
        self._depth -= 1
        return result

    def _endless_round(self, round_number: int) -> None:
        """``while true``: its first :data:`MAX_LOOP_ROUNDS` rounds are simulated (their
        output logged at the times they reach); then it runs on silently. Waiting for a
        signal, whole rounds before it are skipped once two rounds took the same time (a
        loop's rounds repeat), so a trap at hour ten costs two rounds, not thirty thousand."""
        self.take_signal()
        if self.signal_s is not None and not self._trapped and self.trap is not None:
            self._skip_rounds(round_number)
            return
        if round_number >= MAX_LOOP_ROUNDS:
            raise _Forever

    def _skip_rounds(self, round_number: int) -> None:
        starts = self._round_starts
        starts.append(self.clock_s)
        if len(starts) >= 3 and self.signal_s is not None:
            period = starts[-1] - starts[-2]
            if period > 0 and period == starts[-2] - starts[-3] and self.clock_s + period <= self.signal_s:
                skipped = math.floor((self.signal_s - self.clock_s) / period)
                self.clock_s += skipped * period
                starts.clear()
        if len(starts) > MAX_LOOP_ROUNDS:
            raise _Forever  # rounds that never repeat nor reach the signal: not simulated

    def _log(self, output: bytes) -> None:
        text = output.decode("utf-8", "replace")
        for line in text.splitlines():
            self.lines.append(LogLine(self.clock_s, line))
