"""resource.Quantity parsing with upstream's suffixes and rounding."""

from fractions import Fraction

import pytest

from fakekube.objects import canonical_quantity, int_value, milli_value, parse_quantity


@pytest.mark.parametrize("text,value", [
    ("0", Fraction(0)),
    ("1", Fraction(1)),
    ("100m", Fraction(1, 10)),
    ("1.5", Fraction(3, 2)),
    (".5", Fraction(1, 2)),
    ("1.", Fraction(1)),
    ("+2", Fraction(2)),
    ("-2", Fraction(-2)),
    ("1n", Fraction(1, 10**9)),
    ("1u", Fraction(1, 10**6)),
    ("1k", Fraction(1000)),
    ("1M", Fraction(10**6)),
    ("1G", Fraction(10**9)),
    ("1T", Fraction(10**12)),
    ("1P", Fraction(10**15)),
    ("1E", Fraction(10**18)),
    ("1Ki", Fraction(1024)),
    ("1Mi", Fraction(2**20)),
    ("1.5Gi", Fraction(3 * 2**29)),
    ("1Ti", Fraction(2**40)),
    ("1Pi", Fraction(2**50)),
    ("1Ei", Fraction(2**60)),
    ("1e3", Fraction(1000)),
    ("1E3", Fraction(1000)),
    ("5e-3", Fraction(5, 1000)),
    ("12E+2", Fraction(1200)),
])
def test_parse(text, value):
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["", "abc", "1K", "1mi", "1 Gi", "1.2.3", "Gi", "--1", "1e", "1Kii", " 1"])
def test_parse_rejects(text):
    with pytest.raises(ValueError, match="quantities must match the regular expression"):
        parse_quantity(text)


def test_numbers_pass_through():
    assert parse_quantity(2) == 2
    assert parse_quantity(0.5) == Fraction(1, 2)
    with pytest.raises(ValueError):
        parse_quantity(True)


def test_rounding_is_up_away_from_zero():
    assert milli_value("100m") == 100
    assert milli_value("0.1") == 100
    assert milli_value("1n") == 1
    assert milli_value("2") == 2000
    assert int_value("1Ki") == 1024
    assert int_value("100m") == 1
    assert int_value("-100m") == -1
    assert int_value("1.5") == 2


@pytest.mark.parametrize("value, written", [
    # Each checked against kube-apiserver 1.36 as a RuntimeClass's overhead (canonical form
    # alone: node/v1 defaulting rounds nothing): the quantity sent, then as answered.
    ("1000m", "1"), ("1024Mi", "1Gi"), (0.5, "500m"), (1000, "1k"), ("2000m", "2"), ("1.5", "1500m"),
    ("1536Mi", "1536Mi"), ("1.5Gi", "1536Mi"), ("0.5Ki", "512"), ("1024", "1024"), ("2e3", "2e3"),
    ("1.5e3", "1500"), ("5e-1", "500e-3"), ("0", "0"), ("0.0", "0"), ("1e-10", "1e-9"),
    ("8Ei", "9223372036854775807"), (" 1 ", "1"),
])
def test_canonical_quantity_is_what_marshal_json_writes(value, written):
    assert canonical_quantity(value) == written


def test_canonical_quantity_refuses_what_does_not_parse():
    with pytest.raises(ValueError, match="quantities must match the regular expression"):
        canonical_quantity("abc")
    with pytest.raises(ValueError):
        canonical_quantity(True)


@pytest.mark.parametrize("value, written", [
    # kube-apiserver 1.36, a pod's cpu limit: core/v1 defaulting rounds ResourceLists up to milli-units.
    ("1e-9", "1e-3"), ("2e-10", "1e-3"), ("1.0000000001", "1001m"), ("0.0000000001", "1m"), ("1n", "1m"),
    ("1.5n", "1m"), ("12e-5", "1e-3"), ("1000m", "1"), ("1024Mi", "1Gi"), (0.5, "500m"),
])
def test_a_resource_list_quantity_is_rounded_up_to_milli_units(value, written):
    assert canonical_quantity(value, round_up_to_milli=True) == written
