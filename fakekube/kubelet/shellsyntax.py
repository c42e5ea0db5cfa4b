"""The syntax tree of the shell scripts containers run: parsed by tree-sitter-bash, kept as plain tuples.

Scripts in ``command``/``args``, in ``sh -c`` and on an exec's stdin are parsed by
`tree-sitter-bash <https://github.com/tree-sitter/tree-sitter-bash>`_ (MIT, the grammar editors
use; a C parser, fast, kept up to date) and turned once into the small immutable tree below,
which :mod:`fakekube.kubelet.shell` runs. Parses are cached by script text, so a thousand pods
of one template parse their script once. (``bashlex`` was considered: a port of bash's own
parser, but GPL-3 and unmaintained since 2023.)

The tree has one node per construct the shell simulates: simple commands with assignments,
words and redirections; pipelines, ``!``, ``&&``/``||``, lists with ``&``; ``if``, ``while``,
``until``, ``for`` (and the arithmetic ``for ((;;))``), ``case``, functions, ``{ }`` and
``( )``, ``[ ]``/``[[ ]]`` (as the words of a ``test``), ``(( ))``, ``export``/``local``/
``readonly``/``declare``/``unset``. Words keep their quoting as parts: literal text (quoted
or not, which decides field splitting and globbing), ``$NAME``/``${NAME…}`` expansions,
``$(…)``/backticks and ``$((…))`` (kept as text with its expansions, evaluated by
:mod:`fakekube.kubelet.arith`). Anything else (arrays, ``select``, process substitution,
``${x:1:2}``…) becomes :class:`Unsupported`, which fails when it runs, naming what.

A script the grammar cannot read raises :class:`ScriptError` with dash's wording; one that
ends in the middle of a construct (an open quote, an ``if`` without ``fi``) raises
:class:`Incomplete`, so a shell reading its script from stdin waits for more.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple, Union

#: Distinct scripts whose parse is kept (pods of one template share theirs).
PARSE_CACHE_SIZE = 512
#: The longest script parsed (bytes): longer ones are refused with exit 2.
MAX_SCRIPT_BYTES = 1024 * 1024
#: How deep the tree may nest (subshells in substitutions in loops…): past it, refused.
MAX_NESTING = 200


class ScriptError(ValueError):
    """The script is not valid ``sh``; ``str()`` is what dash writes before exiting 2."""


class Incomplete(ScriptError):
    """The script stops inside a construct: more input could complete it."""


# -- words ---------------------------------------------------------------------------------

class Lit(NamedTuple):
    """Literal text; ``quoted`` text is neither split into fields nor globbed."""

    text: str
    quoted: bool


class Param(NamedTuple):
    """``$NAME``, ``${NAME}``, ``${NAME<op>ARGS}``, ``${#NAME}``; ``op`` is the operator
    (``:-``, ``-``, ``:=``, ``=``, ``:+``, ``+``, ``:?``, ``?``, ``#``, ``##``, ``%``, ``%%``,
    ``/``, ``//``, ``^^``, ``,,``, ``len``) or ``""``."""

    name: str
    op: str
    args: tuple["Word", ...]
    quoted: bool


class CmdSub(NamedTuple):
    """``$(…)`` or a backquoted command: its standard output, trailing newlines cut."""

    #: A ``Seq``, held as ``Any``: typed, it makes ``Part`` and ``Command`` one recursive union
    #: of named tuples, and mypy compares such unions item by item at every level wherever a
    #: part is narrowed or passed on (a cold check of the shell took ~20 of mypy's ~30 CPU-s).
    body: Any
    quoted: bool


class ArithSub(NamedTuple):
    """``$((…))``: the expression's text with its expansions, evaluated when it runs."""

    template: "Template"
    quoted: bool


class Unsupported(NamedTuple):
    """A construct the shell does not simulate (as a word part or a command): ``what`` names it."""

    what: str


Part = Union[Lit, Param, CmdSub, ArithSub, Unsupported]
#: Text with expansions in it (an arithmetic expression, a here-document's body).
Template = tuple[Union[str, Part], ...]


class Word(NamedTuple):
    parts: tuple[Part, ...]
    #: The word's text when it is plain literal text (no expansion, glob or ``~``): the common
    #: case, which the shell then takes as it is.
    literal: str | None = None


def word(parts: tuple[Part, ...]) -> Word:
    """A word, with :attr:`Word.literal` worked out once here."""
    literal: str | None = None
    if all(isinstance(part, Lit) for part in parts):
        texts = [part.text for part in parts if isinstance(part, Lit)]
        plain = all(part.quoted or not any(c in part.text for c in "*?[") for part in parts if isinstance(part, Lit))
        tilde = bool(parts) and isinstance(parts[0], Lit) and not parts[0].quoted and parts[0].text.startswith("~")
        if plain and not tilde and (texts and "".join(texts) or any(p.quoted for p in parts if isinstance(p, Lit))):
            literal = "".join(texts)
    return Word(parts, literal)


# -- commands ------------------------------------------------------------------------------

class Assign(NamedTuple):
    """``NAME=VALUE`` (``append``: ``NAME+=VALUE``); ``value`` None for a bare ``NAME``."""

    name: str
    value: Word | None
    append: bool = False


class Redirect(NamedTuple):
    """``[fd]op target``: ``op`` one of ``> >> >| < <> >& <& &> &>> << <<- <<<``; a
    here-document's body is ``body`` (``target`` None)."""

    fd: int | None
    op: str
    target: Word | None
    body: Template | None = None


class Simple(NamedTuple):
    assigns: tuple[Assign, ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...] = ()


class Pipeline(NamedTuple):
    commands: tuple["Command", ...]


class Not(NamedTuple):
    command: "Command"


class AndOr(NamedTuple):
    op: str  # "&&" or "||"
    left: "Command"
    right: "Command"


class Seq(NamedTuple):
    """Commands in order; each with whether it runs in the background (``&``)."""

    items: tuple[tuple["Command", bool], ...]


class If(NamedTuple):
    branches: tuple[tuple[Seq, Seq], ...]
    otherwise: Seq | None


class Loop(NamedTuple):
    until: bool
    condition: Seq
    body: Seq


class For(NamedTuple):
    """``for NAME [in WORDS]``; ``items`` None: the positional parameters."""

    variable: str
    items: tuple[Word, ...] | None
    body: Seq


class ArithFor(NamedTuple):
    init: Template
    condition: Template
    step: Template
    body: Seq


class Case(NamedTuple):
    subject: Word
    items: tuple[tuple[tuple[Word, ...], Seq], ...]


class Function(NamedTuple):
    name: str
    body: "Command"


class Group(NamedTuple):
    """``{ …; }`` or, with ``subshell``, ``( … )``."""

    body: Seq
    subshell: bool


class Redirected(NamedTuple):
    command: "Command"
    redirects: tuple[Redirect, ...]


class Test(NamedTuple):
    """``[ … ]`` or ``[[ … ]]`` (``double``): the words between the brackets."""

    words: tuple[Word, ...]
    double: bool


class Arith(NamedTuple):
    """``(( … ))``: status 0 when the expression is not zero."""

    expression: Template


class Declare(NamedTuple):
    """``export``/``local``/``readonly``/``declare``/``typeset``/``unset`` and their arguments."""

    builtin: str
    args: tuple[Assign | Word, ...]


Command = Union[Simple, Pipeline, Not, AndOr, Seq, If, Loop, For, ArithFor, Case, Function, Group, Redirected, Test,
                Arith, Declare, Unsupported]


# -- parsing ---------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    """The tree-sitter parser, built on first use (the C extension loads with the first script)."""
    import tree_sitter
    import tree_sitter_bash
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def parse(script: str) -> Seq:
    """The script's tree; :class:`ScriptError` (or :class:`Incomplete`) when it cannot run."""
    source = script.encode("utf-8", "surrogateescape")
    if len(source) > MAX_SCRIPT_BYTES:
        raise ScriptError(f"sh: fakekube does not simulate scripts longer than {MAX_SCRIPT_BYTES} bytes")
    tree = _parser().parse(source)
    root = tree.root_node
    if root.has_error:
        raise _syntax_error(root, len(source))
    try:
        return _Converter(source).sequence(root.children, 0)
    except RecursionError:
        raise ScriptError(f"sh: fakekube does not simulate scripts nested more than {MAX_NESTING} deep") from None


def _syntax_error(root: Any, end: int) -> ScriptError:
    """dash's words for the first problem: an open quote, a missing keyword, an unexpected token.
    A problem that reaches the end of the script is :class:`Incomplete` (more input may fix it)."""
    problem = _first_problem(root)
    if problem is None:
        return ScriptError("sh: 1: Syntax error: end of file unexpected")
    line = problem.start_point[0] + 1
    at_end = problem.end_byte >= end
    if problem.is_missing:
        expecting = f' (expecting "{problem.type}")' if problem.type in _KEYWORDS else ""
        message = f"sh: {line}: Syntax error: end of file unexpected{expecting}"
        return Incomplete(message) if at_end else ScriptError(message)
    leaves = _leaves(problem)
    if at_end:
        if any(text[:1] in ("'", '"', "`") and (len(text) < 2 or text[-1] != text[0]) for _, text in leaves):
            return Incomplete(f"sh: {line}: Syntax error: Unterminated quoted string")
        expected = _expected(leaves)
        if expected is not None:
            return Incomplete(f'sh: {line}: Syntax error: end of file unexpected (expecting "{expected}")')
        if leaves and leaves[-1][1] in ("&&", "||", "|", "(", "{", "$(", "${", "$((", "<<", "<<-"):
            return Incomplete(f"sh: {line}: Syntax error: end of file unexpected")
    token = leaves[0][1] if leaves else "end of file"
    return ScriptError(f'sh: {line}: Syntax error: "{token}" unexpected')


_KEYWORDS = {"fi", "done", "esac", "then", "do", "}", ")", "in"}
_CLOSERS = {"if": "fi", "case": "esac", "{": "}", "(": ")"}
_LOOPS = {"for", "while", "until", "select"}


def _expected(leaves: list[tuple[str, str]]) -> str | None:
    """The keyword an unfinished compound command still needs, scanning its tokens."""
    stack: list[str] = []
    for kind, text in leaves:
        if kind in ("string_content", "raw_string"):
            continue
        if text in _CLOSERS:
            stack.append(_CLOSERS[text])
        elif text in _LOOPS:
            stack.append("do")
        elif text == "do" and stack and stack[-1] == "do":
            stack[-1] = "done"
        elif stack and text == stack[-1]:
            stack.pop()
    return stack[-1] if stack else None


def _leaves(node: Any) -> list[tuple[str, str]]:
    if not node.children:
        return [(node.type, (node.text or b"").decode("utf-8", "replace"))]
    return [leaf for child in node.children for leaf in _leaves(child)]


def _first_problem(node: Any) -> Any:
    if node.is_missing or node.type == "ERROR":
        return node
    for child in node.children:
        if child.has_error or child.is_missing:
            found = _first_problem(child)
            if found is not None:
                return found
    return None


#: Statement separators and keywords a sequence skips.
_SEPARATORS = {";", "&", "\n", ";;", ";&", ";;&", "comment", "do", "done", "then", "fi", "else", "elif", "{", "}",
               "(", ")", "in", "esac", "if", "while", "until", "heredoc_body"}
#: Node types that are words (a command's name, an argument, a pattern).
_WORDS = {"word", "string", "raw_string", "simple_expansion", "expansion", "concatenation", "number",
          "command_substitution", "arithmetic_expansion", "ansi_c_string", "translated_string", "extglob_pattern",
          "regex", "test_operator", "process_substitution", "brace_expression", "variable_name",
          "special_variable_name"}
#: Statement node types, each converted by the ``_<type>`` method of the converter.
_STATEMENTS = {"command", "variable_assignment", "variable_assignments", "declaration_command", "unset_command",
               "redirected_statement", "pipeline", "negated_command", "list", "subshell", "compound_statement",
               "if_statement", "while_statement", "for_statement", "c_style_for_statement", "case_statement",
               "function_definition", "test_command", "comment"}
_REDIRECTS = {"file_redirect", "heredoc_redirect", "herestring_redirect"}
#: Word parts that expand (inside arithmetic text and here-documents).
_EXPANSIONS = {"simple_expansion", "expansion", "command_substitution", "arithmetic_expansion"}
_ESCAPES_IN_DOUBLE_QUOTES = "$`\"\\\n"


class _Converter:
    """Turns one tree-sitter tree into the tuples above."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.depth = 0

    def text(self, node: Any) -> str:
        return self.source[node.start_byte:node.end_byte].decode("utf-8", "surrogateescape")

    def slice(self, start: int, end: int) -> str:
        return self.source[start:end].decode("utf-8", "surrogateescape")

    # -- sequences and commands ----------------------------------------------------------
    def sequence(self, children: Any, start: int, stop: int | None = None) -> Seq:
        """The statements among ``children[start:stop]``, each with its ``&``."""
        items: list[tuple[Command, bool]] = []
        nodes = list(children)[start:stop]
        for index, node in enumerate(nodes):
            if node.type in _SEPARATORS or not node.is_named and node.type not in ("!",):
                if node.type == "&" and items:
                    items[-1] = (items[-1][0], True)
                continue
            if node.type in ("elif_clause", "else_clause", "do_group", "case_item"):
                continue
            items.append((self.command(node), False))
        return Seq(tuple(items))

    def command(self, node: Any) -> Command:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise RecursionError
        try:
            return self._command(node)
        finally:
            self.depth -= 1

    def _command(self, node: Any) -> Command:
        kind = node.type
        handler = getattr(self, "_simple" if kind == "command" else "_" + kind, None) if kind in _STATEMENTS else None
        if handler is not None:
            return handler(node)
        if kind in _WORDS:  # a lone word where a command was expected (e.g. after a redirect)
            return Simple((), (self.word(node),))
        return Unsupported(_what(kind))

    def _simple(self, node: Any) -> Command:
        assigns: list[Assign] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        for child in node.children:
            if child.type == "variable_assignment" and not words:
                assignment = self.assignment(child)
                if isinstance(assignment, Unsupported):
                    return assignment
                assigns.append(assignment)
            elif child.type == "command_name":
                words.append(self.word(child.children[0]) if child.children else word((Lit(self.text(child), False),)))
            elif child.type in _REDIRECTS:
                redirect, extra = self.redirect(child)
                redirects.append(redirect)
                words.extend(extra)
            elif child.type in _WORDS or child.type == "variable_assignment":
                words.append(self.word(child))
            elif child.is_named and child.type != "comment":
                return Unsupported(_what(child.type))
        return Simple(tuple(assigns), tuple(words), tuple(redirects))

    def _variable_assignment(self, node: Any) -> Command:
        assignment = self.assignment(node)
        return assignment if isinstance(assignment, Unsupported) else Simple((assignment,), ())

    def _variable_assignments(self, node: Any) -> Command:
        assigns = []
        for child in node.children:
            if child.type == "variable_assignment":
                assignment = self.assignment(child)
                if isinstance(assignment, Unsupported):
                    return assignment
                assigns.append(assignment)
        return Simple(tuple(assigns), ())

    def assignment(self, node: Any) -> Assign | Unsupported:
        name, value, append = "", None, False
        for child in node.children:
            if child.type == "variable_name":
                name = self.text(child)
            elif child.type == "subscript":
                return Unsupported("arrays")
            elif child.type in ("=", "+="):
                append = child.type == "+="
            elif child.type == "array":
                return Unsupported("arrays")
            elif child.is_named or child.type in _WORDS:
                value = self.word(child)
        return Assign(name, value, append)

    def _declaration_command(self, node: Any) -> Command:
        builtin = self.text(node.children[0])
        args: list[Assign | Word] = []
        for child in list(node.children)[1:]:
            if child.type == "variable_assignment":
                assignment = self.assignment(child)
                if isinstance(assignment, Unsupported):
                    return assignment
                args.append(assignment)
            elif child.type in _WORDS:
                args.append(self.word(child))
        return Declare(builtin, tuple(args))

    def _unset_command(self, node: Any) -> Command:
        return Declare("unset", tuple(self.word(child) for child in list(node.children)[1:] if child.type in _WORDS))

    def _redirected_statement(self, node: Any) -> Command:
        body: Command | None = None
        redirects: list[Redirect] = []
        extra: list[Word] = []
        continuation: tuple[str, Any] | None = None
        for child in node.children:
            if child.type in _REDIRECTS:
                redirect, words = self.redirect(child)
                redirects.append(redirect)
                extra.extend(words)
                for inner in child.children:  # a here-document's line goes on: `cat <<EOF | grep x`
                    if inner.type in _REDIRECTS:
                        more, words = self.redirect(inner)
                        redirects.append(more)
                        extra.extend(words)
                    elif inner.type in ("pipeline", "list") and inner.children:
                        continuation = (self.text(inner.children[0]), inner)
            elif child.is_named and child.type != "comment" and body is None:
                body = self.command(child)
        command = _with_redirects(body, extra, redirects)
        if continuation is not None:
            op, rest = continuation
            tail = self.sequence(rest.children, 1)
            following: Command = tail.items[0][0] if len(tail.items) == 1 else tail
            if op == "|":
                return Pipeline((command,) + _piped(following))
            if op in ("&&", "||"):
                return AndOr(op, command, following)
        return command

    def redirect(self, node: Any) -> tuple[Redirect, list[Word]]:
        """The redirection, and any words the grammar hung on it (``echo >&2 hi``'s ``hi``)."""
        fd: int | None = None
        op = ""
        target: Word | None = None
        body: Template | None = None
        extra: list[Word] = []
        quoted_delimiter = False
        for child in node.children:
            if child.type == "file_descriptor":
                fd = int(self.text(child))
            elif not child.is_named and child.type not in ("|", "&&", "||"):
                op = child.type
            elif child.type == "heredoc_start":
                quoted_delimiter = any(mark in self.text(child) for mark in "'\"\\")
            elif child.type == "heredoc_body":
                body = self.heredoc(child, quoted_delimiter, op == "<<-")
            elif child.type in _WORDS:
                if target is None:
                    target = self.word(child)
                else:
                    extra.append(self.word(child))
        if op in ("<<", "<<-") and body is None:
            body = ("",)
        return Redirect(fd, op, target, body), extra

    def heredoc(self, node: Any, literal: bool, strip_tabs: bool) -> Template:
        if literal:
            text = self.text(node)
            return (_strip_tabs(text) if strip_tabs else text,)
        template = self.template(node, node.start_byte, node.end_byte, heredoc=True)
        if strip_tabs:
            template = tuple(_strip_tabs(piece) if isinstance(piece, str) else piece for piece in template)
        return template

    def _pipeline(self, node: Any) -> Command:
        commands = tuple(self.command(child) for child in node.children if child.is_named and child.type != "comment")
        if any(child.type == "|&" for child in node.children):
            commands = tuple(_with_stderr(command) for command in commands[:-1]) + commands[-1:]
        return Pipeline(commands)

    def _negated_command(self, node: Any) -> Command:
        inner = [child for child in node.children if child.is_named]
        return Not(self.command(inner[0]) if inner else Simple((), ()))

    def _list(self, node: Any) -> Command:
        named = [child for child in node.children if child.is_named and child.type != "comment"]
        op = next((child.type for child in node.children if child.type in ("&&", "||")), "&&")
        if len(named) < 2:
            return self.command(named[0]) if named else Simple((), ())
        return AndOr(op, self.command(named[0]), self.command(named[1]))

    def _subshell(self, node: Any) -> Command:
        return Group(self.sequence(node.children, 0), subshell=True)

    def _compound_statement(self, node: Any) -> Command:
        children = list(node.children)
        if children and children[0].type == "((":
            return Arith(self.template(node, children[0].end_byte, children[-1].start_byte))
        return Group(self.sequence(children, 0), subshell=False)

    def _if_statement(self, node: Any) -> Command:
        branches: list[tuple[Seq, Seq]] = []
        otherwise: Seq | None = None
        children = list(node.children)
        then = next(i for i, child in enumerate(children) if child.type == "then")
        end = next((i for i, child in enumerate(children) if child.type in ("elif_clause", "else_clause", "fi")),
                   len(children))
        branches.append((self.sequence(children, 1, then), self.sequence(children, then + 1, end)))
        for child in children[end:]:
            inner = list(child.children)
            if child.type == "elif_clause":
                then = next(i for i, c in enumerate(inner) if c.type == "then")
                branches.append((self.sequence(inner, 1, then), self.sequence(inner, then + 1)))
            elif child.type == "else_clause":
                otherwise = self.sequence(inner, 1)
        return If(tuple(branches), otherwise)

    def _while_statement(self, node: Any) -> Command:
        children = list(node.children)
        body = next(child for child in children if child.type == "do_group")
        end = children.index(body)
        return Loop(children[0].type == "until", self.sequence(children, 1, end), self.sequence(body.children, 0))

    def _for_statement(self, node: Any) -> Command:
        children = list(node.children)
        if children[0].type == "select":
            return Unsupported("select loops")
        variable = next(self.text(child) for child in children if child.type == "variable_name")
        body = next(child for child in children if child.type == "do_group")
        has_in = any(child.type == "in" for child in children)
        items = tuple(self.word(child) for child in children if child.type in _WORDS and child.type != "variable_name")
        return For(variable, items if has_in else None, self.sequence(body.children, 0))

    def _c_style_for_statement(self, node: Any) -> Command:
        children = list(node.children)
        opening = next(child for child in children if child.type == "((")
        closing = next(child for child in children if child.type == "))")
        semicolons = [child for child in children if child.type == ";" and opening.end_byte <= child.start_byte
                      and child.end_byte <= closing.start_byte]
        if len(semicolons) != 2:
            return Unsupported("this arithmetic for loop")
        bounds = (opening.end_byte, semicolons[0].start_byte, semicolons[0].end_byte, semicolons[1].start_byte,
                  semicolons[1].end_byte, closing.start_byte)
        body = next((child for child in children if child.type in ("do_group", "compound_statement")), None)
        if body is None:
            return Unsupported("this arithmetic for loop")
        templates = [self.template(node, bounds[i], bounds[i + 1]) for i in (0, 2, 4)]
        return ArithFor(templates[0], templates[1], templates[2], self.sequence(body.children, 0))

    def _case_statement(self, node: Any) -> Command:
        children = list(node.children)
        subject = next(child for child in children[1:] if child.type in _WORDS)
        items: list[tuple[tuple[Word, ...], Seq]] = []
        for item in children:
            if item.type != "case_item":
                continue
            inner = list(item.children)
            close = next(i for i, child in enumerate(inner) if child.type == ")")
            patterns = tuple(self.word(child) for child in inner[:close] if child.type in _WORDS)
            if any(child.type in (";&", ";;&") for child in inner):
                return Unsupported("case fall-through (;& and ;;&)")
            items.append((patterns, self.sequence(inner, close + 1)))
        return Case(self.word(subject), tuple(items))

    def _function_definition(self, node: Any) -> Command:
        children = list(node.children)
        name = next(self.text(child) for child in children if child.type == "word")
        body = [child for child in children if child.is_named and child.type != "word"]
        command = self.command(body[0]) if body else Group(Seq(()), False)
        redirects = [self.redirect(child)[0] for child in body[1:] if child.type in _REDIRECTS]
        return Function(name, Redirected(command, tuple(redirects)) if redirects else command)

    def _test_command(self, node: Any) -> Command:
        children = list(node.children)
        double = children[0].type == "[["
        if children[0].type == "((":
            return Arith(self.template(node, children[0].end_byte, children[-1].start_byte))
        words: list[Word] = []
        for child in children[1:-1]:
            self._test_words(child, words)
        return Test(tuple(words), double)

    def _test_words(self, node: Any, words: list[Word]) -> None:
        if node.type in _WORDS or (not node.is_named and not node.children):
            words.append(self.word(node) if node.is_named else word((Lit(node.type, False),)))
            return
        for child in node.children:
            self._test_words(child, words)

    def _comment(self, node: Any) -> Command:
        return Seq(())

    # -- words ---------------------------------------------------------------------------------
    def word(self, node: Any) -> Word:
        return word(tuple(self.parts(node, quoted=False)))

    def parts(self, node: Any, quoted: bool) -> list[Part]:
        kind = node.type
        if kind in ("word", "number", "extglob_pattern", "regex", "test_operator", "variable_name",
                    "special_variable_name", "brace_expression"):
            return _unescape_word(self.text(node)) if not quoted else [Lit(self.text(node), True)]
        if kind == "raw_string":
            return [Lit(self.text(node)[1:-1], True)]
        if kind == "ansi_c_string":
            return [Lit(_ansi_c(self.text(node)[2:-1]), True)]
        if kind in ("string", "translated_string"):
            return self.string(node)
        if kind == "concatenation":
            return [part for child in node.children for part in self.parts(child, quoted)]
        if kind == "simple_expansion":
            return self.simple_expansion(node, quoted)
        if kind == "expansion":
            return [self.expansion(node, quoted)]
        if kind == "command_substitution":
            return [self.substitution(node, quoted)]
        if kind == "arithmetic_expansion":
            children = list(node.children)
            return [ArithSub(self.template(node, children[0].end_byte, children[-1].start_byte), quoted)]
        if kind == "process_substitution":
            return [Unsupported("process substitution")]
        if not node.is_named:
            return [Lit(self.text(node), quoted)]
        return [Unsupported(_what(kind))]

    def string(self, node: Any) -> list[Part]:
        """A double-quoted string: its text between the quotes, expansions kept."""
        children = list(node.children)
        start = children[0].end_byte if children and children[0].type in ('"', '$"') else node.start_byte
        end = children[-1].start_byte if children and children[-1].type == '"' else node.end_byte
        template = self.template(node, start, end, double_quoted=True)
        parts: list[Part] = [Lit(piece, True) if isinstance(piece, str) else piece for piece in template]
        return parts or [Lit("", True)]

    def simple_expansion(self, node: Any, quoted: bool) -> list[Part]:
        name = self.text(node)[1:]
        if len(name) > 1 and name[0].isdigit():  # `$10` is `$1` then `0` (the grammar reads `10`)
            return [Param(name[0], "", (), quoted), Lit(name[1:], quoted)]
        return [Param(name, "", (), quoted)]

    def expansion(self, node: Any, quoted: bool) -> Part:
        children = list(node.children)[1:-1]  # between ${ and }
        op = ""
        if children and children[0].type == "#" and len(children) >= 2:
            op, children = "len", children[1:]
        elif children and children[0].type == "!":
            return Unsupported("indirect expansion ${!NAME}")
        if not children or children[0].type not in ("variable_name", "special_variable_name"):
            return Unsupported("this parameter expansion" if not children or children[0].type != "subscript"
                               else "arrays")
        name = self.text(children[0])
        rest = children[1:]
        if not rest:
            return Param(name, op, (), quoted)
        if op:
            return Unsupported("this parameter expansion")
        op = rest[0].type
        if op in (":", "^", ",", "@"):
            return Unsupported(f"the ${{NAME{op}…}} expansion")
        args: list[Word] = []
        current: list[Part] = []
        for child in rest[1:]:
            if child.type == "/" and op in ("/", "//", "/#", "/%"):
                args.append(word(tuple(current)))
                current = []
            else:
                current.extend(self.parts(child, quoted=child.type not in ("word", "regex") and quoted))
        args.append(word(tuple(current)))
        return Param(name, op, tuple(args), quoted)

    def substitution(self, node: Any, quoted: bool) -> Part:
        children = list(node.children)
        if children and children[0].type == "`":
            inner = self.slice(children[0].end_byte, children[-1].start_byte)
            try:
                return CmdSub(parse(inner.replace("\\`", "`").replace("\\$", "$").replace("\\\\", "\\")), quoted)
            except ScriptError as error:
                return Unsupported(f"this backquoted command ({error})")
        return CmdSub(self.sequence(children, 1, len(children) - 1 if children and children[-1].type == ")" else None),
                      quoted)

    def template(self, node: Any, start: int, end: int, double_quoted: bool = False, heredoc: bool = False) -> Template:
        """The source between ``start`` and ``end`` with its expansions as parts (text in
        between as strings: backslash escapes processed as inside double quotes)."""
        pieces: list[str | Part] = []
        position = start

        def visit(current: Any) -> None:
            nonlocal position
            for child in current.children:
                if child.end_byte <= start or child.start_byte >= end:
                    continue
                if child.type in _EXPANSIONS:
                    if child.start_byte > position:
                        pieces.append(self._escaped(self.slice(position, child.start_byte), double_quoted or heredoc))
                    if child.type == "simple_expansion":
                        pieces.extend(self.simple_expansion(child, True))
                    else:
                        pieces.extend(self.parts(child, quoted=True))
                    position = child.end_byte
                elif child.children:
                    visit(child)

        visit(node)
        if end > position:
            pieces.append(self._escaped(self.slice(position, end), double_quoted or heredoc))
        return tuple(piece for piece in pieces if piece != "")

    @staticmethod
    def _escaped(text: str, double_quoted: bool) -> str:
        """Backslashes as double quotes treat them: before ``$ ` " \\ newline`` they escape."""
        if not double_quoted or "\\" not in text:
            return text
        out: list[str] = []
        index = 0
        while index < len(text):
            char = text[index]
            if char == "\\" and index + 1 < len(text) and text[index + 1] in _ESCAPES_IN_DOUBLE_QUOTES:
                if text[index + 1] != "\n":
                    out.append(text[index + 1])
                index += 2
                continue
            out.append(char)
            index += 1
        return "".join(out)


def _with_redirects(command: Command | None, extra: list[Word], redirects: list[Redirect]) -> Command:
    """A simple command (none: an empty one) takes the redirections and the words after them
    as its own; any other command is wrapped. (``Any`` on purpose: narrowing or joining the
    ``Command`` union of recursive named tuples costs mypy minutes.)"""
    simple: Any = command
    if simple is None:
        return Simple((), tuple(extra), tuple(redirects))
    if isinstance(simple, Simple):
        return Simple(simple.assigns, simple.words + tuple(extra), simple.redirects + tuple(redirects))
    wrapped: Command = Redirected(simple, tuple(redirects))
    return wrapped


def _piped(command: Command) -> tuple[Command, ...]:
    """The commands a pipeline continues with: a pipeline's own, else the command (``Any``
    as in :func:`_with_redirects`)."""
    pipeline: Any = command
    if isinstance(pipeline, Pipeline):
        commands: tuple[Command, ...] = pipeline.commands
        return commands
    return (command,)


def _with_stderr(command: Command) -> Command:
    """``a |& b``: a's standard error goes down the pipe too (``2>&1``)."""
    return Redirected(command, (Redirect(2, ">&", word((Lit("1", False),))),))


def _strip_tabs(text: str) -> str:
    return "\n".join(line.lstrip("\t") for line in text.split("\n"))


def _what(kind: str) -> str:
    return {"ERROR": "this syntax", "array": "arrays", "subscript": "arrays", "process_substitution":
            "process substitution", "coproc": "coprocesses"}.get(kind, f"'{kind.replace('_', ' ')}'")


def _unescape_word(text: str) -> list[Part]:
    """An unquoted word: ``\\x`` is a quoted ``x``; a ``\\`` before a newline joins lines."""
    if "\\" not in text:
        return [Lit(text, False)]
    parts: list[Part] = []
    plain: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            if plain:
                parts.append(Lit("".join(plain), False))
                plain = []
            if text[index + 1] != "\n":
                parts.append(Lit(text[index + 1], True))
            index += 2
            continue
        plain.append(char)
        index += 1
    if plain:
        parts.append(Lit("".join(plain), False))
    return parts


_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\\": "\\", "'": "'",
         '"': '"', "e": "\x1b", "E": "\x1b", "?": "?"}


def _ansi_c(text: str) -> str:
    """The body of ``$'…'`` with its C escapes (``\\n``, ``\\t``, ``\\xHH``, ``\\NNN``)."""
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char != "\\" or index + 1 >= len(text):
            out.append(char)
            index += 1
            continue
        escaped = text[index + 1]
        if escaped == "x":
            digits = "".join(c for c in text[index + 2:index + 4] if c in "0123456789abcdefABCDEF")
            out.append(chr(int(digits, 16)) if digits else "\\x")
            index += 2 + len(digits)
        elif escaped in "01234567":
            digits = "".join(c for c in text[index + 1:index + 4] if c in "01234567")
            out.append(chr(int(digits, 8)))
            index += 1 + len(digits)
        else:
            out.append(_ANSI.get(escaped, "\\" + escaped))
            index += 2
    return "".join(out)
