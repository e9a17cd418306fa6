// Package udpflow is a traffic engine that needs no RDMA NIC: DSCP-marked
// UDP flows whose packets carry a flow id, a sequence number and a send
// timestamp. A Receiver counts what arrives per flow (loss, duplicates,
// reordering, one-way latency percentiles, throughput, the ToS byte as
// received); Send paces one flow at a fixed rate.
//
// It proves what a fabric does to a class of traffic (drops under
// congestion, re-marking, reordering) on labs without RDMA hardware. One-way
// latency is exact only when sender and receiver share a clock (one machine,
// network namespaces) or are PTP-synchronised; across NTP hosts it carries
// the clock offset.
package udpflow
