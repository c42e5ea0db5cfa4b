"""kubelet/execsession.py: how an exec with stdin open reads it, decided from its command alone."""

from __future__ import annotations

import pytest

from fakekube.kubelet.execsession import mode_of


@pytest.mark.parametrize(("argv", "mode"), [
    (["sh"], "shell"), (["cat"], "cat"), (["cat", "/etc/hosts"], "none"), (["wc", "-l"], "eof"),
    (["tar", "xmf", "-", "-C", "/"], "tar"),
    # sh -c with one plain command reads stdin as that command
    (["/bin/sh", "-c", "cat"], "cat"), (["sh", "-ec", "exec tar xf - -C /tmp"], "tar"), (["sh", "-c", "sh"], "eof"),
    # a script none of whose commands reads stdin runs at once (lightkube always opens stdin)
    (["/bin/sh", "-c", "ls /"], "none"), (["sh", "-c", 'printf %s "$TARGET_CONTAINER"'], "none"),
    (["sh", "-c", "for i in $(seq 1 3); do date; done"], "none"), (["sh", "-c", "echo -n x | gzip"], "none"),
    (["sh", "-c", "wc -l < /etc/hosts"], "none"), (["sh", "-c", "sleep 1 &"], "none"),
    # a script that may read stdin waits for its end
    (["sh", "-c", "cat > /tmp/x"], "eof"), (["sh", "-c", "while read l; do echo $l; done"], "eof"),
    (["sh", "-c", "x=$(cat); echo $x"], "eof"), (["sh", "-c", "f() { cat; }; f"], "eof"), (["sh", "-c", "$CMD"], "eof"),
    (["sh", "-c", "if true; then wc -l; fi"], "eof"), (["sh", "-c", "if then"], "eof"),
])
def test_how_an_exec_reads_its_stdin(argv: list[str], mode: str) -> None:
    assert mode_of(argv) == mode
