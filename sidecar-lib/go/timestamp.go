package reader

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// offsetDateTime is the text Java's DateTimeFormatter.ISO_OFFSET_DATE_TIME parses, which the Java
// reader applies to createdAt: a four-digit year (more digits only with a sign), seconds and
// fraction optional, up to nine fraction digits, 'T' and 'Z' in either case, an offset of hours
// with optional ':'-separated minutes and seconds (testdata/java-created-at.tsv holds Java's
// verdicts).
var offsetDateTime = regexp.MustCompile(
	`^([+-]?\d{4,10})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{0,9}))?)?` +
		`(?:([Zz])|([+-])(\d{2})(?::(\d{2})(?::(\d{2}))?)?)$`)

// parseOffsetDateTime parses createdAt strictly: a date that does not exist (Feb 30), an hour of
// 24 or a leap second is refused, as Java's strict resolver does.
func parseOffsetDateTime(s string) (time.Time, bool) {
	m := offsetDateTime.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, false
	}
	num := func(i int) int {
		if m[i] == "" {
			return 0
		}
		n, _ := strconv.Atoi(m[i])
		return n
	}
	digits := strings.TrimLeft(m[1], "+-")
	if len(digits) > 4 && m[1][0] != '+' && m[1][0] != '-' || len(digits) == 4 && m[1][0] == '+' {
		return time.Time{}, false // a sign is required beyond four digits, and only then for '+'
	}
	year, _ := strconv.Atoi(m[1])
	if year > 999_999_999 || year < -999_999_999 {
		return time.Time{}, false
	}
	month, day := num(2), num(3)
	hour, minute, second := num(4), num(5), num(6)
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) ||
		hour > 23 || minute > 59 || second > 59 {
		return time.Time{}, false
	}
	nanos := 0
	if frac := m[7]; frac != "" {
		n, _ := strconv.Atoi(frac)
		for i := len(frac); i < 9; i++ {
			n *= 10
		}
		nanos = n
	}
	offset := 0
	if m[8] == "" {
		oh, om, os := num(10), num(11), num(12)
		if oh > 18 || om > 59 || os > 59 {
			return time.Time{}, false
		}
		offset = oh*3600 + om*60 + os
		if offset > 18*3600 {
			return time.Time{}, false
		}
		if m[9] == "-" {
			offset = -offset
		}
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, nanos, time.UTC)
	return t.Add(-time.Duration(offset) * time.Second), true
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
