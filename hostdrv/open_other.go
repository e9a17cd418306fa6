//go:build !linux

package hostdrv

import (
	"errors"
	"fmt"
	"log/slog"
)

// Open fails: host NIC QoS (dcbnl, rtnetlink, ethtool) needs Linux.
func Open(root, netnsName string, log *slog.Logger) (*Driver, func(), error) {
	return nil, nil, fmt.Errorf("host QoS needs Linux (dcbnl over rtnetlink): %w", errors.ErrUnsupported)
}
