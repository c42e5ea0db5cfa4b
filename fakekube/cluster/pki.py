"""TLS for ``fakekube serve --tls`` / ``ClusterConfig(tls=True)``: a cluster CA, the serving
certificate, and client certificates that authenticate (CN = user, O = groups).

kubeadm's layout in small: a self-signed ``CN=kubernetes`` CA, a serving certificate for
``kubernetes``, ``kubernetes.default(.svc(.cluster.local))``, ``localhost`` and the bound
address, and client certificates the CA signs (``O=system:masters`` is an admin). The
written kubeconfig carries the CA as ``certificate-authority-data``.

Keys are ECDSA P-256 derived from the cluster seed,
so the same seed gives the same keys (validity: below); ECDSA signatures draw OS randomness (``cryptography``
offers no deterministic ECDSA), so certificate bytes differ between runs. These keys
protect nothing: anyone with the seed has them. Needs the ``cryptography`` package
(a core dependency).
"""

from __future__ import annotations

import hashlib
import ipaddress
import ssl
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

#: Validity: clients check it against their wall clock, which cluster time (virtual, fixed
#: epoch) says nothing about; so every certificate is valid from 2000 to RFC 5280's "no
#: expiration" date, the same on every run.
NOT_BEFORE = datetime(2000, 1, 1, tzinfo=timezone.utc)
NOT_AFTER = datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc)
SERVER_NAMES = ("kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
                "localhost")
#: The order of the P-256 group: a derived private value must be below it.
_P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def _x509() -> Any:
    try:
        from cryptography import x509
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError("TLS needs the `cryptography` package: pip install cryptography") from exc
    return x509


def _key(seed: int, label: str) -> Any:
    from cryptography.hazmat.primitives.asymmetric import ec
    digest = hashlib.sha256(f"fakekube-tls:{seed}:{label}".encode()).digest()
    value = int.from_bytes(digest, "big") % (_P256_ORDER - 1) + 1
    return ec.derive_private_key(value, ec.SECP256R1())


def _serial(seed: int, label: str) -> int:
    return int.from_bytes(hashlib.sha256(f"fakekube-serial:{seed}:{label}".encode()).digest()[:16], "big") >> 1


def _name(common_name: str, organizations: tuple[str, ...] = ()) -> Any:
    x509 = _x509()
    from cryptography.x509.oid import NameOID
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations]
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attributes)


def _pem_cert(cert: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization
    return bytes(cert.public_bytes(serialization.Encoding.PEM))


def _pem_key(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization
    return bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                   serialization.NoEncryption()))


class KeyPair(NamedTuple):
    """A certificate and its private key, PEM."""

    cert_pem: bytes
    key_pem: bytes


class ClusterPKI:
    """The cluster CA and what it signs."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._ca_key = _key(seed, "ca")
        self._ca_cert = self._build("ca", _name("kubernetes"), self._ca_key, ca=True)
        self.ca_pem = _pem_cert(self._ca_cert)

    def _build(self, label: str, subject: Any, key: Any, ca: bool = False,
               server_names: tuple[str, ...] = (), client: bool = False) -> Any:
        x509 = _x509()
        from cryptography.hazmat.primitives import hashes
        from cryptography.x509.oid import ExtendedKeyUsageOID
        issuer = subject if ca else self._ca_cert.subject
        builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
                   .serial_number(_serial(self.seed, label)).not_valid_before(NOT_BEFORE)
                   .not_valid_after(NOT_AFTER)
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
                   .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=not ca,
                                                data_encipherment=False, key_agreement=False, key_cert_sign=ca,
                                                crl_sign=False, encipher_only=False, decipher_only=False), critical=True))
        if not ca:
            usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
            builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        if server_names:
            builder = builder.add_extension(x509.SubjectAlternativeName(_alt_names(server_names)), critical=False)
        return builder.sign(self._ca_key if not ca else key, hashes.SHA256())

    def serving(self, host: str) -> KeyPair:
        """The apiserver's certificate, for ``host`` and the names kubeadm puts in it."""
        key = _key(self.seed, "serving")
        cert = self._build("serving", _name("kube-apiserver"), key, server_names=(*SERVER_NAMES, host, "127.0.0.1"))
        return KeyPair(_pem_cert(cert), _pem_key(key))

    def client(self, user: str, groups: tuple[str, ...] = ()) -> KeyPair:
        """A client certificate the apiserver authenticates as ``user`` in ``groups``."""
        label = f"client:{user}:{','.join(groups)}"
        key = _key(self.seed, label)
        cert = self._build(label, _name(user, groups), key, client=True)
        return KeyPair(_pem_cert(cert), _pem_key(key))

    def server_context(self, host: str) -> ssl.SSLContext:
        """What the server wraps connections in: our serving pair; client certificates from our CA
        are asked for and verified, not required (a token or nothing is fine too)."""
        pair = self.serving(host)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.set_alpn_protocols(["http/1.1"])
        with tempfile.TemporaryDirectory(prefix="fakekube-tls-") as folder:
            cert_file, key_file = Path(folder) / "tls.crt", Path(folder) / "tls.key"
            cert_file.write_bytes(pair.cert_pem)
            key_file.write_bytes(pair.key_pem)
            context.load_cert_chain(str(cert_file), str(key_file))
        context.load_verify_locations(cadata=self.ca_pem.decode())
        context.verify_mode = ssl.CERT_OPTIONAL
        return context


def _alt_names(names: tuple[str, ...]) -> list[Any]:
    x509 = _x509()
    found: list[Any] = []
    seen: set[str] = set()
    for name in names:
        if name in seen:
            continue
        seen.add(name)
        try:
            found.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            found.append(x509.DNSName(name))
    return found
