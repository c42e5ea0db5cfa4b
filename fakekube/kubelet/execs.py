"""What a command run by ``kubectl exec`` does in a simulated container.

A simulated container runs no process, so an exec is answered from data: the container's
declared ``exec_commands`` (behaviour.py), tried in order, then a few built-in commands whose
output a user can predict from the pod alone:

* ``true`` / ``false``: exit 0 / 1;
* ``echo [-n] ARGS...``: the arguments joined by spaces, then a newline (none with ``-n``);
* ``hostname``: the pod's ``spec.hostname``, else its name;
* ``env`` / ``printenv``: ``PATH``, ``HOSTNAME``, the container's ``env`` (values with their
  ``$(VAR)`` references expanded, and downward-API ``fieldRef`` values; ConfigMap, Secret and
  resource references, ``envFrom`` and the service link variables are not simulated),
  ``HOME``; ``printenv NAME...`` prints those values, exit 1 if one is unset;
* ``sleep N``: exits 0 at once (exec output is instantaneous in cluster time);
* ``printf FORMAT ARGS...`` (kubelet/printf.py); ``pwd``: the container's ``workingDir``, else
  ``/``; ``whoami`` / ``id``: root, or the ``runAsUser`` of the container's or pod's
  securityContext (a uid the image's /etc/passwd would name is not known); ``uname``: ``Linux``;
* ``date [+FORMAT]``: the cluster's time (the one input that is not the pod's);
* ``ls`` / ``ls /``: a typical image's top-level directories; any other path fails (exit 2)
  saying the filesystem is not simulated;
* ``tar``: what ``kubectl cp`` runs; fails with a message saying that a simulated container
  has no filesystem to copy from or to.

``sh -c SCRIPT`` (also ``bash``, ``ash``, ``dash``) runs the script's simple commands the same
way, chained by ``;``, ``&&`` and ``||``, with ``$VARIABLES`` from that environment
(kubelet/shell.py says what is not simulated). Anything else is not found, with the message
containerd and runc give for an executable missing from ``$PATH``. Built-ins and shells are
matched by the basename of ``argv[0]`` (``/bin/echo`` is ``echo``). Everything here is pure:
the same argv, pod and instant give the same answer.
"""

from __future__ import annotations

import hashlib
import itertools
import posixpath
import re
from datetime import datetime, timezone
from typing import Any, Callable, Mapping, NamedTuple, Sequence

from fakekube.kubelet import shell
from fakekube.kubelet.printf import printf
from fakekube.kubelet.behaviour import MAX_EXEC_OUTPUT_BYTES, ExecCommand

Obj = dict[str, Any]

#: ``PATH`` in a typical image (the busybox and debian images' value).
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: What the ``tar`` of ``kubectl cp`` writes to stderr, and its exit code (tar's "fatal").
TAR_MESSAGE = ("tar: fakekube does not simulate kubectl cp: a simulated container has no filesystem "
               "to copy files from or to\n")
TAR_EXIT_CODE = 2
#: Shells whose ``-c SCRIPT`` is interpreted (kubelet/shell.py); ``sh: 1: X: not found``
#: exits 127 as in dash, and syntax not simulated exits 2, as a shell's syntax error does.
SHELLS = frozenset({"sh", "bash", "ash", "dash"})
NOT_FOUND_EXIT_CODE = 127
#: A shell without ``-c``: its stdin would be the script, which an exec does not simulate.
INTERACTIVE_SHELL_MESSAGE = ("{shell}: fakekube does not simulate an interactive shell (stdin is read and dropped); "
                             "run commands with {shell} -c 'COMMAND'\n")
SHELL_SYNTAX_EXIT_CODE = 2
#: How many ``sh -c`` may nest (a bound on the recursion a request can cause).
MAX_SHELL_DEPTH = 16


class ExecResult(NamedTuple):
    """A finished exec: what the command wrote and its exit code; or ``error``, the runtime's
    reason it could not start the command (then nothing was written)."""

    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: int = 0
    error: str | None = None


def not_found(argv: Sequence[str], exec_id: str) -> ExecResult:
    """containerd's error for an executable runc cannot find (CRI ``execInternal``, wrapped
    by its streaming server as "failed to exec in container")."""
    return ExecResult(error=f'failed to exec in container: failed to start exec "{exec_id}": OCI runtime exec failed: '
                            f'exec failed: unable to start container process: exec: "{argv[0] if argv else ""}": '
                            f'executable file not found in $PATH: unknown')


def exec_id(container_id: str, sequence: int) -> str:
    """A containerd-shaped exec id (64 hex digits), derived rather than random: deterministic."""
    return hashlib.sha256(f"{container_id}/exec/{sequence}".encode()).hexdigest()


def run(commands: Sequence[ExecCommand], argv: Sequence[str], pod: Mapping[str, Any],
        container: Mapping[str, Any], exec_id_: str, now: datetime | None = None) -> ExecResult:
    """The outcome of running ``argv`` in ``container`` of ``pod`` at cluster time ``now``
    (which only ``date`` reads; without it, ``date`` is not found)."""
    return _run(commands, argv, pod, container, exec_id_, 0, now)


def _run(commands: Sequence[ExecCommand], argv: Sequence[str], pod: Mapping[str, Any],
         container: Mapping[str, Any], exec_id_: str, depth: int, now: datetime | None = None) -> ExecResult:
    """:func:`run` from within ``depth`` shells (``sh -c 'sh -c ...'``)."""
    for command in commands:
        if command.matches(argv):
            return ExecResult(command.stdout.encode(), command.stderr.encode(), command.exit_code)
    name = posixpath.basename(argv[0]) if argv else ""
    if name in SHELLS:
        if len(argv) >= 3 and argv[1] == "-c":
            return _run_script(commands, argv[2], pod, container, exec_id_, depth + 1, now)
        return ExecResult(stderr=INTERACTIVE_SHELL_MESSAGE.format(shell=name).encode(),
                          exit_code=SHELL_SYNTAX_EXIT_CODE)
    if name == "date" and now is not None:
        return _date(list(argv[1:]), now)
    builtin = _BUILTINS.get(name)
    if builtin is None:
        return not_found(argv, exec_id_)
    return builtin(list(argv[1:]), pod, container)


def _run_script(commands: Sequence[ExecCommand], script: str, pod: Mapping[str, Any],
                container: Mapping[str, Any], exec_id_: str, depth: int, now: datetime | None = None) -> ExecResult:
    """``sh -c script`` from within ``depth`` shells, its commands run by :func:`_run`."""
    if depth > MAX_SHELL_DEPTH:
        return ExecResult(stderr=f"sh: fakekube does not simulate shells nested more than {MAX_SHELL_DEPTH} "
                                 f"deep\n".encode(), exit_code=SHELL_SYNTAX_EXIT_CODE)
    return run_script(script, pod, container,
                      lambda argv: _run(commands, argv, pod, container, exec_id_, depth, now))


def run_script(script: str, pod: Mapping[str, Any], container: Mapping[str, Any],
               run_command: Callable[[list[str]], ExecResult],
               endless_round: Callable[[int], None] | None = None) -> ExecResult:
    """``sh -c script`` (kubelet/shell.py) with each simple command, its words expanded, run by
    ``run_command``: outputs concatenated (each stream cut at :data:`MAX_EXEC_OUTPUT_BYTES`, as
    one declared command's), the exit code of the last one run; a command not found is dash's
    ``sh: 1: NAME: not found``. The caller decides what a command does (an exec answers at
    once; a container's own program, kubelet/programs.py, also keeps time). An endless loop
    calls ``endless_round`` before each round (which stops it by raising); without one, an
    endless loop is not simulated (an exec's output is whole when it answers)."""
    try:
        commands = shell.parse(script)
    except shell.ScriptError as exc:
        return ExecResult(stderr=f"{exc}\n".encode(), exit_code=SHELL_SYNTAX_EXIT_CODE)
    state = _ScriptRun(dict(environment(pod, container)), run_command, endless_round)
    try:
        state.run(commands)
    except _ScriptExit:
        pass
    except _NotSimulated as problem:
        return ExecResult(state.stdout, state.stderr + f"{problem}\n".encode(), SHELL_SYNTAX_EXIT_CODE)
    return ExecResult(state.stdout, state.stderr, state.code)


#: The most simple commands one script runs (loops multiply them): past it the script stops
#: with exit code 2, naming the limit.
MAX_SCRIPT_COMMANDS = 100_000


class _ScriptExit(Exception):
    """``exit`` ran: the script ends with :attr:`_ScriptRun.code`."""


class _NotSimulated(Exception):
    """The script reached something not simulated at run time (an endless loop in an exec,
    the command budget); ``str()`` is the message."""


class _ScriptRun:
    """One run of a parsed script: its variables, outputs, last exit code and command count."""

    def __init__(self, values: dict[str, str], run_command: Callable[[list[str]], ExecResult],
                 endless_round: Callable[[int], None] | None) -> None:
        self.values, self.run_command, self.endless_round = values, run_command, endless_round
        self.stdout, self.stderr, self.code, self.commands = b"", b"", 0, 0

    def run(self, commands: Sequence[shell.Command]) -> None:
        for command in commands:
            if (command.operator == shell.AND and self.code != 0) or (command.operator == shell.OR and self.code == 0):
                continue
            if isinstance(command, shell.Loop):
                self._loop(command)
            else:
                self._simple(command)

    def _expand(self, words: tuple[str, ...]) -> list[str]:
        return shell.expand(words, lambda name: str(self.code) if name == "?" else self.values.get(name, ""))

    def _simple(self, step: shell.Step) -> None:
        self.commands += 1
        if self.commands > MAX_SCRIPT_COMMANDS:
            raise _NotSimulated(f"sh: fakekube stops simulating a script after {MAX_SCRIPT_COMMANDS} commands")
        argv = self._expand(step.words)
        if argv[0] == "exit":
            self.code = int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else self.code
            raise _ScriptExit
        result = self.run_command(argv)
        if result.error is not None:
            result = ExecResult(stderr=f"sh: 1: {argv[0]}: not found\n".encode(), exit_code=NOT_FOUND_EXIT_CODE)
        self.stdout = (self.stdout + result.stdout)[:MAX_EXEC_OUTPUT_BYTES]
        self.stderr = (self.stderr + result.stderr)[:MAX_EXEC_OUTPUT_BYTES]
        self.code = result.exit_code

    def _loop(self, loop: shell.Loop) -> None:
        if loop.items is None:
            self._endless(loop.body)
            return
        self.code = 0
        for item in self._expand(loop.items):
            self.values[str(loop.variable)] = item
            self.run(loop.body)

    def _endless(self, body: Sequence[shell.Command]) -> None:
        """``while true``: rounds until ``endless_round`` stops them by raising."""
        if self.endless_round is None:
            raise _NotSimulated("sh: fakekube does not simulate endless loops in exec scripts "
                                "(an exec answers once its command has finished)")
        for round_number in itertools.count():
            self.endless_round(round_number)
            self.run(body)


def environment(pod: Mapping[str, Any], container: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The variables ``env`` prints (see the module docstring), later values replacing earlier."""
    values: dict[str, str] = {"PATH": DEFAULT_PATH, "HOSTNAME": _hostname(pod)}
    values.update(spec_environment(pod, container))
    values.setdefault("HOME", "/root")
    return list(values.items())


def spec_environment(pod: Mapping[str, Any], container: Mapping[str, Any]) -> dict[str, str]:
    """The container's ``env`` as the kubelet resolves it (``makeEnvironmentVariables``), in
    order, later ones replacing earlier: a ``value`` with its ``$(VAR)`` references expanded
    from the variables before it, or a ``fieldRef`` of the pod (the downward API).
    ``configMapKeyRef``, ``secretKeyRef``, ``resourceFieldRef`` and ``envFrom`` are not
    simulated (such variables are left out)."""
    values: dict[str, str] = {}
    for var in container.get("env") or []:
        if not isinstance(var, Mapping) or not isinstance(var.get("name"), str):
            continue
        source = var.get("valueFrom")
        if source is None:
            values[var["name"]] = expand_references(str(var.get("value") or ""), values)
            continue
        field = (source.get("fieldRef") or {}).get("fieldPath") if isinstance(source, Mapping) else None
        found = field_value(pod, str(field)) if field else None
        if found is not None:
            values[var["name"]] = found
    return values


#: The kubelet's ``$(VAR)`` references in command, args and env values (``$$`` escapes a ``$``).
_REFERENCE = re.compile(r"\$\$|\$\(([^)]*)\)")


def expand_references(word: str, env: Mapping[str, str]) -> str:
    """Upstream's ``expansion.Expand``: ``$(NAME)`` becomes NAME's value when it is defined
    and stays as written when not; ``$$`` is a literal ``$``."""
    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))
    return _REFERENCE.sub(replace, word)


_LABEL_PATH = re.compile(r"metadata\.(labels|annotations)\['([^']*)'\]")
_FIELD_PATHS = {"metadata.name": ("metadata", "name"), "metadata.namespace": ("metadata", "namespace"),
                "metadata.uid": ("metadata", "uid"), "spec.nodeName": ("spec", "nodeName"),
                "spec.serviceAccountName": ("spec", "serviceAccountName"), "status.hostIP": ("status", "hostIP"),
                "status.podIP": ("status", "podIP")}


def field_value(pod: Mapping[str, Any], path: str) -> str | None:
    """A downward-API ``fieldRef`` of the pod, or None when the path is not one a container's
    env may name or the pod does not have it yet."""
    keyed = _LABEL_PATH.fullmatch(path)
    if keyed is not None:
        return str(((pod.get("metadata") or {}).get(keyed.group(1)) or {}).get(keyed.group(2), ""))
    where = _FIELD_PATHS.get(path)
    if where is None:
        return None
    value = (pod.get(where[0]) or {}).get(where[1])
    return None if value is None else str(value)


def _hostname(pod: Mapping[str, Any]) -> str:
    spec = pod.get("spec") or {}
    return str(spec.get("hostname") or (pod.get("metadata") or {}).get("name") or "")


def _echo(args: list[str], pod: Mapping[str, Any], container: Mapping[str, Any]) -> ExecResult:
    newline = not (args and args[0] == "-n")
    words = args if newline else args[1:]
    return ExecResult(stdout=(" ".join(words) + ("\n" if newline else "")).encode())


def _env(args: list[str], pod: Mapping[str, Any], container: Mapping[str, Any]) -> ExecResult:
    return ExecResult(stdout="".join(f"{name}={value}\n" for name, value in environment(pod, container)).encode())


def _printenv(args: list[str], pod: Mapping[str, Any], container: Mapping[str, Any]) -> ExecResult:
    if not args:
        return _env(args, pod, container)
    values = dict(environment(pod, container))
    found = [values[name] for name in args if name in values]
    return ExecResult(stdout="".join(f"{value}\n" for value in found).encode(),
                      exit_code=0 if len(found) == len(args) else 1)


#: ``date``'s default output (coreutils and busybox in the C locale, UTC: a container's default zone).
DATE_FORMAT = "%a %b %e %H:%M:%S UTC %Y"
_DATE_OPTIONS = {"-R": "%a, %d %b %Y %H:%M:%S +0000", "-I": "%Y-%m-%d", "-Iseconds": "%Y-%m-%dT%H:%M:%S+00:00"}


def _date(args: list[str], now: datetime) -> ExecResult:
    """``date`` at cluster time: the default format, ``+FORMAT`` (strftime's conversions,
    ``%s`` the Unix seconds), ``-u``, ``-R``, ``-I``/``-Iseconds``; anything else is an
    invalid date, as coreutils says it."""
    fmt = DATE_FORMAT
    for arg in args:
        if arg == "-u" or arg == "--utc":
            continue
        if arg.startswith("+"):
            fmt = arg[1:].replace("%s", str(int(now.timestamp()))).replace("%N", f"{now.microsecond * 1000:09d}")
        elif arg in _DATE_OPTIONS:
            fmt = _DATE_OPTIONS[arg]
        else:
            return ExecResult(stderr=f"date: invalid date '{arg}'\n".encode(), exit_code=1)
    return ExecResult(stdout=(now.astimezone(timezone.utc).strftime(fmt) + "\n").encode())


#: What ``ls /`` lists: the top of a typical image (busybox's; debian's adds boot, media,
#: mnt, opt, run, sbin, srv). The one directory whose contents are assumed.
ROOT_DIRECTORIES = ("bin", "dev", "etc", "home", "lib", "lib64", "proc", "root", "sys", "tmp", "usr", "var")
#: ls's exit status for "serious trouble": a path the simulated container cannot show.
LS_TROUBLE_EXIT_CODE = 2


def _ls(args: list[str], pod: Mapping[str, Any], container: Mapping[str, Any]) -> ExecResult:
    """``ls`` of the root (no path, ``/``; options ignored): the usual top-level directories,
    one per line as ``ls`` writes to a pipe. Any other path fails, saying why."""
    paths = [arg for arg in args if not arg.startswith("-")] or [str(container.get("workingDir") or "/")]
    if all(path.rstrip("/") == "" for path in paths):
        return ExecResult(stdout="".join(f"{name}\n" for name in ROOT_DIRECTORIES).encode())
    shown = next(path for path in paths if path.rstrip("/") != "")
    return ExecResult(stderr=f"ls: cannot access '{shown}': fakekube does not simulate a container's filesystem\n"
                      .encode(), exit_code=LS_TROUBLE_EXIT_CODE)


def _printf(args: list[str], pod: Mapping[str, Any], container: Mapping[str, Any]) -> ExecResult:
    printed = printf(args)
    return ExecResult(printed.stdout.encode(), printed.stderr.encode(), printed.exit_code)


def _user_id(container: Mapping[str, Any], pod: Mapping[str, Any]) -> int:
    """The uid the process runs as: the container's ``securityContext.runAsUser``, else the
    pod's, else root (the image's USER is not known)."""
    for context in (container.get("securityContext"), (pod.get("spec") or {}).get("securityContext")):
        if isinstance(context, Mapping) and isinstance(context.get("runAsUser"), int):
            return int(context["runAsUser"])
    return 0


def _whoami(args: list[str], pod: Mapping[str, Any], container: Mapping[str, Any]) -> ExecResult:
    uid = _user_id(container, pod)
    if uid == 0:
        return ExecResult(stdout=b"root\n")
    return ExecResult(stderr=f"whoami: unknown uid {uid}\n".encode(), exit_code=1)


def _id(args: list[str], pod: Mapping[str, Any], container: Mapping[str, Any]) -> ExecResult:
    uid = _user_id(container, pod)
    if uid == 0:
        return ExecResult(stdout=b"uid=0(root) gid=0(root) groups=0(root),10(wheel)\n")
    return ExecResult(stdout=f"uid={uid} gid=0(root) groups=0(root)\n".encode())


def _pwd(args: list[str], pod: Mapping[str, Any], container: Mapping[str, Any]) -> ExecResult:
    return ExecResult(stdout=f"{container.get('workingDir') or '/'}\n".encode())


_BUILTINS: dict[str, Callable[[list[str], Mapping[str, Any], Mapping[str, Any]], ExecResult]] = {
    "true": lambda args, pod, container: ExecResult(),
    "false": lambda args, pod, container: ExecResult(exit_code=1),
    "echo": _echo,
    "hostname": lambda args, pod, container: ExecResult(stdout=(_hostname(pod) + "\n").encode()),
    "env": _env,
    "printenv": _printenv,
    "sleep": lambda args, pod, container: ExecResult(),
    "tar": lambda args, pod, container: ExecResult(stderr=TAR_MESSAGE.encode(), exit_code=TAR_EXIT_CODE),
    "printf": _printf,
    "ls": _ls,
    "pwd": _pwd,
    "whoami": _whoami,
    "id": _id,
    "uname": lambda args, pod, container: ExecResult(stdout=b"Linux\n"),
}
