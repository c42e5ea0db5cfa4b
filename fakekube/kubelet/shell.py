"""The part of ``sh -c SCRIPT`` an exec simulates: simple commands joined by ``;``, ``&&``, ``||``, and loops.

``kubectl exec pod -- sh -c 'cmd'`` is how most scripts run a command with arguments or
variables; a simulated container has no shell, so the script is parsed here into simple
commands that the exec runs one by one (declared commands and built-ins, kubelet/execs.py):

* words split and quoted as POSIX ``sh`` does (``shlex``);
* ``$NAME`` and ``${NAME}`` outside single quotes expand from the container's environment
  (unset: empty), ``$?`` to the last exit code;
* ``cmd1; cmd2``, ``cmd1 && cmd2``, ``cmd1 || cmd2`` (left to right, as ``sh`` chains them);
  a line ends a command as ``;`` does, and ``#`` starts a comment;
* ``for NAME in WORDS; do ...; done`` and the endless ``while true; do ...; done`` (also
  ``while :``) — the caller decides how many rounds of an endless one to simulate;
* ``exit [N]`` ends the script.

Pipes, redirections, background jobs, subshells, command substitution and the other compound
commands (``if``, ``case``, ``until``, ``while`` with a condition) are not simulated:
:func:`parse` names them (:class:`ScriptError`), and the exec fails with exit code 2.
"""

from __future__ import annotations

import re
import shlex
from typing import Callable, NamedTuple

#: Operators that chain simple commands (``None``: the script's first command).
SEQUENCE, AND, OR = ";", "&&", "||"
#: What ``shlex`` splits off as punctuation that is not a chain: not simulated.
_UNSUPPORTED = {"|": "pipes", ">": "redirections", ">>": "redirections", "<": "redirections", "&": "background jobs",
                "(": "subshells", ")": "subshells", "<<": "here-documents", ">&": "redirections", "<&": "redirections"}
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*|\?))")


class ScriptError(ValueError):
    """The script cannot run: syntax not simulated, or not valid ``sh``; ``str()`` is what
    the shell writes to stderr before exiting 2."""


class Step(NamedTuple):
    """One simple command and how it chains to the one before (``None`` for the first)."""

    operator: str | None
    #: The script's words before variable expansion (expanded when the step runs).
    words: tuple[str, ...]


class Loop(NamedTuple):
    """``for NAME in WORDS; do BODY; done`` or the endless ``while true; do BODY; done``."""

    operator: str | None
    #: The for-loop's variable and words (unexpanded); both None for an endless loop.
    variable: str | None
    items: tuple[str, ...] | None
    body: tuple["Step | Loop", ...]


Command = Step | Loop
#: Words that open or close a compound command: not simulated except as loops allow.
_KEYWORDS = {"if", "then", "else", "elif", "fi", "case", "esac", "until", "do", "done", "while", "for", "{", "}"}
_ENDLESS = ("true", ":")


def parse(script: str) -> list[Command]:
    """The script's commands in order; :class:`ScriptError` for the syntax not simulated.
    Lines are separate commands, as ``;`` separates them; ``#`` starts a comment."""
    if "`" in script or "$(" in script:
        raise _unsupported("command substitution", script)
    lexer = shlex.shlex(_mark_variables(script), posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    tokens = _tokens(lexer)
    for token in tokens:
        if token in _UNSUPPORTED or (set(token) <= set(";&|<>()") and token not in (SEQUENCE, AND, OR)):
            raise _unsupported(_UNSUPPORTED.get(token, f"the operator {token!r}"), script)
    commands, position = _sequence(tokens, 0, frozenset(), script)
    if position < len(tokens):
        raise ScriptError(f'sh: 1: Syntax error: "{tokens[position]}" unexpected')
    return commands


def _sequence(tokens: list[str], position: int, stops: frozenset[str], script: str) -> tuple[list[Command], int]:
    """Commands chained by ``;``, ``&&`` and ``||`` up to a stop word (``done``) or the end."""
    commands: list[Command] = []
    operator: str | None = None
    while position < len(tokens) and tokens[position] not in stops:
        if tokens[position] == SEQUENCE and operator in (None, SEQUENCE):
            position += 1  # an empty line or a trailing ';'
            continue
        command, position = _command(tokens, position, operator, script)
        commands.append(command)
        if position < len(tokens) and tokens[position] in (SEQUENCE, AND, OR):
            operator = tokens[position]
            position += 1
            if operator != SEQUENCE and (position == len(tokens) or tokens[position] in stops | {SEQUENCE}):
                raise ScriptError("sh: 1: Syntax error: end of file unexpected")
        elif position < len(tokens) and tokens[position] not in stops:
            raise ScriptError(f'sh: 1: Syntax error: "{tokens[position]}" unexpected')
    return commands, position


def _command(tokens: list[str], position: int, operator: str | None, script: str) -> tuple[Command, int]:
    first = tokens[position]
    if first in (AND, OR):
        raise ScriptError(f'sh: 1: Syntax error: "{first}" unexpected')
    if first == "while" and position + 2 < len(tokens) and tokens[position + 1] in _ENDLESS \
            and tokens[position + 2] == SEQUENCE:
        body, position = _body(tokens, position + 3, script)
        return Loop(operator, None, None, tuple(body)), position
    if first == "for" and position + 3 < len(tokens) and tokens[position + 2] == "in":
        end = position + 3
        while end < len(tokens) and tokens[end] != SEQUENCE:
            end += 1
        body, after = _body(tokens, end + 1, script)
        return Loop(operator, tokens[position + 1], tuple(tokens[position + 3:end]), tuple(body)), after
    if first in _KEYWORDS:
        raise _unsupported(f"'{first}' compound commands (only `for ... in` and `while true` loops)", script)
    end = position
    while end < len(tokens) and tokens[end] not in (SEQUENCE, AND, OR):
        end += 1
    return Step(operator, tuple(tokens[position:end])), end


def _body(tokens: list[str], position: int, script: str) -> tuple[list[Command], int]:
    """``do BODY; done`` starting at ``position`` (after the loop's header and its ';')."""
    while position < len(tokens) and tokens[position] == SEQUENCE:
        position += 1
    if position >= len(tokens) or tokens[position] != "do":
        raise ScriptError("sh: 1: Syntax error: end of file unexpected (expecting \"do\")")
    body, position = _sequence(tokens, position + 1, frozenset({"done"}), script)
    if position >= len(tokens):
        raise ScriptError("sh: 1: Syntax error: end of file unexpected (expecting \"done\")")
    return body, position + 1


def _tokens(lexer: shlex.shlex) -> list[str]:
    try:
        return list(lexer)
    except ValueError:  # shlex: "No closing quotation" (or a trailing escape)
        raise ScriptError("sh: 1: Syntax error: Unterminated quoted string") from None


def _unsupported(what: str, script: str) -> ScriptError:
    return ScriptError(f"sh: fakekube does not simulate {what} in exec scripts: {script}")


def expand(words: tuple[str, ...], lookup: Callable[[str], str]) -> list[str]:
    """The words with their marked variables replaced by ``lookup(name)``."""
    return [_MARKED.sub(lambda match: lookup(match.group(1)), word) for word in words]


#: Variables are marked before splitting (so quoting decides which expand) with characters
#: a script cannot contain: ``\x00NAME\x00``.
_MARKED = re.compile("\x00([^\x00]*)\x00")


def _mark_variables(script: str) -> str:
    """``$NAME`` outside single quotes becomes ``\\x00NAME\\x00`` (single-quoted text is literal)."""
    out: list[str] = []
    in_single = in_double = False
    index = 0
    while index < len(script):
        char = script[index]
        if char == "'" and not in_double:
            in_single = not in_single
        elif char == '"' and not in_single:
            in_double = not in_double
        elif char == "\\" and not in_single and index + 1 < len(script):
            out.append(script[index:index + 2])
            index += 2
            continue
        elif char == "\n" and not in_single and not in_double:
            out.append("\n;")  # a line ends a command (after any comment on it: shlex stops those at the newline)
            index += 1
            continue
        elif char == "$" and not in_single:
            match = _VARIABLE.match(script, index)
            if match is not None:
                out.append(f"\x00{match.group(1) or match.group(2)}\x00")
                index = match.end()
                continue
        out.append(char)
        index += 1
    return "".join(out)
