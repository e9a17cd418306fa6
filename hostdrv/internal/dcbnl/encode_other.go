//go:build !linux

package dcbnl

import "errors"

// Encode needs the Linux netlink library; other systems have no dcbnl.
func (r Request) Encode(seq, pid uint32) ([]byte, error) {
	return nil, errors.ErrUnsupported
}
