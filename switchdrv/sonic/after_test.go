package sonic

import (
	"maps"
	"slices"
	"testing"
)

func newTestWant() *want {
	return &want{keys: map[string]map[string]hash{}, fields: map[string]map[string]hash{}, dels: map[string]map[string]bool{}, seen: map[string]bool{}}
}

// TestTableAfter: the table as the Set leaves it, which GCU's final check
// and the stale-object references both read: deleted keys gone, a key
// write replacing the hash, field writes merged (creating a missing key).
func TestTableAfter(t *testing.T) {
	have := db{"BUFFER_PG": {
		"Ethernet0|3": {"profile": "old"},
		"Ethernet4|3": {"profile": "old"},
		"Ethernet8|3": {"profile": "old", "x": "1"},
	}}
	w := newTestWant()
	w.del("BUFFER_PG", "Ethernet0|3")
	w.setKey("BUFFER_PG", "Ethernet4|3", hash{"profile": "new"})
	w.setField("BUFFER_PG", "Ethernet8|3", "profile", "new")
	w.setField("BUFFER_PG", "Ethernet12|3", "profile", "new")
	got := tableAfter(w, have, "BUFFER_PG")
	want := map[string]hash{
		"Ethernet4|3":  {"profile": "new"},
		"Ethernet8|3":  {"profile": "new", "x": "1"},
		"Ethernet12|3": {"profile": "new"},
	}
	if !maps.EqualFunc(got, want, maps.Equal) {
		t.Fatalf("table after the Set:\n got %v\nwant %v", got, want)
	}
	if have["BUFFER_PG"]["Ethernet8|3"]["profile"] != "old" {
		t.Fatal("tableAfter changed the observed hash")
	}
}

// TestFinalRefsSeesFieldWritesToNewKeys: a port key that only a field
// write creates still references its profile, so the profile is not
// deleted in the same Set (the leafref would refuse it).
func TestFinalRefsSeesFieldWritesToNewKeys(t *testing.T) {
	have := db{"BUFFER_PROFILE": {bufferPrefix + "1": {"size": "1"}}}
	w := newTestWant()
	w.setField("BUFFER_PG", "Ethernet0|3", "profile", bufferPrefix+"1")
	if by := finalRefs(w, have)[bufferPrefix+"1"]; !slices.Equal(by, []string{"BUFFER_PG|Ethernet0|3"}) {
		t.Fatalf("references to %s1: %v, want BUFFER_PG|Ethernet0|3", bufferPrefix, by)
	}
	var notes []string
	deleteStale(w, have, &notes)
	if w.dels["BUFFER_PROFILE"][bufferPrefix+"1"] {
		t.Fatalf("a profile a new key references was deleted (notes %q)", notes)
	}
}
