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
// them, or a port's PortConfig), in the network's port order: those of
// the port's first priority with PFC (the intent's first lossless one
// where the port has none).
func (s *Sim) Thresholds() []Threshold {
	out := make([]Threshold, len(s.net.ports))
	first := 0
	if ll := s.net.lossless(); len(ll) > 0 {
		first = ll[0]
	}
	for i, p := range s.net.ports {
		prio := first
		for q := range 8 {
			if p.pfc[q] {
				prio = q
				break
			}
		}
		out[i] = Threshold{Node: p.n.name, Port: p.name, Host: p.n.host, Headroom: p.hrP[prio], XOFF: p.xoffP[prio]}
	}
	return out
}
