"""A container's own program: what its ``command``/``args`` do, run when the container starts.

A simulated container runs no process, but a program the model can run — ``echo hello``,
``sleep 30``, ``sh -c 'for i in $(seq 0 9); do echo $i; done'``, a script from a ConfigMap —
does what it would in a real cluster: its output goes to the log at the second it is written,
``sleep`` takes its time, files it writes appear when it writes them (kubelet/podfs.py), and it
exits with its exit code. That is what makes ``kubectl run --restart=Never … -- echo hi``
succeed and a Job's script complete.

:func:`run_program` runs it once, at the container's start, against the container's
filesystem as it is then (what an init container wrote is there), on its own clock, bounded
(kubelet/shell.py's limits: :data:`PROGRAM_LIMITS`). Its argv is ``command`` + ``args`` with
the kubelet's ``$(VAR)`` expansion (kubelet/execs.py); with ``args`` alone (the image's
entrypoint unknown) the args are the program when their first word is a known command, as in
an image whose entrypoint runs ``"$@"``. What it cannot tell:

* a command the model does not know in an application image (``nginx``, ``python app.py``): the
  image's own software takes over there (:attr:`ProgramRun.handed_over`) and the container's
  behaviour (image rules, annotation; by default: runs forever) decides the rest; its log so
  far is kept. In a base image (busybox, alpine, debian…) such a command is not found (127);
* a program that never ends (``sleep infinity``, ``tail -f``, an endless loop, past the
  limits): it runs on, writing nothing more (``run_for_s`` None).

SIGTERM (when the kubelet stops the container: kubelet/termination.py): :func:`stop_response`
says what the program does with it — nothing, as PID 1 without a ``trap`` (``sleep``, loops:
killed at the end of the grace period), or run its ``trap … TERM`` action once the foreground
command it waits on ends (a shell runs traps between commands).
"""

from __future__ import annotations

import math
import posixpath
from datetime import datetime
from typing import Any, Mapping, NamedTuple, Sequence

from fakekube.kubelet import coreutils, execs, shellsyntax
from fakekube.kubelet.behaviour import MAX_DURATION_S, ExecCommand, LogLine, Overlay
from fakekube.kubelet.fs import FileSystem
from fakekube.kubelet.termination import StopResponse
from fakekube.kubelet.shell import (
    Environment, Forever, HandOver, Limits, LogSink, NotSimulated, Process, Run, Shell, ShellExit, Source, Streams,
    _Fatal)

#: A program's bounds: simple commands (a `while true; do date; sleep 5; done` loop: 2,000 rounds,
#: 2.8 hours of log) and log bytes; past either it runs on without writing more.
PROGRAM_LIMITS = Limits(commands=6_000, output_bytes=1024 * 1024)
#: The first words that make ``args`` alone a program (the image's entrypoint unknown).
_FIRST_WORDS = frozenset(coreutils.COMMANDS) | coreutils.SHELLS


class TermPlan(NamedTuple):
    """A program's ``trap … TERM``: what the action writes (seconds after it starts), whether it
    ends the program and how, and the foreground waits during which it is deferred."""

    log_lines: tuple[LogLine, ...]
    exits: bool
    exit_code: int
    duration_s: float
    waits: tuple[tuple[float, float], ...]
    #: When (seconds after the program started) the ``trap`` was set: a SIGTERM before then
    #: meets a shell without it (ignored, as PID 1 ignores a signal it has no handler for).
    set_at_s: float = 0.0


class ProgramRun(NamedTuple):
    """What a container's program does (plain data; see the module docstring)."""

    log_lines: tuple[LogLine, ...] = ()
    #: Seconds until it exits by itself; None: it runs until stopped (or the image decides).
    run_for_s: float | None = None
    exit_code: int = 0
    #: The image's own software runs from the end of the log on.
    handed_over: bool = False
    #: Its ``trap … TERM`` (None: SIGTERM is ignored, as PID 1 without a handler ignores it).
    term: TermPlan | None = None
    #: The program runc cannot find in a base image whose contents the model knows (``myserver``
    #: in busybox, ``/app/run`` nowhere on its filesystem): the container fails to start
    #: (StartError, :func:`start_error`) instead of running.
    missing: str | None = None

    def overlay(self) -> Overlay:
        """The behaviour fields the program decides (kubelet/behaviour.py's layer 2)."""
        if self.missing is not None:
            return ()  # it never runs: the kubelet's StartError decides the rest
        if self.handed_over:
            return (("log_lines", self.log_lines),) if self.log_lines else ()
        if self.run_for_s is None:
            return (("log_lines", self.log_lines), ("run_for_s", None))
        return (("exit_code", self.exit_code), ("log_lines", self.log_lines), ("run_for_s", self.run_for_s))


def program_argv(pod: Mapping[str, Any], container: Mapping[str, Any]) -> list[str]:
    """``command`` + ``args`` after the kubelet's ``$(VAR)`` expansion; ``[]`` when the
    program is the image's (no command, and args whose first word is not a known command)."""
    command, args = container.get("command") or [], container.get("args") or []
    if not all(isinstance(word, str) for word in list(command) + list(args)):
        return []
    env = execs.spec_environment(pod, container)
    argv = [execs.expand_references(word, env) for word in list(command) + list(args)]
    if not command and (not argv or posixpath.basename(argv[0]) not in _FIRST_WORDS):
        return []
    return argv


def sleep_seconds(args: Sequence[str]) -> float | None:
    """How long ``sleep ARGS`` sleeps (kubelet/coreutils.py)."""
    return coreutils.sleep_seconds(args)


def run_program(pod: Mapping[str, Any], container: Mapping[str, Any], fs: FileSystem, started: datetime,
                commands: Sequence[ExecCommand] = (), network: object | None = None) -> ProgramRun | None:
    """Run the container's program from ``started`` on ``fs`` (an overlay: its writes are
    recorded with their times); None when the program is the image's own (nothing to run)."""
    argv = program_argv(pod, container)
    if not argv:
        return None
    from fakekube.kubelet import rootfs
    family = rootfs.family(str(container.get("image") or ""))
    toolbox = coreutils.Toolbox(tuple(commands), family.missing, network, family.bin_dir)
    environment = Environment(pod, container, started, coreutils.dispatcher(toolbox),
                              unknown_is_missing=family.base)
    run = Run(environment, fs, PROGRAM_LIMITS, program=True)
    out = LogSink(run)
    shell = Shell(run, dict(execs.environment_of(pod, container)), Streams(Source(), out, out))
    outcome = _execute(shell, environment, argv)
    out.close()
    if outcome[0] == "unknown" and not run.log and is_missing(argv[0], family.name, fs):
        return ProgramRun(missing=argv[0])
    return _result(run, shell, outcome)


def is_missing(program: str, family_name: str, fs: FileSystem | None = None) -> bool:
    """Does runc fail to find ``program`` in an image of this family? Only where fakekube knows
    every program the image can hold (busybox, alpine: kubelet/rootfs.py): a name none of them
    has, or a path that is neither one of them in a program directory nor a file on ``fs``
    (a volume may put one there)."""
    from fakekube.kubelet import rootfs
    known = rootfs.known_programs(family_name)
    if known is None:
        return False
    if "/" not in program:
        return program not in known
    folder, name = posixpath.split(posixpath.normpath(program))
    if folder in rootfs.PROGRAM_DIRS and name in known:
        return False
    return fs is None or fs.lookup(program) is None


#: containerd's wrapping of runc's error when a container's process cannot be started
#: (``failed to create containerd task``; the kubelet's StartContainer fails with it).
_CREATE_TASK_FAILED = ("failed to create containerd task: failed to create shim task: OCI runtime create failed: "
                       "runc create failed: unable to start container process: ")


def start_error(program: ProgramRun | None) -> str | None:
    """What containerd answers when the program is missing (None: it starts): Go's
    ``exec.LookPath`` error, as runc reports it — a name searched on ``$PATH``, or a path
    that ``stat`` does not find."""
    if program is None or program.missing is None:
        return None
    name = program.missing
    if "/" in name:
        return f'{_CREATE_TASK_FAILED}exec: "{name}": stat {name}: no such file or directory: unknown'
    return f'{_CREATE_TASK_FAILED}exec: "{name}": executable file not found in $PATH: unknown'


def _execute(shell: Shell, environment: Environment, argv: list[str]) -> tuple[str, int]:
    """("exit", status) | ("forever", 0) | ("handover", 0) | ("unknown", 0)."""
    try:
        status = environment.command(Process(shell, argv, shell.streams))
    except Forever:
        return "forever", 0
    except HandOver:
        return "handover", 0
    except ShellExit as done:
        return "exit", done.status
    except (NotSimulated, _Fatal) as problem:
        shell.streams.stderr.write(f"{problem}\n".encode())
        return "exit", 2
    if status is None:
        return "unknown", 0  # the first word names the image's own software
    return "exit", status


def _result(run: Run, shell: Shell, outcome: tuple[str, int]) -> ProgramRun | None:
    kind, status = outcome
    lines = tuple(LogLine(at_s, text) for at_s, _, text in sorted(run.log))
    if kind == "unknown" and not lines:
        return None
    term = _term_plan(run, run.main_shell or shell)
    if kind in ("handover", "unknown"):
        return ProgramRun(lines, None, 0, handed_over=True, term=term)
    if kind == "forever" or run.clock_s > MAX_DURATION_S:
        return ProgramRun(lines, None, 0, term=term)
    return ProgramRun(lines, run.clock_s, status & 0xFF, term=term)


def _term_plan(run: Run, shell: Shell) -> TermPlan | None:
    """The ``trap … TERM`` in force when the simulation ended, run once to see what it writes."""
    action = _term_action(shell)
    if not action:
        return None
    handler_run = Run(run.environment, run.fs, Limits(1000, 64 * 1024), program=True)
    sink = LogSink(handler_run)
    handler = Shell(handler_run, shell.variables, Streams(Source(), sink, sink))
    handler.functions = dict(shell.functions)
    exits, code = False, 0
    try:
        handler.sequence(shellsyntax.parse(action), handler.streams)
    except ShellExit as done:
        exits, code = True, done.status
    except (Forever, HandOver, NotSimulated, _Fatal, shellsyntax.ScriptError):
        pass
    sink.close()
    lines = tuple(LogLine(at_s, text) for at_s, _, text in sorted(handler_run.log))
    return TermPlan(lines, exits, code & 0xFF, handler_run.clock_s, tuple(run.waits), shell.trap_set_s.get("TERM", 0.0))


def _term_action(shell: Shell) -> str | None:
    return shell.traps.get("TERM") or None


def stop_response(program: ProgramRun | None, signal_s: float) -> StopResponse | None:
    """What the container's program does with SIGTERM arriving ``signal_s`` seconds after it
    started (kubelet/termination.py's interface to the shell model): None when it has no
    ``trap … TERM`` by then (the program table then decides: PID 1 ignores a signal it has no
    handler for). Else, as ``sh`` does, the trap runs once the foreground command in progress has
    finished (a ``sleep 600`` finishes first; ``sleep infinity`` never does); its ``exit N``
    ends the program with N, a trap that does not exit lets the script go on to its own end.
    ``log_lines``: the program's log from the signal on, which replaces what it would have
    written from then on."""
    if program is None or program.term is None or signal_s < program.term.set_at_s:
        return None
    plan = program.term
    wait_end_s = _foreground_end(plan.waits, signal_s, program.run_for_s is None)
    before = tuple(line for line in program.log_lines if signal_s <= line.at_s < wait_end_s)
    if math.isinf(wait_end_s):
        return StopResponse(None, 0, before)
    trap_lines = tuple(LogLine(wait_end_s + line.at_s, line.text) for line in plan.log_lines)
    if plan.exits:
        return StopResponse(wait_end_s - signal_s + plan.duration_s, plan.exit_code, before + trap_lines)
    after = tuple(LogLine(line.at_s + plan.duration_s, line.text) for line in program.log_lines
                  if line.at_s >= wait_end_s)
    lines = before + trap_lines + after
    if program.run_for_s is None or program.handed_over:
        return StopResponse(None, 0, lines)
    return StopResponse(max(program.run_for_s, wait_end_s) + plan.duration_s - signal_s, program.exit_code, lines)


def _foreground_end(waits: Sequence[tuple[float, float]], at_s: float, endless: bool) -> float:
    """When the foreground wait in progress at ``at_s`` ends (``at_s`` when none is). Past the
    simulated part of an endless program whose last waits repeat with one period (a
    ``while true; do …; sleep 5; done`` loop), the waits are taken to go on repeating."""
    found = next((end_s for start_s, end_s in waits if start_s <= at_s < end_s), None)
    if found is not None:
        return found
    if endless and len(waits) >= 3 and at_s >= waits[-1][1]:
        (start_a, end_a), (start_b, end_b), (start_c, end_c) = waits[-3:]
        period_s = start_c - start_b
        if period_s > 0 and start_b - start_a == period_s and end_c - start_c == end_b - start_b:
            rounds = math.floor((at_s - start_c) / period_s)
            start_s, end_s = start_c + rounds * period_s, end_c + rounds * period_s
            if start_s <= at_s < end_s:
                return end_s
    return at_s


def scratch_run(pod: Mapping[str, Any], container: Mapping[str, Any], started: datetime | None = None) -> ProgramRun | None:
    """The program run on a scratch copy of the image's files (no volumes, no network): for
    callers without a kubelet's filesystems (unit tests)."""
    fs = execs.scratch_filesystem(pod, container)
    return run_program(pod, container, fs, started or execs.EPOCH)
