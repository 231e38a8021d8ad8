package chart

import (
	"crypto/sha256"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// substitutionRounds is how many renderings with substituted sensitive inputs a redacted
// rendering compares with. The first keeps every character that is not a letter or digit, so
// a value keeps its syntax (a URL stays a URL, a YAML scalar stays plain); the second also
// replaces ASCII punctuation with letters, so what a chart takes from the punctuation alone
// (the first characters of "&&&&x", cut with trunc) is found too.
const substitutionRounds = 2

// substitute returns another value of the same length as value: every ASCII letter becomes
// another letter of the same case, every digit another digit, every other rune outside ASCII a
// neighbour of the same class, and from round 1 on every other
// ASCII character but whitespace a letter. The same value and round give the same
// substitute, so a value used twice is replaced alike and a plan and its apply compare with
// the same renderings.
func substitute(value string, round int) string {
	seed := sha256.Sum256([]byte(strconv.Itoa(round) + "\x00" + value))
	rng := rand.New(rand.NewChaCha8(seed))
	var b strings.Builder
	b.Grow(len(value))
	for _, r := range value {
		switch {
		case r >= 'a' && r <= 'z':
			b.WriteRune('a' + (r-'a'+1+rng.Int32N(25))%26)
		case r >= 'A' && r <= 'Z':
			b.WriteRune('A' + (r-'A'+1+rng.Int32N(25))%26)
		case r >= '0' && r <= '9':
			b.WriteRune('0' + (r-'0'+1+rng.Int32N(9))%10)
		case round > 0 && r < 0x80 && !strings.ContainsRune(" \t\n\r", r):
			b.WriteRune('a' + rng.Int32N(26))
		case r > 0x7f:
			b.WriteRune(neighbourRune(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// neighbourRune returns a rune next to r of the same UTF-8 length and the same letter, digit
// or other class, or r when there is none.
func neighbourRune(r rune) rune {
	for _, candidate := range []rune{r ^ 1, r + 1, r - 1} {
		if candidate != r && utf8.ValidRune(candidate) && utf8.RuneLen(candidate) == utf8.RuneLen(r) &&
			unicode.IsLetter(candidate) == unicode.IsLetter(r) && unicode.IsDigit(candidate) == unicode.IsDigit(r) &&
			unicode.IsSpace(candidate) == unicode.IsSpace(r) && unicode.IsPrint(candidate) == unicode.IsPrint(r) {
			return candidate
		}
	}
	return r
}

// substituteLeaves returns a copy of a values tree with every string leaf substituted and
// every number replaced by another of as many digits; booleans and nulls stay.
func substituteLeaves(value any, round int) any {
	switch v := value.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = substituteLeaves(e, round)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = substituteLeaves(e, round)
		}
		return out
	case string:
		return substitute(v, round)
	case int:
		return substituteNumber(v)
	case int64:
		return substituteNumber(v)
	case float64:
		// Digits only: a number stays a number.
		if f, err := strconv.ParseFloat(substitute(strconv.FormatFloat(v, 'f', -1, 64), 0), 64); err == nil {
			return f
		}
		return v
	default:
		return v
	}
}

func substituteNumber[T int | int64](n T) T {
	s := substitute(strconv.FormatInt(int64(n), 10), 0)
	if parsed, err := strconv.ParseInt(s, 10, 64); err == nil {
		return T(parsed)
	}
	return n
}

// leafTexts returns the text of every string and number leaf of a values tree.
func leafTexts(value any, out []string) []string {
	switch v := value.(type) {
	case map[string]any:
		for _, e := range v {
			out = leafTexts(e, out)
		}
	case []any:
		for _, e := range v {
			out = leafTexts(e, out)
		}
	case string:
		out = append(out, v)
	case int:
		out = append(out, strconv.Itoa(v))
	case int64:
		out = append(out, strconv.FormatInt(v, 10))
	case float64:
		out = append(out, strconv.FormatFloat(v, 'f', -1, 64))
	}
	return out
}
