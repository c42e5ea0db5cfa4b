"""Text tools of a simulated container: ``grep sed awk cut tr sort uniq wc head tail tee``.

Regular expressions are the user's, so they run on RE2 (linear time, as every user-supplied
pattern in fakekube: docs/reliability.md); POSIX basic expressions (grep, sed) are turned into
RE2's syntax first. ``sed`` runs ``s///`` (flags ``g``, ``i``, ``p``, a number), ``d``, ``p``,
``q`` with an optional address (a line number, ``$``, ``/re/``), ``-n``, ``-e``, ``-E`` and
``-i``; ``awk`` runs small programs: ``BEGIN``/``END`` and pattern (``/re/``, a comparison)
blocks of ``print``/``printf`` and assignments over ``$N``, ``NF``, ``NR``, ``-F``, ``-v``. A
program outside that fails with exit 2 naming what is not simulated. ``tail -f`` prints the
file and then follows it forever (a container program runs on from there).
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, Sequence

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

from fakekube.kubelet.coreutils import _flags, command, read_inputs
from fakekube.kubelet.fs import FsError
from fakekube.kubelet.printf import printf
from fakekube.kubelet.shell import Forever, Process

#: Compiled user patterns kept.
REGEX_CACHE_SIZE = 256


class RegexError(ValueError):
    pass


@functools.lru_cache(maxsize=REGEX_CACHE_SIZE)
def compile_regex(pattern: str, extended: bool = False, ignore_case: bool = False, fixed: bool = False) -> Any:
    """A POSIX basic or extended expression (or fixed text) compiled by RE2."""
    text = re.escape(pattern) if fixed else _to_re2(pattern, extended)
    options = re2.Options()
    options.case_sensitive = not ignore_case
    options.max_mem = 8 << 20
    try:
        return re2.compile(text, options)
    except Exception as error:  # re2.error
        raise RegexError(str(error)) from None


def _to_re2(pattern: str, extended: bool) -> str:
    out: list[str] = []
    index = 0
    at_start = True
    while index < len(pattern):
        char = pattern[index]
        if char == "[":
            end = index + 1
            if end < len(pattern) and pattern[end] == "^":
                end += 1
            if end < len(pattern) and pattern[end] == "]":
                end += 1
            while end < len(pattern) and pattern[end] != "]":
                if pattern[end] == "[" and end + 1 < len(pattern) and pattern[end + 1] in ":=.":
                    close = pattern.find(pattern[end + 1] + "]", end + 2)
                    end = close + 2 if close >= 0 else end + 1
                else:
                    end += 1
            bracket = pattern[index:end + 1]
            out.append(bracket.replace("\\", "\\\\"))
            index = end + 1
            at_start = False
            continue
        if char == "\\" and index + 1 < len(pattern):
            escaped = pattern[index + 1]
            if escaped in "<>":
                out.append(r"\b")
            elif not extended and escaped in "(){}|+?":
                out.append(escaped)
            elif escaped.isdigit():
                raise RegexError("back-references are not supported")
            else:
                out.append("\\" + escaped)
            index += 2
            at_start = escaped == "(" and not extended
            continue
        if not extended and char in "(){}|+?":
            out.append("\\" + char)
        elif char == "*" and at_start:
            out.append(r"\*")
        else:
            out.append(char)
        at_start = char in "(|" if extended else (char == "^" and not out[:-1])
        index += 1
    return "".join(out)


def _lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


# -- grep --------------------------------------------------------------------------------------

@command("grep", "egrep", "fgrep")
def _grep(p: Process) -> int:
    args = list(p.args)
    flags: set[str] = set()
    patterns: list[str] = []
    files: list[str] = []
    max_count: int | None = None
    while args:
        arg = args.pop(0)
        if arg == "--":
            files.extend(args)
            break
        if arg in ("-e", "--regexp") and args:
            patterns.append(args.pop(0))
        elif arg == "-m" and args:
            max_count = int(args.pop(0))
        elif arg.startswith("--"):
            flags.add({"--ignore-case": "i", "--invert-match": "v", "--count": "c", "--quiet": "q",
                       "--silent": "q", "--line-number": "n", "--only-matching": "o", "--extended-regexp": "E",
                       "--fixed-strings": "F", "--word-regexp": "w", "--line-regexp": "x",
                       "--files-with-matches": "l", "--recursive": "r", "--no-filename": "h"}.get(arg, arg))
        elif arg.startswith("-") and len(arg) > 1:
            flags.update(arg[1:])
        elif not patterns and not files and "_pattern" not in flags:
            patterns.append(arg)
            flags.add("_pattern")
        else:
            files.append(arg)
    if not patterns:
        return p.fail("usage: grep [OPTIONS] PATTERN [FILE]...", 2)
    extended = "E" in flags or p.name == "egrep"
    fixed = "F" in flags or p.name == "fgrep"
    if fixed:
        patterns, extended = [re.escape(pattern) for pattern in patterns], True
    try:
        regexes = [compile_regex(_grep_pattern(pattern, flags, extended), extended, "i" in flags)
                   for pattern in patterns]
    except RegexError as error:
        return p.fail(f"bad regex: {error}", 2)
    if "r" in flags or "R" in flags:
        files = _expand_recursive(p, files or ["."])
    show_names = (len(files) > 1 or "r" in flags) and "h" not in flags
    matched_any, status = False, 0
    for name, data in read_inputs(p, files):
        if data is None:
            status = 2
            continue
        count = 0
        for number, line in enumerate(_lines(data), 1):
            text = _text(line)
            found = [m for regex in regexes for m in ([regex.search(text)] if "o" not in flags
                                                      else list(regex.finditer(text)))]
            hit = any(found)
            if hit == ("v" in flags):
                continue
            count += 1
            matched_any = True
            if "q" in flags:
                return 0
            if "l" in flags or "c" in flags:
                continue
            prefix = (f"{name}:" if show_names else "") + (f"{number}:" if "n" in flags else "")
            if "o" in flags and "v" not in flags:
                for match in found:
                    if match is not None and match.group(0):
                        p.out(prefix + match.group(0) + "\n")
            else:
                p.out(prefix.encode() + line + b"\n")
            if max_count is not None and count >= max_count:
                break
        if "l" in flags and count:
            p.out(f"{name}\n")
        elif "c" in flags:
            p.out((f"{name}:" if show_names else "") + f"{count}\n")
    return status if status else (0 if matched_any else 1)


def _grep_pattern(pattern: str, flags: set[str], extended: bool) -> str:
    if "w" in flags:
        pattern = (r"\b(" if extended else r"\b\(") + pattern + (r")\b" if extended else r"\)\b")
    if "x" in flags:
        pattern = ("^(" if extended else r"^\(") + pattern + (")$" if extended else r"\)$")
    return pattern


def _expand_recursive(p: Process, roots: list[str]) -> list[str]:
    files: list[str] = []
    for root in roots:
        try:
            files.extend(path for path, entry in p.fs.walk(root) if entry[0] == "f")
        except FsError:
            files.append(root)
    return files


# -- sed -----------------------------------------------------------------------------------------

class _SedCommand:
    def __init__(self, address: tuple[str, Any] | None, verb: str, regex: Any = None, replacement: str = "",
                 global_: bool = False, occurrence: int = 1, print_: bool = False, text: str = "") -> None:
        self.address, self.verb, self.regex, self.replacement = address, verb, regex, replacement
        self.global_, self.occurrence, self.print_, self.text = global_, occurrence, print_, text


def _sed_parse(script: str, extended: bool) -> list[_SedCommand]:
    commands: list[_SedCommand] = []
    index = 0
    while index < len(script):
        while index < len(script) and script[index] in " \t\n;":
            index += 1
        if index >= len(script):
            break
        address: tuple[str, Any] | None = None
        match = re.match(r"(\d+|\$)", script[index:])
        if match:
            address = ("line", match.group(1))
            index += match.end()
        elif script[index] == "/":
            end = _delimited(script, index + 1, "/")
            address = ("regex", compile_regex(script[index + 1:end], extended))
            index = end + 1
        verb = script[index] if index < len(script) else ""
        index += 1
        if verb == "s":
            delimiter = script[index]
            middle = _delimited(script, index + 1, delimiter)
            end = _delimited(script, middle + 1, delimiter)
            pattern, replacement = script[index + 1:middle], script[middle + 1:end]
            flags_match = re.match(r"[gip0-9]*", script[end + 1:])
            flags = flags_match.group(0) if flags_match else ""
            index = end + 1 + len(flags)
            regex = compile_regex(pattern.replace("\\" + delimiter, delimiter), extended, "i" in flags or "I" in flags)
            number = re.search(r"\d+", flags)
            commands.append(_SedCommand(address, "s", regex, replacement.replace("\\" + delimiter, delimiter),
                                        "g" in flags, int(number.group(0)) if number else 1, "p" in flags))
        elif verb in ("d", "p", "q", "="):
            commands.append(_SedCommand(address, verb))
        elif verb in ("a", "i", "c"):
            text = script[index:].lstrip("\\").lstrip()
            end = text.find("\n")
            commands.append(_SedCommand(address, verb, text=text if end < 0 else text[:end]))
            index = len(script) if end < 0 else index + end + 1
        else:
            raise RegexError(f"fakekube does not simulate the sed command '{verb}'")
    return commands


def _delimited(text: str, start: int, delimiter: str) -> int:
    index = start
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == delimiter:
            return index
        index += 1
    raise RegexError(f"unterminated `s' command")


def _sed_replace(command: _SedCommand, line: str) -> tuple[str, bool]:
    count = 0
    replaced = False

    def substitute(match: Any) -> str:
        nonlocal count, replaced
        count += 1
        if not command.global_ and count != command.occurrence:
            return str(match.group(0))
        if command.global_ and count < command.occurrence:
            return str(match.group(0))
        replaced = True
        return _expand_replacement(command.replacement, match)

    result = command.regex.sub(substitute, line)
    return result, replaced


def _expand_replacement(template: str, match: Any) -> str:
    out: list[str] = []
    index = 0
    while index < len(template):
        char = template[index]
        if char == "\\" and index + 1 < len(template):
            escaped = template[index + 1]
            if escaped.isdigit():
                out.append(match.group(int(escaped)) or "")
            else:
                out.append({"n": "\n", "t": "\t", "&": "&"}.get(escaped, escaped))
            index += 2
            continue
        out.append(match.group(0) if char == "&" else char)
        index += 1
    return "".join(out)


def _address_matches(address: tuple[str, Any] | None, number: int, last: bool, line: str) -> bool:
    if address is None:
        return True
    kind, value = address
    if kind == "line":
        return last if value == "$" else number == int(value)
    return value.search(line) is not None


@command("sed")
def _sed(p: Process) -> int:
    args = list(p.args)
    scripts: list[str] = []
    files: list[str] = []
    quiet = extended = in_place = False
    while args:
        arg = args.pop(0)
        if arg in ("-e", "--expression") and args:
            scripts.append(args.pop(0))
        elif arg in ("-n", "--quiet", "--silent"):
            quiet = True
        elif arg in ("-E", "-r", "--regexp-extended"):
            extended = True
        elif arg.startswith("-i"):
            in_place = True
        elif arg.startswith("-") and len(arg) > 1 and set(arg[1:]) <= set("nEri"):
            quiet, extended, in_place = quiet or "n" in arg, extended or bool(set(arg) & set("Er")), in_place or "i" in arg
        elif not scripts:
            scripts.append(arg)
        else:
            files.append(arg)
    try:
        commands = _sed_parse("\n".join(scripts), extended)
    except RegexError as error:
        return p.fail(f"-e expression #1: {error}")
    status = 0
    for name, data in read_inputs(p, files):
        if data is None:
            status = 2
            continue
        output = _sed_run(commands, _text(data), quiet, data.endswith(b"\n"))
        if in_place and name not in ("-",):
            try:
                p.fs.write(name, output.encode("utf-8", "surrogateescape"))
            except FsError as error:
                status = p.fail(f"couldn't edit {name}: {error}", 4)
        else:
            p.out(output)
    return status


def _sed_run(commands: list[_SedCommand], text: str, quiet: bool, trailing_newline: bool) -> str:
    lines = text.split("\n")
    if trailing_newline and lines and lines[-1] == "":
        lines.pop()
    out: list[str] = []
    for number, line in enumerate(lines, 1):
        last = number == len(lines)
        deleted, quit_after = False, False
        before: list[str] = []
        after: list[str] = []
        for cmd in commands:
            if not _address_matches(cmd.address, number, last, line):
                continue
            if cmd.verb == "s":
                line, replaced = _sed_replace(cmd, line)
                if replaced and cmd.print_:
                    out.append(line)
            elif cmd.verb == "d":
                deleted = True
                break
            elif cmd.verb == "p":
                out.append(line)
            elif cmd.verb == "=":
                out.append(str(number))
            elif cmd.verb == "q":
                quit_after = True
                break
            elif cmd.verb == "a":
                after.append(cmd.text)
            elif cmd.verb == "i":
                before.append(cmd.text)
            elif cmd.verb == "c":
                before.append(cmd.text)
                deleted = True
                break
        out.extend(before)
        if not deleted and not quiet:
            out.append(line)
        out.extend(after)
        if quit_after:
            break
    return "".join(line + "\n" for line in out) if (trailing_newline or len(out) > 1) else "\n".join(out)


# -- awk -----------------------------------------------------------------------------------------

class AwkError(ValueError):
    pass


_AWK_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<re>/(?:[^/\\\n]|\\.)+/)|(?P<num>\d+(?:\.\d+)?)|'
                        r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>\+\+|--|\+=|-=|\*=|/=|==|!=|<=|>=|&&|\|\||!~|"
                        r"[-+*/%<>!~$(){};,=?:\n]))")


def _awk_tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    while position < len(text):
        if not text[position:].strip(" \t"):
            break
        match = _AWK_TOKEN.match(text, position)
        if match is None:
            raise AwkError(f"fakekube does not simulate this awk program: {text.strip()}")
        kind = match.lastgroup or "op"
        value = match.group(kind)
        # a `/` after a value is division, not a regex
        if kind == "re" and tokens and (tokens[-1][0] in ("num", "str", "name") or tokens[-1][1] in (")", "$")):
            match = re.compile(r"\s*(/)").match(text, position)
            assert match is not None
            kind, value = "op", "/"
        tokens.append((kind, value))
        position = match.end()
    return tokens


class _AwkProgram:
    """A parsed awk program: (pattern, action) rules, BEGIN and END actions."""

    def __init__(self, text: str) -> None:
        self.tokens = _awk_tokens(text)
        self.index = 0
        self.begin: list[Any] = []
        self.end: list[Any] = []
        self.rules: list[tuple[Any, list[Any] | None]] = []
        self._parse()

    def peek(self) -> tuple[str, str] | None:
        while self.index < len(self.tokens) and self.tokens[self.index] == ("op", "\n") and False:
            self.index += 1
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if token is None or (expected is not None and token[1] != expected):
            raise AwkError("fakekube does not simulate this awk program")
        self.index += 1
        return token

    def skip_newlines(self) -> None:
        while self.peek() in (("op", "\n"), ("op", ";")):
            self.index += 1

    def _parse(self) -> None:
        self.skip_newlines()
        while self.peek() is not None:
            token = self.peek()
            if token == ("name", "BEGIN"):
                self.take()
                self.begin.extend(self.block())
            elif token == ("name", "END"):
                self.take()
                self.end.extend(self.block())
            else:
                pattern = None if token == ("op", "{") else self.expression()
                action = self.block() if self.peek() == ("op", "{") else None
                self.rules.append((pattern, action))
            self.skip_newlines()

    def block(self) -> list[Any]:
        self.take("{")
        statements: list[Any] = []
        self.skip_newlines()
        while self.peek() != ("op", "}"):
            statements.append(self.statement())
            self.skip_newlines()
        self.take("}")
        return statements

    def statement(self) -> Any:
        token = self.peek()
        if token == ("name", "print"):
            self.take()
            return ("print", self.expression_list())
        if token == ("name", "printf"):
            self.take()
            return ("printf", self.expression_list())
        if token == ("name", "next"):
            self.take()
            return ("next",)
        if token is not None and token[0] == "name" and token[1] in ("if", "for", "while", "getline", "delete"):
            raise AwkError(f"fakekube does not simulate awk's '{token[1]}'")
        return ("expr", self.expression())

    def expression_list(self) -> list[Any]:
        items: list[Any] = []
        if self.peek() in (None, ("op", "}"), ("op", ";"), ("op", "\n")):
            return items
        items.append(self.expression())
        while self.peek() == ("op", ","):
            self.take()
            items.append(self.expression())
        return items

    # precedence climbing over a small grammar
    def expression(self) -> Any:
        return self.assignment()

    def assignment(self) -> Any:
        left = self.logical()
        token = self.peek()
        if token is not None and token[1] in ("=", "+=", "-=", "*=", "/=") and left[0] in ("var", "field"):
            self.take()
            return ("assign", token[1], left, self.assignment())
        return left

    def logical(self) -> Any:
        left = self.comparison()
        while self.peek() in (("op", "&&"), ("op", "||")):
            op = self.take()[1]
            left = ("logic", op, left, self.comparison())
        return left

    def comparison(self) -> Any:
        left = self.concatenation()
        token = self.peek()
        if token is not None and token[1] in ("==", "!=", "<", "<=", ">", ">=", "~", "!~"):
            self.take()
            return ("compare", token[1], left, self.concatenation())
        return left

    def concatenation(self) -> Any:
        left = self.additive()
        while True:
            token = self.peek()
            if token is None or not (token[0] in ("str", "num", "name") or token[1] in ("$", "(")):
                return left
            if token[0] == "name" and token[1] in ("print", "printf", "in"):
                return left
            left = ("concat", left, self.additive())

    def additive(self) -> Any:
        left = self.term()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            left = ("arith", op, left, self.term())
        return left

    def term(self) -> Any:
        left = self.unary()
        while self.peek() in (("op", "*"), ("op", "/"), ("op", "%")):
            op = self.take()[1]
            left = ("arith", op, left, self.unary())
        return left

    def unary(self) -> Any:
        token = self.peek()
        if token == ("op", "-"):
            self.take()
            return ("arith", "-", ("num", 0.0), self.unary())
        if token == ("op", "!"):
            self.take()
            return ("not", self.unary())
        return self.postfix()

    def postfix(self) -> Any:
        node = self.primary()
        if self.peek() in (("op", "++"), ("op", "--")) and node[0] in ("var", "field"):
            op = self.take()[1]
            return ("assign", "+=" if op == "++" else "-=", node, ("num", 1.0))
        return node

    def primary(self) -> Any:
        kind, value = self.take()
        if kind == "num":
            return ("num", float(value))
        if kind == "str":
            return ("str", _awk_string(value[1:-1]))
        if kind == "re":
            return ("match", compile_regex(value[1:-1], extended=True))
        if value == "$":
            return ("field", self.primary())
        if value == "(":
            node = self.expression()
            self.take(")")
            return node
        if kind == "name":
            if self.peek() == ("op", "(") and value in _AWK_FUNCTIONS:
                self.take("(")
                args = self.expression_list() if self.peek() != ("op", ")") else []
                self.take(")")
                return ("call", value, args)
            if value in _AWK_FUNCTIONS:
                return ("call", value, [])
            return ("var", value)
        raise AwkError("fakekube does not simulate this awk program")


def _awk_string(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "\\": "\\", '"': '"'}.get(m.group(1), m.group(1)), text)


_AWK_FUNCTIONS = {"length", "substr", "tolower", "toupper", "index", "int", "sprintf"}


class _AwkRun:
    def __init__(self, program: _AwkProgram, p: Process, separator: str | None, variables: dict[str, Any]) -> None:
        self.program, self.p = program, p
        self.variables: dict[str, Any] = {"NR": 0.0, "NF": 0.0, "FS": separator if separator is not None else " ",
                                          "OFS": " ", "ORS": "\n"}
        self.variables.update(variables)
        self.fields: list[str] = [""]

    def split(self, line: str) -> None:
        separator = self.variables["FS"]
        if separator == " ":
            parts = line.split()
        elif len(separator) == 1 and separator != "\\":
            parts = line.split(separator)
        else:
            parts = compile_regex(separator, extended=True).split(line)
        self.fields = [line] + parts
        self.variables["NF"] = float(len(parts))

    def field(self, index: int) -> str:
        return self.fields[index] if 0 <= index < len(self.fields) else ""

    def value(self, node: Any) -> Any:
        kind = node[0]
        if kind in ("num", "str"):
            return node[1]
        if kind == "var":
            return self.variables.get(node[1], "")
        if kind == "field":
            return self.field(int(_number(self.value(node[1]))))
        if kind == "match":
            return 1.0 if node[1].search(self.fields[0]) else 0.0
        if kind == "not":
            return 0.0 if _truth(self.value(node[1])) else 1.0
        if kind == "concat":
            return _string(self.value(node[1])) + _string(self.value(node[2]))
        if kind == "arith":
            a, b = _number(self.value(node[2])), _number(self.value(node[3]))
            if node[1] in ("/", "%") and b == 0:
                raise AwkError("division by zero")
            return {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else 0.0, "%": a % b if b else 0.0}[node[1]]
        if kind == "logic":
            left = _truth(self.value(node[2]))
            if node[1] == "&&":
                return 1.0 if left and _truth(self.value(node[3])) else 0.0
            return 1.0 if left or _truth(self.value(node[3])) else 0.0
        if kind == "compare":
            return self.compare(node)
        if kind == "assign":
            return self.assign(node)
        if kind == "call":
            return self.call(node[1], [self.value(arg) for arg in node[2]])
        raise AwkError("fakekube does not simulate this awk program")

    def compare(self, node: Any) -> float:
        op, left, right = node[1], self.value(node[2]), node[3]
        if op in ("~", "!~"):
            regex = right[1] if right[0] == "match" else compile_regex(_string(self.value(right)), extended=True)
            found = regex.search(_string(left)) is not None
            return 1.0 if found == (op == "~") else 0.0
        right_value = self.value(right)
        if _numeric(left) and _numeric(right_value):
            a: Any = _number(left)
            b: Any = _number(right_value)
        else:
            a, b = _string(left), _string(right_value)
        return 1.0 if {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op] else 0.0

    def assign(self, node: Any) -> Any:
        op, target, value = node[1], node[2], self.value(node[3])
        if op != "=":
            current = _number(self.value(target))
            value = {"+=": current + _number(value), "-=": current - _number(value), "*=": current * _number(value),
                     "/=": current / _number(value) if _number(value) else 0.0}[op]
        if target[0] == "var":
            self.variables[target[1]] = value
        else:
            index = int(_number(self.value(target[1])))
            while len(self.fields) <= index:
                self.fields.append("")
            self.fields[index] = _string(value)
            if index > 0:
                self.fields[0] = self.variables["OFS"].join(self.fields[1:])
        return value

    def call(self, name: str, args: list[Any]) -> Any:
        if name == "length":
            return float(len(_string(args[0]) if args else self.fields[0]))
        if name == "substr":
            text, start = _string(args[0]), int(_number(args[1]))
            length = int(_number(args[2])) if len(args) > 2 else len(text)
            return text[max(start - 1, 0):max(start - 1, 0) + length - (0 if start >= 1 else 1 - start)]
        if name == "tolower":
            return _string(args[0]).lower()
        if name == "toupper":
            return _string(args[0]).upper()
        if name == "index":
            return float(_string(args[0]).find(_string(args[1])) + 1)
        if name == "int":
            return float(int(_number(args[0])))
        return printf([_string(a) for a in args]).stdout

    def execute(self, statements: list[Any]) -> bool:
        """Run an action; False when ``next`` ends the record."""
        for statement in statements:
            if statement[0] == "next":
                return False
            if statement[0] == "print":
                values = [self.value(e) for e in statement[1]] or [self.fields[0]]
                self.p.out(self.variables["OFS"].join(_string(v) for v in values) + self.variables["ORS"])
            elif statement[0] == "printf":
                values = [_string(self.value(e)) for e in statement[1]]
                if values:
                    self.p.out(printf(values).stdout)
            else:
                self.value(statement[1])
        return True


def _numeric(value: Any) -> bool:
    if isinstance(value, float):
        return True
    return re.fullmatch(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*", str(value)) is not None


def _number(value: Any) -> float:
    if isinstance(value, float):
        return value
    match = re.match(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", str(value))
    return float(match.group(0)) if match else 0.0


def _string(value: Any) -> str:
    if isinstance(value, float):
        return str(int(value)) if value == int(value) and abs(value) < 1e16 else f"{value:.6g}"
    return str(value)


def _truth(value: Any) -> bool:
    if isinstance(value, float):
        return value != 0
    return value != "" and not (_numeric(value) and _number(value) == 0 and str(value).strip() != "")


@command("awk", "gawk", "mawk")
def _awk(p: Process) -> int:
    args = list(p.args)
    separator: str | None = None
    variables: dict[str, Any] = {}
    source: str | None = None
    while args and args[0].startswith("-") and args[0] != "-":
        arg = args.pop(0)
        if arg == "-F" and args:
            separator = args.pop(0)
        elif arg.startswith("-F"):
            separator = arg[2:]
        elif arg == "-v" and args:
            name, _, value = args.pop(0).partition("=")
            variables[name] = value
        elif arg == "--":
            break
        else:
            return p.fail(f"fakekube does not simulate the option {arg}", 2)
    if source is None:
        if not args:
            return p.fail("usage: awk [-F sep] 'program' [file ...]", 2)
        source = args.pop(0)
    if separator == "\\t" or separator == "t":
        separator = "\t"
    try:
        program = _AwkProgram(source)
        run = _AwkRun(program, p, separator, variables)
        run.execute(program.begin)
        status = 0
        for _, data in read_inputs(p, args) if program.rules or program.end else []:
            if data is None:
                status = 2
                continue
            for line in _lines(data):
                run.variables["NR"] = _number(run.variables["NR"]) + 1
                run.split(_text(line))
                for pattern, action in program.rules:
                    if pattern is not None and not _truth(run.value(pattern)):
                        continue
                    if not run.execute(action if action is not None else [("print", [])]):
                        break
        run.execute(program.end)
    except AwkError as error:
        return p.fail(str(error), 2)
    except RegexError as error:
        return p.fail(f"bad regex: {error}", 2)
    return status


# -- cut, tr, sort, uniq, wc, head, tail, tee -------------------------------------------------------

def _ranges(spec: str) -> Callable[[int], bool]:
    checks: list[tuple[int, float]] = []
    for item in spec.split(","):
        if "-" in item:
            low, _, high = item.partition("-")
            checks.append((int(low) if low else 1, float(high) if high else float("inf")))
        else:
            checks.append((int(item), float(item)))
    return lambda index: any(low <= index <= high for low, high in checks)


@command("cut")
def _cut(p: Process) -> int:
    args = list(p.args)
    delimiter, fields, chars = "\t", None, None
    only_delimited = False
    files: list[str] = []
    while args:
        arg = args.pop(0)
        if arg == "-d" and args:
            delimiter = args.pop(0)
        elif arg.startswith("-d"):
            delimiter = arg[2:]
        elif arg == "-f" and args:
            fields = _ranges(args.pop(0))
        elif arg.startswith("-f"):
            fields = _ranges(arg[2:])
        elif arg in ("-c", "-b") and args:
            chars = _ranges(args.pop(0))
        elif arg.startswith(("-c", "-b")):
            chars = _ranges(arg[2:])
        elif arg == "-s":
            only_delimited = True
        else:
            files.append(arg)
    if fields is None and chars is None:
        return p.fail("you must specify a list of bytes, characters, or fields")
    status = 0
    for _, data in read_inputs(p, files):
        if data is None:
            status = 1
            continue
        for line in _lines(data):
            text = _text(line)
            if chars is not None:
                p.out("".join(c for i, c in enumerate(text, 1) if chars(i)) + "\n")
                continue
            assert fields is not None
            if delimiter not in text:
                if not only_delimited:
                    p.out(text + "\n")
                continue
            p.out(delimiter.join(f for i, f in enumerate(text.split(delimiter), 1) if fields(i)) + "\n")
    return status


_TR_CLASSES = {"[:upper:]": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "[:lower:]": "abcdefghijklmnopqrstuvwxyz",
               "[:digit:]": "0123456789", "[:space:]": " \t\n\r\f\v", "[:blank:]": " \t",
               "[:alpha:]": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
               "[:alnum:]": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
               "[:punct:]": "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"}


def _tr_set(text: str) -> str:
    for name, members in _TR_CLASSES.items():
        text = text.replace(name, members)
    text = re.sub(r"\\([0-7]{1,3}|.)", lambda m: chr(int(m.group(1), 8)) if m.group(1)[0] in "01234567" else
                  {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}.get(m.group(1), m.group(1)), text)
    out: list[str] = []
    index = 0
    while index < len(text):
        if index + 2 < len(text) and text[index + 1] == "-":
            out.extend(chr(c) for c in range(ord(text[index]), ord(text[index + 2]) + 1))
            index += 3
        else:
            out.append(text[index])
            index += 1
    return "".join(out)


@command("tr")
def _tr(p: Process) -> int:
    flags, sets = _flags(p.args, "dsc")
    data = _text(p.streams.stdin.read())
    first = _tr_set(sets[0]) if sets else ""
    if "c" in flags:
        first = "".join(sorted(set(chr(c) for c in range(256)) - set(first)))
    if "d" in flags:
        data = "".join(c for c in data if c not in first)
        if "s" in flags and len(sets) > 1:
            data = _squeeze(data, _tr_set(sets[1]))
    elif len(sets) > 1:
        second = _tr_set(sets[1])
        second = (second + second[-1:] * len(first))[:len(first)] if second else ""
        data = data.translate(str.maketrans(first, second)) if second else data
        if "s" in flags:
            data = _squeeze(data, second)
    elif "s" in flags:
        data = _squeeze(data, first)
    p.out(data)
    return 0


def _squeeze(text: str, members: str) -> str:
    return re.sub("([" + re.escape(members) + "])\\1+", r"\1", text) if members else text


@command("sort")
def _sort(p: Process) -> int:
    args = list(p.args)
    flags: set[str] = set()
    key: int | None = None
    separator: str | None = None
    files: list[str] = []
    while args:
        arg = args.pop(0)
        if arg == "-k" and args:
            key = int(re.match(r"\d+", args.pop(0)).group(0))  # type: ignore[union-attr]
        elif arg.startswith("-k"):
            key = int(re.match(r"\d+", arg[2:]).group(0))  # type: ignore[union-attr]
        elif arg == "-t" and args:
            separator = args.pop(0)
        elif arg.startswith("-t"):
            separator = arg[2:]
        elif arg.startswith("-") and len(arg) > 1:
            flags.update(arg[1:])
        else:
            files.append(arg)
    lines: list[str] = []
    for _, data in read_inputs(p, files):
        if data is not None:
            lines.extend(_text(line) for line in _lines(data))

    def sort_key(line: str) -> Any:
        value = line
        if key is not None:
            parts = line.split(separator) if separator else line.split()
            value = parts[key - 1] if key - 1 < len(parts) else ""
        if "f" in flags:
            value = value.lower()
        if "n" in flags:
            return (_number(value), line)
        return value

    lines.sort(key=sort_key, reverse="r" in flags)
    if "u" in flags:
        seen: set[Any] = set()
        unique = []
        for line in lines:
            marker = sort_key(line) if key is not None or "n" in flags else line
            if marker not in seen:
                seen.add(marker)
                unique.append(line)
        lines = unique
    p.out("".join(line + "\n" for line in lines))
    return 0


@command("uniq")
def _uniq(p: Process) -> int:
    flags, files = _flags(p.args, "cdui")
    data = next(iter(read_inputs(p, files[:1])))[1] or b""
    groups: list[list[str]] = []
    for line in (_text(x) for x in _lines(data)):
        if groups and (groups[-1][0].lower() == line.lower() if "i" in flags else groups[-1][0] == line):
            groups[-1].append(line)
        else:
            groups.append([line])
    for group in groups:
        if "d" in flags and len(group) < 2 or "u" in flags and len(group) > 1:
            continue
        p.out((f"{len(group):7d} " if "c" in flags else "") + group[0] + "\n")
    return 0


@command("wc")
def _wc(p: Process) -> int:
    flags, files = _flags(p.args, "lwcm")
    wanted = [flag for flag in "lwc" if flag in flags or (flag == "c" and "m" in flags)] or ["l", "w", "c"]
    status = 0
    totals = {"l": 0, "w": 0, "c": 0}
    rows: list[tuple[dict[str, int], str]] = []
    for name, data in read_inputs(p, files):
        if data is None:
            status = 1
            continue
        counts = {"l": data.count(b"\n"), "w": len(data.split()), "c": len(data)}
        for flag in totals:
            totals[flag] += counts[flag]
        rows.append((counts, name if files else ""))
    if len(rows) > 1:
        rows.append((totals, "total"))
    width = 1 if len(wanted) == 1 and len(rows) == 1 else 7
    for counts, name in rows:
        numbers = " ".join(f"{counts[flag]:>{width}}" for flag in wanted)
        p.out(numbers + (f" {name}" if name else "") + "\n")
    return status


def _count_option(args: list[str], default: int) -> tuple[int, bool, bool, list[str]]:
    """(count, from_start, bytes, files) of head/tail's options (``-n N``, ``-N``, ``-c N``, ``-n +N``)."""
    count, from_start, in_bytes = default, False, False
    files: list[str] = []
    follow = False
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg in ("-n", "-c", "--lines", "--bytes") and rest:
            value = rest.pop(0)
            in_bytes = arg in ("-c", "--bytes")
            from_start = value.startswith("+")
            count = int(value.lstrip("+-"))
        elif re.fullmatch(r"-[nc][+-]?\d+", arg):
            in_bytes = arg[1] == "c"
            from_start = arg[2] == "+"
            count = int(arg[2:].lstrip("+-"))
        elif re.fullmatch(r"-\d+", arg):
            count = int(arg[1:])
        elif arg in ("-f", "-F", "--follow"):
            follow = True
        elif arg in ("-q", "-v", "-s"):
            if arg == "-s" and rest:
                rest.pop(0)
        else:
            files.append(arg)
    return count, from_start, in_bytes, files + (["\0follow"] if follow else [])


@command("head")
def _head(p: Process) -> int:
    count, _, in_bytes, files = _count_option(list(p.args), 10)
    status = 0
    for _, data in read_inputs(p, [f for f in files if f != "\0follow"]):
        if data is None:
            status = 1
            continue
        if in_bytes:
            p.out(data[:count])
        else:
            lines = data.split(b"\n")
            kept = lines[:count]
            p.out(b"\n".join(kept) + (b"\n" if len(lines) > count else b""))
    return status


@command("tail")
def _tail(p: Process) -> int:
    count, from_start, in_bytes, files = _count_option(list(p.args), 10)
    follow = "\0follow" in files
    files = [f for f in files if f != "\0follow"]
    status = 0
    for _, data in read_inputs(p, files):
        if data is None:
            status = 1
            continue
        if in_bytes:
            p.out(data[count - 1:] if from_start else data[-count:] if count else b"")
            continue
        lines = _lines(data)
        kept = lines[count - 1:] if from_start else lines[-count:] if count else []
        p.out(b"".join(line + b"\n" for line in kept))
    if follow:
        raise Forever
    return status


@command("tee")
def _tee(p: Process) -> int:
    flags, files = _flags(p.args, "ai")
    data = p.streams.stdin.read()
    p.out(data)
    status = 0
    for path in files:
        try:
            p.fs.write(path, data, append="a" in flags)
        except FsError as error:
            status = p.fail(f"{path}: {error}")
    return status


def lines_of(data: bytes) -> Sequence[bytes]:
    return _lines(data)
