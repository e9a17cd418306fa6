package clab

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/fabricctl/fabricctl/intent"
)

// Diff reports every way the intent's inventory disagrees with the lab, one
// line each (none = they agree): switches and hosts node for node (name,
// platform, management address and gNMI port), switch ports and host NICs
// against the linked interfaces, and links one for one in either direction,
// with containerlab interface names mapped to the NOS names.
func Diff(t *Topology, f *intent.Fabric) []string {
	inv, err := Import(t, ImportOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }

	seen := map[string]bool{}
	for _, s := range inv.Switches {
		seen[s.Name] = true
		sw := f.Switch(s.Name)
		if sw == nil {
			add("switch %s (%s) is in the lab but not in the intent", s.Name, s.Kind)
			continue
		}
		if sw.Platform != s.Platform {
			add("switch %s: platform %s in the intent, %s (kind %s) in the lab", s.Name, sw.Platform, s.Platform, s.Kind)
		}
		if sw.Address != s.Address {
			add("switch %s: address %s in the intent, %s in the lab", s.Name, sw.Address, s.Address)
		}
		if s.Profile != "" && sw.Profile != s.Profile {
			add("switch %s: profile %s in the intent, the lab's image is %s", s.Name, sw.Profile, s.Profile)
		}
		var got []string
		for _, p := range sw.Ports {
			got = append(got, p.Name)
		}
		setDiff(add, "switch "+s.Name+": port", s.Ports, got)
	}
	for _, h := range inv.Hosts {
		seen[h.Name] = true
		ih := f.Host(h.Name)
		if ih == nil {
			add("host %s is in the lab but not in the intent", h.Name)
			continue
		}
		if ih.Address != h.Address {
			add("host %s: address %s in the intent, %s in the lab", h.Name, ih.Address, h.Address)
		}
		var want, got []string
		for _, n := range h.NICs {
			want = append(want, n.Interface)
			if in := nicOf(ih, n.Interface); in != nil {
				if n.RDMA != "" && in.RDMADevice != n.RDMA {
					add("host %s nic %s: rdma %q in the intent, the lab creates %q", h.Name, n.Interface, in.RDMADevice, n.RDMA)
				}
				if n.Address != "" && in.Address != n.Address {
					add("host %s nic %s: address %q in the intent, the lab sets %q", h.Name, n.Interface, in.Address, n.Address)
				}
			}
		}
		for _, n := range ih.NICs {
			got = append(got, n.Interface)
		}
		setDiff(add, "host "+h.Name+": nic", want, got)
	}
	for _, s := range f.Switches {
		if !seen[s.Name] {
			add("switch %s is in the intent but not in the lab", s.Name)
		}
	}
	for _, h := range f.Hosts {
		if !seen[h.Name] {
			add("host %s is in the intent but not in the lab", h.Name)
		}
	}
	var want, got []string
	for _, l := range inv.Links {
		want = append(want, linkKey(l))
	}
	for _, l := range f.Links {
		got = append(got, linkKey(l))
	}
	setDiff(add, "link", want, got)
	return out
}

func nicOf(h *intent.Host, iface string) *intent.NIC {
	for i := range h.NICs {
		if h.NICs[i].Interface == iface {
			return &h.NICs[i]
		}
	}
	return nil
}

// linkKey names a link the same whichever way round it is written.
func linkKey(l intent.Link) string {
	a, b := l.A.String(), l.B.String()
	if b < a {
		a, b = b, a
	}
	return a + " -- " + b
}

// setDiff reports members of want missing from got ("in the lab but not in
// the intent") and the reverse; duplicates in got are reported too.
func setDiff(add func(string, ...any), what string, want, got []string) {
	w, g := count(want), count(got)
	for _, k := range sortedCount(w) {
		if g[k] == 0 {
			add("%s %s is in the lab but not in the intent", what, k)
		}
	}
	for _, k := range sortedCount(g) {
		switch {
		case w[k] == 0:
			add("%s %s is in the intent but not in the lab", what, k)
		case g[k] > w[k]:
			add("%s %s is in the intent %s times", what, k, strconv.Itoa(g[k]))
		}
	}
}

func count(s []string) map[string]int {
	m := map[string]int{}
	for _, v := range s {
		m[v]++
	}
	return m
}

func sortedCount(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return naturalLess(out[i], out[j]) })
	return out
}
