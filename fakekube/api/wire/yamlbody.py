"""YAML request bodies read as sigs.k8s.io/yaml reads them (``yaml.YAMLToJSON`` then
JSON), within go-yaml's limits and with its error wording.

Its own module so PyYAML (about 5 % of the package's import, most of it compiling its
resolver patterns) loads with the first YAML body rather than with the package.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from fakekube.api.machinery import errors
from fakekube.api.machinery.jsonutil import MAX_NESTING_DEPTH
from fakekube.api.wire.decoding import MAX_EXPANDED_BYTES, SyntaxFailure


class _StringTimestampLoader(yaml.SafeLoader):
    """YAML as sigs.k8s.io/yaml reads it: timestamps stay strings (they are strings in JSON)."""


#: go-yaml v2's booleans (resolve.go): YAML 1.1's words, ``y``/``n`` among them (PyYAML's
#: SafeLoader reads those two as strings).
_GO_YAML_BOOL = re.compile(r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$")
_BOOL_TAG = "tag:yaml.org,2002:bool"

_StringTimestampLoader.yaml_implicit_resolvers = {
    first: [(tag, _GO_YAML_BOOL if tag == _BOOL_TAG else regexp) for tag, regexp in resolvers
            if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_StringTimestampLoader.bool_values = {**yaml.SafeLoader.bool_values, "y": True, "n": False}


def parse_yaml(raw: bytes, max_expanded_bytes: int = MAX_EXPANDED_BYTES) -> Any:
    """``yaml.YAMLToJSON`` then JSON: the first document only (go-yaml reads no further),
    map keys as strings, as in the JSON upstream derives.

    Bounded as go-yaml bounds it: nesting past :data:`MAX_NESTING_DEPTH` and go-yaml's
    "excessive aliasing" ratio are SyntaxFailures (400); aliases that would expand past
    ``max_expanded_bytes`` of JSON (the body limit, 3 MiB by default) are a 413, since the
    expansion is a body past the limit. Nothing is expanded before it is measured.
    """
    try:
        loader = _BoundedYamlLoader(raw)  # its reader checks the first characters at once
    except yaml.YAMLError as exc:
        raise SyntaxFailure(_yaml_error_text(exc, raw)) from None
    try:
        node = loader.get_node() if loader.check_node() else None
        if node is None:
            return None
        _check_expansion(node, loader.document_anchors, max_expanded_bytes)
        value = loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise SyntaxFailure(_yaml_error_text(exc, raw)) from None
    finally:
        loader.dispose()
    return _json_keys(value)


class _BoundedYamlLoader(_StringTimestampLoader):
    """Composes at most :data:`MAX_NESTING_DEPTH` nested collections (PyYAML's composer
    recurses; go-yaml's scanner stops at 10,000 flow or indent levels) and keeps the
    document's anchors for :func:`_check_expansion`."""

    def __init__(self, stream: bytes) -> None:
        super().__init__(stream)
        self._depth = 0
        self.document_anchors: dict[str, yaml.Node] = {}

    def scan_flow_scalar_non_spaces(self, double: bool, start_mark: Any) -> Any:
        """PyYAML's run of a quoted scalar, refusing the escapes go-yaml refuses."""
        mark = self.get_mark()
        try:
            chunks = super().scan_flow_scalar_non_spaces(double, start_mark)
        except ValueError:
            raise _YamlLimit(INVALID_ESCAPE, mark) from None
        if double and any(_has_surrogate(chunk) for chunk in chunks):
            raise _YamlLimit(INVALID_ESCAPE, mark)
        return chunks

    def compose_document(self) -> Any:
        """PyYAML's, keeping the anchors it would forget (to name a recursive one)."""
        self.get_event()  # DocumentStartEvent
        node = self.compose_node(None, None)  # type: ignore[arg-type]  # PyYAML's own call
        self.get_event()  # DocumentEndEvent
        self.document_anchors, self.anchors = self.anchors, {}
        return node

    def compose_sequence_node(self, anchor: Any) -> Any:
        self._enter()
        try:
            return super().compose_sequence_node(anchor)
        finally:
            self._depth -= 1

    def compose_mapping_node(self, anchor: Any) -> Any:
        self._enter()
        try:
            return super().compose_mapping_node(anchor)
        finally:
            self._depth -= 1

    def _enter(self) -> None:
        self._depth += 1
        if self._depth > MAX_NESTING_DEPTH:
            raise _YamlLimit(f"exceeded max depth of {MAX_NESTING_DEPTH}", self.peek_event().start_mark)


#: go-yaml's scanner error for a ``\\u``/``\\U`` escape naming a surrogate or a code point past
#: U+10FFFF (PyYAML would build the surrogate, or fail with a bare ``ValueError``).
INVALID_ESCAPE = "found invalid Unicode character escape code"


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= char <= "\udfff" for char in text)


class _YamlLimit(yaml.YAMLError):
    """A go-yaml limit, reported as go-yaml words it (``yaml: line N: <problem>``)."""

    def __init__(self, problem: str, mark: Any = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = mark


#: go-yaml's alias budget (yaml.v2 ``decode.go``): past 100 alias-expanded nodes and
#: 1,000 decoded ones, at most 99 % of the decodes may come from aliases below 400,000
#: decodes, falling to 10 % at 4,000,000.
_ALIAS_RATIO_LOW = 400_000
_ALIAS_RATIO_HIGH = 4_000_000


def _allowed_alias_ratio(decodes: int) -> float:
    if decodes <= _ALIAS_RATIO_LOW:
        return 0.99
    if decodes >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decodes - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)


def _check_expansion(root: yaml.Node, anchors: dict[str, yaml.Node], max_bytes: int) -> None:
    """Walk the document as go-yaml's decoder would, aliases expanded, counting instead
    of building: go-yaml's "excessive aliasing" rule, its recursive-anchor error, the
    nesting limit on the expanded tree, and the JSON bytes it would make.

    PyYAML's composer shares one node for an anchor and its aliases, so a node met a
    second time is an alias. Stops at the first limit crossed, so its cost is bounded
    by the budget it enforces (go-yaml allows about 400,000 alias-driven decodes).
    """
    names = {id(node): name for name, node in anchors.items()}
    seen: set[int] = set()
    decodes, aliased, size = 1, 0, 0  # the document node counts, as in go-yaml
    # (node, depth, alias depth, ids of the anchors being expanded around it)
    stack: list[tuple[yaml.Node, int, int, frozenset[int]]] = [(root, 0, 0, frozenset())]
    while stack:
        node, depth, alias_depth, expanding = stack.pop()
        if id(node) in seen:  # an alias: go-yaml counts the alias node, then its target
            if id(node) in expanding:
                raise _YamlLimit(f"anchor '{names.get(id(node), '')}' value contains itself")
            decodes += 1
            aliased += alias_depth > 0
            expanding = expanding | {id(node)}
            alias_depth += 1
        elif alias_depth == 0:
            seen.add(id(node))
        decodes += 1
        aliased += alias_depth > 0
        if aliased > 100 and decodes > 1000 and aliased / decodes > _allowed_alias_ratio(decodes):
            raise _YamlLimit("document contains excessive aliasing")
        if isinstance(node, yaml.ScalarNode):
            size += len(node.value) + 3
        else:
            depth += 1
            if depth > MAX_NESTING_DEPTH:
                raise _YamlLimit(f"exceeded max depth of {MAX_NESTING_DEPTH}", node.start_mark)
            size += 2
            children = node.value if isinstance(node, yaml.SequenceNode) else [n for pair in node.value for n in pair]
            stack.extend((child, depth, alias_depth, expanding) for child in reversed(children))
        if size > max_bytes:
            raise errors.request_entity_too_large(f"limit is {max_bytes}")


def _yaml_error_text(exc: yaml.YAMLError, raw: bytes) -> str:
    if isinstance(exc, yaml.reader.ReaderError):  # go-yaml's reader words these
        if exc.encoding == "unicode":  # PyYAML's check of printable characters
            return "yaml: control characters are not allowed"
        return "yaml: invalid leading UTF-8 octet"
    if isinstance(exc, (yaml.scanner.ScannerError, yaml.parser.ParserError)):
        worded = _libyaml_error_text(raw)
        if worded is not None:
            return worded
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is not None:
        return f"yaml: line {mark.line + 1}: {problem}"
    return f"yaml: {problem}"


def _libyaml_error_text(raw: bytes) -> str | None:
    """A syntax error in go-yaml's words: go-yaml is a port of libyaml, whose problems and
    marks PyYAML's pure parser words otherwise, so the events are read again with libyaml
    (iteratively: nothing is composed) and the error is placed as go-yaml's ``fail`` places
    it (a parser error's 0-based problem line, a scanner error's one more, else the
    context's; no line when that is 0). None without libyaml, or when it finds no error."""
    loader_class = getattr(yaml, "CSafeLoader", None)
    if loader_class is None:
        return None
    try:
        for _ in yaml.parse(raw, Loader=loader_class):
            pass
    except yaml.MarkedYAMLError as exc:
        problem_line = exc.problem_mark.line if exc.problem_mark is not None else 0
        context_line = exc.context_mark.line if exc.context_mark is not None else 0
        line = problem_line + (1 if isinstance(exc, yaml.scanner.ScannerError) else 0) if problem_line \
            else context_line
        where = f"line {line}: " if line else ""
        return f"yaml: {where}{exc.problem or 'unknown problem parsing YAML content'}"
    except yaml.YAMLError:
        return None
    return None


def _json_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {_key_text(k): _json_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_keys(v) for v in value]
    if isinstance(value, float) and value != value:  # .nan has no JSON form
        return None
    return value


def _key_text(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    return str(key)
