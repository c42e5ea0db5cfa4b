"""PEM blocks and the X.509 checks certificates.k8s.io makes on them (upstream's
``encoding/pem`` decoder, ``certificates.ParseCSR`` and ``validateCertificate``).

A block is found as Go's ``pem.Decode`` finds one: a ``-----BEGIN TYPE-----`` line,
optional ``Key: value`` headers ended by a blank line, base64 text, and the matching
``-----END TYPE-----`` line; text around and between blocks is skipped, and a block whose
body is not base64 is not a block. The DER inside is parsed with ``cryptography`` (a
dependency of fakekube's TLS), imported when first needed.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, NamedTuple

CSR_BLOCK = "CERTIFICATE REQUEST"
CERTIFICATE_BLOCK = "CERTIFICATE"
CSR_TYPE_PROBLEM = "PEM block type must be CERTIFICATE REQUEST"

_BLOCK_RE = re.compile(rb"-----BEGIN ([^\r\n]*?)-----[ \t]*\r?\n(.*?)-----END \1-----", re.DOTALL)
_HEADER_RE = re.compile(rb"^[^:\r\n]+:[^\r\n]*$")


class PemBlock(NamedTuple):
    type: str
    headers: bool
    der: bytes


def _block(match: re.Match[bytes]) -> PemBlock | None:
    """One decoded block, or None when its body is not base64 (Go skips such a block)."""
    lines = match.group(2).splitlines()
    headers = False
    while lines and _HEADER_RE.match(lines[0]):
        headers = True
        lines.pop(0)
    if headers and lines and not lines[0].strip():
        lines.pop(0)
    try:
        der = base64.b64decode(b"".join(line.strip() for line in lines), validate=True)
    except (binascii.Error, ValueError):
        return None
    return PemBlock(match.group(1).decode("latin-1"), headers, der)


def pem_blocks(data: bytes) -> list[PemBlock]:
    """Every PEM block in ``data``, in order."""
    return [block for block in map(_block, _BLOCK_RE.finditer(data)) if block is not None]


def parse_csr(pem: bytes) -> Any:
    """``certificates.ParseCSR``: the first PEM block must be a ``CERTIFICATE REQUEST`` whose
    DER parses; returns ``cryptography``'s request. Raises ValueError with the problem."""
    blocks = pem_blocks(pem)
    if not blocks or blocks[0].type != CSR_BLOCK:
        raise ValueError(CSR_TYPE_PROBLEM)
    from cryptography import x509
    try:
        return x509.load_der_x509_csr(blocks[0].der)
    except ValueError:
        raise ValueError("x509: malformed certificate request") from None


def csr_organizations(pem: bytes) -> list[str]:
    """The request's subject organizations (the groups a client certificate would carry)."""
    from cryptography.x509.oid import NameOID
    subject = parse_csr(pem).subject
    return [str(attribute.value) for attribute in subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]


def certificate_problem(pem: bytes) -> str | None:
    """``validateCertificate``: empty, or one or more ``CERTIFICATE`` blocks without headers,
    each holding certificates that parse; else what is wrong."""
    if not pem:
        return None
    blocks = pem_blocks(pem)
    if not blocks:
        return "must contain at least one CERTIFICATE PEM block"
    from cryptography import x509
    for block in blocks:
        if block.type != CERTIFICATE_BLOCK:
            return f'only CERTIFICATE PEM blocks are allowed, found "{block.type}"'
        if block.headers:
            return "no PEM block headers are permitted"
        if not block.der:
            return "found CERTIFICATE PEM block containing 0 certificates"
        try:
            x509.load_der_x509_certificate(block.der)
        except ValueError:
            return "x509: malformed certificate"
    return None


def x509_key_pair_problem(cert_pem: bytes, key_pem: bytes) -> str | None:
    """What Go's ``tls.X509KeyPair`` says of a certificate and key, or None when they make
    a pair: the PEM blocks first (a CERTIFICATE, then a ``… PRIVATE KEY``), then the
    certificate's and the key's DER, then whether the key is the certificate's."""
    certs: list[PemBlock] = []
    skipped: list[str] = []
    for block in pem_blocks(cert_pem):
        if block.type == CERTIFICATE_BLOCK:
            certs.append(block)
        else:
            skipped.append(block.type)
    if not certs:
        if not skipped:
            return "tls: failed to find any PEM data in certificate input"
        if len(skipped) == 1 and skipped[0].endswith("PRIVATE KEY"):
            return ("tls: failed to find certificate PEM data in certificate input, but did find a private key; "
                    "PEM inputs may have been switched")
        return ('tls: failed to find "CERTIFICATE" PEM block in certificate input after skipping PEM blocks of '
                f"the following types: [{' '.join(skipped)}]")
    skipped = []
    key_block = None
    for block in pem_blocks(key_pem):
        if block.type == "PRIVATE KEY" or block.type.endswith(" PRIVATE KEY"):
            key_block = block
            break
        skipped.append(block.type)
    if key_block is None:
        if not skipped:
            return "tls: failed to find any PEM data in key input"
        if skipped == [CERTIFICATE_BLOCK]:
            return "tls: found a certificate rather than a key in the PEM for the private key"
        return ('tls: failed to find PEM block with type ending in "PRIVATE KEY" in key input after skipping PEM '
                f"blocks of the following types: [{' '.join(skipped)}]")
    return _key_pair_problem(certs[0].der, key_block.der)


def _key_pair_problem(cert_der: bytes, key_der: bytes) -> str | None:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    try:
        public = x509.load_der_x509_certificate(cert_der).public_key()
    except ValueError:
        return "x509: malformed certificate"
    try:
        private = serialization.load_der_private_key(key_der, password=None)
    except (ValueError, TypeError):
        return "tls: failed to parse private key"
    if type(private.public_key()) is not type(public):
        return "tls: private key type does not match public key type"
    raw = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    if private.public_key().public_bytes(*raw) != public.public_bytes(*raw):
        return "tls: private key does not match public key"
    return None
