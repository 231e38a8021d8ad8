package manifest

import (
	"reflect"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// viaJSON is what a document parsed to before parseYAMLValue: sigs.k8s.io/yaml's YAMLToJSON,
// then apimachinery's JSON decoding with integers kept as int64.
func viaJSON(text []byte) (any, error) {
	j, err := yaml.YAMLToJSON(text)
	if err != nil {
		return nil, err
	}
	var v any
	if err := utiljson.Unmarshal(j, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// yamlValueCases are documents whose values YAML and JSON spell differently: numbers of
// every form, YAML 1.1's booleans, timestamps, binary, keys that are not strings, anchors and
// merges, and the documents the conversion refuses.
var yamlValueCases = []string{
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n",
	"a: 1\nb: -7\nc: 0755\nd: 0x1F\ne: 9223372036854775807\nf: -9223372036854775808\ng: 9223372036854775808\nh: 18446744073709551615\ni: 18446744073709551616\n",
	"a: 1.0\nb: 1.5\nc: 1e20\nd: 1e21\ne: 1e-7\nf: 0.0\ng: -0.0\nh: 12e3\ni: 9.3e18\nj: -9.223372036854775808e18\nk: 0.1e1\nl: 1_000\n",
	"a: .inf\n",
	"a: -.inf\n",
	"a: .nan\n",
	"a: yes\nb: no\nc: on\nd: off\ne: true\nf: False\ng: ~\nh: null\ni: ''\nj: 'yes'\n",
	"a: 2001-12-14\nb: 2001-12-14t21:59:43.10-05:00\nc: !!timestamp 2001-12-14\nd: '2001-12-14'\n",
	"a: !!binary gIGC\nb: !!binary aGVsbG8=\nc: \"\\xff\\u00e9\"\nd: \"\\x00\\t\"\n",
	"1: one\n2.5: two-and-a-half\ntrue: yes-key\n-3: minus\n.inf: inf\n",
	"~: null key\n",
	"? [a, b]\n: list key\n",
	"? {a: b}\n: map key\n",
	"base: &b\n  x: 1\n  y: [1, 2]\nderived:\n  <<: *b\n  z: 3\nalias: *b\n",
	"list:\n- a\n- 1\n- {k: 2.0}\n- [x, [y, 3]]\n- null\n",
	"block: |\n  line one\n  line two\nfolded: >-\n  folded\n  text\n",
	"- just\n- a list\n",
	"a scalar\n",
	"42\n",
	"a: [1, 2\n",
	"a: b\n  c: d\n",
	"a: !!str 1\nb: !!int '2'\nc: !!float '3'\nd: !!bool 'true'\n",
	"a: &x 1\nb: *x\nc: *undefined\n",
}

func TestParseYAMLValue_isWhatYAMLToJSONThenJSONGave(t *testing.T) {
	for _, text := range yamlValueCases {
		assertParsesAsViaJSON(t, text)
	}
}

func FuzzParseYAMLValue_isWhatYAMLToJSONThenJSONGave(f *testing.F) {
	for _, text := range yamlValueCases {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		assertParsesAsViaJSON(t, text)
	})
}

func assertParsesAsViaJSON(t *testing.T, text string) {
	t.Helper()
	want, wantErr := viaJSON([]byte(text))
	got, err := parseYAMLValue([]byte(text))
	if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("parse of %q: error %v, want %v", text, err, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parse of %q:\n got %#v\nwant %#v", text, got, want)
	}
}
