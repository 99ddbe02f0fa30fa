"""Ed25519 manifest signatures (``manifest.sig``) and the keys a reader trusts.

The signature covers ``bloomoperator.io/manifest-signature/v1\\n<namespace>\\n`` followed by the
UTF-8 bytes of ``manifest.json`` exactly as stored: a manifest copied into another namespace does
not verify, and the filter name inside it is checked against the filter read.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Iterable, Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .errors import LoadFailureReason, RefusedError
from .manifest import load_json, scalar_text

ALGORITHM = "Ed25519"
_CONTEXT = b"bloomoperator.io/manifest-signature/v1\n"


def signed_bytes(namespace: str, manifest_json: str) -> bytes:
    """The bytes a signature covers for ``manifest_json`` published in ``namespace``."""
    if not namespace or "\n" in namespace:
        raise ValueError("a namespace is required to sign or verify a manifest")
    return _CONTEXT + namespace.encode("utf-8") + b"\n" + manifest_json.encode("utf-8")


def read_public_key(pem: str | bytes) -> Ed25519PublicKey:
    """An X.509 SubjectPublicKeyInfo PEM (``-----BEGIN PUBLIC KEY-----``) Ed25519 key.

    :raises ValueError: if it is not one
    """
    data = pem.encode("ascii") if isinstance(pem, str) else pem
    key = serialization.load_pem_public_key(data)
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError(f"expected an Ed25519 public key, got {type(key).__name__}")
    return key


def key_id(key: Ed25519PublicKey) -> str:
    """16 hex digits of SHA-256 of the key's X.509 encoding: what ``keyId`` in a signature names."""
    der = key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return hashlib.sha256(der).hexdigest()[:16]


class TrustedKeys:
    """The Ed25519 keys whose signatures a reader accepts; none means signatures are ignored.

    Several at once, so the operator's key can be rotated without a moment of refusals.
    """

    def __init__(self, keys: Iterable[Ed25519PublicKey | str | bytes] = ()):
        by_id: dict[str, Ed25519PublicKey] = {}
        for key in keys:
            public = key if isinstance(key, Ed25519PublicKey) else read_public_key(key)
            by_id[key_id(public)] = public
        self._by_id: Mapping[str, Ed25519PublicKey] = by_id

    def __bool__(self) -> bool:
        return bool(self._by_id)

    @property
    def key_ids(self) -> frozenset[str]:
        return frozenset(self._by_id)

    def verify(self, namespace: str, manifest_json: str, signature_data: str | None) -> str | None:
        """Checks the signature of ``manifest_json`` read in ``namespace``.

        :return: the key id that signed it, or None when no key is trusted
        :raises RefusedError: ``UNSIGNED``, ``UNTRUSTED_KEY`` or ``BAD_SIGNATURE``
        """
        if not self._by_id:
            return None
        if signature_data is None:
            raise RefusedError(
                LoadFailureReason.UNSIGNED,
                f"manifest in namespace {namespace} is not signed, and this reader only "
                f"accepts manifests signed by key(s) {sorted(self._by_id)}",
            )
        keyid, signature = _parse_signature(signature_data)
        key = self._by_id.get(keyid)
        if key is None:
            raise RefusedError(
                LoadFailureReason.UNTRUSTED_KEY,
                f"manifest in namespace {namespace} is signed by a key that is not among the "
                f"trusted {sorted(self._by_id)}",
            )
        try:
            key.verify(_base64(signature), signed_bytes(namespace, manifest_json))
        except (InvalidSignature, ValueError):
            raise RefusedError(
                LoadFailureReason.BAD_SIGNATURE,
                f"signature of the manifest in namespace {namespace} by key '{keyid}' does not "
                "verify: the manifest was changed after signing or signed for another namespace",
            ) from None
        return keyid


def _parse_signature(data: str) -> tuple[str, str]:
    """(keyId, signature) of a ``manifest.sig`` record; ``BAD_SIGNATURE`` for anything else."""

    def bad(problem: str) -> RefusedError:
        return RefusedError(LoadFailureReason.BAD_SIGNATURE, f"manifest.sig {problem}")

    try:
        record = load_json(data)
    except ValueError:
        raise bad("is not a signature record") from None
    if not isinstance(record, dict):
        raise bad("is not a signature record")
    fields = [scalar_text(record.get(name)) for name in ("algorithm", "keyId", "signature")]
    if any(field is None for field in fields):
        raise bad("is not a signature record")
    algorithm, keyid, signature = fields
    if algorithm != ALGORITHM:
        raise bad(f"uses another algorithm than {ALGORITHM}")
    return keyid, signature  # type: ignore[return-value]


def _base64(text: str) -> bytes:
    # Java's basic decoder: the standard alphabet, padding optional, nothing else.
    padded = text + "=" * (-len(text) % 4)
    try:
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError) as e:
        raise ValueError("signature is not Base64") from e
