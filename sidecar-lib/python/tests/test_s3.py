"""Object-store chunks: keys as the operator builds them, the S3 GET's signature and bounds, and
the reader loading a whole version and a delta from a store."""

from __future__ import annotations

import base64
import datetime
import http.server
import re
import threading

import pytest

from bloomoperator_reader import (
    Action,
    ConfigMapSet,
    LoadFailureReason,
    S3ObjectStore,
    SnapshotReader,
    StoreError,
    object_key,
    static_credentials,
)
from bloomoperator_reader.errors import ChunkError
from snapshots import NAMESPACE, Filter, Publisher, sha

R = LoadFailureReason
SHA = "Ab" * 32


def test_object_keys_are_store_object_keys():
    assert object_key("bloom/x_y", "shop", "ids", "ids-bloom-v7-d0", SHA) == (
        "bloom/x_y/shop/ids/ids-bloom-v7-d0." + SHA.lower()
    )
    assert object_key("", "shop", "ids", "ids-bloom-v1-0", SHA) == "shop/ids/ids-bloom-v1-0." + SHA.lower()
    for prefix, name, digest in [
        ("bloom", "../other", SHA), ("bloom", "a/b", SHA), ("bloom", "a..b", SHA),
        ("bloom", "A", SHA), ("bloom", "ids-bloom-v1-0", SHA[1:]),
        ("bloom", "ids-bloom-v1-0", "g" + SHA[1:]), ("../x", "ids-bloom-v1-0", SHA),
        ("/x", "ids-bloom-v1-0", SHA),
    ]:  # fmt: skip
        with pytest.raises(ValueError):
            object_key(prefix, "shop", "ids", name, digest)


def test_signature_matches_the_aws_example(monkeypatch):
    """AWS's Signature Version 4 example for S3 "GET Object" with a Range header."""
    store = S3ObjectStore(
        "https://s3.amazonaws.com", "examplebucket", virtual_host_style=True,
        credentials=static_credentials(
            "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
        ),
    )  # fmt: skip

    class Frozen(datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime.datetime(2013, 5, 24, tzinfo=datetime.timezone.utc)

    monkeypatch.setattr("bloomoperator_reader.store.datetime.datetime", Frozen)
    headers = store._sign("examplebucket.s3.amazonaws.com", "/test.txt", "bytes=0-9")
    assert headers["Authorization"] == (
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
        "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
        "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
    )


OBJECT = b"0123456789abcdefghijklmnopqrstuvwxyz"
ZEROS = "0" * 64


@pytest.fixture
def server():
    """A loopback HTTP server answering as S3 does, for what a real S3 server does not produce on
    demand: a response that breaks off, a redirect, an object of another size."""
    seen = {"requests": 0, "redirected": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):  # noqa: N802 - the http.server name
            seen["requests"] += 1
            if not self.headers.get("Authorization", "").startswith(
                "AWS4-HMAC-SHA256 Credential=id/"
            ):
                self.send_response(403)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            m = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
            start, end = int(m.group(1)), int(m.group(2))
            if self.path == f"/b-b/p/ns/f/broken.{ZEROS}":
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{end}/{len(OBJECT)}")
                self.send_header("Content-Length", str(end - start + 1))
                self.end_headers()
                if start == 0:
                    self.wfile.write(OBJECT[:10])
                    self.wfile.flush()
                    self.close_connection = True
                    return  # breaks off after 10 bytes
                self.wfile.write(OBJECT[start : end + 1])
            elif self.path == f"/b-b/p/ns/f/drip.{ZEROS}":
                # Every answer brings one byte and breaks off: progress each time, never the chunk.
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{end}/{len(OBJECT)}")
                self.send_header("Content-Length", str(end - start + 1))
                self.end_headers()
                self.wfile.write(OBJECT[start : start + 1])
                self.wfile.flush()
                self.close_connection = True
            elif self.path == f"/b-b/p/ns/f/longer.{ZEROS}":
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{end}/{len(OBJECT) + 1}")
                self.send_header("Content-Length", str(end - start + 1))
                self.end_headers()
                self.wfile.write(OBJECT[start : end + 1])
            elif self.path == f"/b-b/p/ns/f/moved.{ZEROS}":
                self.send_response(307)
                self.send_header("Location", "/elsewhere")
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                if self.path == "/elsewhere":
                    seen["redirected"] += 1
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1], seen
    httpd.shutdown()
    httpd.server_close()


def test_reads_exactly_the_announced_bytes(server):
    port, seen = server

    def store(key_id="id"):
        return S3ObjectStore(
            f"http://127.0.0.1:{port}", "b-b", prefix="p",
            credentials=static_credentials(key_id, "secret"), attempts=2,
        )  # fmt: skip

    def key(name):
        return f"p/ns/f/{name}.{ZEROS}"

    assert store().get(key("broken"), len(OBJECT)) == OBJECT
    assert seen["requests"] == 2, "the break resumed once"
    before = seen["requests"]
    with pytest.raises(StoreError, match="requests did not complete it") as dripping:
        store().get(key("drip"), len(OBJECT))
    assert dripping.value.reason is R.STORE_UNAVAILABLE
    assert seen["requests"] - before == 3, "2 attempts + 1 for a chunk under 64 KiB"
    with pytest.raises(ChunkError):
        store().get(key("longer"), len(OBJECT))
    with pytest.raises(StoreError, match="redirects are not followed") as moved:
        store().get(key("moved"), len(OBJECT))
    assert moved.value.reason is R.STORE_UNAVAILABLE and seen["redirected"] == 0
    assert store().get(key("absent"), 5) is None
    with pytest.raises(StoreError) as denied:
        store("intruder").get(key("broken"), len(OBJECT))
    assert denied.value.reason is R.STORE_DENIED
    with pytest.raises(ChunkError):
        store().get(key("broken"), (1 << 20) + 1)


class ChunkObjects:
    """A store over the publisher's chunk ConfigMaps, keyed as the operator keys objects."""

    prefix = "bloom"

    def __init__(self, publisher: Publisher):
        self.publisher = publisher
        self.gets: list[str] = []

    def get(self, key: str, size: int) -> bytes | None:
        self.gets.append(key)
        for name, configmap in self.publisher.objects.items():
            raw = configmap.get("binaryData", {}).get("chunk")
            if raw is None:
                continue
            data = base64.b64decode(raw)
            if object_key("bloom", NAMESPACE, "products", name, sha(data)) == key:
                return data[:size]
        return None


def test_loads_whole_and_delta_from_an_object_store():
    p = Publisher()
    objects = ChunkObjects(p)
    r = SnapshotReader(NAMESPACE, "products", "String", object_stores={"primary": objects})
    manifest = p.whole(1, Filter("Guava", "String", 2048, 5).add("a", "b"))
    p.announce(dict(manifest, store="primary"))
    outcome = r.refresh(ConfigMapSet(p.configmaps()))
    assert outcome.action is Action.LOAD, outcome
    assert len(objects.gets) == len(manifest["chunks"])
    assert all(k.startswith(f"bloom/{NAMESPACE}/products/products-bloom-v1-") for k in objects.gets)
    objects.gets.clear()
    p.published = dict(manifest)
    delta = p.delta(2, Filter("Guava", "String", 2048, 5).add("a", "c"))
    p.announce(dict(delta, store="primary"))
    assert r.refresh(ConfigMapSet(p.configmaps())).action is Action.LOAD
    assert r.might_contain("c") and "-v2-d0." in objects.gets[0]

    # Known under other names: refused before any GET, naming what it knows.
    objects.gets.clear()
    other = SnapshotReader(
        NAMESPACE, "products", "String", object_stores={"secondary": objects, "archive": objects}
    )
    outcome = other.refresh(ConfigMapSet(p.configmaps()))
    assert (outcome.action, outcome.reason) == (Action.REFUSE, R.UNKNOWN_STORE)
    assert "'primary'" in str(outcome.error) and "['archive', 'secondary']" in str(outcome.error)
    assert objects.gets == []
