"""Name checks and ObjectMeta validation, with cases from apimachinery v0.33's tests."""

from __future__ import annotations

import pytest

from fakekube.api.machinery.errors import emulating
from fakekube.objects.versions import release
from fakekube.api.machinery.errors import FIELD_FORBIDDEN, FIELD_INVALID, FIELD_REQUIRED, FIELD_TOO_LONG
from fakekube.api.registry import ResourceType
from fakekube.api.types import builtin_registry
from fakekube.api.machinery.validation import (
    go_quote,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    is_valid_path_segment_name,
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
    name_is_path_segment,
    reset_server_fields_for_update,
    validate_object_meta,
    validate_object_meta_update,
)

SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MESSAGE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
DNS1035_MESSAGE = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")


# --- pkg/util/validation tables -------------------------------------------------------------

DNS1123_LABEL_GOOD = ["a", "ab", "abc", "a1", "a-1", "a--1--2--b", "0", "01", "012", "1a", "1-a", "1--a--b--2",
                      "a" * 63]
DNS1123_LABEL_BAD = ["", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1", "_", "a_", "_a", "a_b",
                     "1_", "_1", "1_2", ".", "a.", ".a", "a.b", "1.", ".1", "1.2", " ", "a ", " a", "a b", "1 ",
                     " 1", "1 2", "a" * 64, "a\n"]


@pytest.mark.parametrize("value", DNS1123_LABEL_GOOD)
def test_dns1123_label_good(value):
    assert is_dns1123_label(value) == []


@pytest.mark.parametrize("value", DNS1123_LABEL_BAD)
def test_dns1123_label_bad(value):
    assert is_dns1123_label(value)


def test_dns1123_label_messages():
    assert is_dns1123_label("Foo") == [LABEL_MESSAGE]
    assert is_dns1123_label("a.b") == ["must not contain dots"]
    assert is_dns1123_label("a" * 64) == ["must be no more than 63 characters"]


DNS1123_SUBDOMAIN_GOOD = ["a", "ab", "abc", "a1", "a-1", "a--1--2--b", "0", "01", "012", "1a", "1-a", "1--a--b--2",
                          "a.a", "ab.a", "abc.a", "a1.a", "a-1.a", "a--1--2--b.a", "a.1", "ab.1", "abc.1", "a1.1",
                          "a-1.1", "a--1--2--b.1", "0.a", "01.a", "012.a", "1a.a", "1-a.a", "0.1", "01.1", "012.1",
                          "1a.1", "1-a.1", "1--a--b--2.1", "a.b.c.d.e", "aa.bb.cc.dd.ee", "1.2.3.4.5",
                          "11.22.33.44.55", "a" * 253]
DNS1123_SUBDOMAIN_BAD = ["", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1", "_", "a_", "_a",
                         "a_b", "1_", "_1", "1_2", ".", "a.", ".a", "a..b", "1.", ".1", "1..2", " ", "a ", " a",
                         "a b", "1 ", " 1", "1 2", "A.a", "aB.a", "ab.A", "A1.a", "a1.A", "A.1", "aB.1", "A1.1",
                         "1A.1", "0.A", "01.A", "012.A", "1A.a", "1a.A", "A.B.C.D.E", "AA.BB.CC.DD.EE",
                         "a.B.c.d.e", "aa.bB.cc.dd.ee", "a@b", "a,b", "a_b", "a;b", "a:b", "a%b", "a?b", "a$b",
                         "a" * 254]


@pytest.mark.parametrize("value", DNS1123_SUBDOMAIN_GOOD)
def test_dns1123_subdomain_good(value):
    assert is_dns1123_subdomain(value) == []


@pytest.mark.parametrize("value", DNS1123_SUBDOMAIN_BAD)
def test_dns1123_subdomain_bad(value):
    assert is_dns1123_subdomain(value)


def test_dns1123_subdomain_messages():
    assert is_dns1123_subdomain("Foo") == [SUBDOMAIN_MESSAGE]
    assert is_dns1123_subdomain("a" * 254) == ["must be no more than 253 characters"]
    assert is_dns1123_subdomain("A" * 254) == ["must be no more than 253 characters", SUBDOMAIN_MESSAGE]


@pytest.mark.parametrize("value", ["a", "ab", "abc", "a1", "a-1", "a--1--2--b", "a" * 63])
def test_dns1035_label_good(value):
    assert is_dns1035_label(value) == []


@pytest.mark.parametrize("value", ["0", "01", "012", "1a", "1-a", "1--a--b--2", "", "A", "ABC", "aBc", "A1", "A-1",
                                   "1-A", "-", "a-", "-a", "1-", "-1", "_", "a_", "_a", "a_b", "1_", "_1", "1_2",
                                   ".", "a.", ".a", "a.b", "1.", ".1", "1.2", " ", "a ", " a", "a b", "1 ", " 1",
                                   "1 2", "a" * 64])
def test_dns1035_label_bad(value):
    assert is_dns1035_label(value)


def test_dns1035_label_message():
    assert is_dns1035_label("1abc") == [DNS1035_MESSAGE]


@pytest.mark.parametrize("value", ["simple", "now-with-dashes", "1-starts-with-num", "1234", "simple/simple",
                                   "now-with-dashes/simple", "now-with-dashes/now-with-dashes",
                                   "now.with.dots/simple", "now-with.dashes-and.dots/simple", "1-num.2-num/3-num",
                                   "1234/5678", "1.2.3.4/5678", "Uppercase_Is_OK_123",
                                   "example.com/Uppercase_Is_OK_123", "requests.storage-foo", "a" * 63,
                                   "a" * 253 + "/" + "b" * 63])
def test_qualified_name_good(value):
    assert is_qualified_name(value) == []


@pytest.mark.parametrize("value", ["nospecialchars%^=@", "cantendwithadash-", "-cantstartwithadash-",
                                   "only/one/slash", "Example.com/abc", "example_com/abc", "example.com/",
                                   "/simple", "a" * 64, "a" * 254 + "/abc"])
def test_qualified_name_bad(value):
    assert is_qualified_name(value)


def test_qualified_name_messages():
    assert is_qualified_name("/simple") == ["prefix part must be non-empty"]
    assert is_qualified_name("example.com/") == [
        "name part must be non-empty",
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]
    assert is_qualified_name("Example.com/abc") == ["prefix part " + SUBDOMAIN_MESSAGE]
    assert is_qualified_name("a" * 64) == ["name part must be no more than 63 bytes"]  # 1.35+ (1.33: characters)


@pytest.mark.parametrize("value", ["simple", "now-with-dashes", "1-starts-with-num", "end-with-num-1", "1234",
                                   "a" * 63, ""])
def test_label_value_good(value):
    assert is_valid_label_value(value) == []


@pytest.mark.parametrize("value", ["nospecialchars%^=@", "Tama-nui-te-rā.is.Māori.sun", "\\backslashes\\are\\bad",
                                   "-starts-with-dash", "ends-with-dash-", ".starts.with.dot", "ends.with.dot.",
                                   "a" * 64])
def test_label_value_bad(value):
    assert is_valid_label_value(value)


def test_length_limits_count_utf8_bytes():
    # 32 two-byte characters are 64 bytes: too long for Go's len(), although only 32 runes.
    assert "must be no more than 63 bytes" in is_valid_label_value("é" * 32)


@pytest.mark.parametrize("value,errors", [
    ("system:controller:foo", []),
    (".", ["may not be '.'"]),
    ("..", ["may not be '..'"]),
    ("a/b%c", ["may not contain '/'", "may not contain '%'"]),
])
def test_path_segment_name(value, errors):
    assert is_valid_path_segment_name(value) == errors


# --- name rules -------------------------------------------------------------------------------

def test_generate_name_prefix_may_end_in_dash():
    assert name_is_dns_subdomain("web-", True) == []
    assert name_is_dns_label("web-", True) == []
    assert name_is_dns_subdomain("web-", False)
    # Upstream masks the last two characters, so the one before the dash is never checked.
    assert name_is_dns_label("web_-", True) == []
    assert name_is_dns1035_label("-", True)


def test_path_segment_rule_on_prefix_only_checks_characters():
    assert name_is_path_segment("..", True) == []
    assert name_is_path_segment("a/", True) == ["may not contain '/'"]


@pytest.mark.parametrize("group,plural,name,ok", [
    ("", "services", "1web", True),  # a DNS-1123 label from 1.36 (RelaxedServiceNameValidation; the reference)
    ("", "services", "web.a", False),
    ("", "pods", "web.a", True),  # subdomain allows dots
    ("", "namespaces", "team.a", False),  # DNS label
    ("apps", "statefulsets", "db.a", False),  # DNS label since 1.27
    ("apps", "deployments", "db.a", True),
    ("rbac.authorization.k8s.io", "clusterroles", "system:controller:job-controller", True),
    ("rbac.authorization.k8s.io", "roles", "a/b", False),
])
def test_name_rules(group, plural, name, ok):
    assert (builtin_registry()[group, plural].name_rule(name) == []) == ok


def test_service_names_are_dns1035_labels_up_to_1_35():
    services = builtin_registry(release=release("1.35"))["", "services"]
    assert services.name_rule("1web") and services.name_rule("web") == []


def test_undeclared_name_rule_is_dns_subdomain():
    widgets = ResourceType("example.com", "v1", "Widget", "widgets", True)
    assert widgets.name_rule("UPPER") != []
    assert widgets.name_rule("a.b") == []


# --- ValidateObjectMeta -------------------------------------------------------------------------

def messages(errors):
    return [e.message() for e in errors]


def test_valid_meta_has_no_errors():
    meta = {"name": "web", "namespace": "default", "labels": {"app": "web", "example.com/tier": ""},
            "annotations": {"Example.com/Note": "anything at all"}, "finalizers": ["example.com/cleanup"],
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "u1",
                                 "controller": True}]}
    assert validate_object_meta(meta, True, name_is_dns_subdomain) == []


def test_name_or_generate_name_required():
    errors = validate_object_meta({"namespace": "default"}, True, name_is_dns_subdomain)
    assert messages(errors) == ["metadata.name: Required value: name or generateName is required"]
    assert errors[0].type == FIELD_REQUIRED


def test_invalid_name_and_generate_name():
    errors = validate_object_meta({"name": "Web", "generateName": "Web-", "namespace": "default"}, True,
                                  name_is_dns_subdomain)
    assert messages(errors) == [f'metadata.generateName: Invalid value: "Web-": {SUBDOMAIN_MESSAGE}',
                                f'metadata.name: Invalid value: "Web": {SUBDOMAIN_MESSAGE}']


def test_namespace_required_forbidden_and_checked():
    assert messages(validate_object_meta({"name": "a"}, True, name_is_dns_subdomain)) == [
        "metadata.namespace: Required value"]
    errors = validate_object_meta({"name": "a", "namespace": "x"}, False, name_is_dns_subdomain)
    assert messages(errors) == ["metadata.namespace: Forbidden: not allowed on this type"]
    assert errors[0].type == FIELD_FORBIDDEN
    assert messages(validate_object_meta({"name": "a", "namespace": "a.b"}, True, name_is_dns_subdomain)) == [
        'metadata.namespace: Invalid value: "a.b": must not contain dots']


def test_negative_generation():
    errors = validate_object_meta({"name": "a", "generation": -1}, False, name_is_dns_subdomain)
    assert messages(errors) == ["metadata.generation: Invalid value: -1: must be greater than or equal to 0"]


def test_label_key_and_value_errors_use_the_labels_path():
    errors = validate_object_meta({"name": "a", "labels": {"bad key": "ok", "k": "-bad"}}, False, name_is_dns_subdomain)
    assert [e.path for e in errors] == ["metadata.labels", "metadata.labels"]
    assert errors[0].message().startswith('metadata.labels: Invalid value: "bad key": name part must consist of')
    assert errors[1].message().startswith('metadata.labels: Invalid value: "-bad": a valid label must be')
    assert all(e.type == FIELD_INVALID for e in errors)


def test_annotation_keys_are_checked_case_insensitively_but_reported_as_written():
    errors = validate_object_meta({"name": "a", "annotations": {"a/b/c": "x"}}, False, name_is_dns_subdomain)
    assert errors[0].message().startswith('metadata.annotations: Invalid value: "a/b/c": a valid label key must')
    with emulating(release("1.34")):  # "a qualified name" up to 1.34
        assert errors[0].message().startswith('metadata.annotations: Invalid value: "a/b/c": a valid label key must')
        errors = validate_object_meta({"name": "a", "annotations": {"a/b/c": "x"}}, False, name_is_dns_subdomain)
    assert errors[0].message().startswith('metadata.annotations: Invalid value: "a/b/c": a qualified name must')


def test_annotations_total_size_limit():
    at_limit = {"k": "v" * (256 * 1024 - 1)}
    assert validate_object_meta({"name": "a", "annotations": at_limit}, False, name_is_dns_subdomain) == []
    over = {"k": "v" * (256 * 1024)}
    errors = validate_object_meta({"name": "a", "annotations": over}, False, name_is_dns_subdomain)
    assert messages(errors) == ["metadata.annotations: Too long: may not be more than 262144 bytes"]
    assert errors[0].type == FIELD_TOO_LONG


def test_finalizer_names_and_conflict():
    errors = validate_object_meta({"name": "a", "finalizers": ["bad/name/x", "orphan", "foregroundDeletion"]},
                                  False, name_is_dns_subdomain)
    assert errors[0].message().startswith('metadata.finalizers: Invalid value: "bad/name/x": a valid label key')
    assert errors[1].message() == (  # the reference, 1.36
        'metadata.finalizers: Invalid value: ["bad/name/x","orphan","foregroundDeletion"]: '
        "finalizer orphan and foregroundDeletion cannot be both set")
    with emulating(release("1.33")):
        assert errors[1].message() == (
            'metadata.finalizers: Invalid value: []string{"bad/name/x", "orphan", "foregroundDeletion"}: '
            "finalizer orphan and foregroundDeletion cannot be both set")


def test_owner_reference_required_parts():
    """The reference (1.36) says ``must not be empty``; up to 1.33 the message named the field again."""
    refs = [{"apiVersion": "apps/", "kind": "", "name": "", "uid": ""}]
    errors = validate_object_meta({"name": "a", "ownerReferences": refs}, False, name_is_dns_subdomain)
    assert messages(errors) == [
        'metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty',
        'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
        'metadata.ownerReferences.name: Invalid value: "": must not be empty',
        'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
    ]
    with emulating(release("1.33")):
        errors = validate_object_meta({"name": "a", "ownerReferences": refs}, False, name_is_dns_subdomain)
    assert messages(errors) == [
        'metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty',
        'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty',
        'metadata.ownerReferences.name: Invalid value: "": name must not be empty',
        'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty',
    ]


def test_owner_reference_event_is_banned():
    refs = [{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"}]
    errors = validate_object_meta({"name": "a", "ownerReferences": refs}, False, name_is_dns_subdomain)
    assert len(errors) == 1 and errors[0].path == "metadata.ownerReferences"
    assert errors[0].message().endswith(": /v1, Kind=Event is disallowed from being an owner")


def test_only_one_controller_owner():
    refs = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "a", "uid": "1", "controller": True},
            {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "b", "uid": "2", "controller": True},
            {"apiVersion": "v1", "kind": "Node", "name": "c", "uid": "3", "controller": False}]
    errors = validate_object_meta({"name": "a", "ownerReferences": refs}, False, name_is_dns_subdomain)
    assert len(errors) == 1
    assert errors[0].message().endswith(
        ': Only one reference can have Controller set to true. Found "true" in references for '
        "ReplicaSet/a and DaemonSet/b")


def test_managed_fields_entries():
    entries = [{"manager": "kubectl", "operation": "Patch", "fieldsType": "FieldsV2"}]
    errors = validate_object_meta({"name": "a", "managedFields": entries}, False, name_is_dns_subdomain)
    assert messages(errors) == [
        'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`',
        'metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
    ]


# --- ValidateObjectMetaUpdate ------------------------------------------------------------------

OLD = {"name": "a", "namespace": "ns", "uid": "u1", "resourceVersion": "5", "generation": 2,
       "creationTimestamp": "2024-01-02T03:04:05Z"}


def updated(**changes):
    meta = dict(OLD)
    meta.update(changes)
    return meta


def test_unchanged_update_is_valid():
    assert validate_object_meta_update(updated(labels={"a": "b"}), OLD) == []


@pytest.mark.parametrize("key,value,message", [
    ("name", "b", 'metadata.name: Invalid value: "b": field is immutable'),
    ("namespace", "other", 'metadata.namespace: Invalid value: "other": field is immutable'),
    ("uid", "u2", 'metadata.uid: Invalid value: "u2": field is immutable'),
    ("creationTimestamp", "2025-01-01T00:00:00Z",
     "metadata.creationTimestamp: Invalid value: 2025-01-01 00:00:00 +0000 UTC: field is immutable"),
    ("deletionTimestamp", "2025-01-01T00:00:00Z",
     "metadata.deletionTimestamp: Invalid value: 2025-01-01 00:00:00 +0000 UTC: field is immutable"),
    ("deletionGracePeriodSeconds", 30, "metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable"),
    ("resourceVersion", "", 'metadata.resourceVersion: Invalid value: "": must be specified for an update'),
    ("generation", 1, "metadata.generation: Invalid value: 1: must not be decremented"),
])
def test_update_errors(key, value, message):
    assert messages(validate_object_meta_update(updated(**{key: value}), OLD)) == [message]


def test_removing_a_timestamp_shows_null():
    new = updated()
    del new["creationTimestamp"]
    assert messages(validate_object_meta_update(new, OLD)) == [
        "metadata.creationTimestamp: Invalid value: null: field is immutable"]


def test_no_new_finalizers_while_deleting():
    old = dict(OLD, deletionTimestamp="2024-02-01T00:00:00Z", finalizers=["a.io/x"])
    new = dict(old, finalizers=["a.io/x", "b.io/z", "b.io/y"])
    assert messages(validate_object_meta_update(new, old)) == [
        'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, '
        'found new finalizers []string{"b.io/y", "b.io/z"}']
    assert validate_object_meta_update(dict(old, finalizers=[]), old) == []


def test_update_rechecks_labels():
    errors = validate_object_meta_update(updated(labels={"a": "bad value"}), OLD)
    assert [e.path for e in errors] == ["metadata.labels"]


def test_reset_server_fields_for_update_restores_what_clients_cannot_change():
    new = {"name": "a", "namespace": "ns", "resourceVersion": "5", "generation": 9}
    old = dict(OLD, deletionTimestamp="2024-02-01T00:00:00Z", deletionGracePeriodSeconds=30)
    reset_server_fields_for_update(new, old)
    assert (new["uid"], new["generation"], new["creationTimestamp"]) == ("u1", 2, "2024-01-02T03:04:05Z")
    assert (new["deletionTimestamp"], new["deletionGracePeriodSeconds"]) == ("2024-02-01T00:00:00Z", 30)
    assert validate_object_meta_update(new, old) == []


def test_go_quote_escapes_like_strconv_quote():
    assert go_quote('a"b\\c\n\x01é') == '"a\\"b\\\\c\\n\\x01é"'
