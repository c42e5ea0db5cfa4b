"""The part of ``sh -c SCRIPT`` an exec simulates: simple commands joined by ``;``, ``&&``, ``||``.

``kubectl exec pod -- sh -c 'cmd'`` is how most scripts run a command with arguments or
variables; a simulated container has no shell, so the script is parsed here into simple
commands that the exec runs one by one (declared commands and built-ins, kubelet/execs.py):

* words split and quoted as POSIX ``sh`` does (``shlex``);
* ``$NAME`` and ``${NAME}`` outside single quotes expand from the container's environment
  (unset: empty), ``$?`` to the last exit code;
* ``cmd1; cmd2``, ``cmd1 && cmd2``, ``cmd1 || cmd2`` (left to right, as ``sh`` chains them);
* ``exit [N]`` ends the script.

Pipes, redirections, background jobs, subshells and command substitution are not simulated:
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


def parse(script: str) -> list[Step]:
    """The script's simple commands in order; :class:`ScriptError` for the syntax not simulated."""
    if "`" in script or "$(" in script:
        raise _unsupported("command substitution", script)
    lexer = shlex.shlex(_mark_variables(script), posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    steps: list[Step] = []
    operator: str | None = None
    words: list[str] = []
    for token in _tokens(lexer):
        if token in (SEQUENCE, AND, OR):
            if not words:  # an operator with no command before it
                raise ScriptError(f'sh: 1: Syntax error: "{token}" unexpected')
            steps.append(Step(operator, tuple(words)))
            operator, words = token, []
        elif token in _UNSUPPORTED or set(token) <= set(";&|<>()"):
            raise _unsupported(_UNSUPPORTED.get(token, f"the operator {token!r}"), script)
        else:
            words.append(token)
    if words:
        steps.append(Step(operator, tuple(words)))
    elif operator in (AND, OR):  # "cmd &&" waits for a command the script never gives
        raise ScriptError("sh: 1: Syntax error: end of file unexpected")
    return steps


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
        elif char == "$" and not in_single:
            match = _VARIABLE.match(script, index)
            if match is not None:
                out.append(f"\x00{match.group(1) or match.group(2)}\x00")
                index = match.end()
                continue
        out.append(char)
        index += 1
    return "".join(out)
