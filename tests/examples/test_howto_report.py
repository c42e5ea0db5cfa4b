"""README.md's "When a test fails": a deliberately failing node-failure story, run in a nested
pytest; its fakekube report section is, line for line, the page's example (report_example.txt),
and the timeline it names is written.

docs/timeline.png is that timeline as Debian's chromium draws it (a docs asset, not a test
dependency); to make it again, run this story (or this file with ``--basetemp``) and::

    chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
      --disable-component-update --disable-sync --user-data-dir=$(mktemp -d) \
      --screenshot=docs/timeline.png --window-size=1200,330 file://$PWD/.fakekube/timelines/<page>.html
"""

from __future__ import annotations

import pytest

from tests.examples.docs_blocks import region

STORY = '''
import pytest

WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
       "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}
BIG = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big"},
       "spec": {"containers": [{"name": "big", "image": "nginx",
                                "resources": {"requests": {"cpu": "64"}}}]}}

# docs:begin README.md#failure-story
@pytest.mark.fakekube(nodes=2, seed=7)
def test_web_survives_a_node_failure(fakekube):
    fakekube.create(WEB)      # a Deployment of 3 nginx replicas
    fakekube.create(BIG)      # a pod that asks for more CPU than a node has
    fakekube.advance(30)
    fakekube.fail_node("node-1")
    fakekube.advance(420)     # Unknown after 50 s, evicted 300 s later
    pods = fakekube.list("v1", "Pod", label_selector="app=web")
    assert all(p["spec"]["nodeName"] == "node-2" for p in pods)   # fails: see the report
# docs:end
'''


def test_a_failing_story_explains_itself(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_story=STORY)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if line.strip("-= ") == "fakekube") + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("=" * 10))
    assert "\n".join(lines[start:end]) == region("README.md", "failure-report").text
    assert (pytester.path / ".fakekube" / "timelines" / "test_story.py_test_web_survives_a_node_failure.html").exists()
