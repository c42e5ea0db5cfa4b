# docs/index.md's build command; tests/examples/test_docs_site.py runs it (into a temporary directory).
# docs:begin docs/index.md#build
mkdocs build --strict --site-dir /tmp/fakekube-site
# docs:end
