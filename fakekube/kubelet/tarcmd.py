"""``tar`` in a simulated container: real archives (Python's tarfile) of its filesystem.

``kubectl cp`` runs ``tar cf - PATH`` in the container to copy out and ``tar xmf - -C DIR`` (or
``tar --no-same-permissions --no-same-owner -xmf -``) to copy in; Ansible's ``k8s_cp`` runs
``tar -xmf - -C /``. The operations ``c`` (create), ``x`` (extract) and ``t`` (list), with
``f FILE`` (``-`` for stdin/stdout), ``C DIR``, ``z`` (gzip; a gzip archive is also recognized
when extracting), ``v``, ``m``, ``p``, ``o``, ``O``, ``--no-same-*`` and ``--exclude``; options
bundled (``xmf``) or not (``-x -m -f -``). Archives are GNU format with the entries' modes and
times and owner root, as GNU tar writes them from a root container; a leading ``/`` is
removed from member names with GNU tar's notice on stderr.

:class:`Extractor` takes an archive in pieces: an exec's stdin arrives in messages, and each
member is written as soon as its bytes are all there (as tar does), so a client that closes
its connection right after sending leaves the files in place.

``gzip``, ``gunzip`` and ``zcat`` (the compression tar's ``z`` uses) live here too.
"""

from __future__ import annotations

import gzip
import io
import posixpath
import tarfile
import zlib
from typing import Callable, NamedTuple

from fakekube.kubelet.coreutils import command
from fakekube.kubelet.fs import DIR, LINK, FileSystem, FsError
from fakekube.kubelet.shell import Process

BLOCK = 512
#: The most of an archive read to parse one member's headers (GNU long names, pax records).
HEADER_WINDOW = 1024 * 1024
#: Consumed input is dropped from the buffer once it exceeds this.
COMPACT_BYTES = 4 * 1024 * 1024


class TarOptions(NamedTuple):
    operation: str  # "c", "x" or "t"
    archive: str = "-"
    directory: str | None = None
    gzip: bool = False
    verbose: bool = False
    keep_mtime: bool = True
    to_stdout: bool = False
    excludes: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()


class TarUsageError(ValueError):
    pass


def parse_options(args: list[str]) -> TarOptions:
    """tar's argv (old-style bundles, short and long options) as :class:`TarOptions`."""
    rest = list(args)
    values: dict[str, object] = {"operation": "", "archive": "-", "directory": None, "gzip": False,
                                 "verbose": False, "keep_mtime": True, "to_stdout": False}
    excludes: list[str] = []
    paths: list[str] = []
    first = True
    while rest:
        arg = rest.pop(0)
        if arg.startswith("--"):
            name, _, value = arg.partition("=")
            long = {"--create": "c", "--extract": "x", "--get": "x", "--list": "t", "--gzip": "z", "--gunzip": "z",
                    "--verbose": "v", "--touch": "m", "--to-stdout": "O"}
            if name in long:
                _letter(long[name], values, rest)
            elif name == "--file":
                values["archive"] = value or rest.pop(0)
            elif name == "--directory":
                values["directory"] = value or rest.pop(0)
            elif name == "--exclude":
                excludes.append(value or rest.pop(0))
            elif name in ("--no-same-permissions", "--no-same-owner", "--same-owner", "--preserve-permissions",
                          "--numeric-owner", "--overwrite", "--warning", "--no-overwrite-dir"):
                continue
            else:
                raise TarUsageError(f"unrecognized option '{arg}'")
        elif arg.startswith("-") and len(arg) > 1:
            for letter in arg[1:]:
                _letter(letter, values, rest)
        elif first and arg and all(letter in "cxtfvzmpoOCj" for letter in arg):
            for letter in arg:
                _letter(letter, values, rest)
        else:
            paths.append(arg)
        first = False
    if values["operation"] not in ("c", "x", "t"):
        raise TarUsageError("You must specify one of the '-Acdtrux', '--delete' or '--test-label' options")
    return TarOptions(str(values["operation"]), str(values["archive"]),
                      values["directory"] if isinstance(values["directory"], str) else None, bool(values["gzip"]),
                      bool(values["verbose"]), bool(values["keep_mtime"]), bool(values["to_stdout"]),
                      tuple(excludes), tuple(paths))


def _letter(letter: str, values: dict[str, object], rest: list[str]) -> None:
    if letter in "cxt":
        values["operation"] = letter
    elif letter == "f":
        if not rest:
            raise TarUsageError("option requires an argument -- 'f'")
        values["archive"] = rest.pop(0)
    elif letter == "C":
        if not rest:
            raise TarUsageError("option requires an argument -- 'C'")
        values["directory"] = rest.pop(0)
    elif letter == "z":
        values["gzip"] = True
    elif letter == "v":
        values["verbose"] = True
    elif letter == "m":
        values["keep_mtime"] = False
    elif letter == "O":
        values["to_stdout"] = True
    elif letter == "j":
        raise TarUsageError("fakekube does not simulate bzip2 archives")
    elif letter not in "pohP":
        raise TarUsageError(f"invalid option -- '{letter}'")


# -- create ---------------------------------------------------------------------------------

def create(fs: FileSystem, options: TarOptions, notice: Callable[[str], None]) -> bytes:
    """The archive of ``options.paths`` (relative to ``-C``)."""
    if not options.paths:
        raise TarUsageError("Cowardly refusing to create an empty archive")
    buffer = io.BytesIO()
    warned = False
    base = options.directory or fs.cwd
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for path in options.paths:
            source = posixpath.join(base, path)
            if path.startswith("/") and not warned:
                notice("tar: Removing leading `/' from member names\n")
                warned = True
            if fs.lookup(source, follow=False) is None:
                notice(f"tar: {path}: Cannot stat: No such file or directory\n")
                continue
            for found, entry in _walk(fs, source, path):
                name = found.lstrip("/")
                if any(_excluded(pattern, name) for pattern in options.excludes) or not name:
                    continue
                archive.addfile(*_member(name, entry))
    data = buffer.getvalue()
    return gzip.compress(data, mtime=0) if options.gzip else data


def _walk(fs: FileSystem, source: str, shown: str) -> list[tuple[str, list]]:
    out: list[tuple[str, list]] = []
    entry = fs.stat(source, follow=False)
    out.append((shown, entry))
    if entry[0] == DIR:
        for name, _ in fs.listdir(source):
            out.extend(_walk(fs, posixpath.join(source, name), posixpath.join(shown, name)))
    return out


def _excluded(pattern: str, name: str) -> bool:
    from fakekube.kubelet.shell import pattern_match
    return pattern_match(pattern, name) or pattern_match(pattern, posixpath.basename(name))


def _member(name: str, entry: list) -> tuple[tarfile.TarInfo, io.BytesIO | None]:
    info = tarfile.TarInfo(name)
    info.mode = entry[1] & 0o7777
    info.mtime = int(entry[2])
    info.uname = info.gname = "root"
    if entry[0] == DIR:
        info.type = tarfile.DIRTYPE
        return info, None
    if entry[0] == LINK:
        info.type, info.linkname = tarfile.SYMTYPE, entry[3]
        return info, None
    info.size = len(entry[3])
    return info, io.BytesIO(bytes(entry[3]))


# -- extract ---------------------------------------------------------------------------------

class Extractor:
    """An archive read in pieces (:meth:`feed`) and written member by member; :meth:`finish`
    at the end of input. Errors are tar's lines for stderr, and :attr:`status`."""

    def __init__(self, fs: FileSystem, options: TarOptions, out: Callable[[bytes], None],
                 err: Callable[[str], None]) -> None:
        self.fs, self.options, self.out, self.err = fs, options, out, err
        self.buffer = bytearray()
        self.offset = 0
        self.status = 0
        self.compressed: bool | None = None
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self.ended = False
        self.warned = False

    def feed(self, data: bytes) -> None:
        if self.ended:
            return
        if self.compressed is None and len(data) + len(self.buffer) >= 2:
            head = bytes(self.buffer[:2]) + data[:2]
            self.compressed = head[:2] == b"\x1f\x8b"
        if self.compressed:
            try:
                data = self._inflate.decompress(data)
            except zlib.error:
                self.err("tar: Child returned status 1\ntar: Error is not recoverable: exiting now\n")
                self.status, self.ended = 2, True
                return
        self.buffer += data
        self._members(final=False)

    def finish(self) -> int:
        if not self.ended:
            self._members(final=True)
        return self.status

    def _members(self, final: bool) -> None:
        """Write every member whose bytes have all arrived. A header is parsed from a window of
        the buffer (never the whole archive again), and a large member just waits for its bytes."""
        while not self.ended:
            available = len(self.buffer) - self.offset
            if available < BLOCK or (final is False and available < BLOCK):
                if final:
                    if bytes(self.buffer[self.offset:]).strip(b"\0"):
                        self._fail("tar: Unexpected EOF in archive\n")
                    self.ended = True
                return
            if bytes(self.buffer[self.offset:self.offset + BLOCK]) == b"\0" * BLOCK:
                self.ended = True  # the end-of-archive blocks
                return
            window = bytes(self.buffer[self.offset:self.offset + HEADER_WINDOW])
            try:
                member = tarfile.open(fileobj=io.BytesIO(window), mode="r:").next()
            except (tarfile.TarError, EOFError) as error:
                if not final and len(window) < HEADER_WINDOW and "checksum" not in str(error):
                    return  # the header's blocks have not all arrived
                self._fail("tar: This does not look like a tar archive\ntar: Exiting with failure status due to "
                           "previous errors\n" if self.offset == 0 else "tar: Skipping to next header\ntar: Exiting "
                           "with failure status due to previous errors\n")
                return
            if member is None:
                self.ended = True
                return
            size = member.size if member.isfile() else 0
            end = member.offset_data + ((size + BLOCK - 1) // BLOCK) * BLOCK
            if available < end:  # the member's data and padding have not all arrived
                if final:
                    self._fail("tar: Unexpected EOF in archive\n")
                return
            start = self.offset + member.offset_data
            self._write(member, bytes(self.buffer[start:start + size]))
            self.offset += end
            if self.offset > COMPACT_BYTES:
                del self.buffer[:self.offset]
                self.offset = 0

    def _fail(self, message: str) -> None:
        self.err(message)
        self.status, self.ended = 2, True

    def _write(self, member: tarfile.TarInfo, data: bytes) -> None:
        name = member.name
        while name.startswith("/") or name.startswith("../"):
            if not self.warned:
                self.err("tar: Removing leading `/' from member names\n" if name.startswith("/") else
                         "tar: Removing leading `../' from member names\n")
                self.warned = True
            name = name[1:] if name.startswith("/") else name[3:]
        if ".." in name.split("/"):
            self.err(f"tar: {member.name}: Member name contains '..'\n")
            self.status = 2
            return
        if self.options.paths and not any(name == p.strip("/") or name.startswith(p.strip("/") + "/")
                                          for p in self.options.paths):
            return
        if self.options.verbose:
            self.err(name + "\n") if self.options.to_stdout else self.out((name + "\n").encode())
        if self.options.to_stdout:
            if member.isfile():
                self.out(data)
            return
        target = posixpath.join(self.options.directory or self.fs.cwd, name)
        try:
            self._place(member, target, data)
        except FsError as error:
            self.err(f"tar: {name}: Cannot open: {error}\n")
            self.status = 2
            if error.code == "ENOSPC":
                self.err("tar: Exiting with failure status due to previous errors\n")
                self.ended = True

    def _place(self, member: tarfile.TarInfo, target: str, data: bytes) -> None:
        fs = self.fs
        parent = posixpath.dirname(target.rstrip("/"))
        if parent and fs.lookup(parent) is None:
            fs.mkdir(parent, parents=True)
        existing = fs.lookup(target, follow=False)
        if member.isdir():
            if existing is None:
                fs.mkdir(target, mode=member.mode & 0o7777 or 0o755)
            elif existing[0] != DIR:
                fs.remove(target)
                fs.mkdir(target, mode=member.mode & 0o7777 or 0o755)
            return
        if existing is not None and (existing[0] == DIR or member.issym() or existing[0] == LINK):
            fs.remove(target)
        if member.issym():
            fs.symlink(member.linkname, target)
            return
        if member.islnk():
            source = posixpath.join(self.options.directory or fs.cwd, member.linkname.lstrip("/"))
            data = fs.read(source)
        fs.write(target, data, mode=member.mode & 0o7777 or 0o644)
        if self.options.keep_mtime:
            fs.set_meta(target, mtime_s=float(member.mtime))


def list_members(data: bytes, verbose: bool) -> str:
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    out: list[str] = []
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
        for member in archive:
            if verbose:
                kind = "d" if member.isdir() else "l" if member.issym() else "-"
                from stat import filemode
                mode = filemode({"d": 0o40000, "l": 0o120000, "-": 0o100000}[kind] | member.mode)
                out.append(f"{mode} {member.uname or 'root'}/{member.gname or 'root'} {member.size:>9} {member.name}")
            else:
                out.append(member.name)
    return "".join(line + "\n" for line in out)


@command("tar")
def _tar(p: Process) -> int:
    try:
        options = parse_options(list(p.args))
    except TarUsageError as error:
        p.err(f"tar: {error}\nTry 'tar --help' or 'tar --usage' for more information.\n")
        return 2
    if options.operation == "c":
        messages: list[str] = []
        try:
            data = create(p.fs, options, messages.append)
        except TarUsageError as error:
            p.err(f"tar: {error}\n")
            return 2
        except FsError as error:
            p.err(f"tar: {error.path}: {error}\n")
            return 2
        p.err("".join(messages))
        if options.archive == "-":
            p.out(data)
        else:
            try:
                p.fs.write(options.archive, data)
            except FsError as error:
                p.err(f"tar: {options.archive}: Cannot open: {error}\n")
                return 2
        failed = any("Cannot stat" in message for message in messages)
        if failed:
            p.err("tar: Exiting with failure status due to previous errors\n")
        return 2 if failed else 0
    try:
        archive = p.streams.stdin.read() if options.archive == "-" else p.fs.read(options.archive)
    except FsError as error:
        p.err(f"tar: {options.archive}: Cannot open: {error}\n")
        return 2
    if options.operation == "t":
        try:
            p.out(list_members(archive, options.verbose))
        except (tarfile.TarError, OSError, EOFError):
            p.err("tar: This does not look like a tar archive\n")
            return 2
        return 0
    extractor = Extractor(p.fs, options, p.out, p.err)
    extractor.feed(archive)
    return extractor.finish()


def is_extract(argv: list[str]) -> TarOptions | None:
    """The options of a ``tar`` extracting from stdin (an exec that streams stdin into it), or None."""
    try:
        options = parse_options(argv[1:])
    except TarUsageError:
        return None
    return options if options.operation == "x" and options.archive == "-" else None



# -- gzip, gunzip, zcat ---------------------------------------------------------------------

@command("gzip", "gunzip", "zcat")
def _gzip(p: Process) -> int:
    """gzip's ``-c``, ``-d``, ``-k``, ``-f``, ``-n`` and levels: stdin to stdout, or FILE to
    FILE.gz (and back); headers carry no time (as ``-n``), so the bytes are the same every run."""
    flags: set[str] = set()
    files: list[str] = []
    for arg in p.args:
        if arg.startswith("--") and arg != "--":
            flags.add({"--stdout": "c", "--to-stdout": "c", "--decompress": "d", "--uncompress": "d",
                       "--keep": "k", "--force": "f"}.get(arg, ""))
        elif arg.startswith("-") and arg != "-":
            flags.update(arg[1:])
        else:
            files.append(arg)
    decompress = "d" in flags or p.name != "gzip"
    to_stdout = "c" in flags or p.name == "zcat"
    status = 0
    for name in files or ["-"]:
        status = max(status, _gzip_one(p, name, decompress, to_stdout or name == "-", "k" in flags))
    return status


def _gzip_one(p: Process, name: str, decompress: bool, to_stdout: bool, keep: bool) -> int:
    if decompress and not to_stdout and not name.endswith(".gz"):
        p.err(f"{p.name}: {name}: unknown suffix -- ignored\n")
        return 2
    try:
        data = p.streams.stdin.read() if name == "-" else p.fs.read(name)
    except FsError as error:
        return p.fail(f"{name}: {error}")
    try:
        result = gzip.decompress(data) if decompress else gzip.compress(data, mtime=0)
    except (OSError, EOFError, zlib.error):
        return p.fail(f"{'stdin' if name == '-' else name}: not in gzip format")
    if to_stdout:
        p.out(result)
        return 0
    target = name[:-3] if decompress else name + ".gz"
    try:
        p.fs.write(target, result)
        if not keep:
            p.fs.remove(name)
    except FsError as error:
        return p.fail(f"{target}: {error}")
    return 0
