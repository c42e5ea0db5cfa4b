"""``nslookup``, ``wget`` and ``curl`` in a simulated container: cluster DNS and HTTP to pods.

Names resolve as CoreDNS answers them in a kind cluster (kubelet/network.py reads Services,
Endpoints and Pods): ``SERVICE[.NAMESPACE[.svc[.cluster.local]]]`` to its ClusterIP (a headless
Service to its ready endpoints' addresses), ``A-B-C-D.NAMESPACE.pod.cluster.local`` to that pod
IP, ``HOSTNAME.SUBDOMAIN.NAMESPACE.svc.cluster.local`` to a pod of a headless Service; short
names through the search list of the container's ``/etc/resolv.conf``. Other names do not
resolve (a simulated cluster reaches no network outside it).

HTTP goes where a client in the cluster reaches (objects/serviceroutes.py: a Service's port to
its ``targetPort`` on a ready endpoint, a pod IP to that pod) and is answered by that pod's HTTP
behaviour (kubelet/httpmodel.py: declared routes, the image's own server, a declared port's
empty 200); a port nothing listens on refuses the connection. ``https`` is not simulated.
"""

from __future__ import annotations

import re
from typing import Protocol, Sequence
from urllib.parse import urlsplit

from fakekube.kubelet.coreutils import command
from fakekube.kubelet.fs import FsError
from fakekube.kubelet.httpmodel import HttpAnswer
from fakekube.kubelet.shell import Process
from fakekube.objects.serviceroutes import Unreachable


class Network(Protocol):
    """What a container's network clients reach (kubelet/clusternet.py builds one per exec or run)."""

    dns_server: str

    def resolve(self, name: str, search: Sequence[str], ndots: int) -> tuple[str, list[str]] | None:
        """(the fully qualified name found, its addresses), or None (NXDOMAIN)."""

    def request(self, address: str, port: int, method: str, target: str) -> HttpAnswer | Unreachable:
        """What ``address:port`` answers, or why nothing does."""


def _network(p: Process) -> Network | None:
    toolbox = getattr(p.run, "toolbox", None)
    return getattr(toolbox, "network", None)


def resolver_settings(p: Process) -> tuple[list[str], int, str]:
    """(search domains, ndots, nameserver) from the container's /etc/resolv.conf."""
    search: list[str] = []
    ndots, server = 1, ""
    try:
        text = p.fs.read("/etc/resolv.conf").decode("utf-8", "replace")
    except FsError:
        return search, ndots, server
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0] == "search":
            search = words[1:]
        elif words[0] == "nameserver" and not server and len(words) > 1:
            server = words[1]
        elif words[0] == "options":
            for option in words[1:]:
                if option.startswith("ndots:") and option[6:].isdigit():
                    ndots = int(option[6:])
    return search, ndots, server


def lookup(p: Process, name: str) -> tuple[str, list[str]] | None:
    if re.fullmatch(r"\d+\.\d+\.\d+\.\d+", name):
        return name, [name]
    if name in ("localhost", "localhost.localdomain"):
        return name, ["127.0.0.1"]
    network = _network(p)
    if network is None:
        return None
    search, ndots, _ = resolver_settings(p)
    return network.resolve(name, search, ndots)


@command("nslookup")
def _nslookup(p: Process) -> int:
    names = [arg for arg in p.args if not arg.startswith("-")]
    if not names:
        return p.fail("fakekube does not simulate interactive nslookup", 1)
    name = names[0]
    _, _, server = resolver_settings(p)
    network = _network(p)
    server = server or (network.dns_server if network is not None else "")
    p.out(f"Server:\t\t{server}\nAddress:\t{server}:53\n\n")
    found = lookup(p, name)
    if found is None:
        p.out(f"** server can't find {name}: NXDOMAIN\n\n")
        return 1
    fqdn, addresses = found
    for address in addresses:
        p.out(f"Name:\t{fqdn}\nAddress: {address}\n")
    p.out("\n")
    return 0


def _fetch(p: Process, url: str, method: str) -> tuple[str, str, int, HttpAnswer | None, str]:
    """(host, address, port, answer, problem): problem is "resolve", "refused", "timeout", "tls" or ""."""
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme == "https":
        return host, "", parts.port or 443, None, "tls"
    port = parts.port or 80
    found = lookup(p, host)
    if found is None:
        return host, "", port, None, "resolve"
    address = found[1][0] if found[1] else ""
    network = _network(p)
    if network is None:
        return host, address, port, None, "refused"
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    answer = network.request(address, port, method, target)
    if isinstance(answer, Unreachable):
        return host, address, port, None, "timeout" if "timed out" in answer.message else "refused"
    return host, address, port, answer, ""


@command("wget")
def _wget(p: Process) -> int:
    args = list(p.args)
    output: str | None = None
    quiet = spider = headers = False
    urls: list[str] = []
    while args:
        arg = args.pop(0)
        if arg in ("-O", "--output-document") and args:
            output = args.pop(0)
        elif arg.startswith("-O") and len(arg) > 2:
            output = arg[2:]
        elif arg in ("-T", "--timeout", "-t", "--tries", "-U", "--header", "--user-agent") and args:
            args.pop(0)
        elif arg == "--spider":
            spider = True
        elif arg in ("-S", "--server-response"):
            headers = True
        elif arg.startswith("-") and len(arg) > 1 and not arg.startswith("--"):
            letters = arg[1:]
            quiet = quiet or "q" in letters.split("O")[0]
            if "O" in letters:
                attached = letters[letters.index("O") + 1:]
                output = attached if attached else (args.pop(0) if args else None)
        elif arg.startswith("--"):
            quiet = quiet or arg == "--quiet"
        else:
            urls.append(arg)
    if not urls:
        return p.fail("missing URL")
    status = 0
    for url in urls:
        host, address, port, answer, problem = _fetch(p, url, "HEAD" if spider else "GET")
        if problem == "resolve":
            return p.fail(f"bad address '{host}'")
        if problem == "tls":
            return p.fail("fakekube does not simulate https")
        if not quiet:
            p.err(f"Connecting to {host}{f':{port}' if port != 80 else ''} ({address}:{port})\n")
        if problem == "timeout":
            return p.fail("download timed out")
        if answer is None:
            return p.fail(f"can't connect to remote host ({address}): Connection refused")
        if headers:
            p.err(f"  HTTP/1.1 {answer.status} {answer.reason}\n" +
                  "".join(f"  {name}: {value}\n" for name, value in answer.headers))
        if answer.status >= 400:
            return p.fail(f"server returned error: HTTP/1.1 {answer.status} {answer.reason}")
        if spider:
            if not quiet:
                p.err("remote file exists\n")
            continue
        target = output or (urlsplit(url if "://" in url else "http://" + url).path.rsplit("/", 1)[-1] or "index.html")
        if target == "-":
            p.out(answer.body)
            continue
        try:
            p.fs.write(target, answer.body)
        except FsError as error:
            return p.fail(f"can't open '{target}': {error}")
        if not quiet:
            p.err(f"saving to '{target}'\n{target:<20} 100% |********************************| "
                  f"{len(answer.body):>5}  0:00:00 ETA\n'{target}' saved\n")
    return status


@command("curl")
def _curl(p: Process) -> int:
    args = list(p.args)
    method: str | None = None
    output: str | None = None
    silent = fail = head = include = show_error = False
    write_out: str | None = None
    urls: list[str] = []
    while args:
        arg = args.pop(0)
        if arg in ("-X", "--request") and args:
            method = args.pop(0)
        elif arg in ("-o", "--output") and args:
            output = args.pop(0)
        elif arg in ("-w", "--write-out") and args:
            write_out = args.pop(0)
        elif arg in ("-d", "--data", "--data-raw", "--data-binary") and args:
            args.pop(0)
            method = method or "POST"
        elif arg in ("-H", "--header", "-m", "--max-time", "--connect-timeout", "--retry", "-u", "--user",
                     "-A", "--user-agent", "--cacert", "-e", "--retry-delay", "--resolve") and args:
            args.pop(0)
        elif arg in ("-I", "--head"):
            head = True
        elif arg in ("-i", "--include"):
            include = True
        elif arg in ("-f", "--fail"):
            fail = True
        elif arg in ("-s", "--silent"):
            silent = True
        elif arg in ("-S", "--show-error"):
            show_error = True
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            letters = arg[1:]
            silent, fail = silent or "s" in letters, fail or "f" in letters
            show_error, head, include = show_error or "S" in letters, head or "I" in letters, include or "i" in letters
            if letters[-1] in "owXdH" and args:
                value = args.pop(0)
                if letters[-1] == "o":
                    output = value
                elif letters[-1] == "w":
                    write_out = value
                elif letters[-1] == "X":
                    method = value
        elif arg.startswith("--"):
            continue
        else:
            urls.append(arg)
    if not urls:
        p.err("curl: try 'curl --help' for more information\n")
        return 2
    quiet_errors = silent and not show_error
    for url in urls:
        host, address, port, answer, problem = _fetch(p, url, method or ("HEAD" if head else "GET"))
        if problem == "resolve":
            if not quiet_errors:
                p.err(f"curl: (6) Could not resolve host: {host}\n")
            _write_out(p, write_out, 0)
            return 6
        if problem == "tls":
            if not quiet_errors:
                p.err("curl: (35) fakekube does not simulate https\n")
            return 35
        if problem == "timeout":
            if not quiet_errors:
                p.err(f"curl: (28) Failed to connect to {host} port {port}: Connection timed out\n")
            _write_out(p, write_out, 0)
            return 28
        if answer is None:
            if not quiet_errors:
                p.err(f"curl: (7) Failed to connect to {host} port {port} after 0 ms: Couldn't connect to server\n")
            _write_out(p, write_out, 0)
            return 7
        if fail and answer.status >= 400:
            if not quiet_errors:
                p.err(f"curl: (22) The requested URL returned error: {answer.status}\n")
            _write_out(p, write_out, answer.status)
            return 22
        header_text = f"HTTP/1.1 {answer.status} {answer.reason}\r\n" + "".join(
            f"{name}: {value}\r\n" for name, value in answer.headers) + "\r\n"
        data = (header_text.encode() if head or include else b"") + (b"" if head else answer.body)
        if output is not None and output != "-":
            try:
                p.fs.write(output, data)
            except FsError as error:
                p.err(f"curl: (23) Failure writing output to destination: {error}\n")
                return 23
        else:
            p.out(data)
        _write_out(p, write_out, answer.status)
    return 0


def _write_out(p: Process, template: str | None, status: int) -> None:
    if template is None:
        return
    text = template.replace("%{http_code}", f"{status:03d}").replace("%{response_code}", f"{status:03d}")
    text = text.replace("\\n", "\n")
    p.out(text)
