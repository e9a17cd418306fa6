package intent

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/fabricctl/fabricctl/internal/profile"
)

// Schema returns a JSON Schema (draft 2020-12) of the intent file format,
// generated from the same types the parser decodes into, so the two cannot
// drift apart. Editors using yaml-language-server validate and complete
// intents with it:
//
//	# yaml-language-server: $schema=./fabricctl.schema.json
func Schema() ([]byte, error) {
	root := schemaOf(reflect.TypeOf(rawFile{}))
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$id"] = "https://fabricctl.io/schemas/" + strings.TrimPrefix(APIVersion, "fabricctl.io/") + "/fabric.json"
	root["title"] = "fabricctl fabric intent"
	root["patternProperties"] = map[string]any{
		"^x-":  map[string]any{"description": "free-form; holds YAML anchors"},
		"^<<$": map[string]any{"description": "YAML merge key"},
	}
	return json.MarshalIndent(root, "", "  ")
}

// unitPatterns are the schemas of the unit types: their string patterns are
// the unit grammar's own expressions (units.go), never written twice.
var unitPatterns = map[reflect.Type]map[string]any{
	reflect.TypeOf(Size(0)): {"description": "bytes: 19456, 150KB, 1.5MB, 64KiB (at most 2^63-1 B)",
		"oneOf": []any{map[string]any{"type": "integer", "minimum": 0},
			map[string]any{"type": "string", "pattern": sizeGrammar.pattern()}}},
	reflect.TypeOf(Rate(0)): {"description": "bits/s: 25G, 100G, 400G, 800G (at most 10T)",
		"type": "string", "pattern": rateGrammar.pattern()},
	reflect.TypeOf(Length(0)): {"description": "cable length: 3m, 100m, 2km, 150cm (at most 100 km)",
		"type": "string", "pattern": lengthGrammar.pattern()},
	reflect.TypeOf(Percent(0)): {"description": "percent: 50% or 50",
		"oneOf": []any{map[string]any{"type": "number", "minimum": 0, "maximum": 100},
			map[string]any{"type": "string", "pattern": percentGrammar.pattern()}}},
	reflect.TypeOf(Duration(0)): {"description": "duration: 100ms, 2s, 1m",
		"oneOf": []any{map[string]any{"const": 0},
			map[string]any{"type": "string", "pattern": durationGrammar.pattern()}}},
	reflect.TypeOf(PauseStormPrevention(0)): {"description": "off, auto or a stall time of whole ms within 80ms-8s (e.g. 100ms)",
		"oneOf": []any{map[string]any{"enum": []any{"off", "auto"}},
			map[string]any{"type": "string", "pattern": durationGrammar.pattern()}}},
	reflect.TypeOf(rawLink{}): {"description": "a cable: [node:port, node:port] or {a: node:port, b: node:port}",
		"oneOf": []any{
			map[string]any{"type": "array", "items": map[string]any{"type": "string", "pattern": "^[^:]+:.+$"}, "minItems": 2, "maxItems": 2},
			map[string]any{"type": "object", "additionalProperties": false, "required": []string{"a", "b"},
				"properties": map[string]any{"a": map[string]any{"type": "string"}, "b": map[string]any{"type": "string"}}}}},
}

func schemaOf(t reflect.Type) map[string]any {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if u, ok := unitPatterns[t]; ok {
		out := map[string]any{}
		for k, v := range u {
			out[k] = v
		}
		return out
	}
	switch t.Kind() {
	case reflect.Struct:
		props := map[string]any{}
		var req []string
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if key == "" || key == "-" {
				continue
			}
			p := schemaOf(f.Type)
			if d := f.Tag.Get("doc"); d != "" {
				p["description"] = d
			}
			if r := f.Tag.Get("range"); r != "" {
				lo, hi, _ := strings.Cut(r, ",")
				l, _ := strconv.Atoi(lo)
				h, _ := strconv.Atoi(hi)
				target := p
				if p["type"] == "array" {
					target = p["items"].(map[string]any)
				}
				target["minimum"], target["maximum"] = l, h
			}
			if e := f.Tag.Get("enum"); e != "" {
				var vals []any
				for _, v := range strings.Split(e, ",") {
					if n, err := strconv.Atoi(v); err == nil && p["type"] == "integer" {
						vals = append(vals, n)
					} else {
						vals = append(vals, v)
					}
				}
				p["enum"] = vals
			}
			if src := f.Tag.Get("enumfrom"); src != "" {
				var vals []any
				for _, v := range enumSources[src]() {
					vals = append(vals, v)
				}
				p["enum"] = vals
			}
			if strings.HasPrefix(f.Tag.Get("doc"), "NOT ALLOWED") {
				p["not"] = map[string]any{}
			}
			props[key] = p
			if f.Tag.Get("required") == "true" {
				req = append(req, key)
			}
		}
		// "<<" is YAML's merge key, which the parser honours in every mapping.
		out := map[string]any{"type": "object", "additionalProperties": false, "properties": props,
			"patternProperties": map[string]any{"^<<$": map[string]any{"description": "YAML merge key"}}}
		if len(req) > 0 {
			out["required"] = req
		}
		return out
	case reflect.Slice:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem())}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Float64:
		return map[string]any{"type": "number"}
	}
	return map[string]any{}
}

// enumSources fill the enum of fields tagged enumfrom (values that live in
// data, not in the struct tag).
var enumSources = map[string]func() []string{
	"profiles": func() []string { return profile.Names("") },
	"asics":    profile.ASICNames,
}
