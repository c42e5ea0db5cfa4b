"""The differential conformance suite: scripted request sequences (``tests/conformance/scenarios/``)
run against a real kube-apiserver to record golden exchanges, and against fakekube to replay them.

The parts, each one idea (docs/conformance.md says how to record and replay):

- :mod:`.scenario` — the scenario files: steps, templates, captures, macros.
- :mod:`.client` — the HTTP(S) client both sides use (bearer tokens, watch streams).
- :mod:`.normalize` — masking of volatile values (uids, resourceVersions, times, names, IPs, JWTs, …).
- :mod:`.webhook` — the HTTPS admission webhook the scenarios register; it records what it is sent.
- :mod:`.runner` — runs one scenario against one server and returns its normalized exchanges.
- :mod:`.golden` — golden files, the comparison and the ignore lists.
- ``record.py`` — the recorder's command line.
"""
