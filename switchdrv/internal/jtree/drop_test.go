package jtree

import (
	"encoding/json"
	"testing"
)

// TestDropMembers: on texts that are what ExactText writes, DropMembers
// gives what SortedText gives (the referee), and it refuses other texts.
func TestDropMembers(t *testing.T) {
	exact := []string{
		`{}`,
		`{"name":"a"}`,
		`{"a":1,"name":"x","z":{"name":"inner","q":[1,2,{"name":"deep"}]}}`,
		`{"interface-id":"ethernet-1/1","name":"n","output":{"queues":{"queue":[{"queue-name":"unicast-3"}]}}}`,
		`{"a":[],"b":{},"c":true,"d":false,"e":-12,"f":"s p a c e","name":"k"}`,
		`{"name":"a","sequence":0}`,
	}
	for _, js := range exact {
		v, err := Decode([]byte(js))
		if err != nil {
			t.Fatal(err)
		}
		// Only texts ExactText writes as they are count.
		if txt, ok := ExactText(nil, v, nil); !ok || string(txt) != js {
			t.Fatalf("%s is not exact text (%s)", js, txt)
		}
		for _, names := range [][]string{nil, {"name"}, {"name", "a"}, {"interface-id"}, {"absent"}} {
			want, ok1 := SortedText(nil, []byte(js), names)
			got, ok2 := DropMembers(nil, []byte(js), names)
			if !ok1 || !ok2 || string(got) != string(want) {
				t.Errorf("DropMembers(%s, %v) = %s %v, SortedText %s %v", js, names, got, ok2, want, ok1)
			}
			if ok2 && !json.Valid(got) {
				t.Errorf("DropMembers(%s, %v) = %s: invalid JSON", js, names, got)
			}
		}
	}
	for _, js := range []string{``, `[]`, `"s"`, `{"a":1`, `{"a" :1}`, `{ "a":1}`, `{"a":"x\"y"}`, `{"a":"<"}`, `{"a":1,}`, `{"a":1}x`, `{"a":{"b":1}`, `{"name":1,"a":[1,2}`} {
		if got, ok := DropMembers(nil, []byte(js), []string{"name"}); ok {
			t.Errorf("DropMembers(%q) = %s, want refused", js, got)
		}
	}
}

// FuzzDropMembers: whenever DropMembers answers for a text that ExactText
// writes as is, SortedText answers the same.
func FuzzDropMembers(f *testing.F) {
	f.Add(`{"a":1,"name":"x","z":{"name":"inner","q":[1,2,{"name":"deep"}]}}`)
	f.Add(`{"name":"a"}`)
	f.Fuzz(func(t *testing.T, js string) {
		got, ok := DropMembers(nil, []byte(js), []string{"name"})
		if !ok {
			return
		}
		v, err := Decode([]byte(js))
		if err != nil {
			return // not an input DropMembers is for
		}
		if txt, ok := ExactText(nil, v, nil); !ok || string(txt) != js {
			return // not an input DropMembers is for
		}
		want, ok := SortedText(nil, []byte(js), []string{"name"})
		if !ok || string(got) != string(want) {
			t.Errorf("DropMembers(%s) = %s, SortedText %s %v", js, got, want, ok)
		}
	})
}
