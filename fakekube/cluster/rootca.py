"""The cluster's root CA certificate: a well-formed, deterministic, fake X.509 PEM.

A real cluster's kube-controller-manager publishes its ``--root-ca-file`` (kubeadm's
self-signed ``CN=kubernetes`` CA, valid ten years) as ``kube-root-ca.crt`` in every
namespace, and kubeadm puts it in ``kube-public/cluster-info``. Clients parse it (an
in-cluster config loads it into a TLS context), so it must be a certificate, not a
placeholder string; but fakekube serves plain HTTP and nothing ever verifies a chain
against it. So the certificate here is built by hand in DER: kubeadm's subject, validity
and extensions, an RSA-2048-shaped public key and a signature that are seeded bytes
(``SeededRandom.secret``: the same seed gives the same PEM, and drawing it shifts no
other identifier). No private key exists.
"""

from __future__ import annotations

import base64
from datetime import datetime, timedelta, timezone

from fakekube.random import SeededRandom

#: kubeadm's CA common name and validity (``CACertificateValidityPeriod``, 87,600 h).
CA_COMMON_NAME = "kubernetes"
CA_VALIDITY = timedelta(hours=87_600)
#: Bytes in the fake RSA modulus and signature (a 2048-bit key, as kubeadm's default).
RSA_BYTES = 256
RSA_EXPONENT = 65_537
#: Characters per line of a PEM body (RFC 7468).
PEM_LINE_CHARS = 64

# OIDs, DER-encoded (tag 0x06 and length included).
_OID_SHA256_WITH_RSA = bytes.fromhex("06092a864886f70d01010b")
_OID_RSA_ENCRYPTION = bytes.fromhex("06092a864886f70d010101")
_OID_COMMON_NAME = bytes.fromhex("0603550403")
_OID_KEY_USAGE = bytes.fromhex("0603551d0f")
_OID_BASIC_CONSTRAINTS = bytes.fromhex("0603551d13")
_OID_SUBJECT_KEY_ID = bytes.fromhex("0603551d0e")
_OID_SUBJECT_ALT_NAME = bytes.fromhex("0603551d11")
_NULL = b"\x05\x00"
_TRUE = b"\x01\x01\xff"
#: keyUsage digitalSignature | keyEncipherment | keyCertSign (bits 0, 2, 5): 0xa4, 2 unused bits.
_KEY_USAGE_BITS = b"\x03\x02\x02\xa4"


def root_ca_pem(rng: SeededRandom, not_before: datetime) -> str:
    """The cluster's CA certificate as PEM text (one trailing newline), from ``rng``'s seed."""
    der = _certificate(rng, not_before)
    body = base64.b64encode(der).decode("ascii")
    lines = [body[i:i + PEM_LINE_CHARS] for i in range(0, len(body), PEM_LINE_CHARS)]
    return "-----BEGIN CERTIFICATE-----\n" + "\n".join(lines) + "\n-----END CERTIFICATE-----\n"


def _certificate(rng: SeededRandom, not_before: datetime) -> bytes:
    modulus = bytearray(rng.secret("root-ca/modulus", RSA_BYTES))
    modulus[0] |= 0x80  # a full 2048-bit number
    modulus[-1] |= 0x01  # odd, as an RSA modulus is
    serial = bytearray(rng.secret("root-ca/serial", 8))
    serial[0] &= 0x7F  # positive
    key_id = rng.secret("root-ca/key-id", 20)
    algorithm = _sequence(_OID_SHA256_WITH_RSA + _NULL)
    name = _sequence(_set(_sequence(_OID_COMMON_NAME + _tlv(0x0C, CA_COMMON_NAME.encode()))))
    start = not_before.astimezone(timezone.utc).replace(microsecond=0)
    validity = _sequence(_time(start) + _time(start + CA_VALIDITY))
    public_key = _sequence(_integer(bytes(modulus)) + _integer(RSA_EXPONENT.to_bytes(3, "big")))
    key_info = _sequence(_sequence(_OID_RSA_ENCRYPTION + _NULL) + _bit_string(public_key))
    extensions = _tlv(0xA3, _sequence(
        _extension(_OID_KEY_USAGE, _KEY_USAGE_BITS, critical=True)
        + _extension(_OID_BASIC_CONSTRAINTS, _sequence(_TRUE), critical=True)
        + _extension(_OID_SUBJECT_KEY_ID, _tlv(0x04, key_id))
        + _extension(_OID_SUBJECT_ALT_NAME, _sequence(_tlv(0x82, CA_COMMON_NAME.encode())))))
    version_3 = _tlv(0xA0, _integer(b"\x02"))
    tbs = _sequence(version_3 + _integer(bytes(serial)) + algorithm + name + validity + name + key_info
                    + extensions)
    signature = rng.secret("root-ca/signature", RSA_BYTES)
    return _sequence(tbs + algorithm + _bit_string(signature))


# -- DER --------------------------------------------------------------------------------------

def _tlv(tag: int, content: bytes) -> bytes:
    """One DER element: tag, definite length (short or long form), content."""
    size = len(content)
    if size < 0x80:
        length = bytes([size])
    else:
        octets = size.to_bytes((size.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(octets)]) + octets
    return bytes([tag]) + length + content


def _sequence(content: bytes) -> bytes:
    return _tlv(0x30, content)


def _set(content: bytes) -> bytes:
    return _tlv(0x31, content)


def _integer(magnitude: bytes) -> bytes:
    """A non-negative INTEGER from big-endian bytes (a 0x00 keeps a high first bit positive)."""
    stripped = magnitude.lstrip(b"\x00") or b"\x00"
    return _tlv(0x02, (b"\x00" + stripped) if stripped[0] & 0x80 else stripped)


def _bit_string(content: bytes) -> bytes:
    return _tlv(0x03, b"\x00" + content)


def _time(moment: datetime) -> bytes:
    """UTCTime before 2050, GeneralizedTime from then on (RFC 5280 4.1.2.5)."""
    if moment.year < 2050:
        return _tlv(0x17, moment.strftime("%y%m%d%H%M%SZ").encode())
    return _tlv(0x18, moment.strftime("%Y%m%d%H%M%SZ").encode())


def _extension(oid: bytes, value: bytes, critical: bool = False) -> bytes:
    return _sequence(oid + (_TRUE if critical else b"") + _tlv(0x04, value))
