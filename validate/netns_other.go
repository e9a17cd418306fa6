//go:build !linux

package validate

import "errors"

// NetnsExec needs Linux network namespaces.
func NetnsExec(hosts map[string]string) (func(host string, f func() error) error, error) {
	return nil, errors.ErrUnsupported
}
