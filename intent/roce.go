package intent

// RoCEOverhead is what RoCEv2 adds to the RDMA payload (the path MTU)
// inside the IP MTU, as the kernel subtracts it in iboe_get_mtu
// (include/rdma/ib_addr.h): GRH/IP 40 + UDP 8 + BTH 12 + XRC ext 4 +
// AtomicETH 28 + ICRC 4.
const RoCEOverhead = 96

// RoCEPacket is the largest IP packet the policy's RoCE traffic may carry:
// the RDMA path MTU plus RoCEOverhead. Every routed hop must carry IP
// packets of that size (a host MTU below it lowers the NIC's active MTU,
// FC118; a switch's IP MTU below it drops them).
func (p *Policy) RoCEPacket() int {
	m := p.RoCEPathMTU
	if m == 0 {
		m = DefaultRoCEPathMTU
	}
	return m + RoCEOverhead
}
