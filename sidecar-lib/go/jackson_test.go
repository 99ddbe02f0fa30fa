package reader

import (
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"unicode"
)

func TestUnicodeDigitRunsStartAtZero(t *testing.T) {
	for _, rg := range unicode.Nd.R16 {
		if rg.Stride != 1 || (rg.Hi-rg.Lo+1)%10 != 0 {
			t.Fatalf("Nd range %x-%x", rg.Lo, rg.Hi)
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rg.Stride != 1 || (rg.Hi-rg.Lo+1)%10 != 0 {
			t.Fatalf("Nd range %x-%x", rg.Lo, rg.Hi)
		}
	}
	for text, want := range map[string]int64{"２": 2, "+07": 7, " 9\t": 9, "٣٤": 34, "-9223372036854775808": -9223372036854775808} {
		if got, ok := parseJavaInteger(text, 64); !ok || got != want {
			t.Errorf("%q: %d %v", text, got, ok)
		}
	}
	for _, text := range []string{"", " ", "2.0", "0x2", "9223372036854775808", "2\u00a0", "1_0", "--1"} {
		if _, ok := parseJavaInteger(text, 64); ok {
			t.Errorf("%q accepted", text)
		}
	}
	if _, ok := parseJavaInteger("2147483648", 32); ok {
		t.Error("int overflow accepted")
	}
}

// testdata/java-manifests.tsv.gz: manifests (a chain of the vectors, mutated field by field) with
// what Java's Manifest.fromJson made of them: the Go reader must accept exactly those.
func TestManifestParsingMatchesJava(t *testing.T) {
	file, err := os.Open("testdata/java-manifests.tsv.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	gz, err := gzip.NewReader(file)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		f := strings.Split(line, "\t")
		text, err := base64.StdEncoding.DecodeString(f[1])
		if err != nil {
			t.Fatal(err)
		}
		_, err = ParseManifest(string(text))
		if got := map[bool]string{true: "ok", false: "refused"}[err == nil]; got != f[2] {
			t.Errorf("%s: %s (%v), Java: %s", f[0], got, err, f[2])
		}
		n++
	}
	if n < 100 {
		t.Fatalf("only %d manifests", n)
	}
}

// Jackson's parser limits, at the boundaries where Java's Manifest.fromJson accepted and refused
// (Jackson 2.20 defaults): nesting 1000 (the manifest object counts), 1000 digits, names of
// 50,000 characters.
func TestJacksonLimits(t *testing.T) {
	fx := &publisher{c: newCluster(ns), filter: "ids", chunkSize: 64}
	text, _ := json.Marshal(fx.whole(1, keysFilter(LayoutGuava, "a")))
	with := func(extra string) string { return string(text[:len(text)-1]) + `,"x":` + extra + "}" }
	for extra, ok := range map[string]bool{
		strings.Repeat("[", 999) + strings.Repeat("]", 999):   true,
		strings.Repeat("[", 1000) + strings.Repeat("]", 1000): false,
		strings.Repeat("1", 1000):                             true,
		"-" + strings.Repeat("1", 1000):                       true,
		strings.Repeat("1", 1001):                             false,
		"-" + strings.Repeat("1", 1001):                       false,
		"1." + strings.Repeat("1", 999):                       true,
		"0." + strings.Repeat("1", 1001):                      false,
		`{"` + strings.Repeat("a", 50000) + `":1}`:            true,
		`{"` + strings.Repeat("a", 50001) + `":1}`:            false,
	} {
		if _, err := ParseManifest(with(extra)); (err == nil) != ok {
			t.Errorf("%.20s… (%d chars): %v, Java accepts: %v", extra, len(extra), err, ok)
		}
	}
}

// testdata/java-signatures.tsv: manifest.sig variants for one manifest and key (whose id is all
// decimal digits, so that a keyId written as a JSON number is tried), with Java's
// TrustedKeys.verify verdicts.
func TestSignatureRecordsMatchJava(t *testing.T) {
	data, err := os.ReadFile("testdata/java-signatures.tsv")
	if err != nil {
		t.Fatal(err)
	}
	decode := func(s string) string {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var keys *TrustedKeys
	var manifest string
	n := 0
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		f := strings.Split(line, "\t")
		switch f[0] {
		case "#pem":
			if keys, err = ParseTrustedKeys(decode(f[1])); err != nil {
				t.Fatal(err)
			}
			continue
		case "#json":
			manifest = decode(f[1])
			continue
		}
		got := "ok"
		if err := keys.verify("vectors", manifest, decode(f[1]), true); err != nil {
			got = string(ReasonOf(err))
		}
		if got != f[2] {
			t.Errorf("%s: %s, Java: %s", f[0], got, f[2])
		}
		n++
	}
	if n < 20 {
		t.Fatalf("only %d signatures", n)
	}
}
