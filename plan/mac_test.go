package plan

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func macPlan() *Plan {
	return &Plan{Fabric: "lab", Created: time.Date(2026, 12, 6, 3, 0, 0, 123, time.FixedZone("X", 3600)), IntentHash: "abc",
		Targets: []TargetPlan{{Name: "leaf1", Kind: KindSwitch, Basis: "b1",
			Changes: []Change{{Action: Update, Path: "/qos", Before: "1", After: "2"}},
			Payload: json.RawMessage(`{"replace": [ {"path": {"elem": [{"name":"qos"}]}} ]}`)}}}
}

// TestPlanMACSurvivesTheFile: a plan signed, saved and loaded verifies
// with the key; any edit of the file's content (the payload above all),
// another key, or no MAC at all does not.
func TestPlanMACSurvivesTheFile(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	p := macPlan()
	if err := p.Sign(key); err != nil {
		t.Fatal(err)
	}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	q, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Verify(key); err != nil {
		t.Fatalf("the saved plan does not verify: %v", err)
	}
	for name, edit := range map[string]func(*Plan){
		"payload": func(p *Plan) {
			p.Targets[0].Payload = json.RawMessage(`{"replace": [ {"path": {"elem": [{"name":"system"}]}} ]}`)
		},
		"basis":       func(p *Plan) { p.Targets[0].Basis = "b2" },
		"intent hash": func(p *Plan) { p.IntentHash = "" },
		"change":      func(p *Plan) { p.Targets[0].Changes[0].After = "3" },
		"target":      func(p *Plan) { p.Targets = append(p.Targets, TargetPlan{Name: "leaf2", Kind: KindSwitch}) },
		"no mac":      func(p *Plan) { p.MAC = "" },
	} {
		r, _ := Unmarshal(b)
		edit(r)
		if err := r.Verify(key); !errors.Is(err, ErrMAC) {
			t.Errorf("%s edited: Verify = %v, want ErrMAC", name, err)
		}
	}
	if err := q.Verify([]byte("another key of 32 bytes, or so..")); !errors.Is(err, ErrMAC) {
		t.Errorf("another key: %v, want ErrMAC", err)
	}
	if err := p.Sign([]byte("short")); err == nil {
		t.Errorf("a 5-byte key was accepted")
	}
}
