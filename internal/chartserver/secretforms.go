package chartserver

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// SecretFormsLeaks returns, by name, the ways the secret-forms fixture chart writes a
// db.password (with db.user "app"): as is, URL-escaped, base64-encoded once and twice, in
// basic auth, upper- and lower-cased, cut to 10 characters, hashed, with characters replaced.
// Each also appears as JSON and Go quoting escape it in a log line or an error. None of them
// may show in a plan or a log.
func SecretFormsLeaks(password string) map[string]string {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	sha := sha256.Sum256([]byte(password))
	sha1sum := sha1.Sum([]byte(password))
	forms := map[string]string{
		"literal":    password,
		"urlquery":   url.QueryEscape(password),
		"basic auth": b64("app:" + password),
		"base64":     b64(password),
		"upper":      strings.ToUpper(password),
		"lower":      strings.ToLower(password),
		"trunc 10":   password[:min(10, len(password))],
		"b64 b64":    b64(b64(password)),
		"sha256sum":  hex.EncodeToString(sha[:]),
		"sha1sum":    hex.EncodeToString(sha1sum[:]),
		"replace":    strings.ReplaceAll(strings.ReplaceAll(password, "&", "and"), " ", "_"),
	}
	out := make(map[string]string, 3*len(forms))
	for name, form := range forms {
		jsonText, _ := json.Marshal(form)
		out[name] = form
		out[name+" as JSON"] = strings.Trim(string(jsonText), `"`)
		out[name+" quoted"] = strings.Trim(strconv.Quote(form), `"`)
	}
	return out
}

// SecretFormsIn returns the names of the forms of SecretFormsLeaks(password) that text shows,
// sorted; none when no form of it shows.
func SecretFormsIn(text, password string) []string {
	var found []string
	for name, form := range SecretFormsLeaks(password) {
		if strings.Contains(text, form) {
			found = append(found, name)
		}
	}
	slices.Sort(found)
	return found
}
