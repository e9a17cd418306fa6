package sim

// Threshold is one port's PFC thresholds as a run uses them.
type Threshold struct {
	Node, Port string
	Host       bool
	// Headroom is the bytes one lossless priority group takes beyond
	// XOFF before it drops; XOFF the group occupancy that sends pause.
	Headroom, XOFF int64
}

// Thresholds lists every port's thresholds as the run uses them (the
// intent's derived facts, intent/portfacts, unless Options override
// them), in the network's port order.
func (s *Sim) Thresholds() []Threshold {
	out := make([]Threshold, len(s.net.ports))
	for i, p := range s.net.ports {
		out[i] = Threshold{Node: p.n.name, Port: p.name, Host: p.n.host, Headroom: p.headroom, XOFF: p.xoff}
	}
	return out
}
