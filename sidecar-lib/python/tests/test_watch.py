"""FilterWatcher against a fake API server (HTTP, the official client's real requests): a watch
that breaks off mid-stream is resumed after the last event processed, so manifests it already
acted on are not handed to the reader again (client-go's reflector does the same)."""

from __future__ import annotations

import contextlib
import copy
import http.server
import json
import threading
import time
import urllib.parse

import pytest

from bloomoperator_reader import SnapshotReader
from bloomoperator_reader.watch import FilterWatcher
from snapshots import NAMESPACE, Filter, Publisher

WAIT = 10.0


class FakeApiServer:
    """The few core/v1 ConfigMap requests the watcher makes: GET by name, a list of the manifest
    (``fieldSelector``) and a watch of it from a resourceVersion, replaying its history after
    that version. ``drop_watch`` ends the open watch without the chunked stream's end, as a
    connection reset does."""

    def __init__(self, publisher: Publisher):
        self.publisher = publisher
        self.history: list[tuple[int, str, dict]] = []  # (resourceVersion, type, manifest)
        self.watches: list[str] = []  # the resourceVersion each watch asked for
        self.lists = 0
        self._changed = threading.Condition()
        self._drop = threading.Event()
        self._stop = threading.Event()
        self._rv = 10
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                url = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(url.query))
                prefix = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
                if url.path == prefix and query.get("watch") == "true":
                    server._watch(self, query.get("resourceVersion", ""))
                elif url.path == prefix:
                    server._list(self)
                elif url.path.startswith(prefix + "/"):
                    name = url.path[len(prefix) + 1 :]
                    obj = server.publisher.objects.get(name)
                    if obj is None:
                        self._json(404, {"kind": "Status", "code": 404, "reason": "NotFound"})
                    else:
                        self._json(200, obj)
                else:
                    self._json(404, {"kind": "Status", "code": 404})

            def _json(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"
        threading.Thread(target=self._http.serve_forever, daemon=True).start()

    def publish(self, kind: str = "MODIFIED") -> int:
        """Records the Publisher's current manifest ConfigMap as the next resourceVersion."""
        with self._changed:
            self._rv += 1
            if kind == "BOOKMARK":  # only a resourceVersion, as the API server sends it
                manifest = {"kind": "ConfigMap", "metadata": {"resourceVersion": str(self._rv)}}
            else:
                manifest = copy.deepcopy(self.publisher.objects[self.publisher.manifest_name])
                manifest["metadata"]["resourceVersion"] = str(self._rv)
            self.history.append((self._rv, kind, manifest))
            self._changed.notify_all()
            return self._rv

    def drop_watch(self) -> None:
        with self._changed:
            self._drop.set()
            self._changed.notify_all()

    def close(self) -> None:
        with self._changed:
            self._stop.set()
            self._changed.notify_all()
        self._http.shutdown()
        self._http.server_close()

    def _list(self, handler) -> None:
        with self._changed:
            self.lists += 1
            rv = self.history[-1][0]
            manifest = [obj for _, kind, obj in self.history if kind != "BOOKMARK"][-1]
        handler._json(200, {"kind": "ConfigMapList", "metadata": {"resourceVersion": str(rv)},
                            "items": [manifest]})  # fmt: skip

    def _watch(self, handler, resource_version: str) -> None:
        with self._changed:
            self.watches.append(resource_version)
            self._changed.notify_all()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        sent = int(resource_version)
        while True:
            with self._changed:
                while not (self._stop.is_set() or self._drop.is_set()
                           or self.history[-1][0] > sent):  # fmt: skip
                    self._changed.wait(0.5)
                if self._stop.is_set():
                    return
                if self._drop.is_set():
                    self._drop.clear()
                    # No terminating chunk: the client sees the stream break off.
                    handler.close_connection = True
                    handler.wfile.flush()
                    handler.connection.close()
                    return
                events = [(rv, kind, obj) for rv, kind, obj in self.history if rv > sent]
            for rv, kind, obj in events:
                line = json.dumps({"type": kind, "object": obj}).encode() + b"\n"
                handler.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
                handler.wfile.flush()
                sent = rv


def _until(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.01)


@pytest.fixture
def cluster():
    publisher = Publisher()
    server = FakeApiServer(publisher)
    yield publisher, server
    server.close()


@contextlib.contextmanager
def _watching(server: FakeApiServer):
    from kubernetes import client

    configuration = client.Configuration()
    configuration.host = server.url
    api = client.CoreV1Api(client.ApiClient(configuration))
    reader = SnapshotReader(NAMESPACE, "products", "String")  # no trusted keys: older versions load
    watcher = FilterWatcher(
        reader, api, resync_seconds=60, backoff_seconds=0.05, max_backoff_seconds=0.1, start=False
    )
    with watcher.start():
        yield watcher


def test_a_dropped_watch_resumes_after_the_last_event_processed(cluster):
    publisher, server = cluster
    bits = Filter("Guava", "String", 2048, 5).add("a")
    publisher.whole(1, bits)
    listed = server.publish("ADDED")
    with _watching(server) as watcher:
        _until(lambda: watcher.version == 1 and len(server.watches) == 1, "v1 listed and a watch")
        assert server.watches == [str(listed)]

        publisher.delta(2, bits.copy().add("b"))
        server.publish()
        _until(lambda: watcher.version == 2, "v2 from the watch")
        publisher.delta(3, publisher.filters[2].copy().add("c"))
        last = server.publish()
        _until(lambda: watcher.version == 3, "v3 from the watch")
        assert watcher.resource_version == str(last)

        server.drop_watch()
        _until(lambda: len(server.watches) == 2, "the watch to be resumed")
        # Resumed after v3's event, not from the list's resourceVersion: v2 and v3 are not
        # replayed (v2 would load again without trusted keys, then v3).
        assert server.watches[1] == str(last)
        time.sleep(0.3)
        assert watcher.version == 3
        assert (watcher.loads, watcher.reader.swaps) == (3, 3)
        assert server.lists == 1, "a broken watch is resumed, not listed again"

        # And the resumed watch goes on from there.
        publisher.delta(4, publisher.filters[3].copy().add("d"))
        server.publish()
        _until(lambda: watcher.version == 4, "v4 from the resumed watch")
        assert watcher.loads == 4 and watcher.might_contain("d")


def test_bookmarks_move_the_resume_point(cluster):
    publisher, server = cluster
    publisher.whole(1, Filter("Guava", "String", 2048, 5).add("a"))
    server.publish("ADDED")
    with _watching(server) as watcher:
        _until(lambda: len(server.watches) == 1, "a watch")
        # A bookmark carries only a resourceVersion: nothing to act on, but later to resume from.
        bookmark = server.publish("BOOKMARK")
        _until(lambda: watcher.resource_version == str(bookmark), "the bookmark")
        server.drop_watch()
        _until(lambda: len(server.watches) == 2, "the watch to be resumed")
        assert server.watches[1] == str(bookmark)
        assert watcher.loads == 1
