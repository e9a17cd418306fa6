package intent_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
)

// allocatedBy is how many bytes f allocates (runtime.MemStats.TotalAlloc:
// everything, freed or not, so it bounds the peak too).
func allocatedBy(f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

const memHead = "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: m}\npolicy: {preset: roce-lossless}\n"
const memTail = "inventory:\n  switches:\n    - {name: leaf1, platform: srlinux, address: \"127.0.0.1:57400\", portDefaults: {speed: 400G, cable: 3m}, ports: [{name: ethernet-1/1}]}\n"

// TestExtensionKeyIsBounded (issue 29): an x- key holding 800,000 small
// maps (8.8 MB, within the 64 MiB file limit) is refused before decoding,
// naming the key and its line, and parsing allocates at most twice the
// input. Before, it was decoded and then ignored: 57 bytes allocated per
// input byte (500 MB here; 2.4 GB peak for the 60 MB file).
func TestExtensionKeyIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(memHead + "x-pad:\n")
	for range 800_000 {
		b.WriteString("  - {a: 1}\n")
	}
	b.WriteString(memTail)
	data := []byte(b.String())
	var err error
	alloc := allocatedBy(func() { _, err = intent.Parse("pad.yaml", data) })
	if err == nil || !strings.Contains(err.Error(), "pad.yaml:5") || !strings.Contains(err.Error(), "extension key x-pad holds more than") {
		t.Errorf("a 8.8 MB x- key: %v, want it refused at pad.yaml:5", err)
	}
	if alloc > 2*uint64(len(data)) {
		t.Errorf("parsing allocated %d bytes for a %d-byte file (%.1f per byte), want at most 2 per byte", alloc, len(data), float64(alloc)/float64(len(data)))
	}
	// A small x- key with anchors still works.
	ok := memHead + "x-port: &port {speed: 400G, cable: 3m}\n" + strings.Replace(memTail, "{speed: 400G, cable: 3m}", "*port", 1)
	if _, err := intent.Parse("ok.yaml", []byte(ok)); err != nil {
		t.Errorf("an x- key with an anchor: %v", err)
	}
}

// TestValueCountIsBounded: 2.2 million values anywhere (here an unknown
// key's list, which decoding would reject only after building all of them)
// are refused before decoding, with the line and the limit, allocating at
// most twice the input. Before: about 100 bytes per input byte, then the
// unknown-field error.
func TestValueCountIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(memHead + "extra:\n  list: [")
	for i := range 2_200_000 {
		if i > 0 {
			b.WriteString(",")
			if i%32 == 0 {
				b.WriteString("\n    ")
			}
		}
		b.WriteString("1")
	}
	b.WriteString("]\n" + memTail)
	data := []byte(b.String())
	var err error
	alloc := allocatedBy(func() { _, err = intent.Parse("dense.yaml", data) })
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d YAML values", intent.MaxNodes)) {
		t.Errorf("2.2 million values: %v", err)
	}
	if alloc > 2*uint64(len(data)) {
		t.Errorf("parsing allocated %d bytes for a %d-byte file (%.1f per byte), want at most 2 per byte", alloc, len(data), float64(alloc)/float64(len(data)))
	}
}

// TestLargeRealFabricIsNotRefused: 1,000 switches of 64 ports, written as
// operators write them (one flow map per port, quoted descriptions with
// colons and # in them), stay well under the value limit.
func TestLargeRealFabricIsNotRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString(memHead + "inventory:\n  switches:\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "    - name: leaf%d # rack %d\n      platform: srlinux\n      address: \"10.0.%d.%d:57400\"\n      portDefaults: {speed: 400G, cable: 3m}\n      ports:\n", i, i, i/256, i%256)
		for j := range 64 {
			fmt.Fprintf(&b, "        - {name: ethernet-1/%d, description: \"to gpu%d: rail %d # it's\"}\n", j+1, i*64+j, j%8)
		}
	}
	if _, err := intent.Parse("big.yaml", []byte(b.String())); err != nil && strings.Contains(err.Error(), "YAML values") {
		t.Errorf("a 1,000-switch fabric was refused: %v", err)
	}
}

// TestHugeNamesAreRefusedAndClipped (issue 29): a 1 MiB switch name (or
// fabric name, or address) is refused with its start and length, and no
// error repeats it: the whole error text stays short. Before, the name was
// accepted and `check` printed it whole twice, `apply` four times.
func TestHugeNamesAreRefusedAndClipped(t *testing.T) {
	huge := strings.Repeat("n", 1<<20)
	for _, tc := range []struct{ what, old, new string }{
		{"switch name", "name: leaf1", "name: " + huge},
		{"fabric name", "{name: m}", "{name: " + huge + "}"},
		{"switch address", `"127.0.0.1:57400"`, huge + ":57400"},
	} {
		doc := strings.Replace(memHead+memTail, tc.old, tc.new, 1)
		_, err := intent.Parse("huge.yaml", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), tc.what+" of ") || !strings.Contains(err.Error(), fmt.Sprintf("at most %d", intent.MaxNameLen)) {
			t.Errorf("%s of 1 MiB: %.300v", tc.what, err)
			continue
		}
		if len(err.Error()) > 2000 {
			t.Errorf("%s of 1 MiB: the error is %d bytes long", tc.what, len(err.Error()))
		}
	}
}
