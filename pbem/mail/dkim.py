"""DKIM signatures on outgoing mail (RFC 6376, with ``dkimpy``), when ``[smtp]`` asks for them.

Each mail is signed just before it is handed to the SMTP server (``pbem.mail.sinks.DkimSigningSink``),
not when it is queued: the stored mail stays unsigned, so a retry after a key rotation is signed
with the new key, and a signature's clock starts when the mail leaves. Signed are the header
fields a receiver shows or threads by (those present of :data:`SIGNED_HEADERS`), relaxed/relaxed,
so that a relay that re-folds a header or turns our LF line ends into SMTP's CRLF breaks nothing.

The key is read and tried once when the daemon starts (and by ``pbem check``): a key that is
missing, unreadable or not a private key stops ``pbem serve`` with one line instead of failing
every mail later.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from pathlib import Path

import dkim
import dkim.crypto
import dkim.dnsplug
import dkim.util

from pbem.config import Config

SIGNED_HEADERS = ("From", "To", "Cc", "Subject", "Date", "Message-ID", "Reply-To", "In-Reply-To", "References",
                  "Content-Type", "MIME-Version", "Auto-Submitted", "List-Unsubscribe", "List-Unsubscribe-Post")
"""What a signature covers, of those the mail has (From always: every mail of ours has one)."""
OVER_SIGNED = ("From", "To", "Cc", "Subject", "Date", "Message-ID", "Reply-To")
"""Named once more than the mail has them (RFC 6376 8.15): whoever got one of our mails cannot
add a second Reply-To, To, Cc or Subject on top and pass it on with our signature still good.
The List-* fields are not: a mailing list that forwards a mail may add its own."""
CANONICALIZATION = (b"relaxed", b"relaxed")
MIN_RSA_BITS = 1024
"""Receivers ignore RSA signatures of shorter keys (RFC 8301); 2048 bits is the usual choice."""

_PEM = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----\s*(.*?)\s*-----END \1-----", re.DOTALL)
_RSA_OID = bytes.fromhex("06092a864886f70d010101")  # rsaEncryption, as DER
_ED25519_OID = bytes.fromhex("06032b6570")
_ED25519_PKCS8_PREFIX = bytes.fromhex("302e020100300506032b657004220420")
"""An Ed25519 private key in PKCS#8 DER (``openssl genpkey -algorithm ed25519``): this, then the 32-byte seed."""
_PROBE = b"From: probe@example.org\nSubject: probe\n\nprobe\n"


DNS_TIMEOUT = 5


def dns_txt(name: bytes, timeout: int) -> bytes | None:
    """The TXT record at ``name`` (with its trailing dot), as receivers look it up (dkimpy over
    dnspython); None when there is none."""
    record: bytes | None = dkim.dnsplug.get_txt(name, timeout=timeout)
    return record


class DkimKeyError(Exception):
    """The configured key cannot sign; the message says what is wrong with which file."""


@dataclass(frozen=True)
class DkimSigner:
    """Signs mails as ``d=domain; s=selector`` with one private key."""

    domain: str
    selector: str
    algorithm: str
    """``rsa-sha256`` or ``ed25519-sha256``."""
    private_key: bytes
    """As dkimpy takes it: the PEM text for RSA, the base64 of the 32-byte seed for Ed25519."""
    public_key: bytes
    """The base64 of the public key, as the DNS record's ``p=`` carries it."""
    bits: int
    """The RSA modulus's length (256 for Ed25519)."""

    @property
    def dns_name(self) -> str:
        """Where the public key is published."""
        return f"{self.selector}._domainkey.{self.domain}"

    @property
    def dns_record(self) -> str:
        """The TXT record to publish at :attr:`dns_name`."""
        kind = "rsa" if self.algorithm == "rsa-sha256" else "ed25519"
        return f"v=DKIM1; k={kind}; p={self.public_key.decode('ascii')}"

    def describe(self) -> str:
        kind = f"RSA {self.bits}-bit" if self.algorithm == "rsa-sha256" else "Ed25519"
        return f"d={self.domain} s={self.selector} ({kind} key)"

    def sign(self, raw: bytes) -> bytes:
        """``raw`` with a DKIM-Signature field on top, its line ends those of ``raw`` (our stored
        mails have LF; SMTP sends CRLF; relaxed canonicalisation reads both alike)."""
        present = {name.lower() for name, _ in dkim.rfc822_parse(raw)[0]}
        headers = [name.lower().encode("ascii") for name in SIGNED_HEADERS if name.lower().encode("ascii") in present]
        headers += [name.lower().encode("ascii") for name in OVER_SIGNED]
        line_end = b"\r\n" if b"\r\n" in raw[: raw.find(b"\n") + 1] else b"\n"
        signature: bytes = dkim.sign(raw, self.selector.encode("ascii"), self.domain.encode("ascii"),
                                     self.private_key, canonicalize=CANONICALIZATION,
                                     signature_algorithm=self.algorithm.encode("ascii"),
                                     include_headers=headers, linesep=line_end)
        return signature + raw


def published(signer: DkimSigner) -> tuple[bool, str]:
    """Whether the DNS publishes this key where receivers look (True also when DNS cannot be
    asked: that says nothing about the record), and what was found, in words."""
    name = f"{signer.dns_name}.".encode("ascii")
    try:
        record = dns_txt(name, DNS_TIMEOUT)
    except (dkim.DKIMException, OSError) as exc:
        return True, f"DNS could not be asked ({exc}); look the record up by hand"
    if record is None:
        return False, f"no TXT record at {signer.dns_name} yet: receivers cannot check the signatures until it is published"
    try:
        tags = dkim.util.parse_tag_value(record)
    except dkim.util.InvalidTagValueList:
        tags = {}
    if b"p" not in tags:
        return False, f"the TXT record at {signer.dns_name} is not a DKIM key record: {record[:200]!r}"
    public_key = b"".join(tags[b"p"].split())
    if public_key != signer.public_key:
        return False, (f"the TXT record at {signer.dns_name} holds another public key than dkim_key_file's: "
                       "receivers will find every signature broken")
    return True, f"the TXT record at {signer.dns_name} holds its public key"


def signer_of(config: Config) -> DkimSigner | None:
    """The signer ``[smtp]`` asks for, with its key read and tried; None when mail is not signed.
    Raises DkimKeyError with a message naming the file."""
    if config.smtp is None or config.smtp.dkim_selector is None or config.smtp.dkim_key_file is None:
        return None
    domain = config.dkim_domain
    assert domain is not None
    return load_signer(config.smtp.dkim_key_file, domain, config.smtp.dkim_selector, config.source)


def load_signer(path: Path, domain: str, selector: str, source: str = "") -> DkimSigner:
    """Read the PEM private key at ``path`` and sign a probe with it."""
    where = f"{source}: [smtp] dkim_key_file: " if source else ""
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise DkimKeyError(f"{where}cannot read {path}: {exc.strerror}") from None
    try:
        algorithm, private_key, public_key, bits = _read_private_key(text)
    except ValueError as exc:
        raise DkimKeyError(f"{where}{path}: {exc}") from None
    signer = DkimSigner(domain, selector, algorithm, private_key, public_key, bits)
    try:
        signer.sign(_PROBE)
    except dkim.DKIMException as exc:
        raise DkimKeyError(f"{where}{path}: this key cannot sign ({exc})") from None
    return signer


def _read_private_key(text: bytes) -> tuple[str, bytes, bytes, int]:
    """(algorithm, the key as dkimpy takes it, the public key's base64, bits) of a PEM private key;
    ValueError saying in plain words what the file holds instead."""
    found = _PEM.search(text.replace(b"\r\n", b"\n"))
    if found is None:
        raise ValueError("not a PEM private key (no -----BEGIN … PRIVATE KEY----- block); make one with "
                         "openssl genpkey -algorithm rsa -pkeyopt rsa_keygen_bits:2048")
    label, body = found.group(1).decode("ascii"), found.group(2)
    if "PRIVATE KEY" not in label:
        raise ValueError(f"holds a {label}, not a private key")
    if label == "ENCRYPTED PRIVATE KEY":
        raise ValueError("the key is encrypted, and pbem cannot ask for its passphrase: write it unencrypted "
                         "(openssl pkey -in KEY -out NEW) into a file only pbem may read")
    if label not in ("PRIVATE KEY", "RSA PRIVATE KEY"):
        raise ValueError(f"holds a {label}: DKIM signs with RSA or Ed25519 keys (openssl genpkey -algorithm rsa)")
    try:
        der = base64.b64decode(body, validate=False)
    except (binascii.Error, ValueError):
        raise ValueError("the PEM block is not valid base64") from None
    if label == "PRIVATE KEY" and der.startswith(_ED25519_PKCS8_PREFIX) and len(der) == 48:
        return _ed25519_key(der[-32:])
    if label == "PRIVATE KEY" and _ED25519_OID in der[:16]:
        raise ValueError("holds an Ed25519 key in a form pbem does not read: write it anew with "
                         "openssl pkey -in KEY -out NEW")
    if label == "PRIVATE KEY" and _RSA_OID not in der[:32]:
        raise ValueError("holds a private key of a kind DKIM does not use: DKIM signs with RSA or Ed25519 keys "
                         "(openssl genpkey -algorithm rsa)")
    pem = b"-----BEGIN " + found.group(1) + b"-----\n" + body + b"\n-----END " + found.group(1) + b"-----\n"
    try:
        key = dkim.crypto.parse_pem_private_key(pem)
    except dkim.crypto.UnparsableKeyError:
        raise ValueError("the RSA private key cannot be read") from None
    modulus, exponent = int(key["modulus"]), int(key["publicExponent"])
    if modulus.bit_length() < MIN_RSA_BITS:
        raise ValueError(f"an RSA key of {modulus.bit_length()} bits is too short: receivers ignore its "
                         f"signatures; make one of 2048 bits")
    return "rsa-sha256", pem, base64.b64encode(_rsa_public_key_info(modulus, exponent)), modulus.bit_length()


def _ed25519_key(seed: bytes) -> tuple[str, bytes, bytes, int]:
    try:
        import nacl.signing
    except ImportError:  # pragma: no cover - pynacl is a dependency
        raise ValueError("an Ed25519 key needs the Python package pynacl") from None
    public_key = bytes(nacl.signing.SigningKey(seed).verify_key)
    return "ed25519-sha256", base64.b64encode(seed), base64.b64encode(public_key), 256


def _rsa_public_key_info(modulus: int, exponent: int) -> bytes:
    """The SubjectPublicKeyInfo in DER, as ``openssl pkey -pubout`` writes it and DNS publishes it."""
    public_key = _der(0x30, _der_integer(modulus) + _der_integer(exponent))
    algorithm = _der(0x30, _RSA_OID + _der(0x05, b""))
    return _der(0x30, algorithm + _der(0x03, b"\0" + public_key))


def _der_integer(value: int) -> bytes:
    return _der(0x02, value.to_bytes(value.bit_length() // 8 + 1, "big"))


def _der(tag: int, content: bytes) -> bytes:
    length = len(content)
    if length < 0x80:
        return bytes([tag, length]) + content
    size = length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(size)]) + size + content

