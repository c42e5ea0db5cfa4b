"""The CEL wrapper: Kubernetes rules compile and evaluate with cel-go's wording."""

from __future__ import annotations

import pytest

from fakekube.api.wire import cel

SELF = ("self", "oldSelf")


def run(source: str, **activation: object) -> object:
    return cel.compile(source, SELF).evaluate(activation)


@pytest.mark.parametrize(("source", "value", "expected"), [
    ("self.replicas <= self.maxReplicas", {"replicas": 3, "maxReplicas": 5}, True),
    ("has(self.foo)", {"bar": 1}, False),
    ("size(self.name) < 3", {"name": "abc"}, False),
    ("self.items.all(x, x > 0) && self.items.exists_one(x, x == 2)", {"items": [1, 2]}, True),
    ("self.items.map(x, x * 2) == [2, 4]", {"items": [1, 2]}, True),
    ("self.name.lowerAscii().startsWith('ab')", {"name": "ABC"}, True),
    ("self.name.split('-').join('+') == 'a+b'", {"name": "a-b"}, True),
    ("self.l.isSorted() && self.l.sum() == 6 && self.l.indexOf(2) == 1", {"l": [1, 2, 3]}, True),
    ("self.name.find('[0-9]+') == '42' && self.name.findAll('[a-z]').size() == 2", {"name": "ab42"}, True),
    ("quantity(self.mem).isGreaterThan(quantity('1Mi'))", {"mem": "1Gi"}, True),
    ("quantity('1500m').isInteger()", {}, False),
    ("isQuantity('1Gi') && !isQuantity('1GG')", {}, True),
    ("cidr('10.0.0.0/8').containsIP(ip('10.1.1.1')) && ip('::1').family() == 6", {}, True),
    ("isIP('10.0.0.1') && !isIP('10.0.0') && isCIDR('fd00::/64')", {}, True),
    ("url('https://example.com:8443/x?a=1').getHost() == 'example.com:8443'", {}, True),
    ("isURL('https://example.com') && url('https://example.com/p').getEscapedPath() == '/p'", {}, True),
])
def test_kubernetes_rules_evaluate(source: str, value: object, expected: object) -> None:
    assert run(source, self=value) == expected


def test_a_transition_rule_references_old_self() -> None:
    assert cel.compile("self == oldSelf", SELF).references("oldSelf")
    assert not cel.compile("self.all(x, x > 0)", SELF).references("oldSelf")


def test_syntax_errors_read_as_cel_go_prints_them() -> None:
    with pytest.raises(cel.CompileError) as caught:
        cel.compile("self.a +", SELF)
    assert str(caught.value).startswith("ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>'")
    assert str(caught.value).endswith("\n | self.a +\n | ........^")


def test_undeclared_names_and_functions_do_not_compile() -> None:
    with pytest.raises(cel.CompileError) as caught:
        cel.compile("object.spec == 1", SELF)
    assert str(caught.value) == ("ERROR: <input>:1:1: undeclared reference to 'object' (in container '')\n"
                                 " | object.spec == 1\n | ^")
    with pytest.raises(cel.CompileError, match="undeclared reference to 'frobnicate'"):
        cel.compile("self.frobnicate()", SELF)
    assert cel.compile("object.spec == 1", ("object",)).evaluate({"object": {"spec": 1}}) is True


@pytest.mark.parametrize(("source", "message"), [
    ("self.missing == 1", "no such key: missing"),
    ("1 / self.zero == 1", "division by zero"),
    ("self.name + 1 == 2", "no such overload"),
    ("[1][self.zero + 3] == 1", "index out of bounds: 3"),
])
def test_evaluation_errors(source: str, message: str) -> None:
    with pytest.raises(cel.EvaluationError) as caught:
        run(source, self={"zero": 0, "name": "a"})
    assert str(caught.value) == message


@pytest.mark.parametrize(("source", "expected"), [
    ("math.greatest(1, 2) == 2 && sets.contains([1, 2], [1])", True),
    ("lists.range(3) == [0, 1, 2] && base64.encode(b'a') == 'YQ=='", True),
    ("optional.of(1).orValue(2) == 1 && !optional.none().hasValue()", True),
    ("!format.dns1123Label().validate('abc').hasValue()", True),
    ("format.named('uri').hasValue() && !format.named('nope').hasValue()", True),
    ("format.dns1123Label().validate('A_b').value()",
     ["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
      "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]),
])
def test_namespaced_libraries_and_optionals(source: str, expected: object) -> None:
    assert run(source, self={}) == expected


def test_an_optional_variable() -> None:
    program = cel.compile("!oldSelf.hasValue() || self >= oldSelf.value()", SELF)
    assert program.evaluate({"self": 1, "oldSelf": cel.optional_none()}) is True
    assert program.evaluate({"self": 1, "oldSelf": cel.optional_of(2)}) is False
