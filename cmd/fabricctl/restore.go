package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv"
)

type restoreOptions struct {
	switchFlags
	backups []string
	lockDir string
}

func newRestoreCmd(d *deps) *cobra.Command {
	o := &restoreOptions{}
	cmd := &cobra.Command{
		Use:   "restore -f INTENT --backup FILE|DIR [--switch NAME]",
		Short: "Put switches back to backups taken by apply, and verify them",
		Long: `Restore sends the state saved in a backup (written by apply before any
change) back to its switch in one SetRequest — replacing what existed, deleting
what did not — and verifies it by reading back. The intent says how to reach
each switch named in the backup.

Apply writes one backup file per run, <fabric>-<UTC time>.json in its
--backup-dir, holding every switch of the run (JSON Lines, one switch a line);
files of one switch written by older versions read too. --backup takes files
or directories (every *.json in one; repeatable): of all the backups of a
switch among them, the newest (by the time it was taken) is used. --switch
restores only the named switches (each must have a backup among those given);
without it every switch with a backup is restored. --parallel bounds how many are
restored at once. Restore takes the lock of each switch it restores (in
--lock-dir, as apply does), so it never runs while an apply or restore
touching one of those switches writes.

Exit codes: 0 restored and verified, 1 error (some switch not restored: see
its line), 64 usage.`,
		Example: `  fabricctl restore -f fabric.yaml --backup .fabricctl/backups/pod1-20260101T120000.000000000Z.json
  fabricctl restore -f fabric.yaml --backup .fabricctl/backups/pod1-20260101T120000.000000000Z.json --switch leaf1
  fabricctl restore -f fabric.yaml --backup .fabricctl/backups --switch leaf2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(o.backups) == 0 {
				return usagef("--backup FILE|DIR is required")
			}
			if o.lockDir == "" {
				o.lockDir = switchdrv.DefaultLockDir()
			}
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), d, cmd.OutOrStdout())
		},
	}
	o.bind(cmd)
	cmd.Flags().StringVar(&o.lockDir, "lock-dir", "", "directory of the per-switch lock files (the one apply uses); default "+lockDirDefault)
	cmd.Flags().StringArrayVar(&o.backups, "backup", nil, "backup file written by apply (one run, all its switches), or a backup directory (newest per switch; repeatable)")
	return cmd
}

// backupFile is one backup chosen for a switch.
type backupFile struct {
	path string
	snap *switchdrv.Snapshot
}

// collectBackups reads the --backup files and directories (every *.json
// in one) and keeps, per switch, the newest snapshot (by the time it was
// taken) of all the snapshots in all those files: an apply run's file
// holds every switch of the run, a file of an older fabricctl one switch.
func (o *restoreOptions) collectBackups() (map[string]backupFile, error) {
	out := map[string]backupFile{}
	add := func(path string) error {
		snaps, err := switchdrv.ReadBackup(path)
		if err != nil {
			return err
		}
		for _, snap := range snaps {
			if cur, ok := out[snap.Switch]; !ok || snap.Taken.After(cur.snap.Taken) {
				out[snap.Switch] = backupFile{path: path, snap: snap}
			}
		}
		return nil
	}
	for _, b := range o.backups {
		st, err := os.Stat(b)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			if err := add(b); err != nil {
				return nil, err
			}
			continue
		}
		files, err := filepath.Glob(filepath.Join(b, "*.json"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("backup directory %s has no backups (*.json)", b)
		}
		for _, f := range files {
			if err := add(f); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func (o *restoreOptions) run(ctx context.Context, d *deps, out io.Writer) error {
	found, err := o.collectBackups()
	if err != nil {
		return withCode(ExitError, err)
	}
	f, eng, err := o.load(d)
	if err != nil {
		return err
	}
	defer eng.Close()
	names := o.switches
	if len(names) == 0 {
		for n := range found {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	names = slices.Compact(names)
	var have []string
	for n := range found {
		have = append(have, n)
	}
	sort.Strings(have)
	var sws []*intent.Switch
	for _, n := range names {
		if _, ok := found[n]; !ok {
			return withCode(ExitError, fmt.Errorf("--switch %s: no backup of it among %s (backups of: %s)", n, strings.Join(o.backups, ", "), strings.Join(have, ", ")))
		}
		sw := f.Switch(n)
		if sw == nil {
			return withCode(ExitError, fmt.Errorf("backup %s is of switch %s, which the intent does not have", found[n].path, n))
		}
		sws = append(sws, sw)
	}
	lock, err := switchdrv.LockSwitches(o.lockDir, f.Name, sws)
	if err != nil {
		return withCode(ExitError, err)
	}
	defer lock.Unlock()

	// A restore is a write, as apply's: a Ctrl-C stops the switches not
	// started yet, and the Sets already sent are waited for and read back
	// (main says which it waits for; a second Ctrl-C abandons them).
	release := d.guard.write()
	defer release()
	eng.Progress = d.guard.track
	lines := make([]string, len(sws))
	errs := make([]error, len(sws))
	var g errgroup.Group
	g.SetLimit(o.parallel)
	var mu sync.Mutex
	for i, sw := range sws {
		g.Go(func() error {
			b := found[sw.Name]
			err := ctx.Err()
			if err != nil {
				err = fmt.Errorf("interrupted before it started; nothing was written: %w", err)
			} else {
				err = eng.Restore(ctx, sw, b.snap)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[i] = err
				lines[i] = fmt.Sprintf("switch %s: NOT restored from %s: %v", sw.Name, b.path, err)
				return nil
			}
			lines[i] = fmt.Sprintf("switch %s: restored from %s (taken %s) and verified", sw.Name, b.path, b.snap.Taken.Format("2006-01-02 15:04:05Z"))
			return nil
		})
	}
	_ = g.Wait()
	// Every switch's line is true to it (restored and verified, or not):
	// the outcome stands even if a signal came meanwhile.
	d.guard.settle()
	for _, l := range lines {
		fmt.Fprintln(out, l)
	}
	if err := errors.Join(errs...); err != nil {
		return withCode(ExitError, fmt.Errorf("restore failed on %d of %d switches", countErrs(errs), len(sws)))
	}
	return nil
}

func countErrs(errs []error) int {
	n := 0
	for _, e := range errs {
		if e != nil {
			n++
		}
	}
	return n
}
