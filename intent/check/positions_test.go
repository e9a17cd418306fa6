package check

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/fabricctl/fabricctl/intent"
)

// TestEveryRulePointsAtItsField runs every rule on a fault spliced into the
// base intent (yaml_test.go) and checks that each of the rule's findings lies
// inside the YAML node of the field the fault is in: the key and its value,
// not the first key of the enclosing block.
func TestEveryRulePointsAtItsField(t *testing.T) {
	tests := []struct {
		id       string
		old, new string
		// old2 and new2 make a second splice, when one is not enough.
		old2, new2 string
		// field is the node the finding must lie in, as a path of YAML
		// keys and list indexes (policy.classes.0.ecn.min).
		field string
		// unreachable says why no intent text can trigger the rule (the
		// parser refuses the fault first); the rule is then tested on a
		// built Fabric in TestRules only.
		unreachable string
	}{
		{id: "FC101", unreachable: "the parser refuses DSCP values outside 0-63 (FC100)"},
		{id: "FC102", old: "    - name: roce\n", new: "    - name: roce\n      dscp: [26, 48]\n", field: "policy.classes.0.dscp"},
		{id: "FC103", unreachable: "the parser refuses priorities outside 0-7 (FC100)"},
		{id: "FC104", old: "    - name: roce\n", new: "    - name: roce\n      priority: 6\n", field: "policy.classes.0.priority"},
		{id: "FC105", old: "  roce: {tos: 106}", new: "  maxLosslessPriorities: 1\n  roce: {tos: 106}", field: "policy.classes.1.lossless",
			old2: "      ecn: {min: 150KB, max: 1.5MB}\n", new2: "      ecn: {min: 150KB, max: 1.5MB}\n    - {name: storage, dscp: [24], priority: 4, lossless: true, ecn: {min: 150KB, max: 1MB}}\n"},
		{id: "FC106", old: "platform: sonic", new: "platform: openconfig", field: "inventory.switches.1.platform"},
		{id: "FC107", old: "      ecn: {min: 150KB, max: 1.5MB}\n", new: "      ecn: {min: 150KB, max: 1.5MB}\n    - {name: cnp, strict: false, weight: 10}\n", field: "policy.classes.1.strict"},
		{id: "FC108", old: "roce: {tos: 106}", new: "roce: {tos: 106, cnpDSCP: 4}", field: "policy.roce.cnpDSCP"},
		{id: "FC109", old: "ecn: {min: 150KB, max: 1.5MB}", new: "ecn: {enabled: false}", field: "policy.classes.0.ecn"},
		{id: "FC110", old: "ecn: {min: 150KB", new: "ecn: {min: 1KB", field: "policy.classes.0.ecn.min"},
		{id: "FC111", old: "      buffer: 2MB\n      ports:\n        - {name: \"eth", new: "      buffer: 1.6MB\n      ports:\n        - {name: \"eth", field: "policy.classes.0.ecn.max"},
		{id: "FC112", old: "      buffer: 2MB\n      ports:\n        - {name: \"eth", new: "      buffer: 100KB\n      ports:\n        - {name: \"eth", field: "inventory.switches.0.ports"},
		{id: "FC113", old: "    - name: roce\n", new: "    - name: roce\n      weight: 40\n", field: "policy.classes.0.weight"},
		{id: "FC114", old: "  roce: {tos: 106}", new: "  roce: {tos: 106}\n  watchdog:\n    detect: 200ms\n    poll: 300ms", field: "policy.watchdog.poll"},
		{id: "FC114", old: "  roce: {tos: 106}", new: "  roce: {tos: 106}\n  watchdog:\n    detect: 200ms\n    enabled: false", field: "policy.watchdog.enabled"},
		{id: "FC115", old: "  roce: {tos: 106}", new: "  roce: {tos: 106}\n  watchdog:\n    enabled: true\n    detect: 6s", field: "policy.watchdog.detect"},
		{id: "FC116", old: "  preset: roce-lossless\n", new: "  preset: roce-lossless\n  globalPause: true\n", field: "policy.globalPause"},
		{id: "FC117", old: "  preset: roce-lossless\n", new: "  preset: roce-lossless\n  hostMTU: 9300\n", field: "policy.hostMTU"},
		{id: "FC118", old: "  preset: roce-lossless\n", new: "  preset: roce-lossless\n  hostMTU: 4000\n", field: "policy.hostMTU"},
		{id: "FC119", old: "roce: {tos: 106}", new: "roce: {tos: 107}", field: "policy.roce.tos"},
		{id: "FC120", old: "  preset: roce-lossless\n", new: "  preset: roce-lossless\n  dcbx: switch-willing\n", field: "policy.dcbx"},
		{id: "FC121", old: "[gpu1:ens1f0np0, leaf1:ethernet-1/1]", new: "[gpu1:ens1f0np0, leaf1:ethernet-1/9]", field: "inventory.links.0.1"},
		{id: "FC122", old: "    - [leaf1:ethernet-1/2, spine1:Ethernet0]\n", new: "    - [leaf1:ethernet-1/2, spine1:Ethernet0]\n    - [gpu1:ens1f0np0, leaf1:ethernet-1/3]\n", field: "inventory.links.2.0"},
		{id: "FC123", old: "    - [leaf1:ethernet-1/2, spine1:Ethernet0]\n", new: "    - [leaf1:ethernet-1/2, spine1:Ethernet0]\n    - [leaf1:ethernet-1/3, spine1:Ethernet4]\n    - [leaf1:ethernet-1/4, leaf2:e1]\n    - [leaf2:e2, spine1:Ethernet8]\n",
			field: "inventory.links"},
		{id: "FC124", old: "rdma: mlx5_0, speed: 400G", new: "rdma: mlx5_0, speed: 100G", field: "inventory.links.0"},
		{id: "FC125", old: "platform: sonic", new: "platform: eos", field: "inventory.switches.1.ports.0"},
		{id: "FC126", old: "    - name: roce\n", new: "    - name: roce\n      dscp: []\n", field: "policy.classes.0.dscp"},
		{id: "FC128", old: "      ecn: {min: 150KB, max: 1.5MB}\n", new: "      ecn: {min: 150KB, max: 1.5MB}\n    - {name: storage, dscp: [24], priority: 4, lossless: true, ecn: {min: 150KB, max: 1MB}}\n", field: "policy.classes.1.ecn"},
		{id: "FC129", old: "  roce: {tos: 106}", new: "  roce: {tos: 106}\n  hostBuffers:\n    - {buffer: 1, size: 60KB, priorities: [3]}", field: "policy.hostBuffers.0.size"},
		{id: "FC130", old: "roce: {tos: 106}", new: "roce: {tos: 106, mode: IB/RoCE v1}", field: "policy.roce.mode"},
		{id: "FC131", old: "      asic: spectrum3\n", new: "", field: "inventory.switches.1.ports.0.speed"},
		{id: "FC132", old: "      asic: spectrum3\n", new: "", field: "inventory.switches.1.ports",
			old2: `{name: "Ethernet{0..12..4}", speed: 400G`, new2: `{name: "Ethernet{0..12..4}", speed: 100G`},
		{id: "FC141", old: "{name: \"ethernet-1/{1..4}\", speed: 400G, cable: 3m}", new: "{name: \"ethernet-1/{1..4}\", speed: 400G, cable: 30m}", field: "inventory.hosts.0.nics.0"},
		{id: "FC160", old: "    - name: roce\n", new: "    - name: roce\n      lossless: true\n", field: "policy.classes.0.lossless",
			old2: "  preset: roce-lossless\n", new2: "  preset: roce-lossless\n  mode: lossy\n"},
		{id: "FC161", old: "  preset: roce-lossless\n", new: "  preset: roce-lossless\n  mode: pfc-only\n", field: "policy.classes.0.ecn"},
		{id: "FC162", old: "  preset: roce-lossless\n", new: "  preset: roce-lossless\n  mode: semi-lossless\n", field: "inventory.switches.1.platform",
			old2: "platform: sonic", new2: "platform: eos"},
		{id: "FC163", old: "  preset: roce-lossless\n", new: "  preset: roce-lossless\n  mode: lossy\n", field: "policy.classes.0.ecn",
			old2: "ecn: {min: 150KB, max: 1.5MB}", new2: "ecn: {enabled: false}"},
		{id: "FC164", old: "  preset: roce-lossless\n", new: "  preset: roce-lossless\n  mode: lossy\n", field: "policy.classes.0.ecn.min",
			old2: "    - [leaf1:ethernet-1/2, spine1:Ethernet0]\n", new2: "    - [leaf1:ethernet-1/2, spine1:Ethernet0]\nvalidation: {incast: 16}\n"},
		{id: "FC165", old: "  preset: roce-lossless\n", new: "  preset: roce-lossless\n  mode: pfc-only\n", field: "policy.mode",
			old2: "ecn: {min: 150KB, max: 1.5MB}", new2: "ecn: {enabled: false}"},
		{id: "FC166", old: "  preset: roce-lossless\n", new: "  preset: roce-lossless\n  mode: semi-lossless\n  watchdog: {enabled: true}\n", field: "policy.watchdog.enabled",
			old2: "[gpu1:ens1f0np0, leaf1:ethernet-1/1]", new2: "[gpu1:ens1f0np0, spine1:Ethernet4]"},
		{id: "FC127", old: "{name: ethernet-1/5, speed: 400G", new: "{name: ethernet-1/5, speed: 400M", field: "inventory.switches.0.ports.1.speed"},
		{id: "FC133", old: "{name: ethernet-1/5, speed: 400G", new: "{name: ethernet-1/5, speed: 0G", field: "inventory.switches.0.ports.1.speed"},
		{id: "FC133", old: "{name: \"ethernet-1/{1..4}\", speed: 400G, cable: 3m}", new: "{name: \"ethernet-1/{1..4}\", speed: 400G, cable: 0m}", field: "inventory.switches.0.ports.0.cable"},
	}
	byID := map[string]bool{}
	for _, tt := range tests {
		byID[tt.id] = true
	}
	for _, r := range Rules() {
		if r.ID != ParseErrorID && !byID[r.ID] {
			t.Errorf("rule %s (%s) has no position case", r.ID, r.Name)
		}
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			if tt.unreachable != "" {
				t.Skipf("%s: %s", tt.id, tt.unreachable)
			}
			src := strings.Replace(base, tt.old, tt.new, 1)
			if src == base {
				t.Fatalf("test bug: %q not in the base intent", tt.old)
			}
			src = strings.Replace(src, tt.old2, tt.new2, 1)
			if tt.id == "FC123" {
				src = strings.Replace(src, "  hosts:\n", "    - name: leaf2\n      platform: srlinux\n      address: 127.0.0.1:57402\n      buffer: 2MB\n      ports: [{name: \"e{1..2}\", speed: 400G, cable: 3m}]\n  hosts:\n", 1)
			}
			f, err := intent.Parse("fabric.yaml", []byte(src))
			if err != nil {
				t.Fatalf("Parse: %v\n%s", err, src)
			}
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
				t.Fatal(err)
			}
			key, val := findNode(doc.Content[0], tt.field)
			if val == nil {
				t.Fatalf("test bug: no node %s in\n%s", tt.field, src)
			}
			from, to := span(key, val)
			n := 0
			for _, x := range Run(f, Options{}) {
				if x.ID != tt.id {
					continue
				}
				n++
				p := [2]int{x.Pos.Line, x.Pos.Col}
				if x.Pos.File != "fabric.yaml" || less(p, from) || less(to, p) {
					t.Errorf("%s at %s, want inside %s (%d:%d to %d:%d)\n  %s", x.ID, x.Pos, tt.field, from[0], from[1], to[0], to[1], x)
				}
			}
			if n == 0 {
				t.Errorf("the fault raised no %s finding; findings:\n%s", tt.id, dump(Run(f, Options{})))
			}
		})
	}
}

// findNode follows a path of mapping keys and list indexes from n and
// returns the key node (nil for a list element) and the value node.
func findNode(n *yaml.Node, path string) (key, val *yaml.Node) {
	val = n
	for _, seg := range strings.Split(path, ".") {
		switch val.Kind {
		case yaml.MappingNode:
			var found bool
			for i := 0; i+1 < len(val.Content); i += 2 {
				if val.Content[i].Value == seg {
					key, val, found = val.Content[i], val.Content[i+1], true
					break
				}
			}
			if !found {
				return nil, nil
			}
		case yaml.SequenceNode:
			i, err := strconv.Atoi(seg)
			if err != nil || i >= len(val.Content) {
				return nil, nil
			}
			key, val = nil, val.Content[i]
		default:
			return nil, nil
		}
	}
	return key, val
}

// span returns the first and last line:column a key and its value cover.
func span(key, val *yaml.Node) (from, to [2]int) {
	from = [2]int{val.Line, val.Column}
	if key != nil {
		from = [2]int{key.Line, key.Column}
	}
	to = from
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		end := [2]int{n.Line, n.Column + len(n.Value) + 2} // + quotes, or a closing bracket
		if less(to, end) {
			to = end
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(val)
	return from, to
}

func less(a, b [2]int) bool { return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]) }

var _ = fmt.Sprint
