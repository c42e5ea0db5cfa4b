"""A container's root filesystem: its image's base layout and the files the kubelet writes into it.

The image's family decides the layout and what it has (docs/behaviour.md has the table):

=============  =========================================================  ===========================
family         images                                                     has
=============  =========================================================  ===========================
busybox        ``busybox``                                                busybox's applets (no bash,
                                                                          no curl)
alpine         ``alpine``, any tag with ``alpine`` (``nginx:1.27-alpine``) busybox + apk (no bash, no
                                                                          curl)
debian         everything else (most official images are Debian-based:    coreutils, bash, curl
               ``nginx``, ``python``, ``redis``, ``postgres``, ``node``…)
ubuntu         ``ubuntu``                                                 coreutils, bash
rhel           ``fedora``, ``centos``, ``rockylinux``, ``almalinux``,     coreutils, bash, curl
               ``redhat/ubi*``, ``oraclelinux``, ``amazonlinux``
distroless     ``gcr.io/distroless/*``, ``registry.k8s.io/pause`` and the  nothing: no shell, no
               control-plane images (``kube-*``, ``etcd``, ``coredns``)    coreutils
=============  =========================================================  ===========================

Whether a command the model does not know is *missing* (``sh: X: not found``) or the image's own
software (a program hands over to it) also follows: base images (busybox, alpine, debian,
ubuntu, rhel ``:tag``s of those names, distroless) have nothing else; any other image is an
application whose own commands are not known.

The kubelet's files, from the pod (upstream's ``kubelet_pods.go``/``dns.go``): ``/etc/hostname``;
``/etc/hosts`` (the kubelet-managed hosts file, with the pod's ``hostAliases``);
``/etc/resolv.conf`` from ``dnsPolicy``/``dnsConfig`` and the cluster DNS (kind: nameserver
10.96.0.10, search ``<ns>.svc.cluster.local svc.cluster.local cluster.local``,
``options ndots:5``); ``/proc/1/cmdline`` (the container's argv). Base files date from the
image's build (:data:`IMAGE_BUILT_S`).
"""

from __future__ import annotations

import functools
import marshal
import posixpath
from typing import Any, Mapping, NamedTuple

from fakekube.kubelet.fs import DIR, FILE, LINK, MAX_SYMLINKS, Entry, Store, new_store, normalize, split, store_get
from fakekube.objects import serviceroutes

#: When the base layouts' files were written (2024-10-01T00:00:00Z): an image's build time.
IMAGE_BUILT_S = 1727740800.0
#: The cluster DNS Service (kind's kube-dns: the service CIDR's tenth address) and domain.
CLUSTER_DNS = "10.96.0.10"
CLUSTER_DOMAIN = serviceroutes.CLUSTER_DOMAIN
#: What ``dnsPolicy: Default`` gives (the node's resolver in kind: Docker's embedded DNS).
NODE_RESOLV_CONF = "nameserver 172.18.0.1\noptions ndots:0\n"

_DISTROLESS = ("gcr.io/distroless/", "registry.k8s.io/pause", "k8s.gcr.io/pause", "registry.k8s.io/kube-",
               "registry.k8s.io/etcd", "registry.k8s.io/coredns", "docker.io/kindest/kindnetd",
               "docker.io/kindest/local-path", "registry.k8s.io/metrics-server", "gcr.io/google-containers/pause",
               "chainguard/static", "cgr.dev/chainguard/static")
_RHEL = ("fedora", "centos", "rockylinux", "almalinux", "redhat/ubi", "registry.access.redhat.com/ubi",
         "oraclelinux", "amazonlinux", "openjdk")
_BASE_NAMES = {"busybox", "alpine", "debian", "ubuntu", "fedora", "centos", "rockylinux", "almalinux",
               "oraclelinux", "amazonlinux"}


class Family(NamedTuple):
    name: str
    #: Commands this family lacks ("*": everything).
    missing: frozenset[str]
    bin_dir: str
    #: A base image: commands the model does not know are missing, not the image's software.
    base: bool
    os_release: str | None
    shell: str


_OS_RELEASE = {
    "alpine": 'NAME="Alpine Linux"\nID=alpine\nVERSION_ID=3.20.3\nPRETTY_NAME="Alpine Linux v3.20"\n'
              'HOME_URL="https://alpinelinux.org/"\nBUG_REPORT_URL="https://gitlab.alpinelinux.org/alpine/aports/-/issues"\n',
    "debian": 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\n'
              'VERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\nHOME_URL="https://www.debian.org/"\n'
              'SUPPORT_URL="https://www.debian.org/support"\nBUG_REPORT_URL="https://bugs.debian.org/"\n',
    "ubuntu": 'PRETTY_NAME="Ubuntu 24.04.1 LTS"\nNAME="Ubuntu"\nVERSION_ID="24.04"\n'
              'VERSION="24.04.1 LTS (Noble Numbat)"\nVERSION_CODENAME=noble\nID=ubuntu\nID_LIKE=debian\n'
              'HOME_URL="https://www.ubuntu.com/"\nSUPPORT_URL="https://help.ubuntu.com/"\n'
              'BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"\n'
              'PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"\n'
              'UBUNTU_CODENAME=noble\nLOGO=ubuntu-logo\n',
    "rhel": 'NAME="Red Hat Enterprise Linux"\nVERSION="9.4 (Plow)"\nID="rhel"\nID_LIKE="fedora"\nVERSION_ID="9.4"\n'
            'PLATFORM_ID="platform:el9"\nPRETTY_NAME="Red Hat Enterprise Linux 9.4 (Plow)"\nANSI_COLOR="0;31"\n'
            'HOME_URL="https://www.redhat.com/"\n',
    "distroless": 'PRETTY_NAME="Distroless"\nNAME="Debian GNU/Linux"\nID="debian"\nVERSION_ID="12"\n'
                  'VERSION="Debian GNU/Linux 12 (bookworm)"\nHOME_URL="https://github.com/GoogleContainerTools/distroless"\n'
                  'SUPPORT_URL="https://github.com/GoogleContainerTools/distroless/blob/master/README.md"\n'
                  'BUG_REPORT_URL="https://github.com/GoogleContainerTools/distroless/issues/new"\n',
}

_FAMILIES = {
    "busybox": Family("busybox", frozenset({"bash", "curl"}), "/bin", True, None, "sh"),
    "alpine": Family("alpine", frozenset({"bash", "curl"}), "/bin", True, _OS_RELEASE["alpine"], "sh"),
    "debian": Family("debian", frozenset({"wget", "nslookup"}), "/usr/bin", True, _OS_RELEASE["debian"], "bash"),
    "ubuntu": Family("ubuntu", frozenset({"wget", "nslookup", "curl"}), "/usr/bin", True, _OS_RELEASE["ubuntu"],
                     "bash"),
    "rhel": Family("rhel", frozenset({"wget", "nslookup"}), "/usr/bin", True, _OS_RELEASE["rhel"], "bash"),
    "distroless": Family("distroless", frozenset({"*"}), "/usr/bin", True, _OS_RELEASE["distroless"], ""),
}


#: Every program busybox can hold (the union of its applet lists, 1.28 to 1.37, defconfig and
#: distribution builds: a superset, so a program a real image has is never taken for missing).
BUSYBOX_PROGRAMS = frozenset("""
[ [[ acpid add-shell addgroup adduser adjtimex ar arch arp arping ascii ash awk base32 base64 basename
bbconfig bc beep blkdiscard blkid blockdev bootchartd brctl bunzip2 busybox bzcat bzip2 cal cat catv chat chattr
chgrp chmod chown chpasswd chpst chroot chrt chvt cksum clear cmp comm conspy cp cpio crc32 crond crontab cryptpw
cttyhack cut date dc dd deallocvt delgroup deluser depmod devmem df dhcprelay diff dirname dmesg dnsd
dnsdomainname dos2unix dpkg dpkg-deb du dumpkmap dumpleases echo ed egrep eject env envdir envuidgid ether-wake
expand expr factor fakeidentd fallocate false fatattr fbset fbsplash fdflush fdformat fdisk fgconsole fgrep find
findfs flash_eraseall flash_lock flash_unlock flashcp flock fold free freeramdisk fsck fsck.minix fsfreeze fstrim
fsync ftpd ftpget ftpput fuser getfattr getopt getty grep groups gunzip gzip halt hd hdparm head hexdump hexedit
hostid hostname httpd hush hwclock i2cdetect i2cdump i2cget i2cset i2ctransfer id ifconfig ifdown ifenslave
ifplugd ifup inetd init inotifyd insmod install ionice iostat ip ipaddr ipcalc ipcrm ipcs iplink ipneigh iproute
iprule iptunnel kbd_mode kill killall killall5 klogd last less link linux32 linux64 linuxrc ln loadfont loadkmap
logger login logname logread losetup lpd lpq lpr ls lsattr lsmod lsof lspci lsscsi lsusb lzcat lzma lzop lzopcat
makedevs makemime man md5sum mdev mesg microcom mim mkdir mkdosfs mke2fs mkfifo mkfs.ext2 mkfs.minix mkfs.reiser
mkfs.vfat mknod mkpasswd mkswap mktemp modinfo modprobe more mount mountpoint mpstat mt mv nameif nanddump
nandwrite nbd-client nc netstat nice nl nmeter nohup nologin nproc nsenter nslookup ntpd nuke od openvt partprobe
passwd paste patch pgrep pidof ping ping6 pipe_progress pivot_root pkill pmap popmaildir poweroff powertop
printenv printf ps pscan pstree pwd pwdx raidautorun rdate rdev readahead readlink readprofile realpath reboot
reformime remove-shell renice reset resize resume rev rfkill rm rmdir rmmod route rpm rpm2cpio rtcwake run-init
run-parts runlevel runsv runsvdir rx script scriptreplay sed sendmail seq setarch setconsole setfattr setfont
setkeycodes setlogcons setpriv setserial setsid setuidgid sh sha1sum sha256sum sha3sum sha512sum showkey shred
shuf slattach sleep smemcap softlimit sort split ssl_client start-stop-daemon stat strings stty su sulogin sum sv
svc svlogd svok swapoff swapon switch_root sync sysctl syslogd tac tail tar taskset tc tcpsvd tee telnet telnetd
test tftp tftpd time timeout top touch tr traceroute traceroute6 tree true truncate ts tsort tty ttysize tunctl
tune2fs ubiattach ubidetach ubimkvol ubirename ubirmvol ubirsvol ubiupdatevol udhcpc udhcpc6 udhcpd udpsvd uevent
umount uname uncompress unexpand uniq unix2dos unlink unlzma unlzop unshare unxz unzip uptime users usleep
uudecode uuencode vconfig vi vlock volname w wall watch watchdog wc wget which who whoami whois xargs xxd xz xzcat
yes zcat zcip
""".split())
#: What alpine has besides busybox's applets (apk-tools, musl's utilities, scanelf).
ALPINE_PROGRAMS = BUSYBOX_PROGRAMS | frozenset({"apk", "scanelf", "getconf", "getent", "iconv", "ldconfig", "ldd",
                                                 "mkmntdirs", "ssl_client"})
#: The directories of a busybox or alpine image's programs (links to busybox, apk's in /sbin).
PROGRAM_DIRS = frozenset({"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"})


def known_programs(family_name: str) -> frozenset[str] | None:
    """Every program an image of this family can hold, when fakekube knows the list (busybox and
    alpine: their programs are busybox's applets and a few more); None for the others, whose
    images hold more than the model knows."""
    if family_name == "busybox":
        return BUSYBOX_PROGRAMS
    if family_name == "alpine":
        return ALPINE_PROGRAMS
    return None


@functools.lru_cache(maxsize=1024)
def family(image: str) -> Family:
    """The image's family (the module docstring's table)."""
    from fakekube.kubelet.behaviour import normalize_image
    reference = normalize_image(image)
    repository = reference.split("@")[0].rsplit(":", 1)[0] if ":" in reference.rsplit("/", 1)[-1] else \
        reference.split("@")[0]
    tag = reference.rsplit("/", 1)[-1].partition(":")[2]
    short = repository.removeprefix("docker.io/library/").removeprefix("docker.io/")
    if any(reference.startswith(prefix) or short.startswith(prefix) for prefix in _DISTROLESS):
        return _FAMILIES["distroless"]
    if short.endswith("busybox"):
        return _FAMILIES["busybox"]
    if short.endswith("alpine") or "alpine" in tag:
        found = _FAMILIES["alpine"]
        return found if short == "alpine" else found._replace(base=False)
    if short.endswith("ubuntu"):
        return _FAMILIES["ubuntu"]
    if any(short.startswith(prefix) for prefix in _RHEL):
        found = _FAMILIES["rhel"]
        return found if short in _BASE_NAMES or short.startswith("redhat/ubi") else found._replace(base=False)
    found = _FAMILIES["debian"]
    return found if short in _BASE_NAMES else found._replace(base=False, missing=frozenset())


_COMMON_DIRS = ("dev", "etc", "home", "proc", "root", "sys", "tmp", "var", "usr", "usr/local", "usr/local/bin",
                "var/log", "var/run", "run")
_LAYOUTS = {
    "busybox": ("bin", "lib", "lib64", "usr/sbin", "var/spool", "var/www", "etc/network"),
    "alpine": ("bin", "lib", "media", "mnt", "opt", "sbin", "srv", "usr/bin", "usr/lib", "usr/sbin", "var/cache",
               "var/lib", "etc/apk", "etc/ssl"),
    "debian": ("boot", "media", "mnt", "opt", "srv", "usr/bin", "usr/lib", "usr/lib64", "usr/sbin", "usr/share",
               "var/cache", "var/lib", "etc/ssl", "etc/apt"),
}
_MERGED_USR = {"bin": "usr/bin", "lib": "usr/lib", "lib64": "usr/lib64", "sbin": "usr/sbin"}
_PASSWD = ("root:x:0:0:root:/root:/bin/sh\ndaemon:x:1:1:daemon:/usr/sbin:/bin/false\nnobody:x:65534:65534:nobody:"
           "/nonexistent:/bin/false\n")
_GROUP = "root:x:0:\ndaemon:x:1:\nwheel:x:10:root\nnogroup:x:65534:\n"


@functools.lru_cache(maxsize=16)
def _base_layout(name: str) -> Store:
    """The image family's files, built once and copied for every container."""
    store = new_store()
    root = store["root"]
    root[2] = IMAGE_BUILT_S
    layout = _LAYOUTS.get("debian" if name in ("ubuntu", "rhel", "distroless") else name, ())
    for path in sorted(set(_COMMON_DIRS) | set(layout), key=lambda p: (p.count("/"), p)):
        _mkdirs(store, path)
    if name not in ("busybox", "alpine"):
        for link, target in _MERGED_USR.items():
            _entry_dir(store, "")[link] = [LINK, 0o777, IMAGE_BUILT_S, target]
    tmp = store_get(store, ["tmp"])
    assert tmp is not None
    tmp[1] = 0o1777
    files = {"etc/passwd": _PASSWD, "etc/group": _GROUP, "etc/shells": "/bin/sh\n/bin/bash\n"}
    family_info = _FAMILIES[name]
    if family_info.os_release is not None:
        files["etc/os-release"] = family_info.os_release
    if name == "alpine":
        files["etc/alpine-release"] = "3.20.3\n"
    if name in ("debian", "distroless"):
        files["etc/debian_version"] = "12.7\n"
    for path, text in files.items():
        _entry_dir(store, posixpath.dirname(path))[posixpath.basename(path)] = [FILE, 0o644, IMAGE_BUILT_S,
                                                                                text.encode()]
    store["used"] = 0
    return store


def _entry_dir(store: Store, path: str) -> dict[str, Entry]:
    entry = store_get(store, split(path))
    assert entry is not None and entry[0] == DIR
    return entry[3]


def _mkdirs(store: Store, path: str, hops: int = 0) -> None:
    """Make the directories of ``path`` in the store, following its links (a mount point under
    Debian's ``/lib -> usr/lib`` is made in ``/usr/lib``); a file on the way leaves it as it is."""
    done: list[str] = []
    parts = split(path)
    for index, name in enumerate(parts):
        parent = store_get(store, done)
        if parent is None or parent[0] != DIR:
            return
        entry = parent[3].setdefault(name, [DIR, 0o755, IMAGE_BUILT_S, {}])
        if entry[0] == LINK:
            if hops < MAX_SYMLINKS:
                target = normalize(posixpath.join("/" + "/".join(done), str(entry[3])))
                _mkdirs(store, posixpath.join(target, *parts[index + 1:]), hops + 1)
            return
        if entry[0] != DIR:
            return
        done.append(name)


@functools.lru_cache(maxsize=16)
def _packed_base_layout(name: str) -> bytes:
    """The base layout as marshal's bytes: loading them makes a private copy of the tree (lists,
    dicts, bytes and strings, as a deep copy would) at C speed, once per container start."""
    return marshal.dumps(_base_layout(name))


def root_store(pod: Mapping[str, Any], container: Mapping[str, Any], argv: list[str], mount_points: list[str],
               node_name: str = "") -> Store:
    """A fresh root for one container instance: the base layout, the kubelet's files, the mount points."""
    name = family(str(container.get("image") or "")).name
    store: Store = marshal.loads(_packed_base_layout(name))
    etc = _entry_dir(store, "etc")
    for filename, text in (("hostname", hostname(pod, node_name) + "\n"), ("hosts", hosts_file(pod, node_name)),
                           ("resolv.conf", resolv_conf(pod))):
        etc[filename] = [FILE, 0o644, IMAGE_BUILT_S, text.encode()]
    _mkdirs(store, "proc/1")
    _entry_dir(store, "proc/1")["cmdline"] = [FILE, 0o444, IMAGE_BUILT_S,
                                              b"".join(word.encode("utf-8", "surrogateescape") + b"\0"
                                                       for word in argv)]
    _entry_dir(store, "proc")["self"] = [LINK, 0o777, IMAGE_BUILT_S, "1"]
    for point in mount_points:
        _mkdirs(store, point)
    working_dir = container.get("workingDir")
    if isinstance(working_dir, str) and working_dir.startswith("/") and store_get(store, split(working_dir)) is None:
        _mkdirs(store, working_dir)
    store["used"] = 0
    return store


def canonical(store: Store, path: str) -> str:
    """``path`` with the root store's links followed, as runc resolves a mount's destination
    (a volume mounted at ``/lib/x`` in a Debian image lands in ``/usr/lib/x``)."""
    done: list[str] = []
    pending = split(path)
    hops = 0
    while pending:
        name = pending.pop(0)
        entry = store_get(store, done + [name])
        if entry is not None and entry[0] == LINK and hops < MAX_SYMLINKS:
            hops += 1
            target = str(entry[3])
            done = [] if target.startswith("/") else done
            pending = split(target) + pending
        elif name == "..":
            done = done[:-1]
        elif name != ".":
            done.append(name)
    return "/" + "/".join(done)


def hostname(pod: Mapping[str, Any], node_name: str = "") -> str:
    """The pod's hostname: the node's with hostNetwork, else ``spec.hostname`` or the pod's name
    (cut at 63 characters and a trailing dash, as the kubelet's ``GeneratePodHostNameAndDomain``)."""
    spec = pod.get("spec") or {}
    if spec.get("hostNetwork"):
        return node_name or str(spec.get("nodeName") or "")
    name = str(spec.get("hostname") or (pod.get("metadata") or {}).get("name") or "")
    return name[:63].rstrip("-.") if len(name) > 63 else name


def hosts_file(pod: Mapping[str, Any], node_name: str = "") -> str:
    """The kubelet-managed ``/etc/hosts`` (``managedHostsFileContent``)."""
    spec = pod.get("spec") or {}
    meta = pod.get("metadata") or {}
    lines = ["# Kubernetes-managed hosts file.", "127.0.0.1\tlocalhost",
             "::1\tlocalhost ip6-localhost ip6-loopback", "fe00::0\tip6-localnet", "fe00::0\tip6-mcastprefix",
             "fe00::1\tip6-allnodes", "fe00::2\tip6-allrouters"]
    ips = [item.get("ip") for item in ((pod.get("status") or {}).get("podIPs") or []) if item.get("ip")]
    if spec.get("hostNetwork"):
        lines = ["# Kubernetes-managed hosts file (host network).", "127.0.0.1\tlocalhost",
                 "::1\tlocalhost ip6-localhost ip6-loopback", "fe00::0\tip6-localnet", "fe00::0\tip6-mcastprefix",
                 "fe00::1\tip6-allnodes", "fe00::2\tip6-allrouters"]
        ips = []
    name = hostname(pod, node_name)
    subdomain = spec.get("subdomain")
    for ip in ips:
        if subdomain:
            fqdn = f"{name}.{subdomain}.{meta.get('namespace', 'default')}.svc.{CLUSTER_DOMAIN}"
            lines.append(f"{ip}\t{fqdn}\t{name}")
        else:
            lines.append(f"{ip}\t{name}")
    aliases = spec.get("hostAliases") or []
    if aliases:
        lines.append("")
        lines.append("# Entries added by HostAliases.")
        for alias in aliases:
            names = "\t".join(str(h) for h in alias.get("hostnames") or [])
            lines.append(f"{alias.get('ip', '')}\t{names}")
    return "\n".join(lines) + "\n"


def resolv_conf(pod: Mapping[str, Any]) -> str:
    """``/etc/resolv.conf`` as the kubelet's DNS configurer writes it (``GetPodDNS``)."""
    spec = pod.get("spec") or {}
    namespace = (pod.get("metadata") or {}).get("namespace") or "default"
    policy = spec.get("dnsPolicy") or "ClusterFirst"
    host_network = bool(spec.get("hostNetwork"))
    config = spec.get("dnsConfig") or {}
    servers: list[str] = []
    searches: list[str] = []
    options: list[str] = []
    cluster = policy == "ClusterFirstWithHostNet" or (policy == "ClusterFirst" and not host_network)
    if cluster:
        servers = [CLUSTER_DNS]
        searches = [f"{namespace}.svc.{CLUSTER_DOMAIN}", f"svc.{CLUSTER_DOMAIN}", CLUSTER_DOMAIN]
        options = ["ndots:5"]
    elif policy != "None":
        return _with_config(NODE_RESOLV_CONF, config)
    servers += [str(s) for s in config.get("nameservers") or []]
    for search in config.get("searches") or []:
        if search not in searches:
            searches.append(str(search))
    options = _merge_options(options, config.get("options") or [])
    lines = []
    if searches:
        lines.append("search " + " ".join(searches))
    lines += [f"nameserver {server}" for server in servers]
    if options:
        lines.append("options " + " ".join(options))
    return "\n".join(lines) + "\n"


def _merge_options(options: list[str], extra: list[Mapping[str, Any]]) -> list[str]:
    merged: dict[str, str] = {}
    for text in options:
        merged[text.partition(":")[0]] = text
    for option in extra:
        name = str(option.get("name") or "")
        value = option.get("value")
        merged[name] = f"{name}:{value}" if value is not None else name
    return list(merged.values())


def _with_config(base: str, config: Mapping[str, Any]) -> str:
    if not config:
        return base
    servers = [line.split()[1] for line in base.splitlines() if line.startswith("nameserver")]
    options = [opt for line in base.splitlines() if line.startswith("options") for opt in line.split()[1:]]
    servers += [str(s) for s in config.get("nameservers") or []]
    searches = [str(s) for s in config.get("searches") or []]
    options = _merge_options(options, config.get("options") or [])
    lines = (["search " + " ".join(searches)] if searches else []) + [f"nameserver {s}" for s in servers]
    return "\n".join(lines + (["options " + " ".join(options)] if options else [])) + "\n"


#: The argv of an image whose entrypoint the pod does not say (``/proc/1/cmdline``).
_DEFAULT_ARGV = {"busybox": ["sh"], "alpine": ["/bin/sh"], "ubuntu": ["/bin/bash"], "nginx": ["nginx", "-g",
                 "daemon off;"], "redis": ["redis-server"], "httpd": ["httpd-foreground"], "postgres": ["postgres"],
                 "registry.k8s.io/pause": ["/pause"]}


def default_argv(image: str) -> list[str]:
    from fakekube.kubelet.behaviour import normalize_image
    short = normalize_image(image).removeprefix("docker.io/library/").rsplit(":", 1)[0].split("@")[0]
    for name, argv in _DEFAULT_ARGV.items():
        if short == name or short.endswith("/" + name):
            return list(argv)
    return [posixpath.basename(short) or "sh"]
