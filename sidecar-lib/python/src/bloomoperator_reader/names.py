"""Object names and data keys of a filter's snapshot ConfigMaps (``SnapshotNames`` in Java).

A name that would pass Kubernetes' 253 characters is cut, given 16 hex digits of SHA-256 of the
whole filter name and a ``.`` where an uncut name has ``-`` before ``bloom``: no filter can be
named like another filter's cut name.
"""

from __future__ import annotations

import hashlib

MAX_NAME_LENGTH = 253
MANIFEST_SUFFIX = "-bloom"
MANIFEST_DATA_KEY = "manifest.json"
SIGNATURE_DATA_KEY = "manifest.sig"
CANARY_MANIFEST_DATA_KEY = "canary.json"
CANARY_SIGNATURE_DATA_KEY = "canary.sig"
CANARY_PERCENT_DATA_KEY = "canary.percent"
CHUNK_DATA_KEY = "chunk"

MIN_VERSION = 1
MAX_VERSION = 999_999_999_999_999_999
"""Versions are 1..10^18-1 on every side of the wire format (``SnapshotVersions``)."""

_HASH_HEX_CHARS = 16


def valid_version(version: int) -> bool:
    return MIN_VERSION <= version <= MAX_VERSION


def short_hash(filter_name: str) -> str:
    """16 lower-case hex digits of SHA-256 of the UTF-8 filter name."""
    return hashlib.sha256(filter_name.encode("utf-8")).hexdigest()[:_HASH_HEX_CHARS]


def manifest_name(filter_name: str) -> str:
    """``<filter>-bloom``, cut and marked if over 253 characters."""
    return _object_name(filter_name, "")


def chunk_name(filter_name: str, version: int, index: int) -> str:
    """``<filter>-bloom-v<version>-<index>``: chunk ``index`` of a whole payload."""
    _check_part(version, index)
    return _object_name(filter_name, f"-v{version}-{index}")


def delta_chunk_name(filter_name: str, version: int, index: int) -> str:
    """``<filter>-bloom-v<version>-d<index>``: chunk ``index`` of the delta producing ``version``."""
    _check_part(version, index)
    return _object_name(filter_name, f"-v{version}-d{index}")


def _check_part(version: int, index: int) -> None:
    if not valid_version(version) or index < 0:
        raise ValueError(f"version must be in {MIN_VERSION}..{MAX_VERSION} and index >= 0")


def _object_name(filter_name: str, rest: str) -> str:
    if not filter_name:
        raise ValueError("filter name must not be empty")
    if len(filter_name) + len(MANIFEST_SUFFIX) + len(rest) <= MAX_NAME_LENGTH:
        return filter_name + MANIFEST_SUFFIX + rest
    tail = "-" + short_hash(filter_name) + "." + MANIFEST_SUFFIX[1:] + rest
    return _cut(filter_name, MAX_NAME_LENGTH - len(tail)) + tail


def _cut(filter_name: str, keep: int) -> str:
    # A DNS name may not have '.' or '-' right before the '-<hash>' that follows.
    cut = keep
    while cut > 0 and not filter_name[cut - 1].isalnum():
        cut -= 1
    return filter_name[:cut]


# Reader reports (docs/reader-protocol.md): one Lease per pod and filter, which the operator counts
# into the filter's status.readers only under exactly these names, labels and annotations
# (``SnapshotNames.readerReportName`` / ``filterLabelValue`` and ``ReaderReports`` in Java).
LABEL_ROLE = "bloomoperator.io/role"
LABEL_FILTER = "bloomoperator.io/filter"
ROLE_READER_REPORT = "reader-report"
ANNOTATION_FILTER = "bloomoperator.io/filter"
ANNOTATION_SERVED = "bloomoperator.io/served-version"
ANNOTATION_FAILING_VERSION = "bloomoperator.io/failing-version"
ANNOTATION_FAILING_REASON = "bloomoperator.io/failing-reason"
MAX_LABEL_VALUE_LENGTH = 63


def reader_report_name(filter_name: str, pod_uid: str) -> str:
    """``<filter>-bloom-ack-<16 hex digits of SHA-256 of the pod UID>``, cut like the others."""
    if not pod_uid:
        raise ValueError("pod UID must not be empty")
    return _object_name(filter_name, "-ack-" + short_hash(pod_uid))


def filter_label_value(filter_name: str) -> str:
    """The filter name, or if over 63 characters its start, ``_`` and a hash."""
    if not filter_name:
        raise ValueError("filter name must not be empty")
    if len(filter_name) <= MAX_LABEL_VALUE_LENGTH:
        return filter_name
    tail = "_" + short_hash(filter_name)
    return _cut(filter_name, MAX_LABEL_VALUE_LENGTH - len(tail)) + tail
