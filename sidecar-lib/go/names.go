package reader

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// ConfigMap names and data keys of a published filter (docs/snapshot-protocol.md, "Objects").
const (
	manifestSuffix = "-bloom"
	maxNameLength  = 253

	// ManifestKey holds the stable manifest, SignatureKey its signature.
	ManifestKey  = "manifest.json"
	SignatureKey = "manifest.sig"
	// CanaryManifestKey, CanarySignatureKey and CanaryPercentKey announce a canary beside the
	// stable manifest, loaded only by readers whose pod is in the share.
	CanaryManifestKey  = "canary.json"
	CanarySignatureKey = "canary.sig"
	CanaryPercentKey   = "canary.percent"
	// ChunkKey is the binaryData key of a chunk ConfigMap.
	ChunkKey = "chunk"
)

// ManifestName is the name of filter's manifest ConfigMap: <filter>-bloom, or cut and marked
// with a hash when that would exceed 253 characters.
func ManifestName(filter string) string { return objectName(filter, "") }

// ChunkName is the canonical name of chunk index of version's whole payload:
// <filter>-bloom-v<version>-<index>.
func ChunkName(filter string, version int64, index int) string {
	return objectName(filter, "-v"+strconv.FormatInt(version, 10)+"-"+strconv.Itoa(index))
}

// DeltaChunkName is the canonical name of chunk index of the delta producing version:
// <filter>-bloom-v<version>-d<index>.
func DeltaChunkName(filter string, version int64, index int) string {
	return objectName(filter, "-v"+strconv.FormatInt(version, 10)+"-d"+strconv.Itoa(index))
}

// objectName is <filter>-bloom<rest>, or <start>-<hash>.bloom<rest> when that is over 253
// characters: the '.' marks a cut name, which no uncut filter name can produce. Filter names are
// Kubernetes names, hence ASCII, so bytes and characters coincide.
func objectName(filter, rest string) string {
	if len(filter)+len(manifestSuffix)+len(rest) <= maxNameLength {
		return filter + manifestSuffix + rest
	}
	tail := "-" + shortHash(filter) + "." + manifestSuffix[1:] + rest
	keep := maxNameLength - len(tail)
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && !isASCIIAlnum(filter[keep-1]) {
		keep--
	}
	return filter[:keep] + tail
}

// shortHash is 16 hex digits of SHA-256 of the filter name: what keeps cut names apart.
func shortHash(filter string) string {
	sum := sha256.Sum256([]byte(filter))
	return hex.EncodeToString(sum[:8])
}

func isASCIIAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Reader reports (docs/reader-protocol.md): one Lease per pod and filter that the operator counts
// into the filter's status.readers. The names and labels follow the Java side
// (SnapshotNames.readerReportName, filterLabelValue) exactly, as the operator compares them.
const (
	// LabelRole and LabelFilter are the labels the operator selects reader reports by.
	LabelRole   = "bloomoperator.io/role"
	LabelFilter = "bloomoperator.io/filter"
	// RoleReaderReport is the LabelRole value of a reader report.
	RoleReaderReport = "reader-report"
	// AnnotationFilter holds the filter's full name (its label may be cut).
	AnnotationFilter = "bloomoperator.io/filter"
	// AnnotationServed is the version served, decimal; absent before the first load.
	AnnotationServed = "bloomoperator.io/served-version"
	// AnnotationFailingVersion and AnnotationFailingReason name a newer version the reader fails
	// to load and why (a Reason), both or neither.
	AnnotationFailingVersion = "bloomoperator.io/failing-version"
	AnnotationFailingReason  = "bloomoperator.io/failing-reason"

	maxLabelValueLength = 63
	cutLabelMarker      = "_"
)

// ReaderReportName is the name of the reader report of the pod with UID podUID about filter:
// <filter>-bloom-ack-<16 hex digits of SHA-256 of the UID>, cut like the snapshot names when too
// long.
func ReaderReportName(filter, podUID string) string {
	return objectName(filter, "-ack-"+shortHash(podUID))
}

// FilterLabelValue is the LabelFilter value of filter: its name, or when over 63 characters its
// start, '_' and a hash (a value no filter name can have).
func FilterLabelValue(filter string) string {
	if len(filter) <= maxLabelValueLength {
		return filter
	}
	tail := cutLabelMarker + shortHash(filter)
	keep := maxLabelValueLength - len(tail)
	for keep > 0 && !isASCIIAlnum(filter[keep-1]) {
		keep--
	}
	return filter[:keep] + tail
}
