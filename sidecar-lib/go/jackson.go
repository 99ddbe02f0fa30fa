package reader

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// The Java reader binds manifest.json and manifest.sig with Jackson, whose defaults a reader must
// match to accept exactly what the Java reader accepts: the stream limits of its parser, and the
// coercions between scalars (a number where a string belongs, a string where a number belongs).
// testdata/java-manifests.tsv.gz holds Java's verdicts on such manifests.

// Jackson's default StreamReadConstraints.
const (
	jacksonMaxNestingDepth = 1000
	jacksonMaxNumberLength = 1000
	jacksonMaxNameLength   = 50_000
)

// checkJacksonLimits refuses JSON text Jackson's parser refuses by default although it is valid
// JSON: nesting deeper than 1000, a number of more than 1000 digits, a field name of more than
// 50,000 characters. The text is otherwise assumed to be checked by encoding/json.
func checkJacksonLimits(text []byte) error {
	depth := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '{' || c == '[':
			depth++
			if depth > jacksonMaxNestingDepth {
				return fmt.Errorf("nesting depth exceeds %d", jacksonMaxNestingDepth)
			}
		case c == '}' || c == ']':
			depth--
		case c == '"':
			start := i + 1
			for i++; i < len(text) && text[i] != '"'; i++ {
				if text[i] == '\\' {
					i++
				}
			}
			if isFieldName(text, i+1) && javaLength(text[start:min(i, len(text))]) > jacksonMaxNameLength {
				return fmt.Errorf("a field name exceeds %d characters", jacksonMaxNameLength)
			}
		case c == '-' || c >= '0' && c <= '9':
			digits, intDigits, float := 0, 0, false
			for ; i < len(text); i++ {
				d := text[i]
				if d >= '0' && d <= '9' {
					digits++
					if !float {
						intDigits++
					}
				} else if d == '.' || d == 'e' || d == 'E' {
					float = true
				} else if d != '-' && d != '+' {
					break
				}
			}
			i--
			if intDigits > jacksonMaxNumberLength || float && digits > jacksonMaxNumberLength {
				return fmt.Errorf("a number exceeds %d digits", jacksonMaxNumberLength)
			}
		}
	}
	return nil
}

// isFieldName: the string that ended just before from is followed by ':'.
func isFieldName(text []byte, from int) bool {
	for ; from < len(text); from++ {
		switch text[from] {
		case ' ', '\t', '\r', '\n':
			continue
		case ':':
			return true
		}
		return false
	}
	return false
}

// javaLength is the length of a JSON string body in UTF-16 units, escapes counted as the one
// character they stand for (close enough for a limit: \uXXXX pairs count two, as in Java).
func javaLength(body []byte) int {
	n := 0
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\\':
			if i+1 < len(body) && body[i+1] == 'u' {
				i += 5
			} else {
				i++
			}
			n++
		case c < 0x80 || c >= 0xC0:
			n++
			if c >= 0xF0 {
				n++ // a supplementary character is two UTF-16 units
			}
		}
	}
	return n
}

// javaTrim is String.trim(): drops leading and trailing characters up to ' ' (not Unicode spaces).
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// parseJavaInteger is Jackson's coercion of a JSON string to a long or int: trimmed, then
// Long.parseLong / Integer.parseInt (an optional sign, Unicode decimal digits, no overflow).
func parseJavaInteger(s string, bits int) (int64, bool) {
	s = javaTrim(s)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	limit := uint64(1)<<(bits-1) - 1
	if neg {
		limit++
	}
	var v uint64
	for _, r := range s {
		dv := digitValue(r)
		if dv < 0 {
			return 0, false
		}
		d := uint64(dv)
		if v > (limit-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		return -int64(v-1) - 1, true
	}
	return int64(v), true
}

// digitValue of a Unicode decimal digit (Java's Character.digit(r, 10)): every range of the Nd
// table is whole runs of ten digits, each starting at its zero.
func digitValue(r rune) int {
	for _, rg := range unicode.Nd.R16 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); r >= lo && r <= hi {
			return int(r-lo) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); r >= lo && r <= hi {
			return int(r-lo) % 10
		}
	}
	return -1
}

// parseJavaDouble is Jackson's coercion of a JSON string to a double: trimmed, then
// Double.parseDouble (decimal or hexadecimal, an optional f/F/d/D suffix, "NaN", "Infinity").
func parseJavaDouble(s string) (float64, bool) {
	s = javaTrim(s)
	switch s {
	case "NaN", "+NaN", "-NaN":
		return math.NaN(), true
	case "Infinity", "+Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	if n := len(s); n > 0 && strings.ContainsRune("fFdD", rune(s[n-1])) {
		s = s[:n-1]
	}
	if s == "" || strings.ContainsAny(s, "_iInN") {
		return 0, false // Go's spellings of infinity and NaN, and digit separators, are not Java's
	}
	lower := strings.ToLower(strings.TrimLeft(s, "+-"))
	if strings.HasPrefix(lower, "0x") && !strings.Contains(lower, "p") {
		return 0, false // Java's hexadecimal floats need a binary exponent
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !strings.Contains(err.Error(), "range") {
		return 0, false
	}
	return f, true // out of range: ±Inf or 0, as Java gives
}
