"""An exec whose stdin arrives while it runs (``kubectl exec -i``, ``kubectl cp``, a client's ``stream()``).

The exec's command decides how it reads its stdin, as the real process would:

* a shell reading its script from stdin (``sh``, ``bash``, ``sh -s``): each complete command
  runs as soon as its line arrives, in one shell whose variables and working directory last
  the session, and its output goes out at once (``exit`` ends the session);
* ``cat`` with no files: what arrives is written back at once;
* ``sh -c`` with one plain command (``sh -c cat``, ``sh -c 'exec tar xf - -C /d'``): as that command;
* ``sh -c`` with a script none of whose commands reads the shell's stdin (``ls /``, ``printf %s
  "$X"``; a reader fed by a pipe, ``<`` or a here-document does not count): runs at once;
* ``tar x`` from stdin (``kubectl cp`` into a pod): each archive member is written to the
  filesystem as soon as its bytes are all there (kubelet/tarcmd.py);
* a command that names no stdin to read (``cat FILE``, ``ls``, ``test -d DIR``): runs at once;
* anything else (``sh -c 'cat > /tmp/x'``, ``wc -l``…): runs once stdin ends, with all of it.

stdin ends when the client says so (the v5 protocol's close message, SPDY's FIN) or goes
away. Each call runs on the engine thread with the runner's read view (the caller's
``on_engine``), at the then-current instant; the filesystem view is taken again each time,
so the container's other writes show. Commands run inside a stdin shell get no stdin of their
own (a simplification). What one session holds is bounded: :data:`MAX_STDIN_BYTES` of input.
"""

from __future__ import annotations

import posixpath
from typing import Any, Callable, NamedTuple, TypeVar

from fakekube.kubelet import coreutils, execs, shellsyntax, tarcmd
from fakekube.kubelet.execs import ExecResult
from fakekube.kubelet.shell import (
    Capture, Environment, Forever, Limits, NotSimulated, Run, Shell, ShellExit, Source, Streams, _Fatal, _LoopControl,
    _Return)

#: The most stdin one session takes (a ``kubectl cp`` of a large file); past it the command
#: gets no more and ends with exit 1, naming the limit.
MAX_STDIN_BYTES = 512 * 1024 * 1024
#: Commands that read stdin when given no file operand.
_FILTERS = frozenset({"cat", "tee", "wc", "grep", "egrep", "fgrep", "sed", "awk", "head", "tail", "sort", "uniq",
                      "tr", "cut", "base64", "md5sum", "sha1sum", "sha256sum", "sha512sum", "xargs", "read", "dd"})

#: Redirections that give a command another stdin.
_STDIN_REDIRECTS = frozenset({"<", "<>", "<<", "<<-", "<<<"})
#: Commands that may read stdin besides the filters: the shells, ``tar`` and the compressors.
_READERS = _FILTERS | coreutils.SHELLS | {"tar", "gzip", "gunzip", "zcat", "exec", "command", "nohup", "timeout"}

T = TypeVar("T")


class Chunk(NamedTuple):
    """What one step of a session wrote, and its end (``result``) once the command is done."""

    stdout: bytes = b""
    stderr: bytes = b""
    result: ExecResult | None = None


def _script_of(argv: list[str]) -> str | None:
    """The script of ``sh -c SCRIPT`` (``-ec``, ``-xc``… too), or None."""
    if not argv or posixpath.basename(argv[0]) not in coreutils.SHELLS:
        return None
    for index, arg in enumerate(argv[1:], 1):
        if not arg.startswith("-") or arg.startswith("--"):
            return None
        if "c" in arg[1:]:
            return argv[index + 1] if index + 1 < len(argv) else None
    return None


def _parsed(script: str) -> shellsyntax.Seq | None:
    try:
        return shellsyntax.parse(script)
    except shellsyntax.ScriptError:
        return None


def stdin_command(argv: list[str]) -> list[str]:
    """The command that reads the exec's stdin: ``sh -c 'cat'`` (or ``'exec tar xf - -C /d'``) is
    its one plain command, whose process gets the shell's stdin; any other argv is itself."""
    script = _script_of(argv)
    tree = _parsed(script) if script is not None else None
    if tree is None or len(tree.items) != 1 or tree.items[0][1]:
        return argv
    command = tree.items[0][0]
    if not isinstance(command, shellsyntax.Simple) or command.assigns or command.redirects or not command.words:
        return argv
    words = [word.literal for word in command.words]
    if any(text is None for text in words):
        return argv
    plain = [text for text in words if text is not None]
    return plain[1:] if plain[0] == "exec" and len(plain) > 1 else plain


def _reads_stdin(node: object) -> bool:
    """Might this part of a script read the shell's stdin? Conservative: an expansion as the
    command name, or a known reader (:data:`_READERS`) not given another stdin, counts."""
    if isinstance(node, shellsyntax.Simple):
        if any(_reads_stdin(assign.value) for assign in node.assigns) or any(map(_reads_stdin, node.words)):
            return True  # a command substitution's commands share the shell's stdin
        if any(redirect.op in _STDIN_REDIRECTS and redirect.fd in (None, 0) for redirect in node.redirects):
            return False
        if not node.words:
            return False
        name = node.words[0].literal
        if name is None or name == "read":
            return True
        if posixpath.basename(name) not in _READERS:
            return False
        literals = [word.literal for word in node.words]
        return any(text is None for text in literals) or mode_of([text or "" for text in literals]) != "none"
    if isinstance(node, shellsyntax.Redirected):
        if any(redirect.op in _STDIN_REDIRECTS and redirect.fd in (None, 0) for redirect in node.redirects):
            return False
        return _reads_stdin(node.command)
    if isinstance(node, shellsyntax.Pipeline):
        return bool(node.commands) and _reads_stdin(node.commands[0])  # the others read the pipe
    if isinstance(node, shellsyntax.Seq):
        # A background job's stdin is /dev/null in a non-interactive shell.
        return any(_reads_stdin(command) for command, background in node.items if not background)
    if isinstance(node, shellsyntax.Word):
        return any(isinstance(part, shellsyntax.CmdSub) and _reads_stdin(part.body) for part in node.parts)
    if isinstance(node, (shellsyntax.Lit, shellsyntax.Param, shellsyntax.ArithSub, str, int, shellsyntax.Test,
                         shellsyntax.Arith)) or node is None:
        return False
    if isinstance(node, tuple):  # any other construct: its commands, in any field
        return any(_reads_stdin(child) for child in node)
    return True


def mode_of(argv: list[str]) -> str:
    """How the command reads stdin: "shell", "cat", "tar", "none" or "eof" (module docstring)."""
    inner = stdin_command(argv)
    if inner is not argv:
        mode = mode_of(inner)
        return "eof" if mode == "shell" else mode
    script = _script_of(argv)
    if script is not None:
        tree = _parsed(script)
        return "none" if tree is not None and not _reads_stdin(tree) else "eof"
    name = posixpath.basename(argv[0]) if argv else ""
    operands = [arg for arg in argv[1:] if not arg.startswith("-") or arg == "-"]
    if name in coreutils.SHELLS:
        flags = "".join(arg[1:] for arg in argv[1:] if arg.startswith("-") and not arg.startswith("--"))
        if "c" in flags:
            return "eof"
        return "eof" if operands and "s" not in flags else "shell"
    if name == "cat":
        return "cat" if not operands or operands == ["-"] else "none"
    if name == "tar":
        return "tar" if tarcmd.is_extract(argv) is not None else "none"
    if name in _FILTERS:
        files = operands[1:] if name in ("grep", "egrep", "fgrep", "sed", "awk", "tr", "cut") else operands
        return "eof" if not files or "-" in files else "none"
    return "none"


class ExecSession:
    """One streamed exec in a running container (see the module docstring)."""

    def __init__(self, argv: list[str], open_fs: Callable[[Any], Any], context: Callable[[Any], dict[str, Any]],
                 exec_id: str) -> None:
        #: ``open_fs(ctx)``: the container's filesystem now; ``context(ctx)``: pod, container,
        #: declared commands and network for a run (the runner's).
        self.argv, self.open_fs, self.context, self.exec_id = argv, open_fs, context, exec_id
        self.mode = mode_of(argv)
        self.stdin = bytearray()
        self.received = 0
        self.done = False
        self.pending = b""
        self._shell: Shell | None = None
        self._capture: tuple[Capture, Capture] | None = None
        self._extractor: tarcmd.Extractor | None = None
        self._out: list[bytes] = []
        self._err: list[bytes] = []

    # -- the steps -----------------------------------------------------------------------------
    def start(self, ctx: Any) -> Chunk:
        if self.mode == "none":
            return self._finish(self._run_whole(ctx, b""))
        if self.mode == "tar":
            options = tarcmd.is_extract(stdin_command(self.argv))
            assert options is not None
            self._extractor = tarcmd.Extractor(self.open_fs(ctx), options, self._out.append,
                                               lambda text: self._err.append(text.encode()))
        return Chunk()

    def feed(self, ctx: Any, data: bytes) -> Chunk:
        if self.done:
            return Chunk()
        self.received += len(data)
        if self.received > MAX_STDIN_BYTES:
            return self._finish(ExecResult(stderr=f"fakekube: an exec takes at most {MAX_STDIN_BYTES} bytes of stdin"
                                                  f"\n".encode(), exit_code=1))
        if self.mode == "cat":
            return Chunk(stdout=data)
        if self.mode == "tar":
            assert self._extractor is not None
            self._extractor.fs = self.open_fs(ctx)
            self._extractor.feed(data)
            return self._drain()
        if self.mode == "shell":
            self.pending += data
            return self._shell_lines(ctx, final=False)
        self.stdin += data
        return Chunk()

    def close(self, ctx: Any) -> Chunk:
        """stdin ended: the command finishes."""
        if self.done:
            return Chunk()
        if self.mode == "cat":
            return self._finish(ExecResult())
        if self.mode == "tar":
            assert self._extractor is not None
            self._extractor.fs = self.open_fs(ctx)
            status = self._extractor.finish()
            chunk = self._drain()
            return self._finish(ExecResult(chunk.stdout, chunk.stderr, status))
        if self.mode == "shell":
            chunk = self._shell_lines(ctx, final=True)
            if chunk.result is not None:
                return chunk
            shell = self._shell_for(ctx)
            shell.run_exit_trap()
            return self._finish(ExecResult(chunk.stdout, chunk.stderr, shell.status & 0xFF))
        return self._finish(self._run_whole(ctx, bytes(self.stdin)))

    # -- helpers ---------------------------------------------------------------------------------
    def _finish(self, result: ExecResult) -> Chunk:
        self.done = True
        return Chunk(result.stdout, result.stderr, result)

    def _drain(self) -> Chunk:
        out, err = b"".join(self._out), b"".join(self._err)
        self._out.clear()
        self._err.clear()
        return Chunk(out, err)

    def _run_whole(self, ctx: Any, stdin: bytes) -> ExecResult:
        parts = self.context(ctx)
        return execs.run(parts["commands"], self.argv, parts["pod"], parts["container"], self.exec_id, ctx.now,
                         self.open_fs(ctx), stdin, parts["network"])

    def _shell_for(self, ctx: Any) -> Shell:
        fs = self.open_fs(ctx)
        if self._shell is None:
            parts = self.context(ctx)
            toolbox = execs.toolbox_for(parts["container"], parts["commands"], parts["network"])
            environment = Environment(parts["pod"], parts["container"], ctx.now, coreutils.dispatcher(toolbox))
            run = Run(environment, fs, Limits(execs.MAX_SCRIPT_COMMANDS, 2 * execs.MAX_EXEC_STREAM_BYTES))
            self._capture = (Capture(run), Capture(run))
            self._shell = Shell(run, dict(execs.environment_of(parts["pod"], parts["container"])),
                                Streams(Source(), *self._capture), posixpath.basename(self.argv[0]),
                                self.argv[1:])
        else:
            fs.cwd = self._shell.run.fs.cwd
            self._shell.run.fs = fs
        return self._shell

    def _shell_lines(self, ctx: Any, final: bool) -> Chunk:
        """Run the complete commands received so far (all of it at the end)."""
        cut = len(self.pending) if final else self.pending.rfind(b"\n") + 1
        if cut <= 0:
            return Chunk()
        text = self.pending[:cut].decode("utf-8", "surrogateescape")
        try:
            tree = shellsyntax.parse(text)
        except shellsyntax.Incomplete:
            if not final:
                return Chunk()
            tree = None
        except shellsyntax.ScriptError:
            tree = None
        shell = self._shell_for(ctx)
        assert self._capture is not None
        out, err = self._capture
        if tree is None:
            try:
                shellsyntax.parse(text)
            except shellsyntax.ScriptError as error:
                err.write(f"{error}\n".encode())
            return self._finish(ExecResult(bytes(out.buffer), bytes(err.buffer), 2))
        self.pending = self.pending[cut:]
        ended = False
        try:
            shell.status = shell.sequence(tree, shell.streams)
        except ShellExit as exited:
            shell.status, ended = exited.status, True
        except (NotSimulated, _Fatal) as problem:
            err.write(f"{problem}\n".encode())
            shell.status, ended = 2, True
        except Forever:
            err.write(f"{execs.FOREVER_MESSAGE}\n".encode())
            shell.status, ended = 2, True
        except (_Return, _LoopControl):  # a stray `return` or `break` at the top: ignored, as a shell does
            pass
        stdout, stderr = bytes(out.buffer), bytes(err.buffer)
        out.buffer.clear()
        err.buffer.clear()
        if ended:
            shell.run_exit_trap()
            stdout, stderr = stdout + bytes(out.buffer), stderr + bytes(err.buffer)
            return self._finish(ExecResult(stdout, stderr, shell.status & 0xFF))
        return Chunk(stdout, stderr)


class Bound:
    """A session whose steps run on the engine thread (``on_engine(work)`` calls ``work(ctx)`` there)."""

    def __init__(self, session: ExecSession, on_engine: Callable[[Callable[[Any], Chunk]], Chunk]) -> None:
        self.session, self.on_engine = session, on_engine

    def start(self) -> Chunk:
        return self.on_engine(self.session.start)

    def feed(self, data: bytes) -> Chunk:
        return self.on_engine(lambda ctx: self.session.feed(ctx, data))

    def close(self) -> Chunk:
        return self.on_engine(self.session.close)

