"""``Warning`` response headers, recorded as upstream's per-request recorder records them
(k8s.io/apiserver ``endpoints/filters/warning.go``).

Every warning a request earns — a deprecated type, unknown fields, admission webhooks and
policies — goes through one :class:`WarningRecorder`, which keeps the response's headers
bounded however many warnings arrive:

- an empty text is dropped, and a text already recorded is dropped (the first wins);
- while the texts fit in :data:`TOTAL_RUNES` characters in all, each is written whole;
- the first text that does not fit switches to truncating: every text recorded so far is
  written again cut to :data:`ITEM_RUNES` characters, and so is each later one, until the
  written characters reach :data:`TOTAL_RUNES`; later texts are dropped.

A text that cannot be a header (control characters) is recorded, so it counts as seen, but
never written, as ``net.NewWarningHeader`` refuses it. Characters are Unicode code points,
as Go's runes.
"""

from __future__ import annotations

import unicodedata

#: The written characters past which warnings are truncated (``truncateAtTotalRunes``).
TOTAL_RUNES = 4 * 1024
#: What each warning is cut to once truncating (``truncateItemRunes``).
ITEM_RUNES = 256
#: The code upstream's apiserver warns with (``299 Miscellaneous persistent warning``).
WARNING_CODE = 299


def header(text: str) -> str:
    """A ``Warning`` header value as upstream writes it: ``299 - "text"`` with ``"`` and
    ``\\`` escaped. Go writes the text's UTF-8 bytes; a WSGI header value is a latin-1
    string, so the bytes travel as the characters that encode to them."""
    quoted = '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return quoted if quoted.isascii() else quoted.encode("utf-8").decode("latin-1")


def can_be_header(text: str) -> bool:
    """``net.NewWarningHeader``'s rule for a text: valid UTF-8 (no lone surrogate) and no
    control characters (Go's ``unicode.IsControl``: C0, DEL and C1)."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return False
    if text.isprintable():
        return True
    return not any(unicodedata.category(char) == "Cc" for char in text)


class WarningRecorder:
    """One request's warnings: :meth:`add` each text as it is earned, :attr:`headers` are
    what the response carries. Bounded: at most :data:`TOTAL_RUNES` + 1 texts are kept."""

    __slots__ = ("_seen", "_ordered", "_written", "_truncating", "headers")

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._ordered: list[str] = []
        self._written = 0
        self._truncating = False
        #: The ``Warning`` header values, in order.
        self.headers: list[str] = []

    def add(self, text: str) -> None:
        """Record one warning (``AddWarning``)."""
        if not text or (self._truncating and self._written >= TOTAL_RUNES) or text in self._seen:
            return
        self._seen.add(text)
        self._ordered.append(text)
        shown = text[:ITEM_RUNES] if self._truncating else text
        if not can_be_header(shown):
            return
        if self._truncating or self._written + len(shown) <= TOTAL_RUNES:
            self._written += len(shown)
            self.headers.append(header(shown))
            return
        self._truncate()

    def add_all(self, texts: list[str]) -> None:
        for text in texts:
            self.add(text)

    def _truncate(self) -> None:
        """Past the budget: write every text recorded so far again, each cut short."""
        self._truncating = True
        self._written = 0
        self.headers = []
        for text in self._ordered:
            shown = text[:ITEM_RUNES]
            if can_be_header(shown):
                self._written += len(shown)
                self.headers.append(header(shown))


def warning_headers(texts: list[str]) -> list[str]:
    """The headers one request's warnings become, in the order they were earned."""
    recorder = WarningRecorder()
    recorder.add_all(texts)
    return recorder.headers
