package switchdrv

import (
	"strconv"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/proto"
)

// TestUpdateBlocks: the updates Replace, Update and UpdateJSON take from
// shared arrays (a reserved one, then blocks of 8 to 32) are distinct messages,
// each with its own path and value, past the end of each array too; a
// change to one leaves the others as they were.
func TestUpdateBlocks(t *testing.T) {
	var d Desired
	d.Reserve(-1) // nothing to reserve: no panic, nothing made
	if d.values != nil || len(d.msgs.ups) != 0 {
		t.Fatal("Reserve(-1) reserved something")
	}
	d.Reserve(10)
	const n = 150
	for i := range n {
		e := Elem("queue", "name", strconv.Itoa(i))
		switch i % 3 {
		case 0:
			d.UpdateJSON([]byte(strconv.Itoa(i)), e)
		case 1:
			if err := d.Update(i, e); err != nil {
				t.Fatal(err)
			}
		default:
			if err := d.Replace(i, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	all := append(append([]*gnmipb.Update{}, d.Updates...), d.Replaces...)
	if len(all) != n {
		t.Fatalf("%d updates, want %d", len(all), n)
	}
	seen := map[*gnmipb.Update]bool{}
	check := func(us []*gnmipb.Update) {
		t.Helper()
		for _, u := range us {
			name := u.GetPath().GetElem()[0].GetKey()["name"]
			if got := string(u.GetVal().GetJsonIetfVal()); got != name {
				t.Fatalf("update of queue %s holds %s", name, got)
			}
		}
	}
	for _, u := range all {
		if seen[u] {
			t.Fatal("one message handed out twice")
		}
		seen[u] = true
		if _, err := proto.Marshal(u); err != nil {
			t.Fatal(err)
		}
	}
	check(all)
	// Changing the messages of one update changes no other.
	for _, u := range all[:1] {
		u.GetVal().GetValue().(*gnmipb.TypedValue_JsonIetfVal).JsonIetfVal = []byte("x")
		u.GetPath().Elem = nil
		u.Val.Value = nil
	}
	check(all[1:])
}
