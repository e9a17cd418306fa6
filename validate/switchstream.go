package validate

import (
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
)

// Normalised switch counter names (see the constants in switchctr.go) for
// streaming readers such as fabricctl watch: "q<N>."+CounterDrops and so on.
const (
	CounterDrops        = ctrDrops
	CounterECNMarked    = ctrECNMarked
	CounterPFCTx        = ctrPFCTx
	CounterPFCRx        = ctrPFCRx
	CounterWatchdog     = ctrWatchdog
	CounterPFCDiscards  = ctrPFCDiscards
	CounterProfileDrops = profileDrops
)

// Decode maps one update of a notification under prefix the way Read
// does, without folding: the Sample holds this update's contribution to
// each normalised counter ("q<N>.profile_drops" included; FoldProfileDrops
// turns those into drops once all updates are summed). A streaming reader
// keeps the last contribution of every path and sums them, because a
// normalised counter can be the sum of several leaves (SR Linux
// dropped-packets + egq-dropped-packets).
func (c *SwitchCounters) Decode(prefix *gnmipb.Path, u *gnmipb.Update) Sample {
	s := Sample{}
	elems := append(append([]*gnmipb.PathElem{}, prefix.GetElem()...), u.GetPath().GetElem()...)
	if c.Platform == intent.PlatformSONiC {
		c.addSONiC(s, elems, u.GetVal())
	} else {
		c.addYANG(s, elems, u.GetVal())
	}
	return s
}

// FoldProfileDrops turns per-profile queue drops into the queue's drops
// when the aggregate leaf is absent (see Read).
func FoldProfileDrops(s Sample) { foldProfileDrops(s) }
