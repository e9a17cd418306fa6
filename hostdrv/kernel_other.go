//go:build !linux

package hostdrv

import "errors"

// setLinkMTURequest: no rtnetlink off Linux.
func setLinkMTURequest(index, mtu int) []byte { return nil }

// NewUnsupportedKernel returns an error: host QoS needs Linux.
func NewUnsupportedKernel() (Kernel, error) { return nil, errors.ErrUnsupported }
