"""The commands of a simulated container: coreutils, busybox applets and the shells, on its filesystem.

:func:`dispatcher` answers a command's argv: first the container's declared ``exec_commands``
(behaviour data: a glob over the argv, fixed output), then ``sh``/``bash``/``ash``/``dash``
(kubelet/shell.py), then the commands below (their options as GNU coreutils and busybox take
them; messages as busybox words them), then a script file named by path (``#!/bin/sh``
first line, executable). A command the image does not have (``Toolbox.missing``: a distroless
image has no shell and no coreutils; busybox and alpine have no ``bash`` or ``curl``) is not
found. Text tools are kubelet/textutils.py's, ``tar`` kubelet/tarcmd.py's and the network
clients kubelet/netutils.py's; docs/behaviour.md has the table.
"""

from __future__ import annotations

import base64
import hashlib
import math
import posixpath
import re
from datetime import datetime, timezone
from typing import Callable, Iterable, NamedTuple, Sequence

from fakekube.kubelet.behaviour import ExecCommand
from fakekube.kubelet.fs import DIR, FILE, LINK, Entry, FsError, mode_string
from fakekube.kubelet.printf import printf
from fakekube.kubelet.shell import (
    NOT_EXECUTABLE_EXIT_CODE, SHELLS, Forever, Process, Shell, Source, Streams,
    pattern_match, run_shell)

Command = Callable[[Process], int]
COMMANDS: dict[str, Command] = {}


def command(*names: str) -> Callable[[Command], Command]:
    def register(function: Command) -> Command:
        for name in names:
            COMMANDS[name] = function
        return function
    return register


class Toolbox(NamedTuple):
    """What a container can run besides its shell's builtins."""

    declared: tuple[ExecCommand, ...] = ()
    #: Commands this image does not have (``"*"``: none at all, as in a distroless image).
    missing: frozenset[str] = frozenset()
    #: DNS and HTTP for nslookup, wget and curl (kubelet/netutils.py); None: nothing answers.
    network: object | None = None
    #: Where ``which`` finds commands (``/bin`` in busybox and alpine, ``/usr/bin`` elsewhere).
    bin_dir: str = "/bin"

    def has(self, name: str) -> bool:
        return "*" not in self.missing and name not in self.missing


def dispatcher(toolbox: Toolbox) -> Callable[[Process], int | None]:
    """The container's commands as kubelet/shell.py calls them (None: no such command)."""
    def run(process: Process) -> int | None:
        process.shell.run.toolbox = toolbox  # type: ignore[attr-defined]
        argv = process.argv
        for declared in toolbox.declared:
            if declared.matches(argv):
                process.out(declared.stdout)
                process.err(declared.stderr)
                return declared.exit_code
        name = process.name
        if "/" in argv[0] and not _in_bin_dir(argv[0]):
            return _run_file(process, toolbox)
        if not toolbox.has(name):
            return None
        if name in SHELLS:
            return run_nested_shell(process)
        implementation = COMMANDS.get(name)
        return implementation(process) if implementation is not None else None
    return run


_BIN_DIRS = ("/bin", "/usr/bin", "/sbin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin")


def _in_bin_dir(path: str) -> bool:
    return posixpath.dirname(path) in _BIN_DIRS


def _run_file(process: Process, toolbox: Toolbox) -> int | None:
    """A command named by a path outside the system directories: a script of the filesystem."""
    path = process.argv[0]
    entry = process.fs.lookup(path)
    if entry is None:
        return None
    if entry[0] == DIR or not entry[1] & 0o111:
        process.err(f"sh: {process.shell.line}: {path}: Permission denied\n")
        return NOT_EXECUTABLE_EXIT_CODE
    text = bytes(entry[3])
    interpreter = _interpreter(text)
    if interpreter is None or not toolbox.has(interpreter):
        return None  # a binary or another language: the image's own software
    shell = _new_shell(process, path, process.args)
    return run_shell(shell, text.decode("utf-8", "surrogateescape"))


def _interpreter(text: bytes) -> str | None:
    """The shell a script's ``#!`` names (``/bin/sh``, ``/usr/bin/env bash``), or None."""
    if not text.startswith(b"#!"):
        return "sh" if text and b"\0" not in text[:1024] else None
    words = text[2:text.find(b"\n") if b"\n" in text else len(text)].decode("utf-8", "replace").split()
    if not words:
        return None
    name = posixpath.basename(words[0])
    if name == "env" and len(words) > 1:
        name = words[1]
    return name if name in SHELLS else None


def _new_shell(process: Process, arg0: str, positional: Sequence[str]) -> Shell:
    parent = process.shell
    shell = Shell(parent.run, process.env, process.streams, arg0, positional, parent.depth + 1)
    if parent.depth == 0 and parent.run.main_shell is None:
        parent.run.main_shell = shell  # the container's PID 1: its traps are what SIGTERM meets
    return shell


def run_nested_shell(process: Process) -> int:
    """``sh [-eux…] -c SCRIPT [NAME ARGS…]``, ``sh FILE ARGS…``, or ``sh`` reading its script from stdin."""
    args = list(process.args)
    options: list[str] = []
    script: str | None = None
    from_stdin = False
    while args and args[0].startswith(("-", "+")) and args[0] not in ("-", "--"):
        flag = args.pop(0)
        if flag in ("-o", "+o") and args:
            options.append(("" if flag == "-o" else "-") + args.pop(0))
            continue
        for letter in flag[1:]:
            if letter == "c":
                script = ""
            elif letter == "s":
                from_stdin = True
            elif letter in "eux" and flag[0] == "-":
                options.append({"e": "errexit", "u": "nounset", "x": "xtrace"}[letter])
    if args and args[0] == "--":
        args.pop(0)
    if script is not None:
        if not args:
            process.err(f"{process.name}: -c requires an argument\n")
            return 2
        script = args.pop(0)
        shell = _new_shell(process, args[0] if args else process.name, args[1:])
    elif args and not from_stdin:
        path = args.pop(0)
        try:
            script = process.fs.read(path).decode("utf-8", "surrogateescape")
        except FsError:
            process.err(f"{process.name}: 0: cannot open {path}: No such file\n")
            return 2
        shell = _new_shell(process, path, args)
    else:
        script = process.streams.stdin.read().decode("utf-8", "surrogateescape")
        shell = _new_shell(process, process.name, args)
        shell.streams = Streams(Source(), process.streams.stdout, process.streams.stderr)
    for option in options:
        if option.startswith("-"):
            shell.options.discard(option[1:])
        else:
            shell.options.add(option)
    return run_shell(shell, script)


def which(process: Process, name: str) -> str | None:
    toolbox: Toolbox = getattr(process.shell.run, "toolbox", Toolbox())
    if "/" in name:
        return name if process.fs.lookup(name) is not None else None
    if not toolbox.has(name) or (name not in COMMANDS and name not in SHELLS):
        return None
    return f"{toolbox.bin_dir}/{name}"


# -- small commands ------------------------------------------------------------------------

@command("true")
def _true(p: Process) -> int:
    return 0


@command("false")
def _false(p: Process) -> int:
    return 1


@command("echo")
def _echo(p: Process) -> int:
    args = list(p.args)
    newline, escapes = True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        flags = args.pop(0)
        newline = newline and "n" not in flags
        escapes = ("e" in flags) or (escapes and "E" not in flags)
    text = " ".join(args)
    if escapes:
        printed = printf(["%b", text])
        text = printed.stdout
    p.out(text + ("\n" if newline else ""))
    return 0


@command("printf")
def _printf(p: Process) -> int:
    printed = printf(list(p.args))
    p.out(printed.stdout)
    p.err(printed.stderr)
    return printed.exit_code


@command("hostname")
def _hostname(p: Process) -> int:
    try:
        p.out(p.fs.read("/etc/hostname"))
    except FsError:
        p.out(p.env.get("HOSTNAME", "localhost") + "\n")
    return 0


@command("env", "printenv")
def _env(p: Process) -> int:
    env = p.env
    args = list(p.args)
    if p.name == "printenv":
        if not args:
            p.out("".join(f"{name}={value}\n" for name, value in env.items()))
            return 0
        found = [env[name] for name in args if name in env]
        p.out("".join(f"{value}\n" for value in found))
        return 0 if len(found) == len(args) else 1
    extra: dict[str, str] = {}
    clear = False
    while args and ("=" in args[0] or args[0] in ("-i", "-", "-u")):
        arg = args.pop(0)
        if arg in ("-i", "-"):
            clear = True
        elif arg == "-u" and args:
            env.pop(args.pop(0), None)
        else:
            name, _, value = arg.partition("=")
            extra[name] = value
    environment = ({} if clear else dict(env)) | extra
    if not args:
        p.out("".join(f"{name}={value}\n" for name, value in environment.items()))
        return 0
    child = Shell(p.shell.run, environment, p.streams, "env", (), p.shell.depth + 1)
    return child.external(args, p.streams)


@command("pwd")
def _pwd(p: Process) -> int:
    p.out(p.fs.cwd + "\n")
    return 0


def _user_id(p: Process) -> int:
    container, pod = p.run.environment.container, p.run.environment.pod
    for context in (container.get("securityContext"), (pod.get("spec") or {}).get("securityContext")):
        if isinstance(context, dict) and isinstance(context.get("runAsUser"), int):
            return int(context["runAsUser"])
    return 0


@command("whoami")
def _whoami(p: Process) -> int:
    uid = _user_id(p)
    if uid == 0:
        p.out("root\n")
        return 0
    return p.fail(f"unknown uid {uid}")


@command("id")
def _id(p: Process) -> int:
    uid = _user_id(p)
    if uid == 0:
        p.out("uid=0(root) gid=0(root) groups=0(root),10(wheel)\n")
    else:
        p.out(f"uid={uid} gid=0(root) groups=0(root)\n")
    return 0


@command("uname")
def _uname(p: Process) -> int:
    fields = {"s": "Linux", "n": _node_name(p), "r": "6.8.0-1017-gcp", "v": "#19-Ubuntu SMP", "m": "x86_64",
              "o": "GNU/Linux"}
    wanted: list[str] = []
    for arg in p.args:
        if arg in ("-a", "--all"):
            wanted = ["s", "n", "r", "v", "m", "o"]
        elif arg.startswith("-"):
            wanted.extend(letter for letter in arg[1:] if letter in fields)
    p.out(" ".join(fields[letter] for letter in (wanted or ["s"])) + "\n")
    return 0


def _node_name(p: Process) -> str:
    try:
        return p.fs.read("/etc/hostname").decode().strip()
    except FsError:
        return "localhost"


@command("sleep")
def _sleep(p: Process) -> int:
    seconds = sleep_seconds(p.args)
    if seconds is None:
        return p.fail(f"invalid number '{p.args[0] if p.args else ''}'" if p.args else "missing operand")
    p.run.sleep(seconds)
    return 0


_SLEEP_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_SLEEP_ARG = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([smhd]?)")


def sleep_seconds(args: Sequence[str]) -> float | None:
    """How long ``sleep ARGS`` sleeps (``math.inf`` for ``infinity``); None when an argument
    is not a duration (GNU coreutils' and busybox's suffixes ``s m h d``; several are summed)."""
    if not args:
        return None
    total = 0.0
    for arg in args:
        if arg.lower() in ("inf", "infinity"):
            return math.inf
        match = _SLEEP_ARG.fullmatch(arg)
        if match is None:
            return None
        total += float(match.group(1)) * _SLEEP_UNITS[match.group(2)]
    return total


#: ``date``'s default output (coreutils and busybox in the C locale, UTC: a container's default zone).
DATE_FORMAT = "%a %b %e %H:%M:%S UTC %Y"
_DATE_OPTIONS = {"-R": "%a, %d %b %Y %H:%M:%S +0000", "-I": "%Y-%m-%d", "-Iseconds": "%Y-%m-%dT%H:%M:%S+00:00",
                 "--rfc-3339=seconds": "%Y-%m-%d %H:%M:%S+00:00", "-Ins": "%Y-%m-%dT%H:%M:%S,%N+00:00"}


def format_date(args: list[str], now: datetime) -> tuple[str | None, str]:
    """``date ARGS`` at ``now``: (stdout, error message)."""
    fmt = DATE_FORMAT
    moment = now
    args = list(args)
    while args:
        arg = args.pop(0)
        if arg in ("-u", "--utc"):
            continue
        if arg.startswith("+"):
            fmt = arg[1:]
        elif arg in _DATE_OPTIONS:
            fmt = _DATE_OPTIONS[arg]
        elif arg in ("-d", "--date") and args:
            value = args.pop(0)
            if value.startswith("@") and re.fullmatch(r"@-?\d+", value):
                moment = datetime.fromtimestamp(int(value[1:]), timezone.utc)
            else:
                return None, f"date: invalid date '{value}'\n"
        else:
            return None, f"date: invalid date '{arg}'\n"
    fmt = fmt.replace("%s", str(int(moment.timestamp()))).replace("%N", f"{moment.microsecond * 1000:09d}")
    return moment.astimezone(timezone.utc).strftime(fmt) + "\n", ""


@command("date")
def _date(p: Process) -> int:
    out, error = format_date(list(p.args), p.run.now)
    if out is None:
        p.err(error)
        return 1
    p.out(out)
    return 0


@command("uptime")
def _uptime(p: Process) -> int:
    now = p.run.now
    p.out(f" {now.strftime('%H:%M:%S')} up 0 min,  0 users,  load average: 0.00, 0.00, 0.00\n")
    return 0


@command("seq")
def _seq(p: Process) -> int:
    args = list(p.args)
    separator, width = "\n", False
    numbers: list[str] = []
    while args:
        arg = args.pop(0)
        if arg == "-s" and args:
            separator = args.pop(0)
        elif arg == "-w":
            width = True
        elif arg.startswith("-s") and len(arg) > 2:
            separator = arg[2:]
        else:
            numbers.append(arg)
    try:
        values = [float(n) if "." in n else int(n) for n in numbers]
    except ValueError:
        return p.fail(f"invalid number '{numbers[0] if numbers else ''}'")
    if not 1 <= len(values) <= 3:
        return p.fail("missing operand")
    first, step, last = (1, 1, values[0]) if len(values) == 1 else \
        (values[0], 1, values[1]) if len(values) == 2 else (values[0], values[1], values[2])
    if step == 0:
        return p.fail("invalid Zero increment value: '0'")
    out: list[str] = []
    value = first
    digits = max(len(str(int(v))) for v in (first, last)) if width else 0
    while (step > 0 and value <= last) or (step < 0 and value >= last):
        p.run.spend_command()
        out.append(str(value).zfill(digits) if isinstance(value, int) else f"{value:g}")
        value += step
        if len(out) % 1024 == 0:
            p.out(separator.join(out) + separator)
            out = []
    if out:
        p.out(separator.join(out) + "\n")
    elif separator != "\n":
        pass
    return 0


# -- files ----------------------------------------------------------------------------------

def _err_path(p: Process, path: str, error: FsError, verb: str = "") -> int:
    what = f"{verb} " if verb else ""
    return p.fail(f"{what}{path}: {error}" if not verb else f"{verb} '{path}': {error}")


def read_inputs(p: Process, files: Sequence[str]) -> Iterable[tuple[str, bytes | None]]:
    """Each named file's bytes (``-`` and none: stdin); None after writing the error."""
    for name in files or ["-"]:
        if name in ("-", "/dev/stdin", "/proc/self/fd/0"):
            yield name, p.streams.stdin.read()
            continue
        try:
            yield name, p.fs.read(name)
        except FsError as error:
            p.err(f"{p.name}: {name}: {error}\n")
            yield name, None


@command("cat")
def _cat(p: Process) -> int:
    numbered = "-n" in p.args
    files = [a for a in p.args if not (a.startswith("-") and len(a) > 1)]
    status = 0
    line_number = 0
    for _, data in read_inputs(p, files):
        if data is None:
            status = 1
            continue
        if numbered:
            lines = data.split(b"\n")
            for index, line in enumerate(lines):
                if index == len(lines) - 1 and not line:
                    break
                line_number += 1
                p.out(f"{line_number:6d}\t".encode() + line + (b"\n" if index < len(lines) - 1 else b""))
        else:
            p.out(data)
    return status


@command("touch")
def _touch(p: Process) -> int:
    no_create = any(a in ("-c", "--no-create") for a in p.args)
    status = 0
    for path in (a for a in p.args if not a.startswith("-")):
        try:
            if p.fs.lookup(path) is None:
                if not no_create:
                    p.fs.write(path, b"")
            else:
                p.fs.set_meta(path, mtime_s=p.fs.mtime_s)
        except FsError as error:
            status = p.fail(f"{path}: {error}")
    return status


def _parse_mode(text: str, current: int) -> int | None:
    if re.fullmatch(r"[0-7]{1,4}", text):
        return int(text, 8)
    mode = current
    for clause in text.split(","):
        match = re.fullmatch(r"([ugoa]*)([-+=])([rwxXst]*)", clause)
        if match is None:
            return None
        who, op, perms = match.groups()
        who = who or "a"
        bits = 0
        for person in ("u", "g", "o"):
            if person in who or "a" in who:
                shift = {"u": 6, "g": 3, "o": 0}[person]
                for perm, value in (("r", 4), ("w", 2), ("x", 1), ("X", 1)):
                    if perm in perms:
                        bits |= value << shift
        if op == "+":
            mode |= bits
        elif op == "-":
            mode &= ~bits
        else:
            mask = sum(7 << {"u": 6, "g": 3, "o": 0}[x] for x in "ugo" if x in who or "a" in who)
            mode = (mode & ~mask) | bits
    return mode


@command("mkdir")
def _mkdir(p: Process) -> int:
    args = list(p.args)
    parents, mode = False, 0o755
    paths: list[str] = []
    while args:
        arg = args.pop(0)
        if arg in ("-p", "--parents"):
            parents = True
        elif arg == "-m" and args:
            mode = _parse_mode(args.pop(0), 0o755) or 0o755
        elif arg.startswith("-") and len(arg) > 1 and set(arg[1:]) <= set("pv"):
            parents = parents or "p" in arg
        else:
            paths.append(arg)
    if not paths:
        return p.fail("missing operand")
    status = 0
    for path in paths:
        try:
            p.fs.mkdir(path, parents=parents, mode=mode)
        except FsError as error:
            status = p.fail(f"can't create directory '{path}': {error}")
    return status


@command("rmdir")
def _rmdir(p: Process) -> int:
    status = 0
    for path in (a for a in p.args if not a.startswith("-")):
        try:
            entry = p.fs.stat(path, follow=False)
            if entry[0] != DIR:
                raise FsError("ENOTDIR", path)
            if entry[3]:
                raise FsError("ENOTEMPTY", path)
            p.fs.remove(path)
        except FsError as error:
            status = p.fail(f"'{path}': {error}")
    return status


def _flags(args: Sequence[str], letters: str) -> tuple[set[str], list[str]]:
    """Short flags (clustered) among ``letters`` and the operands (``--`` ends flags)."""
    flags: set[str] = set()
    operands: list[str] = []
    done = False
    for arg in args:
        if done or not arg.startswith("-") or arg == "-":
            operands.append(arg)
        elif arg == "--":
            done = True
        elif arg.startswith("--"):
            flags.add(arg)
        else:
            flags.update(arg[1:])
    return flags, operands


@command("rm")
def _rm(p: Process) -> int:
    flags, paths = _flags(p.args, "rRfvid")
    recursive = bool(flags & {"r", "R", "--recursive"})
    force = bool(flags & {"f", "--force"})
    status = 0
    if not paths and not force:
        return p.fail("missing operand")
    for path in paths:
        entry = p.fs.lookup(path, follow=False)
        if entry is None:
            if not force:
                status = p.fail(f"can't remove '{path}': No such file or directory")
            continue
        if entry[0] == DIR and not recursive:
            status = p.fail(f"'{path}' is a directory")
            continue
        try:
            p.fs.remove(path)
        except FsError as error:
            status = p.fail(f"can't remove '{path}': {error}")
    return status


def _target_for(p: Process, source: str, target: str, many: bool) -> str:
    if p.fs.is_dir(target):
        return posixpath.join(target, posixpath.basename(source.rstrip("/")))
    return target


@command("cp")
def _cp(p: Process) -> int:
    flags, operands = _flags(p.args, "rRapfvdLPHnTu")
    recursive = bool(flags & {"r", "R", "a", "--recursive", "--archive"})
    if len(operands) < 2:
        return p.fail("missing file operand")
    *sources, target = operands
    if len(sources) > 1 and not p.fs.is_dir(target):
        return p.fail(f"target '{target}' is not a directory")
    status = 0
    for source in sources:
        try:
            entry = p.fs.stat(source)
            destination = _target_for(p, source, target, len(sources) > 1)
            if entry[0] == DIR:
                if not recursive:
                    status = p.fail(f"omitting directory '{source}'")
                    continue
                p.fs.put(destination, entry)
            else:
                mode = entry[1] if flags & {"p", "a"} else 0o644 | (entry[1] & 0o111)
                p.fs.write(destination, bytes(entry[3]), mode=mode)
        except FsError as error:
            status = p.fail(f"can't stat '{source}': {error}" if error.path == source else f"{error.path}: {error}")
    return status


@command("mv")
def _mv(p: Process) -> int:
    _, operands = _flags(p.args, "fivnTu")
    if len(operands) < 2:
        return p.fail("missing file operand")
    *sources, target = operands
    status = 0
    for source in sources:
        try:
            p.fs.stat(source, follow=False)
            destination = _target_for(p, source, target, len(sources) > 1)
            existing = p.fs.lookup(destination, follow=False)
            if existing is not None:
                p.fs.remove(destination)
            p.fs.rename(source, destination)
        except FsError as error:
            status = p.fail(f"can't rename '{source}': {error}")
    return status


@command("ln")
def _ln(p: Process) -> int:
    flags, operands = _flags(p.args, "sfnvT")
    if len(operands) < 2 or not flags & {"s"}:
        if not flags & {"s"}:
            return p.fail("fakekube simulates symbolic links only (ln -s)", 1)
        return p.fail("missing file operand")
    target, link = operands[0], operands[1]
    if p.fs.is_dir(link) and "n" not in flags:
        link = posixpath.join(link, posixpath.basename(target))
    try:
        if "f" in flags and p.fs.lookup(link, follow=False) is not None:
            p.fs.remove(link)
        p.fs.symlink(target, link)
    except FsError as error:
        return p.fail(f"{link}: {error}")
    return 0


@command("chmod")
def _chmod(p: Process) -> int:
    _, operands = _flags(p.args, "Rvcf")
    if len(operands) < 2:
        return p.fail("missing operand")
    spec, paths = operands[0], operands[1:]
    status = 0
    for path in paths:
        try:
            entry = p.fs.stat(path)
            mode = _parse_mode(spec, entry[1])
            if mode is None:
                return p.fail(f"invalid mode '{spec}'")
            p.fs.set_meta(path, mode=mode)
        except FsError as error:
            status = p.fail(f"{path}: {error}")
    return status


@command("chown", "chgrp")
def _chown(p: Process) -> int:
    _, operands = _flags(p.args, "Rvhf")
    for path in operands[1:]:
        if p.fs.lookup(path) is None:
            return p.fail(f"{path}: No such file or directory")
    return 0


@command("readlink", "realpath")
def _readlink(p: Process) -> int:
    flags, operands = _flags(p.args, "fenmqsvz")
    status = 0
    for path in operands:
        try:
            if p.name == "realpath" or flags & {"f", "e", "m"}:
                resolved = p.fs.resolve(path)
                if p.name == "realpath" and p.fs.lookup(resolved) is None and "m" not in flags:
                    raise FsError("ENOENT", path)
                p.out(resolved + "\n")
            else:
                entry = p.fs.stat(path, follow=False)
                if entry[0] != LINK:
                    status = 1
                    continue
                p.out(entry[3] + "\n")
        except FsError as error:
            status = p.fail(f"{path}: {error}") if p.name == "realpath" else 1
    return status


@command("basename")
def _basename(p: Process) -> int:
    if not p.args:
        return p.fail("missing operand")
    name = posixpath.basename(p.args[0].rstrip("/")) or "/"
    if len(p.args) > 1 and name.endswith(p.args[1]) and name != p.args[1]:
        name = name[:-len(p.args[1])]
    p.out(name + "\n")
    return 0


@command("dirname")
def _dirname(p: Process) -> int:
    if not p.args:
        return p.fail("missing operand")
    path = p.args[0].rstrip("/") or "/"
    p.out((posixpath.dirname(path) or ".") + "\n")
    return 0


@command("mktemp")
def _mktemp(p: Process) -> int:
    flags, operands = _flags(p.args, "dqutp")
    template = operands[0] if operands else "/tmp/tmp.XXXXXXXXXX"
    if "/" not in template:
        template = "/tmp/" + template
    count = len(template) - len(template.rstrip("X"))
    suffix = hashlib.sha256(f"{p.run.commands}/{template}".encode()).hexdigest()[:max(count, 6)]
    path = template[:len(template) - count] + suffix[:count]
    try:
        if "d" in flags:
            p.fs.mkdir(path, mode=0o700)
        else:
            p.fs.write(path, b"", mode=0o600)
    except FsError as error:
        return p.fail(f"(null): {error}")
    p.out(path + "\n")
    return 0


def _long_listing(entry: Entry, name: str, now_s: float) -> str:
    size = len(entry[3]) if entry[0] == FILE else 4096 if entry[0] == DIR else len(entry[3])
    links = 2 if entry[0] == DIR else 1
    moment = datetime.fromtimestamp(entry[2], timezone.utc)
    recent = abs(now_s - entry[2]) < 180 * 86400
    when = moment.strftime("%b %e %H:%M") if recent else moment.strftime("%b %e  %Y")
    shown = name + (f" -> {entry[3]}" if entry[0] == LINK else "")
    return f"{mode_string(entry)} {links:>4} root     root     {size:>9} {when} {shown}"


@command("ls")
def _ls(p: Process) -> int:
    flags, paths = _flags(p.args, "lahAdR1FtrSiL")
    show_all, almost = bool(flags & {"a", "--all"}), bool(flags & {"A", "--almost-all"})
    long, directory = "l" in flags and "L" not in flags, "d" in flags
    dereference = "L" in flags
    long = long or ("l" in flags and dereference)
    paths = paths or ["."]
    status = 0
    files: list[str] = []
    dirs: list[str] = []
    for path in paths:
        entry = p.fs.lookup(path, follow=dereference or not long or path.endswith("/"))
        if entry is None:
            status = 2
            p.err(f"ls: cannot access '{path}': No such file or directory\n")
            continue
        (dirs if entry[0] == DIR and not directory else files).append(path)
    now_s = p.fs.mtime_s
    files.sort()
    dirs.sort()
    for path in files:
        entry = p.fs.stat(path, follow=dereference or not long)
        p.out((_long_listing(entry, path, now_s) if long else path) + "\n")
    for index, path in enumerate(dirs):
        if len(paths) > 1:
            p.out(("\n" if files or index else "") + f"{path}:\n")
        try:
            entries = p.fs.listdir(path)
        except FsError as error:
            status = p.fail(f"{path}: {error}", 2)
            continue
        names = [(name, entry) for name, entry in entries if show_all or almost or not name.startswith(".")]
        if show_all:
            names = [(".", p.fs.stat(path)), ("..", p.fs.stat(posixpath.join(path, "..")))] + names
        if long:
            p.out(f"total {sum((len(e[3]) if e[0] == FILE else 0) // 1024 + 4 for _, e in names)}\n")
        for name, entry in names:
            if dereference and entry[0] == LINK:
                entry = p.fs.lookup(posixpath.join(path, name)) or entry
            p.out((_long_listing(entry, name, now_s) if long else name) + "\n")
    return status


@command("stat")
def _stat(p: Process) -> int:
    args = list(p.args)
    fmt: str | None = None
    paths: list[str] = []
    while args:
        arg = args.pop(0)
        if arg in ("-c", "--format") and args:
            fmt = args.pop(0)
        elif arg.startswith("--format=") or arg.startswith("-c"):
            fmt = arg.split("=", 1)[1] if "=" in arg else arg[2:]
        elif arg in ("-L", "-t"):
            continue
        else:
            paths.append(arg)
    status = 0
    for path in paths:
        entry = p.fs.lookup(path, follow=False)
        if entry is None:
            status = p.fail(f"can't stat '{path}': No such file or directory")
            continue
        size = len(entry[3]) if entry[0] != DIR else 4096
        kind = {FILE: "regular file", DIR: "directory", LINK: "symbolic link"}[entry[0]]
        if fmt is None:
            p.out(f"  File: {path}\n  Size: {size}\t{kind}\nAccess: ({entry[1] & 0o7777:04o}/{mode_string(entry)})\n")
            continue
        values = {"s": str(size), "n": path, "a": f"{entry[1] & 0o7777:o}", "A": mode_string(entry), "F": kind,
                  "U": "root", "G": "root", "u": "0", "g": "0", "Y": str(int(entry[2])), "y": str(entry[2])}
        p.out(re.sub(r"%(.)", lambda m: values.get(m.group(1), m.group(0)), fmt) + "\n")
    return status


@command("find")
def _find(p: Process) -> int:
    args = list(p.args)
    roots: list[str] = []
    while args and not args[0].startswith("-") and args[0] not in ("(", "!"):
        roots.append(args.pop(0))
    tests: list[tuple[str, str]] = []
    max_depth, min_depth = math.inf, 0
    while args:
        arg = args.pop(0)
        if arg in ("-name", "-iname", "-type", "-path", "-wholename", "-newer", "-size", "-perm", "-user"):
            if not args:
                return p.fail(f"missing argument to `{arg}'")
            tests.append((arg, args.pop(0)))
        elif arg == "-maxdepth" and args:
            max_depth = int(args.pop(0))
        elif arg == "-mindepth" and args:
            min_depth = int(args.pop(0))
        elif arg in ("-print", "-xdev", "-follow", "-depth", "-mount"):
            continue
        elif arg == "-print0":
            tests.append(("-print0", ""))
        else:
            return p.fail(f"fakekube does not simulate the expression '{arg}'", 1)
    status = 0
    terminator = "\0" if ("-print0", "") in tests else "\n"
    for root in roots or ["."]:
        if p.fs.lookup(root) is None:
            status = p.fail(f"{root}: No such file or directory")
            continue
        for path, entry in p.fs.walk(root):
            depth = 0 if path == root else path[len(root.rstrip("/")):].count("/")
            if depth > max_depth or depth < min_depth:
                continue
            if all(_find_test(test, value, path, entry) for test, value in tests):
                p.out(path + terminator)
    return status


def _find_test(test: str, value: str, path: str, entry: Entry) -> bool:
    name = posixpath.basename(path.rstrip("/")) or path
    if test == "-name":
        return pattern_match(value, name)
    if test == "-iname":
        return pattern_match(value.lower(), name.lower())
    if test == "-type":
        return {"f": FILE, "d": DIR, "l": LINK}.get(value) == entry[0]
    if test in ("-path", "-wholename"):
        return pattern_match(value, path)
    if test == "-size":
        match = re.fullmatch(r"([+-]?)(\d+)([ckMG]?)", value)
        if match is None or entry[0] != FILE:
            return False
        unit = {"c": 1, "k": 1024, "M": 1 << 20, "G": 1 << 30, "": 512}[match.group(3)]
        size = math.ceil(len(entry[3]) / unit)
        wanted = int(match.group(2))
        return size > wanted if match.group(1) == "+" else size < wanted if match.group(1) == "-" else size == wanted
    return True


# -- checksums and encodings ---------------------------------------------------------------------

@command("md5sum", "sha1sum", "sha256sum", "sha512sum")
def _checksum(p: Process) -> int:
    algorithm = p.name[:-3]
    check = any(a in ("-c", "--check") for a in p.args)
    files = [a for a in p.args if not a.startswith("-") or a == "-"]
    if check:
        return p.fail("fakekube does not simulate --check", 1)
    status = 0
    for name, data in read_inputs(p, files):
        if data is None:
            status = 1
            continue
        p.out(f"{hashlib.new(algorithm, data).hexdigest()}  {name}\n")
    return status


@command("base64")
def _base64(p: Process) -> int:
    flags, files = _flags(p.args, "dwi")
    status = 0
    for _, data in read_inputs(p, files):
        if data is None:
            status = 1
            continue
        if "d" in flags or "--decode" in flags:
            try:
                p.out(base64.b64decode(b"".join(data.split()), validate=False))
            except ValueError:
                return p.fail("invalid input")
        else:
            encoded = base64.b64encode(data).decode()
            p.out("".join(encoded[i:i + 76] + "\n" for i in range(0, len(encoded), 76)) or "")
    return status


# -- test / [ / [[ ------------------------------------------------------------------------------

@command("test", "[")
def test_command(p: Process) -> int:
    args = list(p.args)
    if p.name == "[" or (p.argv and p.argv[0] == "["):
        if not args or args[-1] != "]":
            return p.fail("missing ]", 2)
        args = args[:-1]
    try:
        return 0 if _TestParser(p, args, double=False).parse() else 1
    except _TestError as error:
        p.err(f"sh: {p.shell.line}: {p.name or 'test'}: {error}\n")
        return 2


def double_bracket(p: Process, words: list[str], patterns: list[bool]) -> int:
    try:
        return 0 if _TestParser(p, words, double=True, patterns=patterns).parse() else 1
    except _TestError as error:
        p.err(f"sh: {p.shell.line}: [[: {error}\n")
        return 2


class _TestError(Exception):
    pass


_UNARY_TESTS = {"-e", "-f", "-d", "-s", "-r", "-w", "-x", "-L", "-h", "-z", "-n", "-b", "-c", "-p", "-S", "-g",
                "-u", "-k", "-O", "-G", "-N", "-t", "-a"}
_BINARY_TESTS = {"=", "==", "!=", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "<", ">", "=~", "-nt", "-ot", "-ef"}


class _TestParser:
    """POSIX ``test`` (and ``[[``: ``&&``, ``||``, patterns after ``==``, ``=~``)."""

    def __init__(self, p: Process, args: list[str], double: bool, patterns: list[bool] | None = None) -> None:
        self.p, self.args, self.double = p, args, double
        self.patterns = patterns or [False] * len(args)
        self.index = 0

    def parse(self) -> bool:
        if not self.args:
            return False
        if not self.double and len(self.args) <= 4:
            result = self._short()
            if result is not None:
                return result
        value = self._or()
        if self.index < len(self.args):
            raise _TestError(f"{self.args[self.index]}: unexpected operator")
        return value

    def _short(self) -> bool | None:
        """POSIX's rules by argument count (``[ -n ]`` is a one-argument test: true)."""
        a = self.args
        if len(a) == 1:
            return a[0] != ""
        if len(a) == 2:
            if a[0] == "!":
                return a[1] == ""
            if a[0] in _UNARY_TESTS:
                return self._unary(a[0], a[1])
            raise _TestError(f"{a[0]}: unexpected operator")
        if len(a) == 3:
            if a[1] in _BINARY_TESTS:
                return self._binary(a[0], a[1], a[2], 2)
            if a[0] == "!":
                return not _TestParser(self.p, a[1:], False).parse()
            if a[0] == "(" and a[2] == ")":
                return a[1] != ""
        if len(a) == 4 and a[0] == "!":
            return not _TestParser(self.p, a[1:], False).parse()
        return None

    def _peek(self) -> str | None:
        return self.args[self.index] if self.index < len(self.args) else None

    def _take(self) -> str:
        if self.index >= len(self.args):
            raise _TestError("argument expected")
        self.index += 1
        return self.args[self.index - 1]

    def _or(self) -> bool:
        value = self._and()
        while self._peek() in ("-o", "||"):
            self._take()
            right = self._and()
            value = value or right
        return value

    def _and(self) -> bool:
        value = self._not()
        while self._peek() in ("-a", "&&"):
            self._take()
            right = self._not()
            value = value and right
        return value

    def _not(self) -> bool:
        if self._peek() == "!":
            self._take()
            return not self._not()
        return self._primary()

    def _primary(self) -> bool:
        token = self._take()
        if token == "(":
            value = self._or()
            if self._take() != ")":
                raise _TestError("closing paren expected")
            return value
        following = self._peek()
        if following in _BINARY_TESTS and self.index + 1 < len(self.args):
            operator = self._take()
            position = self.index
            return self._binary(token, operator, self._take(), position)
        if token in _UNARY_TESTS and following is not None and token != "-a":
            return self._unary(token, self._take())
        return token != ""

    def _unary(self, op: str, operand: str) -> bool:
        if op == "-z":
            return operand == ""
        if op == "-n":
            return operand != ""
        if op == "-t":
            return False
        fs = self.p.fs
        entry = fs.lookup(operand, follow=op not in ("-L", "-h"))
        if op in ("-L", "-h"):
            return entry is not None and entry[0] == LINK
        if entry is None:
            return False
        if op in ("-e", "-a"):
            return True
        if op == "-f":
            return entry[0] == FILE
        if op == "-d":
            return entry[0] == DIR
        if op == "-s":
            return entry[0] != FILE or len(entry[3]) > 0
        if op == "-x":
            return bool(entry[1] & 0o111) or _user_is_root(self.p) and entry[0] == DIR
        if op == "-w":
            return _writable(self.p, operand)
        if op == "-r":
            return True
        return False

    def _binary(self, left: str, op: str, right: str, position: int) -> bool:
        if op in ("=", "=="):
            if self.double and position < len(self.patterns) and self.patterns[position]:
                return pattern_match(right, left)
            return left == right
        if op == "!=":
            if self.double and position < len(self.patterns) and self.patterns[position]:
                return not pattern_match(right, left)
            return left != right
        if op == "<":
            return left < right
        if op == ">":
            return left > right
        if op == "=~":
            from fakekube.kubelet.textutils import compile_regex
            return compile_regex(right, extended=True).search(left) is not None
        if op in ("-nt", "-ot", "-ef"):
            a, b = self.p.fs.lookup(left), self.p.fs.lookup(right)
            if op == "-ef":
                return a is not None and a is b
            if a is None or b is None:
                return a is not None if op == "-nt" else b is not None
            return a[2] > b[2] if op == "-nt" else a[2] < b[2]
        try:
            x, y = int(left.strip()), int(right.strip())
        except ValueError:
            raise _TestError(f"Illegal number: {left if not _is_int(left) else right}") from None
        return {"-eq": x == y, "-ne": x != y, "-lt": x < y, "-le": x <= y, "-gt": x > y, "-ge": x >= y}[op]


def _is_int(text: str) -> bool:
    return re.fullmatch(r"\s*[+-]?\d+\s*", text) is not None


def _user_is_root(p: Process) -> bool:
    return _user_id(p) == 0


def _writable(p: Process, path: str) -> bool:
    try:
        canonical = p.fs.resolve(path)
        mount, _ = p.fs._mount(canonical)
    except FsError:
        return False
    return not mount.read_only


@command("expr")
def _expr(p: Process) -> int:
    args = list(p.args)
    try:
        value = _expr_eval(args)
    except (ValueError, ZeroDivisionError, IndexError):
        return p.fail("syntax error", 2)
    p.out(f"{value}\n")
    return 0 if value not in ("", "0", 0) else 1


def _expr_eval(args: list[str]) -> str | int:
    if len(args) == 1:
        return args[0]
    for ops in (("|",), ("&",), ("=", "!=", "<", "<=", ">", ">="), ("+", "-"), ("*", "/", "%"), (":",)):
        for index in range(len(args) - 2, 0, -1):
            if args[index] in ops:
                left, right = _expr_eval(args[:index]), _expr_eval(args[index + 1:])
                return _expr_apply(args[index], left, right)
    if args and args[0] == "length" and len(args) == 2:
        return len(args[1])
    raise ValueError("syntax")


def _expr_apply(op: str, left: str | int, right: str | int) -> str | int:
    if op == "|":
        return left if left not in ("", "0", 0) else right
    if op == "&":
        return left if left not in ("", "0", 0) and right not in ("", "0", 0) else 0
    if op == ":":
        match = re.match(str(right), str(left))
        if match is None:
            return 0
        return match.group(1) if match.groups() else len(match.group(0))
    if op in ("=", "!=", "<", "<=", ">", ">="):
        try:
            a, b = int(left), int(right)
            return int({"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op])
        except ValueError:
            s, t = str(left), str(right)
            return int({"=": s == t, "!=": s != t, "<": s < t, "<=": s <= t, ">": s > t, ">=": s >= t}[op])
    a, b = int(left), int(right)
    if op in ("/", "%") and b == 0:
        raise ZeroDivisionError
    return {"+": a + b, "-": a - b, "*": a * b, "/": int(a / b) if b else 0, "%": a - b * int(a / b) if b else 0}[op]


@command("kill")
def _kill(p: Process) -> int:
    pids = [a for a in p.args if a.lstrip("-").isdigit() and not a.startswith("-")]
    if p.args and p.args[0] == "-l":
        p.out("HUP INT QUIT ILL TRAP ABRT BUS FPE KILL USR1 SEGV USR2 PIPE ALRM TERM\n")
        return 0
    for pid in pids:
        if int(pid) in p.run.jobs:
            p.run.jobs[int(pid)] = min(p.run.jobs[int(pid)], p.run.clock_s)
            continue
        return p.fail(f"fakekube does not simulate signals to process {pid}", 1)
    return 0


@command("ps")
def _ps(p: Process) -> int:
    argv = "sh"
    try:
        argv = p.fs.read("/proc/1/cmdline").replace(b"\0", b" ").decode().strip()
    except FsError:
        pass
    p.out(f"PID   USER     TIME  COMMAND\n    1 root      0:00 {argv}\n")
    return 0


@command("nproc")
def _nproc(p: Process) -> int:
    p.out("2\n")
    return 0


@command("df", "du", "free")
def _not_sized(p: Process) -> int:
    return p.fail("fakekube does not simulate disk and memory figures", 1)


@command("yes")
def _yes(p: Process) -> int:
    p.out(((" ".join(p.args) or "y") + "\n") * 1000)
    raise Forever


@command("timeout")
def _timeout(p: Process) -> int:
    if len(p.args) < 2:
        return p.fail("missing operand")
    return p.shell.external(list(p.args[1:]), p.streams)


@command("nohup")
def _nohup(p: Process) -> int:
    return p.shell.external(list(p.args), p.streams) if p.args else p.fail("missing operand")


@command("xargs")
def _xargs(p: Process) -> int:
    flags, rest = [], list(p.args)
    while rest and rest[0].startswith("-"):
        flags.append(rest.pop(0))
    words = p.streams.stdin.read().decode("utf-8", "surrogateescape").split()
    argv = (rest or ["echo"]) + words
    if not words and "-r" in flags:
        return 0
    return p.shell.execute(argv, p.streams)


def _register_others() -> None:
    """The text tools, tar and the network clients register themselves on import."""
    from fakekube.kubelet import builtins, netutils, tarcmd, textutils  # noqa: F401


_register_others()
