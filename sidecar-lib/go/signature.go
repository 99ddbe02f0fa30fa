package reader

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// signatureContext starts the signed bytes; the namespace and the exact manifest.json follow.
const signatureContext = "bloomoperator.io/manifest-signature/v1\n"

// TrustedKeys are the Ed25519 public keys whose manifest signatures a reader accepts. With none,
// signatures are neither required nor checked (and a lower version loads: see Reader).
type TrustedKeys struct {
	byID map[string]ed25519.PublicKey
}

// ParseTrustedKeys reads Ed25519 public keys in PEM SubjectPublicKeyInfo form
// ("-----BEGIN PUBLIC KEY-----", what `openssl pkey -pubout` writes). Several keys allow rotation.
func ParseTrustedKeys(pems ...string) (*TrustedKeys, error) {
	t := &TrustedKeys{byID: map[string]ed25519.PublicKey{}}
	for i, text := range pems {
		key, err := parsePublicKey(text)
		if err != nil {
			return nil, fmt.Errorf("trusted key %d: %w", i, err)
		}
		t.byID[keyID(key)] = key
	}
	return t, nil
}

func parsePublicKey(text string) (ed25519.PublicKey, error) {
	rest := []byte(text)
	for {
		block, next := pem.Decode(rest)
		if block == nil {
			return nil, errors.New("no PUBLIC KEY PEM block")
		}
		rest = next
		if block.Type != "PUBLIC KEY" {
			continue
		}
		parsed, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("not an X.509 public key: %w", err)
		}
		key, ok := parsed.(ed25519.PublicKey)
		if !ok {
			return nil, fmt.Errorf("expected an Ed25519 key, got %T", parsed)
		}
		return key, nil
	}
}

// keyID is 16 hex digits of SHA-256 of the key's X.509 encoding, the id a signature names.
func keyID(key ed25519.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		panic(err) // an ed25519.PublicKey always marshals
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:8])
}

// KeyIDs returns the ids of the trusted keys, sorted.
func (t *TrustedKeys) KeyIDs() []string {
	ids := make([]string, 0, t.len())
	if t != nil {
		for id := range t.byID {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

func (t *TrustedKeys) len() int {
	if t == nil {
		return 0
	}
	return len(t.byID)
}

// verify checks that manifestJSON, read in namespace, carries a valid signature by a trusted
// key; signatureData is manifest.sig (or canary.sig), hasSignature false when absent.
func (t *TrustedKeys) verify(namespace, manifestJSON, signatureData string, hasSignature bool) error {
	if t.len() == 0 {
		return nil
	}
	if !hasSignature {
		return newError(ReasonUnsigned, fmt.Sprintf(
			"manifest in namespace %s is not signed, and this reader only accepts manifests signed by key(s) %v",
			namespace, t.KeyIDs()))
	}
	sig, err := parseSignature(signatureData)
	if err != nil {
		return err
	}
	key, ok := t.byID[sig.keyID]
	if !ok {
		return newError(ReasonUntrustedKey, fmt.Sprintf(
			"manifest in namespace %s is signed by key '%s', which is not among the trusted %v",
			namespace, sig.keyID, t.KeyIDs()))
	}
	raw, decoded := decodeSignatureBase64(sig.signature)
	if !decoded || namespace == "" || strings.Contains(namespace, "\n") ||
		!ed25519.Verify(key, signedBytes(namespace, manifestJSON), raw) {
		return newError(ReasonBadSignature, fmt.Sprintf(
			"signature of the manifest in namespace %s by key '%s' does not verify: "+
				"the manifest was changed after signing or signed for another namespace",
			namespace, sig.keyID))
	}
	return nil
}

func signedBytes(namespace, manifestJSON string) []byte {
	var b bytes.Buffer
	b.Grow(len(signatureContext) + len(namespace) + 1 + len(manifestJSON))
	b.WriteString(signatureContext)
	b.WriteString(namespace)
	b.WriteByte('\n')
	b.WriteString(manifestJSON)
	return b.Bytes()
}

type signatureRecord struct {
	algorithm, keyID, signature string
}

// parseSignature reads {"algorithm":"Ed25519","keyId":"…","signature":"…"}: every field a
// string, unknown fields ignored; anything else is a bad signature.
func parseSignature(data string) (signatureRecord, error) {
	bad := newError(ReasonBadSignature, "manifest.sig is not a signature record")
	var o object
	if o.parse([]byte(data), "$") != nil {
		return signatureRecord{}, bad
	}
	var rec signatureRecord
	var err error
	if rec.algorithm, err = o.str("algorithm"); err != nil {
		return rec, bad
	}
	if rec.keyID, err = o.str("keyId"); err != nil {
		return rec, bad
	}
	if rec.signature, err = o.str("signature"); err != nil {
		return rec, bad
	}
	if rec.algorithm != "Ed25519" {
		return rec, newError(ReasonBadSignature, fmt.Sprintf(
			"manifest.sig uses algorithm '%s', only Ed25519 is accepted", rec.algorithm))
	}
	return rec, nil
}

// decodeSignatureBase64 decodes standard Base64 with padding optional, and no line breaks (which
// Go's decoder would skip and Java's refuses).
func decodeSignatureBase64(s string) ([]byte, bool) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, false
	}
	enc := base64.StdEncoding
	if !strings.Contains(s, "=") && len(s)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	b, err := enc.DecodeString(s)
	return b, err == nil
}
