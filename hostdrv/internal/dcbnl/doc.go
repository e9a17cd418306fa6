// Package dcbnl encodes and decodes the Linux Data Center Bridging netlink
// protocol (rtnetlink RTM_GETDCB / RTM_SETDCB, include/uapi/linux/dcbnl.h):
// the IEEE 802.1Qaz ETS, PFC, APP, MAXRATE and buffer objects and the DCBX
// mode. It is pure: it builds request bytes with the nl package of
// github.com/vishvananda/netlink and parses replies, and never opens a socket.
//
// Struct layouts are written field by field with encoding/binary at the UAPI
// offsets (native byte order, as netlink is host-endian), never by casting
// memory. Requests are byte-identical to what iproute2's dcb(8) sends.
//
// Two kernel behaviours callers must handle, both modelled here:
//   - a driver failure on IEEE_SET / IEEE_DEL / SDCBX is not a netlink error:
//     the ACK says 0 and the reply carries a one-byte status (a negative errno
//     for IEEE, non-zero for SDCBX); DecodeStatus turns it into a *DriverError;
//   - IEEE_SET applies ETS, MAXRATE, PFC, BUFFER, APP in that order and stops
//     at the first failure without undoing the earlier ones, so every Set*
//     request here carries exactly one object.
package dcbnl
