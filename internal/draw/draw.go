// Package draw gives a chart's templates functions that draw from a seed.
//
// Helm's templates draw values at random (randAlphaNum, uuidv4, genCA, htpasswd, now). A
// release that draws anew on every rendering can neither show its plan nor keep a password
// across upgrades, and one that keeps every value that differs between two renderings also
// freezes the inputs mixed into them. The functions here draw instead from a stream that a
// release's own secret seed, the function, its arguments and how many identical calls came
// before determine: two renderings with the same seed and inputs agree, and a changed input
// changes exactly the values computed from it.
//
// Go draws keys from the system's source whatever it is given (rsa.GenerateKey and
// ecdsa.GenerateKey ignore their reader), bcrypt draws its own salt, and a certificate holds
// the time it was made, so no seed determines those. In [Applied] mode they are drawn once
// per call and [Session], so every rendering of one plan or apply agrees; in [Traced] mode
// they are placeholders that the seed, the call and its arguments determine, so a rendering
// in that mode is a function of its inputs alone and says where such a value would change.
//
// The package has no cluster, network or framework imports: only the template functions'
// own libraries.
package draw

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
	mathrand "math/rand"
	randv2 "math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/template"
	"time"

	"github.com/Masterminds/goutils"
	"github.com/Masterminds/sprig/v3"
	"github.com/google/uuid"
	"github.com/huandu/xstrings"
)

// Mode says what a rendering's functions return where no seed determines the value.
type Mode int

const (
	// Applied draws what an apply applies: keys, certificates, bcrypt hashes and AES
	// ciphertexts drawn once per call and session, and the session's clock.
	Applied Mode = iota
	// Traced returns placeholders for them, determined by the seed, the call and its
	// arguments, and a clock the seed determines.
	Traced
)

// Unseeded names the template functions whose results no seed determines.
var Unseeded = []string{
	"bcrypt", "htpasswd", "genPrivateKey", "encryptAES",
	"genCA", "genCAWithKey", "genSelfSignedCert", "genSelfSignedCertWithKey", "genSignedCert", "genSignedCertWithKey",
}

// Seeded names the template functions drawn from the seed.
var Seeded = []string{"randAlphaNum", "randAlpha", "randAscii", "randNumeric", "randBytes", "randInt", "uuidv4", "shuffle"}

// Clock names the template functions that read the clock.
var Clock = []string{"now", "ago"}

// ReadingDrawn names the template functions, drawing nothing themselves, that a rendering
// replaces to read what one of Unseeded returned in Traced mode (customCert).
var ReadingDrawn = []string{"buildCustomCert"}

// Session holds what one plan or apply draws without a seed, so that each of its renderings
// gets the same key or certificate for the same call.
type Session struct {
	now   time.Time
	mu    sync.Mutex
	drawn map[string][]reflect.Value
	// standIns are the calls that stood in, in a Traced rendering, for values an Applied one
	// drew, by the SHA-256 of the value (see StandIns); read-only once renderings start.
	standIns map[string]StandIn
}

// StandIn is the call of a function no seed determines whose placeholder a Traced rendering
// wrote where an Applied one drew a value: the result's field holding it (Cert, Key; empty for
// a string result) and the call's identity. A later Traced rendering given that value back
// (a CA read back with lookup and buildCustomCert) writes the same placeholder for it, so what
// is made from it traces as it did.
type StandIn struct {
	Field string `json:"field,omitempty"`
	Call  string `json:"call"`
}

// StandInKey is the key of a value in a StandIn map: the hex SHA-256 of its text.
func StandInKey(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// UseStandIns makes s's Traced renderings write, for a value standIns holds given to
// buildCustomCert, its call's placeholder. Call it before the first rendering.
func (s *Session) UseStandIns(standIns map[string]StandIn) *Session {
	s.standIns = standIns
	return s
}

// NewSession returns a session whose clock reads now.
func NewSession(now time.Time) *Session {
	return &Session{now: now, drawn: map[string][]reflect.Value{}}
}

// once returns what draw returned for the call id, calling it the first time.
func (s *Session) once(id string, draw func() []reflect.Value) []reflect.Value {
	s.mu.Lock()
	defer s.mu.Unlock()
	if out, ok := s.drawn[id]; ok {
		return out
	}
	out := draw()
	s.drawn[id] = out
	return out
}

// Rendering is the template functions of one rendering.
type Rendering struct {
	session *Session
	seed    []byte
	// apart seeds the placeholders and the clock of Traced mode; seed unless set with Apart.
	apart []byte
	mode  Mode
	// calls counts the calls of each identity so far; a rendering runs its templates one at a
	// time, but Unseeded may be read from another goroutine.
	mu       sync.Mutex
	calls    map[string]int
	unseeded atomic.Bool
	// given holds, in Traced mode, each placeholder's draw and the draws whose placeholders its
	// call was given (see Given).
	given map[string][]string
	// apartDraws, when set, are the draws whose placeholders draw from apartDrawsSeed (see
	// ApartDraws).
	apartDraws     map[string]bool
	apartDrawsSeed []byte
	// callsOf holds, in Traced mode, the identity of each placeholder's call by its draw (see
	// Calls).
	callsOf map[string]string
}

// Rendering returns the functions of one rendering with seed in mode. Use a new one for each
// rendering: calls are numbered from the start of the rendering.
func (s *Session) Rendering(seed []byte, mode Mode) *Rendering {
	return &Rendering{session: s, seed: seed, apart: seed, mode: mode, calls: map[string]int{}, given: map[string][]string{}, callsOf: map[string]string{}}
}

// Apart makes r's placeholders and clock in Traced mode draw from seed instead, while the
// seeded functions keep theirs: what differs from a rendering without it depends on a value
// no seed determines.
func (r *Rendering) Apart(seed []byte) *Rendering {
	r.apart = seed
	return r
}

// ApartDraws makes the placeholders of the draws named in draws (as Given names them) draw from
// seed instead in Traced mode, the others and the clock keeping theirs: what differs from a
// rendering without it is made from one of those draws.
func (r *Rendering) ApartDraws(seed []byte, draws map[string]bool) *Rendering {
	r.apartDraws, r.apartDrawsSeed = draws, seed
	return r
}

// Unseeded reports whether the rendering called a function that no seed determines, or the
// clock, in either mode.
func (r *Rendering) Unseeded() bool { return r.unseeded.Load() }

// Funcs returns the template functions that replace Helm's drawing ones.
func (r *Rendering) Funcs() template.FuncMap {
	funcs := template.FuncMap{
		"randAlphaNum": func(count int) string { return r.randString("randAlphaNum", count, 0, 0, true, true) },
		"randAlpha":    func(count int) string { return r.randString("randAlpha", count, 0, 0, true, false) },
		"randNumeric":  func(count int) string { return r.randString("randNumeric", count, 0, 0, false, true) },
		"randAscii":    func(count int) string { return r.randString("randAscii", count, 32, 127, false, false) },
		"randBytes": func(count int) (string, error) {
			if count < 0 {
				return "", fmt.Errorf("randBytes: count %d is negative", count)
			}
			buf := make([]byte, count)
			_, _ = r.stream("randBytes", count).Read(buf)
			return base64.StdEncoding.EncodeToString(buf), nil
		},
		"randInt": func(minimum, maximum int) int {
			if maximum <= minimum {
				panic(fmt.Sprintf("randInt: %d is not above %d", maximum, minimum))
			}
			return minimum + int(randv2.New(r.stream("randInt", minimum, maximum)).Int64N(int64(maximum-minimum)))
		},
		"uuidv4": func() string {
			id, err := uuid.NewRandomFromReader(r.stream("uuidv4"))
			if err != nil {
				panic(err) // the stream never fails
			}
			return id.String()
		},
		"shuffle": func(s string) string {
			return xstrings.ShuffleSource(s, int63Source{randv2.New(r.stream("shuffle", s))})
		},
		"now": r.now,
		"ago": func(date any) string { return agoFrom(r.now(), date) },
	}
	sprigFuncs := sprig.TxtFuncMap()
	for _, name := range Unseeded {
		funcs[name] = r.unseededFunc(name, reflect.ValueOf(sprigFuncs[name]))
	}
	funcs["buildCustomCert"] = r.customCert(reflect.ValueOf(sprigFuncs["buildCustomCert"]))
	return funcs
}

// customCert wraps sprig's buildCustomCert, which parses a certificate and its key given in
// base64. In Traced mode, given what a traced rendering writes for a certificate no seed
// determines (a CA generated at install and read back with lookup to sign others, as many
// charts keep theirs), it returns that stand-in as the function that drew it did, where the
// real function would fail to parse it; given a certificate and key an Applied rendering drew
// and the session's stand-ins hold (the same CA read back once applied), it returns the
// placeholders of the call that stood in for them, so that what is made from the CA traces as
// it did when it was drawn. Anything else, and every call in Applied mode, is the real
// function's.
func (r *Rendering) customCert(f reflect.Value) any {
	t := f.Type()
	return reflect.MakeFunc(t, func(args []reflect.Value) []reflect.Value {
		if r.mode == Traced && len(args) == 2 && args[0].Kind() == reflect.String && args[1].Kind() == reflect.String {
			cert, certErr := base64.StdEncoding.DecodeString(args[0].String())
			key, keyErr := base64.StdEncoding.DecodeString(args[1].String())
			if certErr == nil && keyErr == nil {
				certText, keyText := string(cert), string(key)
				if !unseededPlaceholder.Match(cert) && !unseededPlaceholder.Match(key) {
					// A certificate an Applied rendering drew, given back: its call's
					// placeholder, as the rendering that drew it wrote.
					var certIn, keyIn bool
					if certText, certIn = r.standIn(certText); !certIn {
						return f.Call(args)
					}
					if keyText, keyIn = r.standIn(keyText); !keyIn {
						return f.Call(args)
					}
				}
				out := make([]reflect.Value, t.NumOut())
				for i := range out {
					out[i] = reflect.New(t.Out(i)).Elem()
				}
				if c := out[0]; c.Kind() == reflect.Struct {
					c.FieldByName("Cert").SetString(certText)
					c.FieldByName("Key").SetString(keyText)
				}
				return out
			}
		}
		return f.Call(args)
	}).Interface()
}

// randString draws as goutils' random string functions do, from the call's stream; like
// sprig's, it returns "" for a negative count.
func (r *Rendering) randString(name string, count, start, end int, letters, numbers bool) string {
	out, _ := goutils.RandomSeed(count, start, end, letters, numbers, nil, mathrand.New(int63Source{randv2.New(r.stream(name, count))}))
	return out
}

// now is the clock: the session's in Applied mode, one the seed determines in Traced mode.
func (r *Rendering) now() time.Time {
	r.unseeded.Store(true)
	if r.mode == Traced {
		sum := r.digestWith(r.apart, "now")
		// A second within about three years of 2023, so dates formatted from it look like dates.
		return time.Unix(1672531200+int64(binary.BigEndian.Uint64(sum[:8])%100_000_000), 0).UTC()
	}
	return r.session.now
}

// unseededFunc wraps f, one of sprig's functions that no seed determines: in Applied mode it
// is called once per call and session; in Traced mode it returns a placeholder of its result
// types, determined by the seed and the call.
func (r *Rendering) unseededFunc(name string, f reflect.Value) any {
	t := f.Type()
	return reflect.MakeFunc(t, func(args []reflect.Value) []reflect.Value {
		id := r.callID(name, args)
		r.unseeded.Store(true)
		if r.mode == Traced {
			return placeholders(t, r.placeholder(name, id))
		}
		return r.session.once(hex.EncodeToString(r.digest(id)), func() []reflect.Value { return f.Call(args) })
	}).Interface()
}

// placeholder returns the placeholder of the call id of name in Traced mode, and notes its
// draw: what it was given, and the call.
func (r *Rendering) placeholder(name, id string) string {
	draw := name + ":" + hex.EncodeToString(r.digestWith(r.apart, id)[:16])
	r.mu.Lock()
	r.given[draw] = PlaceholderDraws(id)
	r.callsOf[draw] = id
	r.mu.Unlock()
	if r.apartDraws[draw] {
		return name + ":" + hex.EncodeToString(r.digestWith(r.apartDrawsSeed, id)[:16])
	}
	return draw
}

// Calls returns, for each draw whose placeholder r wrote in Traced mode (as Given names it),
// the identity of its call.
func (r *Rendering) Calls() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.callsOf)
}

// standIn returns what r writes, in Traced mode, for text, a value an Applied rendering drew
// that the session's stand-ins hold: the placeholder of the call that stood in for it.
func (r *Rendering) standIn(text string) (string, bool) {
	in, ok := r.session.standIns[StandInKey(text)]
	if !ok {
		return "", false
	}
	name, _, _ := strings.Cut(in.Call, "\x00")
	r.unseeded.Store(true)
	placeholder := r.placeholder(name, in.Call)
	if in.Field == "" {
		return placeholder, true
	}
	return in.Field + " " + placeholder, true
}

// placeholders returns values of t's result types that stand for draw (the function's name and
// the call's digest): strings and the string fields of a certificate say what they stand for,
// an error is nil.
func placeholders(t reflect.Type, draw string) []reflect.Value {
	text := draw
	out := make([]reflect.Value, t.NumOut())
	for i := range out {
		v := reflect.New(t.Out(i)).Elem()
		switch v.Kind() {
		case reflect.String:
			v.SetString(text)
		case reflect.Struct:
			for j := range v.NumField() {
				if f := v.Field(j); f.Kind() == reflect.String && f.CanSet() {
					f.SetString(v.Type().Field(j).Name + " " + text)
				}
			}
		}
		out[i] = v
	}
	return out
}

// Given returns, for each call of a function no seed determines that r traced, the draw its
// placeholders name and the draws whose placeholders the call was given among its arguments (a
// certificate's CA): the values drawn anew together, as one is made from another.
func (r *Rendering) Given() map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.given)
}

// placeholderDraw matches the draw a placeholder names: a function's name and 32 hexadecimal
// digits.
var placeholderDraw = regexp.MustCompile(`[A-Za-z0-9]+:[0-9a-f]{32}`)

// wholePlaceholder matches the whole of what Traced mode writes in place of one result: a
// placeholder, after the name of the result's field for a certificate's (see placeholders).
var wholePlaceholder = regexp.MustCompile(`^(?:([A-Z][A-Za-z]*) )?(` + placeholderDraw.String() + `)$`)

// ParsePlaceholder returns the result's field (empty for a string result) and the draw that
// text names, when text is, whole, what Traced mode writes in place of one result.
func ParsePlaceholder(text string) (field, draw string, ok bool) {
	m := wholePlaceholder.FindStringSubmatch(text)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// PlaceholderDraws returns the draws the placeholders in text name, sorted, each once; text may
// hold other words of that form, which only a Given's draws tell apart.
func PlaceholderDraws(text string) []string {
	draws := placeholderDraw.FindAllString(text, -1)
	slices.Sort(draws)
	return slices.Compact(draws)
}

// unseededPlaceholder matches a placeholder of a function no seed determines, as Traced mode
// writes it in place of a string or of a certificate's field.
var unseededPlaceholder = regexp.MustCompile(`\b(` + strings.Join(Unseeded, "|") + `):[0-9a-f]{32}\b`)

// UnseededPlaceholders returns the functions, sorted, each once, of the placeholders of
// functions no seed determines that text holds: what a Traced rendering writes in place of a
// key, a certificate or a hash, which no applied rendering holds.
func UnseededPlaceholders(text string) []string {
	var names []string
	for _, m := range unseededPlaceholder.FindAllStringSubmatch(text, -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// callID names a call by its function, arguments and how many identical calls the rendering
// made before it.
func (r *Rendering) callID(name string, args []reflect.Value) string {
	id := name
	for _, a := range args {
		id += "\x00" + fmt.Sprintf("%#v", a.Interface())
	}
	r.mu.Lock()
	n := r.calls[id]
	r.calls[id]++
	r.mu.Unlock()
	return id + "\x00#" + strconv.Itoa(n)
}

// stream returns the stream of one call of a seeded function.
func (r *Rendering) stream(name string, args ...any) *randv2.ChaCha8 {
	values := make([]reflect.Value, len(args))
	for i, a := range args {
		values[i] = reflect.ValueOf(a)
	}
	var seed [32]byte
	copy(seed[:], r.digest(r.callID(name, values)))
	return randv2.NewChaCha8(seed)
}

// digest is the HMAC-SHA256 of id keyed with the rendering's seed.
func (r *Rendering) digest(id string) []byte { return r.digestWith(r.seed, id) }

// digestWith is the HMAC-SHA256 of id keyed with seed.
func (r *Rendering) digestWith(seed []byte, id string) []byte {
	mac := hmac.New(sha256.New, seed)
	mac.Write([]byte(id))
	return mac.Sum(nil)
}

// int63Source adapts a math/rand/v2 generator to the math/rand Source the string and shuffle
// libraries take.
type int63Source struct{ r *randv2.Rand }

func (s int63Source) Int63() int64 { return s.r.Int64() }
func (s int63Source) Seed(int64)   {}

// agoFrom is sprig's ago, measured from now instead of the system's clock.
func agoFrom(now time.Time, date any) string {
	var t time.Time
	switch date := date.(type) {
	default:
		t = now
	case time.Time:
		t = date
	case int64:
		t = time.Unix(date, 0)
	case int:
		t = time.Unix(int64(date), 0)
	}
	return now.Sub(t).Round(time.Second).String()
}
