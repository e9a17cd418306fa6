package jtree

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzSortedText: SortedText of a JSON text, when it gives one, is
// ExactText of the text's decoding, with and without members skipped at
// the top.
func FuzzSortedText(f *testing.F) {
	for _, s := range []string{`{"name":"a","b":{"z":1,"a":[1,{"y":null,"x":true}]}}`, ` { "b" : 1 , "a" : "x" } `, `[]`, `{}`, `"s"`, `1.5e3`,
		`{"a":1,"a":2}`, `{"m:a":1}`, `{"a":"<"}`, `{"a":"\u0041"}`, `[{"name":"x"},{}]`, `null`, `false`, `{"a":{"b":{}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, js []byte) {
		if !json.Valid(js) {
			return
		}
		v, err := Decode(js)
		if err != nil {
			t.Fatal(err)
		}
		for _, skip := range [][]string{nil, {"name"}} {
			got, ok := SortedText(nil, js, skip)
			if !ok {
				continue
			}
			want, ok := ExactText(nil, v, skip)
			if !ok {
				t.Fatalf("SortedText(%q, %q) = %s, ExactText of its decoding none", js, skip, got)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("SortedText(%q, %q) = %s, ExactText of its decoding %s", js, skip, got, want)
			}
		}
	})
}

func TestSortedText(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		skip     []string
		ok       bool
	}{
		{in: `{"name":"a","b":{"z":1,"a":[1,{"y":null,"x":true}]}}`, skip: []string{"name"}, want: `{"b":{"a":[1,{"x":true,"y":null}],"z":1}}`, ok: true},
		{in: ` { "b" : 1 , "a" : "x" } `, want: `{"a":"x","b":1}`, ok: true},
		{in: `{"a":1,"a":2}`},
		{in: `{"m:a":1}`},
		{in: `{"a":"\u0041"}`},
	} {
		got, ok := SortedText(nil, []byte(tc.in), tc.skip)
		if ok != tc.ok || (ok && string(got) != tc.want) {
			t.Errorf("SortedText(%s, %q) = %s, %v; want %s, %v", tc.in, tc.skip, got, ok, tc.want, tc.ok)
		}
	}
}

// BenchmarkSortedText: a DSCP policy of 64 entries and a port's QoS
// settings, as SR Linux desired values are written.
func BenchmarkSortedText(b *testing.B) {
	var js []byte
	js = append(js, `{"name":"P","dscp":[`...)
	for i := range 64 {
		if i > 0 {
			js = append(js, ',')
		}
		js = append(js, `{"value":`...)
		js = append(js, byte('0'+i%10))
		js = append(js, `,"forwarding-class":"fc0"}`...)
	}
	js = append(js, `],"output":{"scheduler":{"scheduler-policy":"S"},"queues":{"queue":[{"queue-name":"unicast-3","queue-management-profile":"ECN"}]},"buffer-allocation-profile":"Q"}}`...)
	var buf []byte
	b.SetBytes(int64(len(js)))
	b.ReportAllocs()
	for b.Loop() {
		var ok bool
		if buf, ok = SortedText(buf[:0], js, []string{"name"}); !ok {
			b.Fatal("no text")
		}
	}
}
