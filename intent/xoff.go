package intent

// Static XOFF points: where a platform's ingress sends PFC pause at a fixed
// per-queue depth rather than at whatever is left of a shared buffer. The
// formula lives here with the headroom models; a port's XOFF point is
// intent/portfacts' (Lossless.XOFF), which every command reads.

// PFCQueueDefaultMBS is the SR Linux pfc-queue maximum-burst-size default on
// 7220 IXR (Broadcom XGS, feature qos-pfc-xgs): srl_nokia-qos.yang
// (nokia/srlinux-yang-models v23.10-v25.3), buffer-allocation-profile
// queues/pfc-queue/maximum-burst-size, default 51200. On these switches the
// ingress pfc-queue sends pause when it holds more than this.
const PFCQueueDefaultMBS = 51_200

// PFCQueueMBS is the pfc-queue maximum-burst-size fabricctl programs for a
// lossless class on a platform whose XOFF point is that static depth
// (SR Linux 7220): the class's ECN Kmax plus one frame (the IP mtu and an
// Ethernet header with one VLAN tag), rounded up to 1 KiB, so that the
// egress queue marks every packet before its ingress pauses; never below the
// platform default. A class without ECN keeps the default.
func PFCQueueMBS(cl *Class, mtu int) int64 {
	mbs := int64(PFCQueueDefaultMBS)
	if cl == nil || cl.ECN == nil {
		return mbs
	}
	want := cl.ECN.MaxBytes + int64(mtu) + 18
	want = (want + 1023) / 1024 * 1024
	return max(mbs, want)
}
