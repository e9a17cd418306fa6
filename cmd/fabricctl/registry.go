package main

import (
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/eos"
	"github.com/fabricctl/fabricctl/switchdrv/oc"
	"github.com/fabricctl/fabricctl/switchdrv/sonic"
	"github.com/fabricctl/fabricctl/switchdrv/srl"
)

// newRegistry returns the switch platforms this binary knows: SR Linux,
// SONiC, Arista EOS and plain OpenConfig. Commands that compile or talk to
// switches build one each (no package-level registry).
func newRegistry() (*switchdrv.Registry, error) {
	r := switchdrv.NewRegistry()
	for _, register := range []func(*switchdrv.Registry) error{srl.Register, sonic.Register, eos.Register, oc.Register} {
		if err := register(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}
