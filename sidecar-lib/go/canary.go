package reader

import (
	"crypto/sha256"
	"encoding/binary"
)

// CanaryBucket is the bucket of podName, 0..99: the first four bytes of SHA-256 of its UTF-8
// bytes as an unsigned big-endian number, modulo 100. Every reader and the operator compute the
// same bucket, so the same pods are chosen every time.
func CanaryBucket(podName string) int {
	sum := sha256.Sum256([]byte(podName))
	return int(binary.BigEndian.Uint32(sum[:4]) % 100)
}

// InCanaryShare reports whether the reader of pod podName belongs to a share of percent %. A
// reader that does not know its pod name is never in a share.
func InCanaryShare(podName string, percent int) bool {
	return podName != "" && percent >= 1 && percent <= 100 && CanaryBucket(podName) < percent
}

// canaryPercent parses canary.percent: 1..100 in at most three plain decimal digits, else 0.
func canaryPercent(text string) int {
	if len(text) == 0 || len(text) > 3 {
		return 0
	}
	n := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	if n < 1 || n > 100 {
		return 0
	}
	return n
}
