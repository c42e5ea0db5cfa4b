"""The per-request warning recorder (fakekube.api.machinery.warning) against the rules of
upstream's ``endpoints/filters/warning.go``: dedup, the 4,096-character budget, the replay
cut to 256 characters once past it, texts no header may carry."""

from __future__ import annotations

from fakekube.api.machinery.warning import ITEM_RUNES, TOTAL_RUNES, WarningRecorder, header, warning_headers


def test_identical_and_empty_warnings_are_written_once_or_never() -> None:
    assert warning_headers(["a", "", "b", "a"] * 10_000) == ['299 - "a"', '299 - "b"']


def test_the_header_escapes_quotes_and_backslashes_and_carries_utf8() -> None:
    assert header('say "hi" \\o/') == '299 - "say \\"hi\\" \\\\o/"'
    assert header("☃").encode("latin-1").decode("utf-8") == '299 - "☃"'


def test_past_the_budget_every_warning_is_cut_and_later_ones_dropped() -> None:
    texts = [f"{i:02d}" + "x" * 298 for i in range(20)]
    # 13 × 300 = 3,900 fit; the 14th does not: all 14 again at 256 each (3,584), then two
    # more until 4,096 are written (4,096 exactly: the next is dropped).
    assert warning_headers(texts) == [header(text[:ITEM_RUNES]) for text in texts[:16]]


def test_the_budget_counts_characters_not_bytes() -> None:
    snowmen = ["☃" * 2048, "!" + "☃" * 2048]  # 4,097 characters (12,292 bytes): one too many
    assert warning_headers(snowmen) == [header(text[:ITEM_RUNES]) for text in snowmen]
    recorder = WarningRecorder()
    recorder.add("☃" * TOTAL_RUNES)
    assert recorder.headers == [header("☃" * TOTAL_RUNES)]  # 4,096 characters fit exactly
    recorder.add("more")
    assert recorder.headers == [header("☃" * ITEM_RUNES), header("more")]


def test_control_characters_are_recorded_but_never_written() -> None:
    recorder = WarningRecorder()
    recorder.add_all(["line\r\nX-Injected: yes", "tab\there", "\x85next-line", "fine"])
    assert recorder.headers == ['299 - "fine"']


def test_a_lone_surrogate_is_no_header() -> None:
    assert warning_headers(["bad \ud800", "good"]) == ['299 - "good"']
