"""Query parameters as upstream's parameter codec reads them.

One reading for everyone: the authorizer (which decides ``list`` versus ``watch``) and
the handlers (which serve one or the other) must never disagree about what a request
asked for, or a token allowed only to watch could be handed a list.
"""

from __future__ import annotations

#: Each letter of "false" with everything Go's Unicode simple folding equates it with
#: (``strings.EqualFold("falſe", "false")`` is true: U+017F LATIN SMALL LETTER LONG S folds to s;
#: U+212A KELVIN SIGN folds to k, which "false" lacks).
_FALSE_FOLDS = ("fF", "aA", "lL", "sS\u017f", "eE")


def query_bool(value: str | None) -> bool:
    """A bool query parameter as upstream's parameter codec reads its first value
    (``Convert_Slice_string_To_bool``): absent, ``0`` or ``false`` under Go's
    ``strings.EqualFold`` is false; anything else — ``yes``, ``2``, even empty — is true."""
    return value is not None and value != "0" and not _equal_fold_false(value)


def _equal_fold_false(value: str) -> bool:
    return len(value) == len(_FALSE_FOLDS) and all(c in fold for c, fold in zip(value, _FALSE_FOLDS))
