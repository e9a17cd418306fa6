//go:build !linux

package hostdrv

// setLinkMTURequest: no rtnetlink off Linux.
func setLinkMTURequest(seq uint32, index, mtu int) []byte { return nil }
