package main

import (
	"bytes"
	"os"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/plan"
)

// planKeyEnv holds the plan key itself when no --plan-key-file is given
// (a CI secret exposed to the plan and apply jobs).
const planKeyEnv = "FABRICCTL_PLAN_KEY"

// planKeyFlag is --plan-key-file: the key that signs a saved plan (plan
// --out) and that apply verifies it with. The key is never printed: errors
// name the file or the variable, and its length.
type planKeyFlag struct{ file string }

func (k *planKeyFlag) bind(cmd *cobra.Command, usage string) {
	cmd.Flags().StringVar(&k.file, "plan-key-file", "", usage)
}

// load returns the key, or nil when neither the flag nor the variable
// names one.
func (k *planKeyFlag) load() ([]byte, error) {
	var key []byte
	src := "$" + planKeyEnv
	switch {
	case k.file != "":
		b, err := os.ReadFile(k.file)
		if err != nil {
			return nil, usagef("--plan-key-file: %v", err)
		}
		key, src = bytes.TrimRight(b, "\r\n"), "--plan-key-file "+k.file
	case os.Getenv(planKeyEnv) != "":
		key = []byte(os.Getenv(planKeyEnv))
	default:
		return nil, nil
	}
	if len(key) < plan.MinKeyLen {
		return nil, usagef("%s: the plan key is %d bytes; want at least %d (e.g. head -c 32 /dev/urandom | base64)", src, len(key), plan.MinKeyLen)
	}
	return key, nil
}

// targetNamed is the target of p named name, or nil.
func targetNamed(p *plan.Plan, name string) *plan.TargetPlan {
	for i := range p.Targets {
		if p.Targets[i].Name == name {
			return &p.Targets[i]
		}
	}
	return nil
}
