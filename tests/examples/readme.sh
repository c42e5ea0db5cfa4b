# README.md's "Run it" and "Run the tests" command lines. test_readme_new_user.py runs the first
# two on a fresh clone, as written (serve in the background until its banner); .ci/run runs
# the third, verbatim (test_readme_new_user.py checks that it does).
# docs:begin README.md#run
python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[client]' && fakekube serve --nodes 3 --kubeconfig /tmp/fakekube.kubeconfig
# docs:end

# docs:begin README.md#kubectl
kubectl --kubeconfig /tmp/fakekube.kubeconfig get nodes -o wide
# docs:end

# docs:begin README.md#run-the-tests
python3 -m venv .venv && . .venv/bin/activate && pip install -q -e '.[test]' && python -m pytest -n auto
# docs:end
