"""The shell of a simulated container: ``sh``/``bash`` scripts run on its filesystem, in virtual time.

Scripts come from ``command``/``args`` (kubelet/programs.py), ``kubectl exec … -- sh -c`` and an
exec's stdin (kubelet/execs.py); :mod:`fakekube.kubelet.shellsyntax` parses them. What runs:

* simple commands with ``NAME=value`` prefixes, words expanded as POSIX says: ``$NAME`` and
  ``${NAME…}`` (``:-`` ``:=`` ``:+`` ``:?`` ``#`` ``##`` ``%`` ``%%`` ``/`` ``//`` ``${#NAME}``),
  ``$(…)`` and backquotes, ``$((…))`` (kubelet/arith.py), ``~``, field splitting on ``IFS``,
  globbing against the filesystem, quote removal; ``$? $# $@ $* $0…$9 $$ $!``;
* redirections ``> >> >| < <> >&N <&N N>&- &> <<EOF <<-EOF <<<``, to files, ``/dev/null``,
  ``/dev/stdout``, ``/dev/stderr``;
* pipelines (the stages run one after the other, each reading what the one before wrote),
  ``!``, ``&&``, ``||``, ``;``, ``&`` (a background job runs from the instant it starts, on its
  own clock; ``wait`` waits for it), ``{ }``, ``( )``, ``if``/``elif``/``else``, ``while``,
  ``until``, ``for``, ``for ((;;))``, ``case``, functions with ``local`` and ``return``,
  ``break``/``continue``, ``[ ]``/``test``/``[[ ]]``, ``(( ))``;
* the builtins ``cd export unset set shift local readonly declare eval exec exit return trap read
  wait source . : true false command type getopts umask ulimit hash``, with ``set -e -u -x`` and
  ``-o pipefail``; the commands people use are kubelet/coreutils.py's.

Time: every command takes no time except ``sleep`` (and ``wait`` for a background job), which
moves the run's clock; output is stamped with that clock (a program's log lines, ``date``).

Bounds (a run must end, and cheaply): :attr:`Limits.commands` simple commands per run
(loops count each round's commands) and :attr:`Limits.output_bytes` of output; past either,
an exec fails with exit 2 naming the limit, and a container's program is taken to go on
running without writing more (it is simulated no further). Nesting (functions, substitutions,
``sh -c``) stops at :data:`MAX_DEPTH`, function calls at :data:`MAX_CALL_DEPTH`.

Whatever is not simulated fails when it runs, loudly: a command the image would not have
is ``sh: 1: NAME: not found`` (exit 127); syntax this shell does not run exits 2 naming it.
A command this model does not know, in an image whose software it does not know (an
application image: ``nginx``, ``python``, ``myapp``), is that image's own software: a container
program *hands over* to it there (:class:`HandOver`) and the container does what its behaviour
says from then on. Pure apart from the filesystem it is given: the same script, inputs and
instant give the same result.
"""

from __future__ import annotations

import math
import posixpath
import re
from datetime import datetime, timedelta
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

from fakekube.kubelet import arith, shellsyntax as ast
from fakekube.kubelet.fs import DIR, FileSystem, FsError

#: How deep substitutions, subshells and nested ``sh -c`` may nest, and function calls.
MAX_DEPTH = 16
MAX_CALL_DEPTH = 64
NOT_FOUND_EXIT_CODE = 127
NOT_EXECUTABLE_EXIT_CODE = 126
SYNTAX_EXIT_CODE = 2
SHELLS = frozenset({"sh", "bash", "ash", "dash"})
#: Signals ``trap`` names, by number (kill -l on Linux).
SIGNALS = {"0": "EXIT", "1": "HUP", "2": "INT", "3": "QUIT", "6": "ABRT", "9": "KILL", "10": "USR1", "12": "USR2",
           "13": "PIPE", "14": "ALRM", "15": "TERM", "17": "CHLD"}


class Limits(NamedTuple):
    """What one run may do (the module docstring's bounds)."""

    commands: int = 100_000
    output_bytes: int = 256 * 1024 * 1024


# -- control flow --------------------------------------------------------------------------

class ShellExit(Exception):
    """``exit`` (or ``set -e``, or a fatal error): the shell ends with ``status``."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class _Return(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class _LoopControl(Exception):
    def __init__(self, kind: str, levels: int) -> None:
        super().__init__(kind, levels)
        self.kind, self.levels = kind, levels


class Forever(Exception):
    """The run reached something that never ends (``sleep infinity``, ``tail -f``, an endless
    loop past the budget): a program runs on from here, writing nothing more."""


class HandOver(Exception):
    """An application's own command: the container program is the image's software from here."""

    def __init__(self, argv: Sequence[str]) -> None:
        super().__init__(" ".join(argv))
        self.argv = list(argv)


class NotSimulated(Exception):
    """Something this model does not run; ``str()`` says what (written to stderr, exit 2)."""


# -- streams -------------------------------------------------------------------------------

class Source:
    """A process's standard input: bytes read front to back (shared by the commands that read it)."""

    def __init__(self, data: bytes = b"") -> None:
        self.data = data
        self.position = 0

    def read(self) -> bytes:
        rest = self.data[self.position:]
        self.position = len(self.data)
        return rest

    def readline(self) -> bytes | None:
        if self.position >= len(self.data):
            return None
        end = self.data.find(b"\n", self.position)
        end = len(self.data) if end < 0 else end + 1
        line = self.data[self.position:end]
        self.position = end
        return line


class Sink:
    """Where a process's output goes."""

    def write(self, data: bytes) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """The redirection ends (a file is written)."""


class Capture(Sink):
    """Output kept in memory (a pipe, a substitution, an exec's answer), bounded."""

    def __init__(self, run: "Run") -> None:
        self.buffer = bytearray()
        self.run = run

    def write(self, data: bytes) -> None:
        self.run.spend_output(len(data))
        self.buffer += data


class NullSink(Sink):
    def write(self, data: bytes) -> None:
        pass


class FileSink(Sink):
    """A redirection to a file: written when the redirection ends (or when it would exceed the
    run's output budget)."""

    def __init__(self, fs: FileSystem, path: str, append: bool) -> None:
        self.fs, self.path, self.append = fs, path, append
        self.pending = bytearray()

    def write(self, data: bytes) -> None:
        self.pending += data

    def close(self) -> None:
        if self.pending:
            data, self.pending = bytes(self.pending), bytearray()
            self.fs.write(self.path, data, append=True)


class LogSink(Sink):
    """A container program's stdout or stderr: its log, each line stamped with the run's clock
    when it is completed."""

    def __init__(self, run: "Run") -> None:
        self.run = run
        self.partial = b""

    def write(self, data: bytes) -> None:
        self.run.spend_output(len(data))
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        for line in lines:
            self.run.log.append((self.run.clock_s, len(self.run.log), line.decode("utf-8", "replace")))

    def close(self) -> None:
        if self.partial:
            self.run.log.append((self.run.clock_s, len(self.run.log), self.partial.decode("utf-8", "replace")))
            self.partial = b""


class Streams(NamedTuple):
    stdin: Source
    stdout: Sink
    stderr: Sink


# -- the run -------------------------------------------------------------------------------

class Environment(NamedTuple):
    """What a run knows of its container (all read-only)."""

    pod: Mapping[str, Any]
    container: Mapping[str, Any]
    #: The cluster instant the run starts at.
    started: datetime
    #: Runs a command that is not a shell builtin: (run context, argv, streams) → exit status, or
    #: None when no such command exists (kubelet/coreutils.py's ``dispatch``).
    command: Callable[["Process"], int | None]
    #: True: a command nobody knows is ``not found``; False: the image's own software (hand over).
    unknown_is_missing: bool = True


class Run:
    """The state every shell of one run shares: its clock, budgets, log and background jobs."""

    def __init__(self, environment: Environment, fs: FileSystem, limits: Limits = Limits(),
                 program: bool = False) -> None:
        self.environment = environment
        self.fs = fs
        self.limits = limits
        #: A container's own program (its output is the log, its end the container's).
        self.program = program
        self.clock_s = 0.0
        self.commands = 0
        self.output_bytes = 0
        #: Log lines of a program: (clock, order, text).
        self.log: list[tuple[float, int, str]] = []
        #: Foreground waits (``sleep``): a trapped TERM arriving then is handled when they end.
        self.waits: list[tuple[float, float]] = []
        #: Background jobs: pid → the clock when they end (inf: never).
        self.jobs: dict[int, float] = {}
        self.next_pid = 7
        self.last_background = 0
        self.random_state = 1
        #: How often the run read its clock (a loop that does is not in a steady state).
        self.clock_reads = 0
        #: The shell the run's program is (its traps answer SIGTERM), once one started.
        self.main_shell: "Shell | None" = None

    @property
    def now(self) -> datetime:
        self.clock_reads += 1
        try:
            return self.environment.started + timedelta(seconds=self.clock_s)
        except OverflowError:
            return datetime.max.replace(tzinfo=self.environment.started.tzinfo)

    def spend_command(self) -> None:
        self.commands += 1
        if self.commands > self.limits.commands:
            if self.program:
                raise Forever
            raise NotSimulated(f"sh: fakekube stops simulating a script after {self.limits.commands} commands")

    def spend_output(self, count: int) -> None:
        self.output_bytes += count
        if self.output_bytes > self.limits.output_bytes:
            if self.program:
                raise Forever
            raise NotSimulated(f"sh: fakekube stops simulating a script after {self.limits.output_bytes} bytes of "
                               f"output")

    def sleep(self, seconds: float) -> None:
        """A foreground wait: the clock moves (inf: the run never goes on)."""
        start = self.clock_s
        if math.isinf(seconds):
            self.waits.append((start, math.inf))
            raise Forever
        self.clock_s += seconds
        self.fs.elapsed_s = self.clock_s
        self.waits.append((start, self.clock_s))

    def advance_to(self, clock_s: float) -> None:
        """``wait``: the clock moves to a background job's end (not a deferring wait)."""
        if math.isinf(clock_s):
            raise Forever
        self.clock_s = max(self.clock_s, clock_s)
        self.fs.elapsed_s = self.clock_s


class Process:
    """One command being run: its argv, streams and shell (what a coreutil gets)."""

    def __init__(self, shell: "Shell", argv: list[str], streams: Streams) -> None:
        self.shell, self.argv, self.streams = shell, argv, streams
        self.name = posixpath.basename(argv[0]) if argv else ""
        self.args = argv[1:]

    @property
    def run(self) -> Run:
        return self.shell.run

    @property
    def fs(self) -> FileSystem:
        return self.shell.run.fs

    @property
    def env(self) -> dict[str, str]:
        return self.shell.exported_environment()

    def out(self, data: str | bytes) -> None:
        self.streams.stdout.write(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)

    def err(self, data: str | bytes) -> None:
        self.streams.stderr.write(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)

    def fail(self, message: str, status: int = 1) -> int:
        self.err(f"{self.name}: {message}\n")
        return status


# -- the shell ------------------------------------------------------------------------------

class Shell:
    """One shell process: variables, functions, positional parameters, options and traps."""

    def __init__(self, run: Run, variables: Mapping[str, str], streams: Streams, arg0: str = "sh",
                 positional: Sequence[str] = (), depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            raise NotSimulated(f"sh: fakekube does not simulate shells nested more than {MAX_DEPTH} deep")
        self.run = run
        self.variables: dict[str, str] = dict(variables)
        self.exported: set[str] = set(variables)
        self.readonly: set[str] = set()
        self.functions: dict[str, ast.Command] = {}
        self.positional = list(positional)
        self.arg0 = arg0
        self.status = 0
        self.streams = streams
        self.options: set[str] = set()
        self.traps: dict[str, str] = {}
        #: When (the run's clock, s) each trap in :attr:`traps` was last set: a signal that
        #: arrived before meets the shell without it (kubelet/programs.py's stop_response).
        self.trap_set_s: dict[str, float] = {}
        self.depth = depth
        self.pid = 1 if run.program and depth == 0 else run.next_pid
        self._locals: list[dict[str, str | None]] = []
        self._quiet_errexit = 0
        self.line = 1
        #: The status of the last ``$(…)`` of the command being expanded (an assignment's status).
        self.substitution_status: int | None = None

    # -- state copies -------------------------------------------------------------------------
    def subshell(self, streams: Streams | None = None) -> "Shell":
        """A ``( )``, a pipeline stage, a substitution: a copy that changes nothing here."""
        child = Shell(self.run, {}, streams or self.streams, self.arg0, self.positional, self.depth + 1)
        child.variables, child.exported, child.readonly = dict(self.variables), set(self.exported), set(self.readonly)
        child.functions, child.options = dict(self.functions), set(self.options)
        child.traps = {name: action for name, action in self.traps.items() if action == ""}
        child.status, child.pid = self.status, self.pid
        return child

    def exported_environment(self) -> dict[str, str]:
        return {name: value for name, value in self.variables.items() if name in self.exported}

    # -- running -------------------------------------------------------------------------------
    def run_script(self, script: str) -> int:
        """Parse and run ``script``; the status it ends with (``exit`` included)."""
        try:
            tree = ast.parse(script)
        except ast.ScriptError as error:
            self.streams.stderr.write(f"{error}\n".encode())
            return SYNTAX_EXIT_CODE
        return self.run_tree(tree)

    def run_tree(self, tree: ast.Seq) -> int:
        try:
            self.status = self.sequence(tree, self.streams)
        except ShellExit as done:
            self.status = done.status
        except (_Return, _LoopControl):
            pass
        self.run_exit_trap()
        return self.status

    def run_exit_trap(self) -> None:
        action = self.traps.pop("EXIT", None)
        if action:
            saved = self.status
            try:
                self.sequence(ast.parse(action), self.streams)
            except ShellExit as done:
                saved = done.status
            except ast.ScriptError:
                pass
            self.status = saved

    def sequence(self, seq: ast.Seq, streams: Streams) -> int:
        for command, background in seq.items:
            if background:
                self.status = self.background(command, streams)
            else:
                self.status = self.command(command, streams)
        return self.status

    def command(self, node: ast.Command, streams: Streams) -> int:
        handler = _HANDLERS.get(type(node))
        if handler is None:
            raise NotSimulated(f"sh: fakekube does not simulate {getattr(node, 'what', type(node).__name__)}")
        status: int = handler(self, node, streams)
        self.status = status
        return status

    def check_errexit(self, status: int) -> None:
        if status != 0 and "errexit" in self.options and self._quiet_errexit == 0:
            raise ShellExit(status)

    def quietly(self, node: ast.Command | ast.Seq, streams: Streams) -> int:
        """Run a condition (``if``, ``while``, left of ``&&``): ``set -e`` does not apply inside."""
        self._quiet_errexit += 1
        try:
            target: Any = node  # not narrowed: narrowing the recursive Command union costs mypy minutes
            if isinstance(target, ast.Seq):
                return self.sequence(target, streams)
            return self.command(target, streams)
        finally:
            self._quiet_errexit -= 1

    def background(self, command: ast.Command, streams: Streams) -> int:
        """``cmd &``: the job runs on its own clock from now; the script goes on at once."""
        run = self.run
        start = run.clock_s
        pid = run.next_pid
        run.next_pid += 1
        child = self.subshell(streams)
        child.pid = pid
        waits = len(run.waits)
        try:
            child.command(command, Streams(Source(), streams.stdout, streams.stderr))
            end = run.clock_s
        except ShellExit:
            end = run.clock_s
        except (Forever, HandOver):
            end = math.inf
        del run.waits[waits:]  # a job's sleeps do not hold the script's TERM handler
        run.clock_s = start
        run.fs.elapsed_s = start
        run.jobs[pid] = end
        run.last_background = pid
        return 0

    # -- simple commands ------------------------------------------------------------------------
    def simple(self, node: ast.Simple, streams: Streams) -> int:
        self.run.spend_command()
        self.substitution_status = None
        argv = self.expand_words(node.words)
        if not argv:
            for assign in node.assigns:
                self.assign(assign.name, self.assignment_value(assign))
            try:
                self.close(self.redirect(node.redirects, streams), streams)
            except _RedirectError as error:
                streams.stderr.write(f"sh: {self.line}: {error}\n".encode())
                return 1
            status = self.substitution_status or 0
            self.check_errexit(status)
            return status
        if not node.assigns and not node.redirects and "xtrace" not in self.options:
            status = self.execute(argv, streams)
            self.check_errexit(status)
            return status
        saved: dict[str, str | None] = {}
        for assign in node.assigns:
            saved.setdefault(assign.name, self.variables.get(assign.name))
            self.variables[assign.name] = self.assignment_value(assign)
            self.exported.add(assign.name)
        try:
            redirected = self.redirect(node.redirects, streams)
        except _RedirectError as error:
            self._restore(saved)
            streams.stderr.write(f"sh: {self.line}: {error}\n".encode())
            self.check_errexit(1)
            return 1
        try:
            if "xtrace" in self.options:
                redirected.stderr.write(("+ " + " ".join(argv) + "\n").encode())
            status = self.execute(argv, redirected)
        finally:
            self.close(redirected, streams)
            if not (argv and argv[0] in _SPECIAL_BUILTINS):
                self._restore(saved)
        self.check_errexit(status)
        return status

    def _restore(self, saved: dict[str, str | None]) -> None:
        for name, value in saved.items():
            if value is None:
                self.variables.pop(name, None)
                self.exported.discard(name)
            else:
                self.variables[name] = value

    def execute(self, argv: list[str], streams: Streams) -> int:
        """Run ``argv``: a function, a builtin, else a command of the container."""
        name = argv[0]
        if name in self.functions:  # indexed, not .get() and narrowed: see quietly()
            return self.call(self.functions[name], argv, streams)
        builtin = _BUILTINS.get(name)
        if builtin is not None:
            return builtin(self, Process(self, argv, streams))
        return self.external(argv, streams)

    def external(self, argv: list[str], streams: Streams) -> int:
        process = Process(self, argv, streams)
        status = self.run.environment.command(process)
        if status is not None:
            return status
        if not self.run.environment.unknown_is_missing:
            raise HandOver(argv)
        streams.stderr.write(f"sh: {self.line}: {argv[0]}: not found\n".encode())
        return NOT_FOUND_EXIT_CODE

    def call(self, function: ast.Command, argv: list[str], streams: Streams) -> int:
        if len(self._locals) >= MAX_CALL_DEPTH:
            raise NotSimulated(f"sh: fakekube does not simulate functions nested more than {MAX_CALL_DEPTH} deep")
        saved_positional = self.positional
        self.positional = argv[1:]
        self._locals.append({})
        try:
            status = self.command(function, streams)
        except _Return as returned:
            status = returned.status
        finally:
            for name, value in self._locals.pop().items():
                if value is None:
                    self.variables.pop(name, None)
                else:
                    self.variables[name] = value
            self.positional = saved_positional
        return status

    # -- redirections --------------------------------------------------------------------------
    def redirect(self, redirects: Sequence[ast.Redirect], streams: Streams) -> Streams:
        """``streams`` with the redirections applied (files opened now, written at :meth:`close`)."""
        fds: dict[int, Source | Sink] = {0: streams.stdin, 1: streams.stdout, 2: streams.stderr}
        for redirect in redirects:
            self._one_redirect(redirect, fds)
        stdin, stdout, stderr = fds[0], fds[1], fds[2]
        return Streams(stdin if isinstance(stdin, Source) else Source(),
                       stdout if isinstance(stdout, Sink) else NullSink(),
                       stderr if isinstance(stderr, Sink) else NullSink())

    def _one_redirect(self, redirect: ast.Redirect, fds: dict[int, Source | Sink]) -> None:
        op = redirect.op
        if op in ("<<", "<<-", "<<<"):
            if op == "<<<":
                text = self.expand_word_single(redirect.target) + "\n" if redirect.target else "\n"
            else:
                text = self.expand_template(redirect.body or ())
            fds[redirect.fd if redirect.fd is not None else 0] = Source(text.encode("utf-8", "surrogateescape"))
            return
        target = self.expand_word_single(redirect.target) if redirect.target is not None else ""
        if op in (">&", "<&") and (target.isdigit() or target == "-"):
            fd = redirect.fd if redirect.fd is not None else (1 if op == ">&" else 0)
            if target == "-":
                fds[fd] = NullSink() if op == ">&" else Source()
            elif int(target) in fds:
                fds[fd] = fds[int(target)]
            else:
                raise _RedirectError(f"{target}: Bad file descriptor")
            return
        if op == ">&-" or op == "<&-":
            fds[redirect.fd if redirect.fd is not None else (1 if op == ">&-" else 0)] = NullSink()
            return
        if op in ("<", "<>"):
            fds[redirect.fd if redirect.fd is not None else 0] = Source(self._read_for_redirect(target))
            return
        sink = self._sink(target, append=op in (">>", "&>>"))
        if op in ("&>", "&>>", ">&"):
            fds[1] = fds[2] = sink
        else:
            fds[redirect.fd if redirect.fd is not None else 1] = sink

    def _read_for_redirect(self, path: str) -> bytes:
        if path in ("/dev/stdin", "/proc/self/fd/0"):
            return self.streams.stdin.read()
        try:
            return self.run.fs.read(path)
        except FsError as error:
            raise _RedirectError(f"cannot open {path}: {error}") from None

    def _sink(self, path: str, append: bool) -> Sink:
        if path == "/dev/null":
            return NullSink()
        if path in ("/dev/stdout", "/proc/self/fd/1", "/proc/1/fd/1"):
            return self.streams.stdout
        if path in ("/dev/stderr", "/proc/self/fd/2", "/proc/1/fd/2"):
            return self.streams.stderr
        fs = self.run.fs
        try:
            entry = fs.lookup(path)
            if entry is not None and entry[0] == DIR:
                raise FsError("EISDIR", path)
            if not append or entry is None:
                fs.write(path, b"", append=append)
        except FsError as error:
            raise _RedirectError(f"cannot create {path}: {error}") from None
        return FileSink(fs, path, append=True)

    def close(self, redirected: Streams, original: Streams) -> None:
        for sink in (redirected.stdout, redirected.stderr):
            if sink is not original.stdout and sink is not original.stderr:
                try:
                    sink.close()
                except FsError as error:
                    original.stderr.write(f"sh: write error: {error}\n".encode())

    # -- expansion -----------------------------------------------------------------------------
    def lookup(self, name: str) -> str | None:
        """A parameter's value, None when unset."""
        if name.isdigit():
            index = int(name)
            if index == 0:
                return self.arg0
            return self.positional[index - 1] if index <= len(self.positional) else None
        special = {"?": lambda: str(self.status), "#": lambda: str(len(self.positional)),
                   "@": lambda: " ".join(self.positional), "*": lambda: self._star(),
                   "$": lambda: str(self.pid), "!": lambda: str(self.run.last_background or ""),
                   "-": lambda: "".join(flag for option, flag in (("errexit", "e"), ("nounset", "u"),
                                                                  ("xtrace", "x")) if option in self.options)}
        if name in special:
            return special[name]()
        if name == "RANDOM" and name not in self.variables:
            self.run.random_state = (self.run.random_state * 1103515245 + 12345) % (1 << 31)
            return str(self.run.random_state % 32768)
        if name == "SECONDS" and name not in self.variables:
            self.run.clock_reads += 1
            return str(int(self.run.clock_s))
        return self.variables.get(name)

    def _star(self) -> str:
        ifs = self.variables.get("IFS", " \t\n")
        return (ifs[:1]).join(self.positional)

    def value_of(self, name: str) -> str:
        value = self.lookup(name)
        if value is None:
            if "nounset" in self.options and name not in ("@", "*"):
                raise _Fatal(f"sh: {self.line}: {name}: parameter not set")
            return ""
        return value

    def assign(self, name: str, value: str) -> None:
        if name in self.readonly:
            raise _Fatal(f"sh: {self.line}: {name}: is read only")
        self.variables[name] = value

    def assignment_value(self, assign: ast.Assign) -> str:
        value = self.expand_word_single(assign.value, tilde_after_colon=True) if assign.value is not None else ""
        if assign.append:
            value = self.variables.get(assign.name, "") + value
        return value

    def expand_words(self, words: Iterable[ast.Word]) -> list[str]:
        fields: list[str] = []
        for word in words:
            if word.literal is not None:
                fields.append(word.literal)
            else:
                fields.extend(self.expand_word(word))
        return fields

    def expand_word_single(self, word: ast.Word | None, tilde_after_colon: bool = False) -> str:
        """A word without field splitting or globbing (assignments, redirection targets, case)."""
        if word is None:
            return ""
        return "".join(text for text, _ in self._segments(word, split=False))

    def expand_template(self, template: ast.Template) -> str:
        out: list[str] = []
        for piece in template:
            if isinstance(piece, str):
                out.append(piece)
            else:
                out.append(self._part_text(piece))
        return "".join(out)

    def expand_word(self, word: ast.Word) -> list[str]:
        """The fields a word expands to: split on IFS, globbed, quotes removed."""
        fields = self._fields(word)
        result: list[str] = []
        for segments in fields:
            if any(not quoted and any(c in text for c in "*?[") for text, quoted in segments):
                matches = self.glob(segments)
                if matches:
                    result.extend(matches)
                    continue
            result.append("".join(text for text, _ in segments))
        return result

    def _fields(self, word: ast.Word) -> list[list[tuple[str, bool]]]:
        fields: list[list[tuple[str, bool]]] = [[]]
        real = [False]
        ifs = self.variables.get("IFS", " \t\n")
        for index, part in enumerate(word.parts):
            if isinstance(part, ast.Lit):
                text = part.text
                if index == 0 and not part.quoted and text.startswith("~"):
                    text = self._tilde(text)
                fields[-1].append((text, part.quoted))
                real[-1] = real[-1] or part.quoted or bool(text)
            elif isinstance(part, ast.Param) and part.name == "@" and part.op == "" and part.quoted:
                for position, value in enumerate(self.positional):
                    if position > 0:
                        fields.append([])
                        real.append(False)
                    fields[-1].append((value, True))
                    real[-1] = True
            elif isinstance(part, ast.Param) and part.name in ("@", "*") and part.op == "" and not part.quoted:
                for value in self.positional:
                    self._split_into(value, ifs, fields, real)
            else:
                value = self._part_text(part)
                if getattr(part, "quoted", False):
                    fields[-1].append((value, True))
                    real[-1] = True
                else:
                    self._split_into(value, ifs, fields, real)
        return [segments for segments, keep in zip(fields, real) if keep]

    @staticmethod
    def _split_into(value: str, ifs: str, fields: list[list[tuple[str, bool]]], real: list[bool]) -> None:
        """Field-split an unquoted expansion's value onto the fields being built."""
        if not value:
            return
        if not ifs:
            fields[-1].append((value, True))
            real[-1] = True
            return
        pieces = _ifs_split(value, ifs)
        starts_blank = value[0] in ifs and value[0] in " \t\n"
        ends_blank = value[-1] in ifs
        if starts_blank and real[-1]:
            fields.append([])
            real.append(False)
        for position, piece in enumerate(pieces):
            if position > 0:
                fields.append([])
                real.append(False)
            fields[-1].append((piece, True))
            real[-1] = real[-1] or bool(piece) or position < len(pieces) - 1
        if ends_blank:
            fields.append([])
            real.append(False)

    def _segments(self, word: ast.Word, split: bool) -> list[tuple[str, bool]]:
        out: list[tuple[str, bool]] = []
        for index, part in enumerate(word.parts):
            if isinstance(part, ast.Lit):
                text = self._tilde(part.text) if index == 0 and not part.quoted and part.text.startswith("~") \
                    else part.text
                out.append((text, part.quoted))
            else:
                out.append((self._part_text(part), True))
        return out

    def _tilde(self, text: str) -> str:
        head, slash, rest = text.partition("/")
        if head == "~":
            return self.variables.get("HOME", "/root") + slash + rest
        return text

    def _part_text(self, part: ast.Part) -> str:
        if isinstance(part, ast.Lit):
            return part.text
        if isinstance(part, ast.Param):
            return self.parameter(part)
        if isinstance(part, ast.CmdSub):
            return self.substitute(part.body)
        if isinstance(part, ast.ArithSub):
            return str(self.arithmetic(part.template))
        raise NotSimulated(f"sh: fakekube does not simulate {part.what}")

    def substitute(self, body: ast.Seq) -> str:
        """``$(…)``: the body's output in a subshell, trailing newlines removed; ``$?`` its status."""
        capture = Capture(self.run)
        child = self.subshell(Streams(Source(), capture, self.streams.stderr))
        try:
            status = child.sequence(body, child.streams)
        except ShellExit as done:
            status = done.status
        except (_Return, _LoopControl):
            status = child.status
        self.status = self.substitution_status = status
        return capture.buffer.decode("utf-8", "surrogateescape").rstrip("\n")

    def arithmetic(self, template: ast.Template) -> int:
        text = self.expand_template(template)
        try:
            return arith.evaluate(text, lambda name: self.value_of(name), self.assign)
        except arith.ArithError as error:
            raise _Fatal(f"sh: {self.line}: {error}") from None

    def parameter(self, part: ast.Param) -> str:
        name, op = part.name, part.op
        value = self.lookup(name)
        if op == "":
            return self.value_of(name)
        if op == "len":
            return str(len(self.value_of(name)))
        argument = lambda: self.expand_word_single(part.args[0]) if part.args else ""  # noqa: E731
        unset, empty = value is None, not value
        if op in (":-", "-"):
            return argument() if (unset or (empty and op == ":-")) else str(value)
        if op in (":=", "="):
            if unset or (empty and op == ":="):
                value = argument()
                self.assign(name, value)
            return str(value)
        if op in (":+", "+"):
            return "" if (unset or (empty and op == ":+")) else argument()
        if op in (":?", "?"):
            if unset or (empty and op == ":?"):
                message = argument() or ("parameter not set" if unset else "parameter null or not set")
                raise _Fatal(f"sh: {self.line}: {name}: {message}")
            return str(value)
        text = self.value_of(name)
        if op in ("#", "##", "%", "%%"):
            return _trim(text, argument(), op)
        if op in ("/", "//", "/#", "/%"):
            replacement = self.expand_word_single(part.args[1]) if len(part.args) > 1 else ""
            return _replace(text, argument(), replacement, op)
        if op == "^^":
            return text.upper()
        if op == ",,":
            return text.lower()
        raise NotSimulated(f"sh: fakekube does not simulate the ${{NAME{op}…}} expansion")

    def glob(self, segments: list[tuple[str, bool]]) -> list[str]:
        """Pathname expansion of one field against the filesystem (sorted; hidden names only
        for a pattern starting with ``.``); [] when nothing matches (the word stays)."""
        pattern = "".join(re.escape(text) if quoted else _glob_regex_text(text) for text, quoted in segments)
        raw = "".join(text for text, _ in segments)
        absolute = raw.startswith("/")
        parts = [p for p in raw.split("/") if p]
        regex_parts = _split_regex_path(pattern)
        if len(regex_parts) != len(parts):
            return []
        bases = ["/" if absolute else ""]
        for literal, regex in zip(parts, regex_parts):
            next_bases: list[str] = []
            for base in bases:
                directory = base or "."
                if not any(c in literal for c in "*?[") or regex == re.escape(literal):
                    candidate = posixpath.join(base, literal) if base else literal
                    if self.run.fs.lookup(candidate) is not None or candidate in ("/", "."):
                        next_bases.append(candidate)
                    continue
                try:
                    names = [name for name, _ in self.run.fs.listdir(directory)]
                except FsError:
                    continue
                compiled = re.compile(regex + r"\Z", re.DOTALL)
                for name in names:
                    if name.startswith(".") and not literal.startswith("."):
                        continue
                    if compiled.match(name):
                        next_bases.append(posixpath.join(base, name) if base else name)
            bases = next_bases
        return sorted(bases)


class _Fatal(Exception):
    """An expansion error: the shell writes the message and exits 2 (a non-interactive shell)."""


class _RedirectError(Exception):
    """A redirection failed: the command does not run and its status is 1."""


_SPECIAL_BUILTINS = frozenset({"export", "readonly", "set", "unset", ".", "source", "exec", "eval", "shift", ":",
                               "exit", "return", "trap", "local"})


def _ifs_split(value: str, ifs: str) -> list[str]:
    blanks = "".join(c for c in ifs if c in " \t\n")
    others = "".join(c for c in ifs if c not in " \t\n")
    if not others:
        return value.split(None) if blanks == " \t\n" else [p for p in re.split(f"[{re.escape(blanks)}]+", value) if p]
    stripped = value.strip(blanks) if blanks else value
    pattern = f"[{re.escape(blanks)}]*[{re.escape(others)}][{re.escape(blanks)}]*" if blanks else f"[{re.escape(others)}]"
    if blanks:
        pattern = f"{pattern}|[{re.escape(blanks)}]+"
    pieces = re.split(pattern, stripped)
    if pieces and pieces[-1] == "" and stripped and stripped[-1] in others:
        pieces.pop()
    return pieces


def _glob_regex_text(text: str) -> str:
    """An unquoted piece of a glob as regex text (``*`` and ``?`` stay within a name)."""
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = text.find("]", index + 2 if index + 1 < len(text) and text[index + 1] in "!^" else index + 1)
            if end < 0:
                out.append(re.escape(char))
            else:
                inner = text[index + 1:end]
                negate = inner[:1] in ("!", "^")
                inner = inner[1:] if negate else inner
                out.append("[" + ("^" if negate else "") + inner.replace("\\", "\\\\") + "]")
                index = end
        elif char == "/":
            out.append("/")
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def _split_regex_path(pattern: str) -> list[str]:
    """Split a path regex at its (unescaped, outside brackets) ``/``."""
    parts: list[str] = []
    current: list[str] = []
    index, in_bracket = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            current.append(pattern[index:index + 2])
            index += 2
            continue
        if char == "[":
            in_bracket = True
        elif char == "]":
            in_bracket = False
        if char == "/" and not in_bracket:
            if current:
                parts.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    if current:
        parts.append("".join(current))
    return parts


def pattern_regex(pattern: str) -> str:
    """A shell pattern (``case``, ``${x#…}``, ``[[ == ]]``) as a regex (``*`` matches ``/`` too)."""
    return _glob_regex_text(pattern).replace("[^/]*", ".*").replace("[^/]", ".")


def pattern_match(pattern: str, text: str) -> bool:
    return re.fullmatch(pattern_regex(pattern), text, re.DOTALL) is not None


def _trim(text: str, pattern: str, op: str) -> str:
    regex = pattern_regex(pattern)
    if op in ("#", "##"):
        ends = range(len(text) + 1) if op == "#" else range(len(text), -1, -1)
        for end in ends:
            if re.fullmatch(regex, text[:end], re.DOTALL):
                return text[end:]
        return text
    starts = range(len(text), -1, -1) if op == "%" else range(len(text) + 1)
    for start in starts:
        if re.fullmatch(regex, text[start:], re.DOTALL):
            return text[:start]
    return text


def _replace(text: str, pattern: str, replacement: str, op: str) -> str:
    if not pattern:
        return text
    regex = pattern_regex(pattern)
    if op == "/#":
        regex = "^(?:" + regex + ")"
    elif op == "/%":
        regex = "(?:" + regex + ")$"
    return re.sub(regex, lambda match: replacement, text, count=0 if op == "//" else 1, flags=re.DOTALL)


# -- compound commands ---------------------------------------------------------------------------

def _run_pipeline(shell: Shell, node: ast.Pipeline, streams: Streams) -> int:
    if len(node.commands) == 1:
        return shell.command(node.commands[0], streams)
    source = streams.stdin
    statuses: list[int] = []
    forever: BaseException | None = None
    for index, command in enumerate(node.commands):
        last = index == len(node.commands) - 1
        sink: Sink = streams.stdout if last else Capture(shell.run)
        stage = shell.subshell(Streams(source, sink, streams.stderr))
        try:
            statuses.append(stage.command(command, stage.streams))
        except ShellExit as done:
            statuses.append(done.status)
        except (Forever, HandOver) as endless:
            forever = forever or endless
            statuses.append(0)
        except (_Return, _LoopControl):
            statuses.append(stage.status)
        if not last:
            assert isinstance(sink, Capture)
            source = Source(bytes(sink.buffer))
    if forever is not None:
        raise forever
    status = statuses[-1]
    if "pipefail" in shell.options:
        status = next((s for s in reversed(statuses) if s != 0), 0)
    shell.check_errexit(status)
    return status


def _run_not(shell: Shell, node: ast.Not, streams: Streams) -> int:
    return 0 if shell.quietly(node.command, streams) != 0 else 1


def _run_and_or(shell: Shell, node: ast.AndOr, streams: Streams) -> int:
    status = shell.quietly(node.left, streams)
    if (status == 0) == (node.op == "&&"):
        return shell.command(node.right, streams)
    return status


def _run_seq(shell: Shell, node: ast.Seq, streams: Streams) -> int:
    return shell.sequence(node, streams)


def _run_if(shell: Shell, node: ast.If, streams: Streams) -> int:
    for condition, body in node.branches:
        if shell.quietly(condition, streams) == 0:
            return shell.sequence(body, streams)
    if node.otherwise is not None:
        return shell.sequence(node.otherwise, streams)
    return 0


def _loop_body(shell: Shell, body: ast.Seq, streams: Streams) -> str | None:
    """Run one round; ``"break"``/``"continue"`` when one ends it here (else None)."""
    try:
        shell.sequence(body, streams)
    except _LoopControl as control:
        if control.levels > 1:
            raise _LoopControl(control.kind, control.levels - 1) from None
        return control.kind
    return None


def _run_loop(shell: Shell, node: ast.Loop, streams: Streams) -> int:
    """``while``/``until``. A round that wrote nothing, changed no file or variable and read no
    clock will repeat forever the same way: such a loop (``while true; do sleep 30; done``) is
    known to never end without running its every round."""
    status = 0
    previous: tuple[Any, ...] | None = None
    while True:
        if (shell.quietly(node.condition, streams) == 0) == node.until:
            return status
        control = _loop_body(shell, node.body, streams)
        status = shell.status
        if control == "break":
            return status
        state = _round_state(shell, streams)
        if state == previous:
            raise Forever
        previous = state


def _round_state(shell: Shell, streams: Streams) -> tuple[Any, ...]:
    """What a loop round could have changed that the next round might see."""
    run = shell.run
    operations = getattr(run.fs.access, "operations", None)
    written = len(operations) if operations is not None else run.commands  # an exec's writes are not recorded
    return (run.output_bytes, len(run.log), run.clock_reads, written, len(run.jobs), streams.stdin.position,
            shell.status, tuple(shell.variables.items()))


def _run_for(shell: Shell, node: ast.For, streams: Streams) -> int:
    items = shell.expand_words(node.items) if node.items is not None else list(shell.positional)
    status = 0
    for item in items:
        shell.assign(node.variable, item)
        control = _loop_body(shell, node.body, streams)
        status = shell.status
        if control == "break":
            break
    return status


def _run_arith_for(shell: Shell, node: ast.ArithFor, streams: Streams) -> int:
    shell.arithmetic(node.init)
    status = 0
    while True:
        shell.run.spend_command()
        if node.condition and shell.arithmetic(node.condition) == 0:
            return status
        control = _loop_body(shell, node.body, streams)
        status = shell.status
        if control == "break":
            return status
        shell.arithmetic(node.step)


def _run_case(shell: Shell, node: ast.Case, streams: Streams) -> int:
    subject = shell.expand_word_single(node.subject)
    for patterns, body in node.items:
        for pattern in patterns:
            if _case_pattern_matches(shell, pattern, subject):
                return shell.sequence(body, streams)
    return 0


def _case_pattern_matches(shell: Shell, pattern: ast.Word, subject: str) -> bool:
    regex = "".join(re.escape(text) if quoted else pattern_regex(text) for text, quoted in
                    ((t, q) for t, q in _pattern_segments(shell, pattern)))
    return re.fullmatch(regex, subject, re.DOTALL) is not None


def _pattern_segments(shell: Shell, word: ast.Word) -> list[tuple[str, bool]]:
    segments: list[tuple[str, bool]] = []
    for part in word.parts:
        if isinstance(part, ast.Lit):
            segments.append((part.text, part.quoted))
        else:
            segments.append((shell._part_text(part), getattr(part, "quoted", False)))
    return segments


def _run_function(shell: Shell, node: ast.Function, streams: Streams) -> int:
    shell.functions[node.name] = node.body
    return 0


def _run_group(shell: Shell, node: ast.Group, streams: Streams) -> int:
    if not node.subshell:
        return shell.sequence(node.body, streams)
    child = shell.subshell(streams)
    cwd = shell.run.fs.cwd
    try:
        status = child.sequence(node.body, streams)
    except ShellExit as done:
        status = done.status
    except (_Return, _LoopControl):
        status = child.status
    finally:
        shell.run.fs.cwd = cwd
    shell.check_errexit(status)
    return status


def _run_redirected(shell: Shell, node: ast.Redirected, streams: Streams) -> int:
    try:
        redirected = shell.redirect(node.redirects, streams)
    except _RedirectError as error:
        streams.stderr.write(f"sh: {shell.line}: {error}\n".encode())
        return 1
    try:
        return shell.command(node.command, redirected)
    finally:
        shell.close(redirected, streams)


def _run_test(shell: Shell, node: ast.Test, streams: Streams) -> int:
    shell.run.spend_command()
    from fakekube.kubelet import coreutils  # the test builtin's rules live with the commands
    if node.double:
        words = [shell.expand_word_single(word) for word in node.words]
        patterns = [_word_is_pattern(word) for word in node.words]
        status = coreutils.double_bracket(Process(shell, ["[["] + words, streams), words, patterns)
    else:
        status = coreutils.test_command(Process(shell, ["["] + shell.expand_words(node.words) + ["]"], streams))
    shell.check_errexit(status)
    return status


def _word_is_pattern(word: ast.Word) -> bool:
    return any(isinstance(part, ast.Lit) and not part.quoted and any(c in part.text for c in "*?[")
               for part in word.parts)


def _run_arith(shell: Shell, node: ast.Arith, streams: Streams) -> int:
    shell.run.spend_command()
    return 0 if shell.arithmetic(node.expression) != 0 else 1


def _run_declare(shell: Shell, node: ast.Declare, streams: Streams) -> int:
    shell.run.spend_command()
    argv: list[str] = [node.builtin]
    assignments: list[tuple[str, str | None]] = []
    for arg in node.args:
        if isinstance(arg, ast.Assign):
            assignments.append((arg.name, shell.assignment_value(arg)))
        else:
            for field in shell.expand_word(arg):
                if field.startswith("-") and not assignments:
                    argv.append(field)
                elif "=" in field:
                    name, _, value = field.partition("=")
                    assignments.append((name, value))
                else:
                    assignments.append((field, None))
    from fakekube.kubelet import builtins
    return builtins.declare(shell, node.builtin, [a for a in argv[1:]], assignments, streams)


def _run_unsupported(shell: Shell, node: ast.Unsupported, streams: Streams) -> int:
    raise NotSimulated(f"sh: fakekube does not simulate {node.what}")


_HANDLERS: dict[type, Callable[[Shell, Any, Streams], int]] = {
    ast.Simple: Shell.simple, ast.Pipeline: _run_pipeline, ast.Not: _run_not, ast.AndOr: _run_and_or,
    ast.Seq: _run_seq, ast.If: _run_if, ast.Loop: _run_loop, ast.For: _run_for, ast.ArithFor: _run_arith_for,
    ast.Case: _run_case, ast.Function: _run_function, ast.Group: _run_group, ast.Redirected: _run_redirected,
    ast.Test: _run_test, ast.Arith: _run_arith, ast.Declare: _run_declare, ast.Unsupported: _run_unsupported,
}

#: The shell's own commands (kubelet/builtins.py fills it).
_BUILTINS: dict[str, Callable[[Shell, Process], int]] = {}


def run_shell(shell: Shell, tree_or_script: ast.Seq | str) -> int:
    """Run a script (or a parsed tree) in ``shell`` and return its status; fatal expansion errors
    and what is not simulated end it with exit 2 and their message on stderr."""
    try:
        if isinstance(tree_or_script, str):
            return shell.run_script(tree_or_script)
        return shell.run_tree(tree_or_script)
    except _Fatal as error:
        shell.streams.stderr.write(f"{error}\n".encode())
        shell.status = SYNTAX_EXIT_CODE
    except NotSimulated as error:
        shell.streams.stderr.write(f"{error}\n".encode())
        shell.status = SYNTAX_EXIT_CODE
    except RecursionError:
        shell.streams.stderr.write(b"sh: fakekube does not simulate a script nested this deep\n")
        shell.status = SYNTAX_EXIT_CODE
    return shell.status

