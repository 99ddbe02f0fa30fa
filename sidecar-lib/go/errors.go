package reader

import (
	"errors"
	"strings"
)

// Reason says why a snapshot was not loaded, in the fixed vocabulary of the Java reader's
// LoadFailureReason (and of the reader reports the operator counts). Messages may quote manifest
// content written by whoever can write ConfigMaps; reasons never do, so metrics and reports use
// reasons only.
type Reason string

// The reasons a reader reports. The refusals (IsRefusal) are decided from the manifest alone,
// before anything it names is fetched.
const (
	ReasonAPI              Reason = "API"
	ReasonChunk            Reason = "CHUNK"
	ReasonHeap             Reason = "HEAP"
	ReasonStoreDenied      Reason = "STORE_DENIED"
	ReasonStoreUnavailable Reason = "STORE_UNAVAILABLE"
	ReasonDisk             Reason = "DISK"
	ReasonVerification     Reason = "VERIFICATION"
	ReasonTooLarge         Reason = "TOO_LARGE"
	ReasonWrongFilter      Reason = "WRONG_FILTER"
	ReasonForeignChunk     Reason = "FOREIGN_CHUNK"
	ReasonUnsigned         Reason = "UNSIGNED"
	ReasonUntrustedKey     Reason = "UNTRUSTED_KEY"
	ReasonBadSignature     Reason = "BAD_SIGNATURE"
	ReasonRollback         Reason = "ROLLBACK"
	ReasonTooOld           Reason = "TOO_OLD"
	ReasonUnknownStore     Reason = "UNKNOWN_STORE"
)

// IsRefusal reports whether r is a policy refusal of a well-formed manifest (limits, names,
// signatures, rollback) rather than a failure while reading or verifying it.
func (r Reason) IsRefusal() bool {
	switch r {
	case ReasonTooLarge, ReasonWrongFilter, ReasonForeignChunk, ReasonUnsigned,
		ReasonUntrustedKey, ReasonBadSignature, ReasonRollback, ReasonTooOld,
		ReasonUnknownStore:
		return true
	}
	return false
}

// Error is every failure of this package: a Reason and a message for humans.
type Error struct {
	Reason Reason
	// Chunk is the 0-based index of the offending chunk, or -1 when the failure is not about one.
	Chunk int
	msg   string
	cause error
}

func (e *Error) Error() string { return string(e.Reason) + ": " + e.msg }

// Unwrap returns the underlying error, if any (e.g. the ConfigMapGetter's).
func (e *Error) Unwrap() error { return e.cause }

// ReasonOf returns the Reason of err: that of the *Error it wraps, else ReasonAPI (the only other
// source of failures is the ConfigMapGetter). Nil for nil.
func ReasonOf(err error) Reason {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ReasonAPI
}

// maxMessageBytes caps messages: they quote manifest fields chosen by whoever wrote the manifest.
const maxMessageBytes = 1024

func newError(reason Reason, msg string) *Error {
	return &Error{Reason: reason, Chunk: -1, msg: printable(msg)}
}

func chunkError(reason Reason, chunk int, msg string) *Error {
	return &Error{Reason: reason, Chunk: chunk, msg: printable(msg)}
}

func verification(msg string) *Error { return newError(ReasonVerification, msg) }

// printable replaces control characters (forged log lines) and caps the length.
func printable(msg string) string {
	var b strings.Builder
	for i, r := range msg {
		if i >= maxMessageBytes {
			b.WriteString("... (cut)")
			break
		}
		if r < 0x20 || (r >= 0x7f && r < 0xa0) {
			b.WriteByte('?')
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
