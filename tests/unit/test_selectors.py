"""Label and field selectors against apimachinery's own test tables (v0.33)."""

from __future__ import annotations

import pytest

from fakekube.api.machinery.errors import emulating
from fakekube.objects.versions import release

from fakekube.api.machinery.errors import ApiError
from fakekube.api.types import builtin_registry
from fakekube.api.selectors import (
    DOES_NOT_EXIST,
    EQUALS,
    EXISTS,
    GREATER_THAN,
    IN,
    NOT_IN,
    Requirement,
    SelectorError,
    convert_field_selector,
    label_selector_from_object,
    new_requirement,
    object_fields,
    parse_field_selector,
    parse_label_selector,
    selector_from_set,
    selector_to_string,
    supported_fields,
    unsupported_field_error,
)

REGISTRY = builtin_registry()


def rt(group: str, plural: str):
    found = REGISTRY.by_group_resource(group, plural)
    assert found is not None
    return found


def parse_error(text: str) -> str:
    with pytest.raises(ApiError) as info:
        parse_label_selector(text)
    assert info.value.code == 400 and info.value.reason == "BadRequest"
    return info.value.message


# --- TestSelectorParse: good strings restring to themselves minus spaces --------------

@pytest.mark.parametrize("text", ["x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ", "x= ,z= ",
                                  "!x", "x>1", "x>1,z<5"])
def test_good_strings_restring(text):
    assert str(parse_label_selector(text)) == text.replace(" ", "")


@pytest.mark.parametrize("text", ["x=a||y=b", "x==a==b", "!x=a", "x<a"])
def test_bad_strings_rejected(text):
    parse_error(text)


def test_parse_is_deterministic_by_key():
    assert str(parse_label_selector("x=a,a=x")) == str(parse_label_selector("a=x,x=a")) == "a=x,x=a"


# --- TestSelectorMatches ----------------------------------------------------------------

@pytest.mark.parametrize("text,labels", [
    ("", {"x": "y"}),
    ("x=y", {"x": "y"}),
    ("x=y,z=w", {"x": "y", "z": "w"}),
    ("x!=y,z!=w", {"x": "z", "z": "a"}),
    ("notin=in", {"notin": "in"}),
    ("x", {"x": "z"}),
    ("!x", {"y": "z"}),
    ("x>1", {"x": "2"}),
    ("x<1", {"x": "0"}),
    ("foo=bar,baz=blah", {"foo": "bar", "baz": "blah"}),
    ("x in (a,b)", {"x": "b"}),
    ("x notin (a,b)", {}),
    ("x in ()", {"x": ""}),
    ("x<1", {"x": "-5"}),  # label side parses as a signed int64
    ("x>1", {"x": "+5"}),
])
def test_matches(text, labels):
    assert parse_label_selector(text).matches(labels)


@pytest.mark.parametrize("text,labels", [
    ("x=z", {}),
    ("x=y", {"x": "z"}),
    ("x=y,z=w", {"x": "w", "z": "w"}),
    ("x!=y,z!=w", {"x": "z", "z": "w"}),
    ("x", {"y": "z"}),
    ("!x", {"x": "z"}),
    ("x>1", {"x": "0"}),
    ("x<1", {"x": "2"}),
    ("x>1", {"x": "v2"}),
    ("x>1", {}),
    ("foo=bar,foobar=bar,baz=blah", {"foo": "bar", "baz": "blah"}),
    ("x in ()", {"x": "a"}),
    ("x notin (a,b)", {"x": "a"}),
    ("x>1", {"x": "99999999999999999999"}),  # outside int64: ParseInt fails, no match
])
def test_does_not_match(text, labels):
    assert not parse_label_selector(text).matches(labels)


def test_empty_selector_matches_none_labels():
    assert parse_label_selector("").matches(None)
    assert parse_label_selector("  ").empty()


# --- TestSetSelectorParser --------------------------------------------------------------

@pytest.mark.parametrize("text,expected", [
    ("\rx", (Requirement("x", EXISTS),)),
    ("this-is-a-dns.domain.com/key-with-dash", (Requirement("this-is-a-dns.domain.com/key-with-dash", EXISTS),)),
    ("this-is-another-dns.domain.com/key-with-dash in (so,what)",
     (Requirement("this-is-another-dns.domain.com/key-with-dash", IN, ("so", "what")),)),
    ("0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
     (Requirement("0.1.2.domain/99", NOT_IN, ("10.10.100.1", "tick.tack.clock")),)),
    ("foo  in\t (abc)", (Requirement("foo", IN, ("abc",)),)),
    ("x notin\n (abc)", (Requirement("x", NOT_IN, ("abc",)),)),
    ("x  notin\t\t\t(abc,def)", (Requirement("x", NOT_IN, ("abc", "def")),)),
    ("x in (abc,)", (Requirement("x", IN, ("", "abc")),)),
    ("x in ()", (Requirement("x", IN, ("",)),)),
    ("x notin (abc,,def),bar,z in (),w", (
        Requirement("bar", EXISTS), Requirement("w", EXISTS),
        Requirement("x", NOT_IN, ("", "abc", "def")), Requirement("z", IN, ("",)))),
    ("x,y in (a)", (Requirement("x", EXISTS), Requirement("y", IN, ("a",)))),
    ("x=a,y!=b,z in (h,i,j)", (Requirement("x", EQUALS, ("a",)), Requirement("y", "!=", ("b",)),
                              Requirement("z", IN, ("h", "i", "j")))),
    ("x notin ( )", (Requirement("x", NOT_IN, ("",)),)),
    ("x notin (, a)", (Requirement("x", NOT_IN, ("", "a")),)),
    ("a ", (Requirement("a", EXISTS),)),
    ("a in (x,y,notin, z,in)", (Requirement("a", IN, ("in", "notin", "x", "y", "z")),)),
    ("x>1", (Requirement("x", GREATER_THAN, ("1",)),)),
    ("!x", (Requirement("x", DOES_NOT_EXIST),)),
    ("x in (b,a,b)", (Requirement("x", IN, ("a", "b")),)),  # a set: sorted, de-duplicated
])
def test_set_selector_parser(text, expected):
    assert parse_label_selector(text).requirements == expected


@pytest.mark.parametrize("text,message", [
    ("x,,y", "found ',', expected: identifier after ','"),
    (",x,y", "found ',', expected: !, identifier, or 'end of string'"),
    ("x nott in (y)", "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt"),
    ("a in (xyz),", "found '', expected: identifier after ','"),
    ("a in (xyz)b notin ()", "found 'b', expected: ',' or 'end of string'"),
    ("a in (xyz abc)", "unable to parse requirement: found 'abc', expected: ',' or ')'"),
    ("a notin(", "unable to parse requirement: found '', expected: ',', ')' or identifier"),
    ("a (", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"),
    ("(", "found '(', expected: !, identifier, or 'end of string'"),
    ("x==a==b", "found '==', expected: ',' or 'end of string'"),
    ("!x=a", "found '=', expected: ',' or 'end of string'"),
    ("x in a", "unable to parse requirement: found 'a' expected: '('"),
    ("x=(", "unable to parse requirement: found '(', expected: identifier"),
    ("!", "unable to parse requirement: found '', expected: identifier"),
    ("x<-1", "unable to parse requirement: values[0][x]: Invalid value: \"-1\": a valid label must be an empty "
             "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation "
             "is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
    ("x<a", "unable to parse requirement: values[0]: Invalid value: \"a\": "
            "for 'Gt', 'Lt' operators, the value must be an integer"),
])
def test_parse_error_messages(text, message):
    assert parse_error(text) == message


@pytest.mark.parametrize("version,noun", [("1.34", "a qualified name"), ("1.35", "a valid label key"),
                                           ("1.36", "a valid label key")])
def test_invalid_key_message_uses_nil_path(version, noun):
    """The reference (1.36) says "a valid label key"; apimachinery said "a qualified name" up to v0.34."""
    with emulating(release(version)):
        message = parse_error("x/y/z=a")
    assert message == (
        f'unable to parse requirement: <nil>: Invalid value: "x/y/z": {noun} must consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
        "(e.g. 'example.com/MyName')")


def test_invalid_value_message_names_the_key():
    assert parse_error("app=b@d") == (
        'unable to parse requirement: values[0][app]: Invalid value: "b@d": a valid label must be an empty '
        "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation "
        "is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


def test_too_long_value_is_rejected():
    assert parse_error("x=" + "a" * 64).startswith(
        'unable to parse requirement: values[0][x]: Invalid value: "' + "a" * 64 + '": must be no more than 63 bytes')  # 1.35+: the content package counts bytes


# --- TestRequirementConstructor --------------------------------------------------------

@pytest.mark.parametrize("key,op,values,message", [
    ("x1", IN, [], "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty"),
    ("x5", EQUALS, ["bar", "foo"],
     'values: Invalid value: []string{"bar", "foo"}: exact-match compatibility requires one single value'),
    ("x8", EXISTS, ["foo"],
     'values: Invalid value: []string{"foo"}: values set must be empty for exists and does not exist'),
    ("x13", GREATER_THAN, [], "values: Invalid value: []string{}: for 'Gt', 'Lt' operators, exactly one value is required"),
    ("x14", GREATER_THAN, ["bar"], 'values[0]: Invalid value: "bar": for \'Gt\', \'Lt\' operators, the value must be an integer'),
])
def test_requirement_constructor_errors(key, op, values, message):
    with pytest.raises(SelectorError) as info:
        new_requirement(key, op, values)
    assert str(info.value) == message


def test_requirement_constructor_aggregates_several_errors():
    with pytest.raises(SelectorError) as info:
        new_requirement("a/b/c", EQUALS, ["x y"])
    text = str(info.value)
    assert text.startswith('[key: Invalid value: "a/b/c": ') and ', values[0][a/b/c]: Invalid value: "x y": ' in text
    assert text.endswith("]")


def test_requirement_constructor_unsupported_operator():
    with pytest.raises(SelectorError) as info:
        new_requirement("x18", "unsupportedOp", [])
    assert str(info.value).startswith('operator: Unsupported value: "unsupportedOp": supported values: "in", "notin"')


@pytest.mark.parametrize("key,op,values", [("x3", IN, ["foo"]), ("x6", EXISTS, []), ("x7", DOES_NOT_EXIST, []),
                                           ("x11", GREATER_THAN, ["1"]), ("x12", "lt", ["6"])])
def test_requirement_constructor_accepts(key, op, values):
    assert new_requirement(key, op, values).key == key


# --- TestToString ------------------------------------------------------------------------

def test_to_string():
    assert str(parse_label_selector("x in (def,abc),y notin (jkl),z")) == "x in (abc,def),y notin (jkl),z"
    assert str(parse_label_selector("x notin (abc,def),y!=jkl,!z")) == "x notin (abc,def),y!=jkl,!z"
    assert str(parse_label_selector("x==abc,y<8,z notin ()")) == "x==abc,y<8,z notin ()"


# --- metav1.LabelSelector ----------------------------------------------------------------

def test_object_selector_nil_matches_nothing_and_empty_everything():
    assert not label_selector_from_object(None).matches({"a": "b"})
    assert label_selector_from_object({}).matches({"a": "b"})
    assert label_selector_from_object({"matchLabels": {}, "matchExpressions": []}).matches({})


def test_object_selector_match_labels_and_expressions():
    sel = label_selector_from_object({
        "matchLabels": {"app": "web"},
        "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["fe", "be"]},
            {"key": "canary", "operator": "DoesNotExist"},
            {"key": "env", "operator": "NotIn", "values": ["prod"]},
            {"key": "team", "operator": "Exists"},
        ],
    })
    assert sel.matches({"app": "web", "tier": "fe", "team": "x"})
    assert not sel.matches({"app": "web", "tier": "fe", "team": "x", "canary": "1"})
    assert not sel.matches({"app": "web", "tier": "fe", "team": "x", "env": "prod"})
    assert not sel.matches({"app": "db", "tier": "fe", "team": "x"})
    assert str(sel) == "app=web,!canary,env notin (prod),team,tier in (be,fe)"


def test_object_selector_invalid_operator():
    with pytest.raises(SelectorError) as info:
        label_selector_from_object({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})
    assert str(info.value) == '"Gt" is not a valid label selector operator'


def test_object_selector_in_without_values_prints_nil_slice():
    with pytest.raises(SelectorError) as info:
        label_selector_from_object({"matchExpressions": [{"key": "a", "operator": "In"}]})
    assert str(info.value) == "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"


def test_selector_to_string_formats_like_format_label_selector():
    assert selector_to_string({"matchLabels": {"b": "2", "a": "1"}}) == "a=1,b=2"
    assert selector_to_string({}) == "<none>"
    assert selector_to_string(None) == "<none>"
    assert selector_to_string({"matchExpressions": [{"key": "a", "operator": "Bogus"}]}) == "<error>"


def test_selector_from_set():
    sel = selector_from_set({"b": "2", "a": "1"})
    assert str(sel) == "a=1,b=2"
    assert sel.matches({"a": "1", "b": "2", "c": "3"}) and not sel.matches({"a": "1"})
    assert sel.requires_exact_match("a") == "1"


# --- field selectors ----------------------------------------------------------------------

def field_parse_error(text: str) -> str:
    with pytest.raises(ApiError) as info:
        parse_field_selector(text)
    assert info.value.code == 400
    return info.value.message


@pytest.mark.parametrize("text,rendered", [
    ("", ""),
    ("a=b", "a=b"),
    ("a==b", "a=b"),
    ("b!=c,a=b", "a=b,b!=c"),  # terms are sorted
    ("a=", "a="),
    (r"a=b\,c", r"a=b\,c"),
    (r"a=x\=y\\z", r"a=x\=y\\z"),
    ("a=b,", "a=b"),  # empty terms are skipped
])
def test_field_selector_parse_and_string(text, rendered):
    assert str(parse_field_selector(text)) == rendered


def test_field_selector_unescapes_values():
    sel = parse_field_selector(r"metadata.name=a\,b\=c\\d")
    assert sel.requirements[0].value == r"a,b=c\d"
    assert sel.matches({"metadata.name": r"a,b=c\d"})


@pytest.mark.parametrize("text,message", [
    ("a", "invalid selector: 'a'; can't understand 'a'"),
    ("a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"),
    ("a=b=c", "invalid field selector: unescaped character in value: 61"),
    (r"a=\q", r"invalid field selector: invalid escape sequence: \q"),
    ("a=b\\", "invalid field selector: invalid escape sequence: \\"),
])
def test_field_selector_errors(text, message):
    assert field_parse_error(text) == message


def test_field_selector_matching_reads_missing_fields_as_empty():
    assert parse_field_selector("spec.nodeName=").matches({"metadata.name": "x"})
    assert parse_field_selector("status.phase!=Running").matches({"status.phase": "Pending"})
    assert not parse_field_selector("status.phase!=Running,metadata.name=x").matches(
        {"status.phase": "Running", "metadata.name": "x"})


def test_field_selector_fields_lists_each_name_once():
    sel = parse_field_selector("status.phase!=Failed,status.phase!=Succeeded,spec.nodeName=n1")
    assert sel.fields() == ["spec.nodeName", "status.phase"]


def test_field_selector_does_not_trim_whitespace():
    sel = parse_field_selector("a = b")
    assert sel.requirements[0].field == "a " and sel.requirements[0].value == " b"


# --- selectable fields per type --------------------------------------------------------------

POD = {
    "metadata": {"name": "web-1", "namespace": "default"},
    "spec": {"nodeName": "node-a", "restartPolicy": "Always", "schedulerName": "default-scheduler",
             "serviceAccountName": "default", "hostNetwork": True},
    "status": {"phase": "Running", "podIP": "10.0.0.9", "podIPs": [{"ip": "10.0.0.9"}, {"ip": "fd00::9"}],
               "nominatedNodeName": ""},
}


def test_pod_fields():
    assert object_fields(rt("", "pods"), POD) == {
        "metadata.name": "web-1", "metadata.namespace": "default", "spec.nodeName": "node-a",
        "spec.restartPolicy": "Always", "spec.schedulerName": "default-scheduler",
        "spec.serviceAccountName": "default", "spec.hostNetwork": "true", "status.phase": "Running",
        "status.podIP": "10.0.0.9", "status.nominatedNodeName": "",
    }


def test_pod_selector_end_to_end_with_legacy_spec_host():
    pods = rt("", "pods")
    sel = convert_field_selector(pods, parse_field_selector("spec.host=node-a,status.phase=Running"))
    assert str(sel) == "spec.nodeName=node-a,status.phase=Running"
    assert sel.matches(object_fields(pods, POD))


def test_pod_ips_is_accepted_but_never_matches_a_value():
    pods = rt("", "pods")
    sel = convert_field_selector(pods, parse_field_selector("status.podIPs=10.0.0.9"))
    assert not sel.matches(object_fields(pods, POD))


@pytest.mark.parametrize("group,plural,field,message", [
    ("", "pods", "spec.foo", "field label not supported: spec.foo"),
    ("", "nodes", "metadata.namespace", "field label not supported: metadata.namespace"),
    ("", "namespaces", "metadata.namespace", "field label not supported: metadata.namespace"),
    ("", "services", "spec.ports", "field label not supported: spec.ports"),
    ("events.k8s.io", "events", "involvedObject.name", "field label not supported: involvedObject.name"),
    ("batch", "jobs", "status.failed", 'field label "status.failed" not supported for batchv1.Job'),
    ("apps", "replicasets", "status.replicas",
     '"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"'),
    ("", "configmaps", "data", '"data" is not a known field selector: only "metadata.name", "metadata.namespace"'),
])
def test_unsupported_field_messages(group, plural, field, message):
    resource = rt(group, plural)
    with pytest.raises(ApiError) as info:
        convert_field_selector(resource, parse_field_selector(f"{field}=x"))
    assert (info.value.code, info.value.reason, info.value.message) == (400, "BadRequest", message)
    assert unsupported_field_error(resource, field).message == message


def test_supported_fields_per_type():
    assert supported_fields(rt("", "nodes")) == ["metadata.name", "spec.unschedulable"]
    assert "status.replicas" in supported_fields(rt("", "replicationcontrollers"))
    assert supported_fields(rt("batch", "jobs")) == ["metadata.name", "metadata.namespace", "status.successful"]
    assert supported_fields(rt("rbac.authorization.k8s.io", "clusterroles")) == ["metadata.name", "metadata.namespace"]
    assert "regarding.name" in supported_fields(rt("events.k8s.io", "events"))
    assert "reportingComponent" in supported_fields(rt("", "events"))


def test_cluster_scoped_object_has_no_namespace_field():
    node = {"metadata": {"name": "n1"}, "spec": {"unschedulable": True}}
    assert object_fields(rt("", "nodes"), node) == {"metadata.name": "n1", "spec.unschedulable": "true"}
    assert object_fields(rt("", "nodes"), {"metadata": {"name": "n2"}})["spec.unschedulable"] == "false"


def test_scalar_fields_of_other_types():
    assert object_fields(rt("", "replicationcontrollers"), {"metadata": {}, "status": {"replicas": 3}})["status.replicas"] == "3"
    assert object_fields(rt("", "replicationcontrollers"), {"metadata": {}})["status.replicas"] == "0"
    assert object_fields(rt("batch", "jobs"), {"metadata": {}, "status": {"succeeded": 2}})["status.successful"] == "2"
    assert object_fields(rt("", "secrets"), {"metadata": {}, "type": "Opaque"})["type"] == "Opaque"
    assert object_fields(rt("", "namespaces"), {"metadata": {"name": "a"}, "status": {"phase": "Active"}}) == {
        "metadata.name": "a", "status.phase": "Active"}
    svc = object_fields(rt("", "services"), {"metadata": {}, "spec": {"clusterIP": "None", "type": "ClusterIP"}})
    assert (svc["spec.clusterIP"], svc["spec.type"]) == ("None", "ClusterIP")


def test_core_event_fields_source_falls_back_to_reporting_component():
    event = {"metadata": {"name": "e", "namespace": "ns"},
             "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": "ns", "uid": "u1"},
             "reason": "Scheduled", "type": "Normal", "reportingComponent": "default-scheduler", "source": {}}
    fields = object_fields(rt("", "events"), event)
    assert fields["involvedObject.kind"] == "Pod" and fields["involvedObject.uid"] == "u1"
    assert fields["involvedObject.fieldPath"] == ""
    assert fields["source"] == "default-scheduler" and fields["reportingComponent"] == "default-scheduler"
    event["source"] = {"component": "kubelet"}
    assert object_fields(rt("", "events"), event)["source"] == "kubelet"


def test_events_v1_fields_use_regarding_names():
    event = {"metadata": {"name": "e", "namespace": "ns"}, "regarding": {"kind": "Pod", "name": "web-1"},
             "reason": "Killing", "type": "Normal", "reportingController": "kubelet"}
    fields = object_fields(rt("events.k8s.io", "events"), event)
    assert fields["regarding.name"] == "web-1" and fields["reportingController"] == "kubelet"
    assert fields["source"] == "kubelet"
    sel = convert_field_selector(rt("events.k8s.io", "events"),
                                 parse_field_selector("regarding.kind=Pod,regarding.name=web-1"))
    assert sel.matches(fields)


def test_strategy_declared_fields_are_selectable():
    from fakekube.api.registry import ResourceType, Strategy

    class WidgetStrategy(Strategy):
        def field_selectors(self):
            return {"spec.color": lambda obj: obj["spec"]["color"]}

    widgets = ResourceType("example.com", "v1", "Widget", "widgets", True, strategy=WidgetStrategy())
    assert supported_fields(widgets) == ["metadata.name", "metadata.namespace", "spec.color"]
    fields = object_fields(widgets, {"metadata": {"name": "w"}, "spec": {"color": "red"}})
    assert convert_field_selector(widgets, parse_field_selector("spec.color=red")).matches(fields)
