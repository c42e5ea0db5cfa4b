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
from typing import Any, Mapping, Sequence

from fakekube.kubelet import execs, shell
from fakekube.kubelet.behaviour import MAX_DURATION_S, LogLine, Overlay
from fakekube.kubelet.execs import ExecResult

#: Commands a program may run besides ``sleep`` and the shells: their output depends only on
#: the pod (``tar``, which only ``kubectl cp`` uses, is left out).
PROGRAM_COMMANDS = frozenset({"true", "false", "echo", "hostname", "env", "printenv", "printf", "pwd", "whoami", "id",
                              "uname"})
#: How many rounds of an endless loop (``while true; do …; done``) are simulated: enough for
#: hours of a periodic log line; after them the container runs on with no more output.
MAX_LOOP_ROUNDS = 1000
#: What a program's first word must name for the program to be simulated at all.
_FIRST_WORDS = PROGRAM_COMMANDS | execs.SHELLS | {"sleep"}

#: ``sleep`` suffixes (GNU coreutils and busybox): seconds per unit.
_SLEEP_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_SLEEP_ARG = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([smhd]?)")
_INFINITY = frozenset({"inf", "infinity"})


class _Unknown(Exception):
    """The program does something this model does not simulate."""


class _Forever(Exception):
    """The program reached ``sleep infinity``: it runs until stopped."""


def program_overlay(pod: Mapping[str, Any], container: Mapping[str, Any]) -> Overlay:
    """The behaviour fields the container's own program decides (``run_for_s``, ``exit_code``,
    ``log_lines``), or ``()`` when its program is not known."""
    argv = program_argv(pod, container)
    if not argv or _name(argv[0]) not in _FIRST_WORDS:
        return ()
    process = _Process(pod, container)
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


class _Process:
    """One run of a program: a clock (seconds since the container started) and its log."""

    def __init__(self, pod: Mapping[str, Any], container: Mapping[str, Any]) -> None:
        self.pod, self.container = pod, container
        self.clock_s = 0.0
        self.lines: list[LogLine] = []
        self._depth = 0

    def run(self, argv: list[str]) -> ExecResult:
        """Run one command (the program itself, or a command of a script)."""
        name = _name(argv[0]) if argv else ""
        if name in execs.SHELLS:
            return self._shell(argv)
        if name == "sleep":
            seconds = sleep_seconds(argv[1:])
            if seconds is None:
                raise _Unknown
            if math.isinf(seconds):
                raise _Forever
            self.clock_s += seconds
            return ExecResult()
        if name not in PROGRAM_COMMANDS:
            raise _Unknown
        result = execs.run((), argv, self.pod, self.container, exec_id_="")
        self._log(result.stdout + result.stderr)
        return result

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
        output logged at the times they reach); then it runs on silently."""
        if round_number >= MAX_LOOP_ROUNDS:
            raise _Forever

    def _log(self, output: bytes) -> None:
        text = output.decode("utf-8", "replace")
        for line in text.splitlines():
            self.lines.append(LogLine(self.clock_s, line))
