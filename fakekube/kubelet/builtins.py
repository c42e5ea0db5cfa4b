"""The shell's own commands (kubelet/shell.py): those that change the shell itself.

``cd export unset set shift local readonly declare typeset eval exec exit return break continue
trap read wait source . : command type umask ulimit hash getopts``, with dash's messages and
statuses. ``trap`` records the actions (a container program's ``TERM`` action is what
kubelet/programs.py reports for SIGTERM); ``exec CMD`` runs the command and ends the shell with
its status; ``wait`` moves the run's clock to the end of the background jobs it waits for.
"""

from __future__ import annotations

import posixpath
from typing import Callable, Sequence

from fakekube.kubelet import shellsyntax as ast
from fakekube.kubelet.fs import DIR, FsError
from fakekube.kubelet.shell import (
    _BUILTINS, SIGNALS, Process, Shell, ShellExit, Streams, _Fatal, _LoopControl, _Return)

#: ``set -o`` names and their one-letter flags.
_OPTIONS = {"e": "errexit", "u": "nounset", "x": "xtrace", "f": "noglob", "v": "verbose", "n": "noexec",
            "a": "allexport", "C": "noclobber", "h": "hashall", "m": "monitor", "b": "notify"}


def builtin(*names: str) -> Callable[[Callable[[Shell, Process], int]], Callable[[Shell, Process], int]]:
    def register(function: Callable[[Shell, Process], int]) -> Callable[[Shell, Process], int]:
        for name in names:
            _BUILTINS[name] = function
        return function
    return register


@builtin(":", "true")
def _true(shell: Shell, process: Process) -> int:
    return 0


@builtin("false")
def _false(shell: Shell, process: Process) -> int:
    return 1


@builtin("cd")
def _cd(shell: Shell, process: Process) -> int:
    args = [arg for arg in process.args if arg not in ("-L", "-P")]
    fs = shell.run.fs
    target = args[0] if args else shell.variables.get("HOME", "/")
    if target == "-":
        target = shell.variables.get("OLDPWD", fs.cwd)
    try:
        canonical = fs.resolve(target)
        entry = fs.stat(canonical)
    except FsError:
        process.err(f"sh: {shell.line}: cd: can't cd to {target}\n")
        return 2
    if entry[0] != DIR:
        process.err(f"sh: {shell.line}: cd: can't cd to {target}\n")
        return 2
    shell.variables["OLDPWD"] = fs.cwd
    fs.cwd = canonical
    shell.variables["PWD"] = canonical
    return 0


def declare(shell: Shell, name: str, flags: list[str], assignments: list[tuple[str, str | None]],
            streams: Streams) -> int:
    """``export``/``readonly``/``local``/``declare``/``typeset``/``unset`` with their arguments."""
    if name == "unset":
        return _unset(shell, flags, [n for n, _ in assignments])
    if name == "local" and not shell._locals:
        streams.stderr.write(f"sh: {shell.line}: local: not in a function\n".encode())
        return 2
    if name in ("export", "readonly") and not assignments:
        for variable in sorted(shell.exported if name == "export" else shell.readonly):
            value = shell.variables.get(variable)
            shown = f"{variable}='{value}'" if value is not None else variable
            streams.stdout.write(f"{name} {shown}\n".encode())
        return 0
    for variable, value in assignments:
        if not _valid_name(variable):
            streams.stderr.write(f"sh: {shell.line}: {name}: {variable}: bad variable name\n".encode())
            return 2
        if name == "local":
            shell._locals[-1].setdefault(variable, shell.variables.get(variable))
            shell.variables[variable] = value if value is not None else ""
            continue
        if value is not None:
            shell.assign(variable, value)
        if name == "export" or "-x" in flags:
            shell.exported.add(variable)
            shell.variables.setdefault(variable, "")
        if name == "readonly" or "-r" in flags:
            shell.readonly.add(variable)
    return 0


def _valid_name(name: str) -> bool:
    return bool(name) and (name[0].isalpha() or name[0] == "_") and all(c.isalnum() or c == "_" for c in name)


def _unset(shell: Shell, flags: list[str], names: list[str]) -> int:
    for name in names:
        if "-f" in flags:
            shell.functions.pop(name, None)
            continue
        if name in shell.readonly:
            raise _Fatal(f"sh: {shell.line}: unset: {name}: is read only")
        shell.variables.pop(name, None)
        shell.exported.discard(name)
    return 0


@builtin("export", "readonly", "local", "declare", "typeset", "unset")
def _declaration(shell: Shell, process: Process) -> int:
    flags = [arg for arg in process.args if arg.startswith("-")]
    pairs: list[tuple[str, str | None]] = []
    for arg in process.args:
        if arg.startswith("-"):
            continue
        name, equals, raw = arg.partition("=")
        pairs.append((name, raw if equals else None))
    return declare(shell, process.name, flags, pairs, process.streams)


@builtin("set")
def _set(shell: Shell, process: Process) -> int:
    args = list(process.args)
    if not args:
        for name, value in sorted(shell.variables.items()):
            process.out(f"{name}='{value}'\n")
        return 0
    while args:
        arg = args.pop(0)
        if arg == "--":
            shell.positional = args
            return 0
        if arg in ("-o", "+o"):
            if not args:
                for option in sorted(set(_OPTIONS.values()) | {"pipefail"}):
                    process.out(f"{option:<16}{'on' if option in shell.options else 'off'}\n")
                return 0
            option = args.pop(0)
            if option not in set(_OPTIONS.values()) | {"pipefail"}:
                process.err(f"sh: {shell.line}: set: Illegal option -o {option}\n")
                return 2
            (shell.options.add if arg == "-o" else shell.options.discard)(option)
        elif arg[:1] in ("-", "+") and len(arg) > 1:
            for flag in arg[1:]:
                named = _OPTIONS.get(flag)
                if named is None:
                    process.err(f"sh: {shell.line}: set: Illegal option {arg[0]}{flag}\n")
                    return 2
                (shell.options.add if arg[0] == "-" else shell.options.discard)(named)
        else:
            shell.positional = [arg] + args
            return 0
    return 0


@builtin("shift")
def _shift(shell: Shell, process: Process) -> int:
    count = int(process.args[0]) if process.args and process.args[0].isdigit() else 1
    if count > len(shell.positional):
        process.err(f"sh: {shell.line}: shift: can't shift that many\n")
        return 2
    shell.positional = shell.positional[count:]
    return 0


@builtin("eval")
def _eval(shell: Shell, process: Process) -> int:
    script = " ".join(process.args)
    try:
        tree = ast.parse(script)
    except ast.ScriptError as error:
        process.err(f"{error}\n")
        return 2
    return shell.sequence(tree, process.streams)


@builtin(".", "source")
def _source(shell: Shell, process: Process) -> int:
    if not process.args:
        process.err(f"sh: {shell.line}: .: filename argument required\n")
        return 2
    path = process.args[0]
    try:
        text = shell.run.fs.read(path).decode("utf-8", "surrogateescape")
    except FsError:
        process.err(f"sh: {shell.line}: .: cannot open {path}: No such file\n")
        raise ShellExit(2) from None
    try:
        tree = ast.parse(text)
    except ast.ScriptError as error:
        process.err(f"{error}\n")
        return 2
    saved = shell.positional
    if len(process.args) > 1:
        shell.positional = process.args[1:]
    try:
        return shell.sequence(tree, process.streams)
    except _Return as returned:
        return returned.status
    finally:
        shell.positional = saved


@builtin("exec")
def _exec(shell: Shell, process: Process) -> int:
    if not process.args:
        return 0  # `exec >file`: the redirections stay for the rest of the script
    status = shell.execute(list(process.args), process.streams)
    raise ShellExit(status)


@builtin("exit")
def _exit(shell: Shell, process: Process) -> int:
    status = shell.status
    if process.args:
        try:
            status = int(process.args[0]) & 0xFF
        except ValueError:
            process.err(f"sh: {shell.line}: exit: Illegal number: {process.args[0]}\n")
            status = 2
    raise ShellExit(status)


@builtin("return")
def _return(shell: Shell, process: Process) -> int:
    status = shell.status
    if process.args:
        try:
            status = int(process.args[0]) & 0xFF
        except ValueError:
            process.err(f"sh: {shell.line}: return: Illegal number: {process.args[0]}\n")
            status = 2
    raise _Return(status)


@builtin("break", "continue")
def _loop_control(shell: Shell, process: Process) -> int:
    levels = int(process.args[0]) if process.args and process.args[0].isdigit() else 1
    raise _LoopControl(process.name, max(1, levels))


def signal_name(raw: str) -> str | None:
    """``TERM``, ``SIGTERM``, ``15``, ``term`` → ``TERM``; None when not a signal."""
    name = raw.upper().removeprefix("SIG")
    if name.isdigit():
        return SIGNALS.get(name)
    return name if name in set(SIGNALS.values()) else None


@builtin("trap")
def _trap(shell: Shell, process: Process) -> int:
    args = list(process.args)
    if args and args[0] == "--":
        args = args[1:]
    if not args or args == ["-p"]:
        for signal, text in sorted(shell.traps.items()):
            quoted = text.replace("'", "'\\''")
            process.out(f"trap -- '{quoted}' {signal}\n")
        return 0
    action: str | None
    if len(args) == 1 or args[0] == "-" or (signal_name(args[0]) is not None and args[0].isdigit()):
        action, signals = None, (args[1:] if args[0] == "-" else args)
    else:
        action, signals = args[0], args[1:]
    for raw in signals:
        name = signal_name(raw)
        if name is None:
            process.err(f"trap: {raw}: bad trap\n")
            return 1
        if action is None:
            shell.traps.pop(name, None)
        else:
            shell.traps[name] = action
        shell.trap_set_s[name] = shell.run.clock_s
    return 0


@builtin("read")
def _read(shell: Shell, process: Process) -> int:
    args = list(process.args)
    raw = False
    names: list[str] = []
    while args:
        arg = args.pop(0)
        if arg == "-r":
            raw = True
        elif arg in ("-p", "-t", "-u", "-d", "-n", "-N", "-a"):
            if arg == "-p" and args:
                process.err(args[0])
            if args:
                args.pop(0)
        elif arg == "-s":
            continue
        else:
            names.append(arg)
    line = process.streams.stdin.readline()
    if line is None:
        for name in names or ["REPLY"]:
            shell.assign(name, "")
        return 1
    text = line.decode("utf-8", "surrogateescape")
    ended = text.endswith("\n")
    text = text[:-1] if ended else text
    if not raw:
        text = _unescape_read(text)
    _assign_fields(shell, names or ["REPLY"], text, split=bool(names))
    return 0 if ended else 1


def _unescape_read(text: str) -> str:
    out, index = [], 0
    while index < len(text):
        if text[index] == "\\" and index + 1 < len(text):
            out.append(text[index + 1])
            index += 2
            continue
        out.append(text[index])
        index += 1
    return "".join(out)


def _assign_fields(shell: Shell, names: list[str], text: str, split: bool) -> None:
    ifs = shell.variables.get("IFS", " \t\n")
    if not split:
        shell.assign(names[0], text)
        return
    blanks = "".join(c for c in ifs if c in " \t\n")
    remaining = text.strip(blanks) if blanks else text
    for position, name in enumerate(names):
        if position == len(names) - 1:
            shell.assign(name, remaining.rstrip(blanks) if blanks else remaining)
            return
        index = next((i for i, c in enumerate(remaining) if c in ifs), len(remaining))
        shell.assign(name, remaining[:index])
        remaining = remaining[index:]
        if remaining and remaining[0] in ifs:
            remaining = remaining[1:]
        if blanks:
            remaining = remaining.lstrip(blanks)


@builtin("wait")
def _wait(shell: Shell, process: Process) -> int:
    run = shell.run
    pids = [int(arg) for arg in process.args if arg.isdigit()] or list(run.jobs)
    for pid in pids:
        end = run.jobs.pop(pid, None)
        if end is None:
            if process.args:
                return 127
            continue
        run.advance_to(end)
    return 0


@builtin("command")
def _command(shell: Shell, process: Process) -> int:
    args = list(process.args)
    if args and args[0] in ("-v", "-V"):
        return _type_of(shell, process, args[1:], verbose=args[0] == "-V")
    if args and args[0] == "-p":
        args = args[1:]
    if not args:
        return 0
    builtin_function = _BUILTINS.get(args[0])
    if builtin_function is not None:
        return builtin_function(shell, Process(shell, args, process.streams))
    return shell.external(args, process.streams)


@builtin("type")
def _type(shell: Shell, process: Process) -> int:
    return _type_of(shell, process, list(process.args), verbose=True)


def _type_of(shell: Shell, process: Process, names: Sequence[str], verbose: bool) -> int:
    from fakekube.kubelet import coreutils
    status = 0
    for name in names:
        if name in shell.functions:
            process.out(f"{name} is a shell function\n" if verbose else f"{name}\n")
        elif name in _BUILTINS:
            process.out(f"{name} is a shell builtin\n" if verbose else f"{name}\n")
        else:
            path = coreutils.which(process, name)
            if path is None:
                if verbose:
                    process.err(f"{name}: not found\n")
                status = 127 if verbose else 1
            else:
                process.out(f"{name} is {path}\n" if verbose else f"{path}\n")
    return status


@builtin("umask", "ulimit", "hash", "alias", "unalias", "shopt")
def _ignored(shell: Shell, process: Process) -> int:
    if process.name == "umask" and not process.args:
        process.out("0022\n")
    if process.name == "ulimit" and not process.args:
        process.out("unlimited\n")
    return 0


@builtin("pwd")
def _pwd(shell: Shell, process: Process) -> int:
    process.out(shell.run.fs.cwd + "\n")
    return 0


@builtin("getopts")
def _getopts(shell: Shell, process: Process) -> int:
    """``getopts SPEC NAME [ARGS]``: the next option of the positional parameters (or ARGS)."""
    if len(process.args) < 2:
        process.err(f"sh: {shell.line}: getopts: usage: getopts optstring var [arg]\n")
        return 2
    spec, name = process.args[0], process.args[1]
    args = process.args[2:] or shell.positional
    index = int(shell.variables.get("OPTIND", "1") or "1")
    position = int(shell.variables.get("_GETOPTS_POS", "1") or "1")
    if index > len(args) or not args[index - 1].startswith("-") or args[index - 1] in ("-", "--"):
        if index <= len(args) and args[index - 1] == "--":
            shell.variables["OPTIND"] = str(index + 1)
        shell.assign(name, "?")
        return 1
    word = args[index - 1]
    letter = word[position]
    position += 1
    if position >= len(word):
        index, position = index + 1, 1
    if letter not in spec.replace(":", ""):
        shell.assign(name, "?")
        process.err(f"Illegal option -{letter}\n")
    elif spec[spec.index(letter) + 1:spec.index(letter) + 2] == ":":
        if position > 1:
            shell.variables["OPTARG"] = word[position:]
            index, position = index + 1, 1
        elif index <= len(args):
            shell.variables["OPTARG"] = args[index - 1]
            index += 1
        shell.assign(name, letter)
    else:
        shell.assign(name, letter)
    shell.variables["OPTIND"] = str(index)
    shell.variables["_GETOPTS_POS"] = str(position)
    return 0


def basename(path: str) -> str:
    return posixpath.basename(path.rstrip("/")) or "/"
