package manifest

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
)

// parseYAMLValue parses one YAML document into JSON-compatible values, the values
// sigs.k8s.io/yaml's YAMLToJSON followed by apimachinery's JSON decoding give, without the
// JSON text between them.
func parseYAMLValue(text []byte) (any, error) {
	var raw any
	if err := yamlv2.Unmarshal(text, &raw); err != nil {
		return nil, err
	}
	return jsonValue(raw)
}

// jsonValue is v as encoding/json writes it and apimachinery's JSON decoding reads it back.
func jsonValue(v any) (any, error) {
	switch v := v.(type) {
	case nil, bool:
		return v, nil
	case string:
		return validUTF8(v), nil
	case int:
		return int64(v), nil
	case int64:
		return v, nil
	case uint64:
		if v <= math.MaxInt64 {
			return int64(v), nil
		}
		return float64(v), nil
	case float64:
		return jsonNumber(v)
	case time.Time:
		return v.Format(time.RFC3339Nano), nil
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			converted, err := jsonValue(item)
			if err != nil {
				return nil, err
			}
			out[i] = converted
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(v))
		for key, item := range v {
			name, err := jsonKey(key, item)
			if err != nil {
				return nil, err
			}
			converted, err := jsonValue(item)
			if err != nil {
				return nil, err
			}
			out[name] = converted
		}
		return out, nil
	default:
		return nil, fmt.Errorf("json: unsupported type: %s", reflect.TypeOf(v))
	}
}

// jsonNumber is f written by encoding/json and read back: a value below 1e21 is written in
// its shortest decimal form, without an exponent, and read as int64 when that form is an
// integer that fits.
func jsonNumber(f float64) (any, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		if i, err := strconv.ParseInt(strconv.FormatFloat(f, 'f', -1, 64), 10, 64); err == nil {
			return i, nil
		}
	}
	return f, nil
}

// jsonKey is a mapping key as sigs.k8s.io/yaml turns it into a JSON object's name.
func jsonKey(key, value any) (string, error) {
	switch k := key.(type) {
	case string:
		return validUTF8(k), nil
	case int:
		return strconv.Itoa(k), nil
	case int64:
		return strconv.FormatInt(k, 10), nil
	case float64:
		s := strconv.FormatFloat(k, 'g', -1, 32)
		switch s {
		case "+Inf":
			s = ".inf"
		case "-Inf":
			s = "-.inf"
		case "NaN":
			s = ".nan"
		}
		return s, nil
	case bool:
		if k {
			return "true", nil
		}
		return "false", nil
	default:
		return "", fmt.Errorf("unsupported map key of type: %s, key: %+#v, value: %+#v", reflect.TypeOf(key), key, value)
	}
}

// validUTF8 is s with each byte that is not part of valid UTF-8 replaced by U+FFFD, as
// encoding/json writes strings.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}
