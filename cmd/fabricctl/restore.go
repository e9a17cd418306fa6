package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/switchdrv"
)

type restoreOptions struct {
	switchFlags
	backup string
}

func newRestoreCmd(d *deps) *cobra.Command {
	o := &restoreOptions{}
	cmd := &cobra.Command{
		Use:   "restore -f INTENT --backup FILE",
		Short: "Put a switch back to a backup taken by apply, and verify it",
		Long: `Restore sends the state saved in a backup file (written by apply before any
change) back to its switch in one SetRequest — replacing what existed, deleting
what did not — and verifies it by reading back. The intent says how to reach
the switch named in the backup.

Exit codes: 0 restored and verified, 1 error, 64 usage.`,
		Example: `  fabricctl restore -f fabric.yaml --backup .fabricctl/backups/leaf1-20260101T120000.000000000Z.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.backup == "" {
				return usagef("--backup FILE is required")
			}
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), d, cmd.OutOrStdout())
		},
	}
	o.bind(cmd)
	cmd.Flags().StringVar(&o.backup, "backup", "", "backup file written by apply")
	return cmd
}

func (o *restoreOptions) run(ctx context.Context, d *deps, out io.Writer) error {
	snap, err := switchdrv.ReadBackup(o.backup)
	if err != nil {
		return withCode(ExitError, err)
	}
	f, eng, err := o.load(d)
	if err != nil {
		return err
	}
	sw := f.Switch(snap.Switch)
	if sw == nil {
		return withCode(ExitError, fmt.Errorf("backup %s is of switch %s, which the intent does not have", o.backup, snap.Switch))
	}
	if err := eng.Restore(ctx, sw, snap); err != nil {
		return withCode(ExitError, err)
	}
	_, err = fmt.Fprintf(out, "switch %s: restored from %s (taken %s) and verified\n", sw.Name, o.backup, snap.Taken.Format("2006-01-02 15:04:05Z"))
	return err
}
