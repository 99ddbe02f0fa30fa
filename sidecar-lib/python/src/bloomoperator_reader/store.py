"""Chunks in an S3-compatible object store (docs/snapshot-protocol.md, "Chunks in an object store").

A manifest with ``"store": "<name>"`` names only the store; where it is (endpoint, bucket, key
prefix, region) and the credentials to read it are the reader's own configuration, given to
:class:`~bloomoperator_reader.SnapshotReader` as ``object_stores={name: S3ObjectStore(...)}``.
The reader builds every object key itself with :func:`object_key` (its own namespace and filter,
each chunk's name and digest) and refuses a manifest naming a chunk without one
(``FOREIGN_CHUNK``) before the first request; each object is then read with ranged GETs of
exactly the announced bytes and verified like a chunk ConfigMap (size, SHA-256, payload digest).

The S3 client is a small Signature Version 4 GET over :mod:`http.client` (standard library): it
never follows a redirect, never reads past the announced size, and resumes a response that
broke off from the byte it reached.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import http.client
import os
import re
import ssl
import time
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Protocol

from .fetch import ChunkSource
from .errors import ChunkError, LoadFailureReason, RefusedError, SnapshotError
from .limits import MAX_CHUNK_BYTES
from .manifest import ChunkRef, Manifest

__all__ = [
    "ObjectStore", "S3ObjectStore", "StoreError", "access_key_files", "environment_credentials",
    "object_key", "static_credentials", "store_chunk_source",
]  # fmt: skip


class StoreError(SnapshotError):
    """The store refused the reader (``STORE_DENIED``) or could not be read (``STORE_UNAVAILABLE``)."""

    reason = LoadFailureReason.STORE_UNAVAILABLE


class ObjectStore(Protocol):
    """What a reader needs of a store: its key prefix and one bounded read."""

    @property
    def prefix(self) -> str: ...

    def get(self, key: str, size: int) -> bytes | None:
        """Exactly ``size`` bytes of object ``key``, or None when it does not exist; never more.

        :raises SnapshotError: ``STORE_DENIED``, ``STORE_UNAVAILABLE`` or ``CHUNK`` (another size)
        """
        ...


# io.bloomoperator.snapshot.StoreObjectKeys' rules, so that both sides build the same keys.
_SEGMENT = re.compile(r"[a-z0-9]([-.a-z0-9]*[a-z0-9])?")
_PREFIX = re.compile(r"[a-zA-Z0-9_][-._a-zA-Z0-9]*(/[a-zA-Z0-9_][-._a-zA-Z0-9]*)*")
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
_MAX_SEGMENT = 253


def is_store_prefix(prefix: str) -> bool:
    """Empty, or '/'-separated plain segments without ``..``."""
    return prefix == "" or (_PREFIX.fullmatch(prefix) is not None and ".." not in prefix)


def _segment(what: str, value: str) -> None:
    if len(value) > _MAX_SEGMENT or ".." in value or _SEGMENT.fullmatch(value) is None:
        raise ValueError(f"{what} is not a plain path segment")


def object_key(prefix: str, namespace: str, filter_name: str, chunk: str, sha256: str) -> str:
    """``<prefix>/<namespace>/<filter>/<chunk>.<sha256>``, as the operator writes it.

    :raises ValueError: a part could leave the filter's directory, or the digest is not 64 hex
    """
    if not is_store_prefix(prefix):
        raise ValueError("not a store prefix")
    _segment("namespace", namespace)
    _segment("filter name", filter_name)
    _segment("chunk name", chunk)
    if _HEX64.fullmatch(sha256) is None:
        raise ValueError("chunk digest is not 64 hex digits")
    directory = f"{namespace}/{filter_name}/"
    if prefix:
        directory = f"{prefix}/{directory}"
    return f"{directory}{chunk}.{sha256.lower()}"


def store_chunk_source(
    store: ObjectStore, namespace: str, filter_name: str, manifest: Manifest
) -> ChunkSource:
    """The chunks of ``manifest`` in ``store``; every key is built before anything is fetched.

    :raises RefusedError: ``FOREIGN_CHUNK`` if a chunk has no key in the filter's directory
    """
    refs: list[ChunkRef] = list(manifest.chunks)
    if manifest.chain is not None:
        for delta in manifest.chain.deltas:
            refs.extend(delta.chunks)
    keys: dict[ChunkRef, str] = {}
    for i, ref in enumerate(refs):
        try:
            keys[ref] = object_key(store.prefix, namespace, filter_name, ref.name, ref.sha256)
        except ValueError as e:
            # Not quoted: the name is whatever the manifest's writer put there.
            raise RefusedError(
                LoadFailureReason.FOREIGN_CHUNK,
                f"manifest of '{filter_name}' v{manifest.version}: chunk {i} has no object key "
                f"in the filter's directory ({e})",
            ) from None

    def load(index: int, ref: ChunkRef) -> bytes | None:
        key = keys.get(ref)
        if key is None:
            raise ChunkError(f"chunk {index} is not one the manifest lists")
        if not 0 <= ref.bytes <= MAX_CHUNK_BYTES:
            # The limits refuse such manifests first; never allocate what a chunk cannot hold.
            raise ChunkError(f"chunk {index} announces more than {MAX_CHUNK_BYTES} bytes")
        data = store.get(key, ref.bytes)
        if data is not None and len(data) != ref.bytes:
            raise ChunkError(
                f"object store returned {len(data)} bytes of chunk {index}, "
                f"the manifest announces {ref.bytes}"
            )
        return data

    return load


# ------------------------------------------------------------------------------- credentials

Credentials = Callable[[], "tuple[str, str, str | None]"]
"""Returns (access key id, secret access key, session token or None); called per request."""

_MAX_CREDENTIAL_FILE_BYTES = 4096


def static_credentials(access_key_id: str, secret_access_key: str) -> Credentials:
    """One fixed key pair."""
    return lambda: (access_key_id, secret_access_key, None)


def environment_credentials() -> Credentials:
    """``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY`` and ``AWS_SESSION_TOKEN``."""

    def read() -> tuple[str, str, str | None]:
        key_id = os.environ.get("AWS_ACCESS_KEY_ID", "")
        secret = os.environ.get("AWS_SECRET_ACCESS_KEY", "")
        if not key_id or not secret:
            raise StoreError(
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not both set",
                LoadFailureReason.STORE_DENIED,
            )
        return key_id, secret, os.environ.get("AWS_SESSION_TOKEN") or None

    return read


def _read_credential_file(path: str) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(_MAX_CREDENTIAL_FILE_BYTES + 1)
    except OSError as e:
        # The path is the application's configuration, not a secret; the content is never quoted.
        raise StoreError(
            f"cannot read credentials file {path}: {e.strerror}", LoadFailureReason.STORE_DENIED
        ) from None
    if len(data) > _MAX_CREDENTIAL_FILE_BYTES:
        raise StoreError(
            f"credentials file {path} is larger than {_MAX_CREDENTIAL_FILE_BYTES} bytes",
            LoadFailureReason.STORE_DENIED,
        )
    value = data.decode("utf-8", "replace").strip()
    if not value:
        raise StoreError(f"credentials file {path} is empty", LoadFailureReason.STORE_DENIED)
    return value


def access_key_files(access_key_id_file: str, secret_access_key_file: str) -> Credentials:
    """The key pair in two files (e.g. a mounted Secret), read at every request, so a rotated
    Secret is used without a restart."""
    return lambda: (
        _read_credential_file(access_key_id_file),
        _read_credential_file(secret_access_key_file),
        None,
    )


# ----------------------------------------------------------------------------------- S3 GET

_BUCKET = re.compile(r"[a-z0-9][-.a-z0-9]{1,61}[a-z0-9]")
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")
_ERROR_CODE = re.compile(rb"<Code>([A-Za-z0-9.]{1,64})</Code>")
_EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
_RETRY_PAUSE_SECONDS = 0.2


class _NoSuchObject(Exception):
    pass


class _SizeMismatch(Exception):
    pass


class _Partial(Exception):
    def __init__(self, filled: int, why: str):
        super().__init__(why)
        self.filled = filled


class S3ObjectStore:
    """An S3-compatible store (AWS S3, Ceph RGW, GCS's XML API, versitygw, ...), the options of
    the Java reader's ``S3ObjectStore``.

    :param endpoint: ``https://host[:port]`` (``http`` only for a store on the same host)
    :param bucket: the bucket the operator's store writes to
    :param prefix: the key prefix as the operator's BloomStore has it (its default ``bloom``);
        ``""`` for none
    :param region: the region requests are signed for
    :param virtual_host_style: ``bucket.host/key`` instead of the default ``host/bucket/key``
    :param credentials: called before each request; default :func:`environment_credentials`
    :param ca_file: a PEM bundle whose CAs verify the store's certificate instead of the system's
    :param connect_timeout: seconds to connect; ``read_timeout``: seconds a read may wait
    :param attempts: attempts at a chunk that fail without a byte received before the load fails
    """

    def __init__(
        self,
        endpoint: str,
        bucket: str,
        *,
        prefix: str = "bloom",
        region: str = "us-east-1",
        virtual_host_style: bool = False,
        credentials: Credentials | None = None,
        ca_file: str | None = None,
        connect_timeout: float = 5.0,
        read_timeout: float = 30.0,
        attempts: int = 4,
    ):
        url = urllib.parse.urlsplit(endpoint)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError("endpoint must be an http or https URL with a host")
        if url.path not in ("", "/") or url.query or url.username or url.password:
            raise ValueError("endpoint must have no path, query or user")
        if _BUCKET.fullmatch(bucket) is None:
            raise ValueError("bucket must be an S3 bucket name (3-63 characters)")
        if not is_store_prefix(prefix):
            raise ValueError("prefix must be '/'-separated segments of letters, digits, -, . and _")
        if not region:
            raise ValueError("region must not be empty")
        if not 1 <= attempts <= 100:
            raise ValueError("attempts must be between 1 and 100")
        if connect_timeout <= 0 or read_timeout <= 0:
            raise ValueError("timeouts must be positive")
        self._https = url.scheme == "https"
        self._host = url.netloc
        self._bucket = bucket
        self._prefix = prefix
        self._region = region
        self._virtual = virtual_host_style
        self._credentials = credentials or environment_credentials()
        self._context = (
            ssl.create_default_context(cafile=ca_file)
            if ca_file
            else ssl.create_default_context()
        )
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._attempts = attempts
        self._description = f"{url.scheme}://{url.netloc} bucket {bucket}"

    @property
    def prefix(self) -> str:
        return self._prefix

    def __repr__(self) -> str:  # endpoint and bucket, never credentials
        return f"S3ObjectStore({self._description}, prefix '{self._prefix}')"

    def get(self, key: str, size: int) -> bytes | None:
        if not 0 <= size <= MAX_CHUNK_BYTES:
            raise ChunkError(f"object {key} announces {size} bytes, more than a chunk holds")
        data = bytearray(size)
        if size == 0:
            return bytes(data)
        filled = failed = requests = 0
        # Attempts count only requests that brought nothing; a store that sends a little and breaks
        # off each time would otherwise be asked up to size times. Every request must bring 64 KiB
        # on average, beyond the attempts.
        max_requests = self._attempts + size // (64 << 10) + 1
        while True:
            before = filled
            requests += 1
            try:
                self._read(key, data, filled)
                return bytes(data)
            except _NoSuchObject:
                return None
            except _SizeMismatch as e:
                raise ChunkError(str(e)) from None
            except _Partial as e:
                filled = e.filled
                error: BaseException = e
            except StoreError as e:
                if e.reason is LoadFailureReason.STORE_DENIED:
                    raise
                error = e
            except (OSError, http.client.HTTPException) as e:
                error = e
            if requests >= max_requests:
                raise StoreError(
                    f"object {key} of {self._description}: {requests} requests did not complete"
                    f" it: {error}"
                ) from None
            if filled == before:
                failed += 1
                if failed >= self._attempts:
                    raise StoreError(
                        f"object {key} of {self._description}: {failed} attempts failed: {error}"
                    ) from None
            time.sleep(_RETRY_PAUSE_SECONDS * max(1, failed))

    def _read(self, key: str, data: bytearray, start: int) -> None:
        """One GET of ``key`` from byte ``start`` to the announced end, into ``data``."""
        host, path = self._host, f"/{self._bucket}/{urllib.parse.quote(key, safe='/-_.~')}"
        if self._virtual:
            host, path = f"{self._bucket}.{self._host}", f"/{urllib.parse.quote(key, safe='/-_.~')}"
        headers = self._sign(host, path, f"bytes={start}-{len(data) - 1}")
        timeout = self._connect_timeout
        connection: http.client.HTTPConnection = (
            http.client.HTTPSConnection(host, timeout=timeout, context=self._context)
            if self._https
            else http.client.HTTPConnection(host, timeout=timeout)
        )
        try:
            connection.request("GET", path, headers=headers)
            if connection.sock is not None:
                connection.sock.settimeout(self._read_timeout)
            response = connection.getresponse()
            what = f"object {key} of {self._description}: HTTP {response.status}"
            status = response.status
            if status == 206:
                match = _CONTENT_RANGE.fullmatch(response.getheader("Content-Range", "").strip())
                if match is None:
                    raise StoreError(f"{what}: no usable Content-Range")
                if match.group(3) != "*" and int(match.group(3)) != len(data):
                    raise _SizeMismatch(
                        f"object {key} is {match.group(3)} bytes, the manifest announces {len(data)}"
                    )
                if int(match.group(1)) != start:
                    raise StoreError(f"{what}: the range starts at another byte than asked")
            elif status == 200:
                # A store that ignores Range sends the whole object: read again from the start.
                length = response.getheader("Content-Length")
                if length is not None and length.isdigit() and int(length) != len(data):
                    raise _SizeMismatch(
                        f"object {key} is {length} bytes, the manifest announces {len(data)}"
                    )
                start = 0
            elif status == 404:
                raise _NoSuchObject()
            elif status == 416:
                raise _SizeMismatch(f"{what} (shorter than the manifest announces)")
            elif status in (401, 403):
                raise StoreError(
                    f"{what}{_error_code(response)}: the reader's credentials may not read it",
                    LoadFailureReason.STORE_DENIED,
                )
            elif 300 <= status < 400:
                raise StoreError(f"{what}: redirects are not followed")
            else:
                raise StoreError(f"{what}{_error_code(response)}")
            view = memoryview(data)
            filled = start
            try:
                while filled < len(data):
                    n = response.readinto(view[filled:])
                    if not n:
                        break
                    filled += n
            except (OSError, http.client.HTTPException) as e:
                raise _Partial(filled, f"response broke off at byte {filled}: {e}") from None
            if filled < len(data):
                raise _Partial(filled, f"response ended early at byte {filled}")
        finally:
            # Closed without draining: what the store sends beyond the range is never read.
            connection.close()

    def _sign(self, host: str, path: str, byte_range: str) -> dict[str, str]:
        key_id, secret, token = self._credentials()
        now = datetime.datetime.now(datetime.timezone.utc)
        amz_date = now.strftime("%Y%m%dT%H%M%SZ")
        day = amz_date[:8]
        headers = {
            "host": host,
            "range": byte_range,
            "x-amz-content-sha256": _EMPTY_SHA256,
            "x-amz-date": amz_date,
        }
        if token:
            headers["x-amz-security-token"] = token
        names = sorted(headers)
        canonical_headers = "".join(f"{n}:{headers[n].strip()}\n" for n in names)
        signed = ";".join(names)
        canonical = "\n".join(["GET", path, "", canonical_headers, signed, _EMPTY_SHA256])
        scope = f"{day}/{self._region}/s3/aws4_request"
        to_sign = "\n".join(
            ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()]
        )
        k = _hmac(("AWS4" + secret).encode(), day)
        for part in (self._region, "s3", "aws4_request"):
            k = _hmac(k, part)
        signature = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
        out = {name.title() if name != "host" else "Host": value for name, value in headers.items()}
        out["Authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={key_id}/{scope}, SignedHeaders={signed}, "
            f"Signature={signature}"
        )
        return out


def _hmac(key: bytes, data: str) -> bytes:
    return hmac.new(key, data.encode(), hashlib.sha256).digest()


def _error_code(response: http.client.HTTPResponse) -> str:
    match = _ERROR_CODE.search(response.read(4096))
    return f" {match.group(1).decode()}" if match else ""


def stores_by_name(stores: Mapping[str, ObjectStore] | None) -> dict[str, ObjectStore]:
    """A copy of a name -> store mapping, each name checked to be a store name (a DNS label)."""
    out = dict(stores or {})
    for name in out:
        if re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", name) is None:
            raise ValueError(f"{name!r} is not a store name (a DNS label)")
    return out
