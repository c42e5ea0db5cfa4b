"""kubelet/printf.py: printf as POSIX sh and busybox print it."""

from __future__ import annotations

import pytest

from fakekube.kubelet.printf import Printed, printf


@pytest.mark.parametrize(("args", "out"), [
    (["%s\\n", "a", "b"], "a\nb\n"),                        # the format is reused while arguments remain
    (["%5.2f|%-4s|%x|%X|%o\\n", "3.14159", "ab", "255", "255", "8"], " 3.14|ab  |ff|FF|10\n"),
    (["%%d %03d %+d\\n", "7", "7"], "%d 007 +7\n"),
    (["%b|%s", "a\\tb", "a\\tb"], "a\tb|a\\tb"),             # only %b and the format unescape
    (["%c%c\\n", "hello", "w"], "hw\n"),
    (["%s-%s\\n", "only"], "only-\n"),                       # missing arguments are empty
    (["\\0101\\x"], "A\\x"),                                 # octal escape; an unknown escape stays
    (["%d\\n", "'A"], "65\n"),                               # a quoted character is its code
    (["%d %d\\n", "0x10", "010"], "16 8\n"),
])
def test_formats(args: list[str], out: str) -> None:
    assert printf(args) == Printed(out, "", 0)


def test_an_invalid_number_prints_zero_and_fails() -> None:
    assert printf(["%d\\n", "z"]) == Printed("0\n", "printf: invalid number 'z'\n", 1)
    assert printf([]).exit_code == 2
