package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
)

// A LAB DIRECTORY is what `fabricctl lab --keep` leaves for the other
// commands: lab.json (which switch runs as which twin, where), the lab CA
// (ca.pem) and the credentials files (username, password). The directory is
// 0700 and every file 0600: the password opens the twins.
//
// Every command that talks to switches takes --lab DIR (or $FABRICCTL_LAB)
// and then reaches each switch of the user's unchanged intent at its twin:
// address, CA and credentials come from the lab directory, nothing else of
// the intent changes.
const (
	labFile   = "lab.json"
	labEnv    = "FABRICCTL_LAB"
	labFormat = 1
)

// labDir is lab.json.
type labDir struct {
	Version int    `json:"version"`
	Fabric  string `json:"fabric"`
	// CA, UsernameFile and PasswordFile are relative to the lab directory.
	CA           string `json:"ca"`
	UsernameFile string `json:"usernameFile"`
	PasswordFile string `json:"passwordFile"`
	// PID is the process serving the twins.
	PID      int                  `json:"pid"`
	Switches map[string]labSwitch `json:"switches"`
}

// labSwitch is one twin of the lab.
type labSwitch struct {
	Address  string `json:"address"`
	Platform string `json:"platform"`
	Profile  string `json:"profile,omitempty"`
}

// writeLabDir writes lab.json into dir (the CA and credentials files are
// already there).
func writeLabDir(dir string, l *labDir) error {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, labFile), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("lab: %w", err)
	}
	return nil
}

// readLabDir reads dir/lab.json.
func readLabDir(dir string) (*labDir, error) {
	b, err := os.ReadFile(filepath.Join(dir, labFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("--lab %s: no %s there: start a lab with `fabricctl lab -f INTENT --keep --dir %s`", dir, labFile, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("--lab %s: %w", dir, err)
	}
	var l labDir
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("--lab %s: %s: %w", dir, labFile, err)
	}
	if l.Version != labFormat {
		return nil, fmt.Errorf("--lab %s: %s has format %d, this fabricctl reads %d", dir, labFile, l.Version, labFormat)
	}
	for _, f := range []string{l.CA, l.UsernameFile, l.PasswordFile} {
		if f == "" || filepath.IsAbs(f) || strings.Contains(f, "..") {
			return nil, fmt.Errorf("--lab %s: %s names %q: want a file in the lab directory", dir, labFile, f)
		}
	}
	return &l, nil
}

// labDirFor is the lab directory a command uses: --lab, else $FABRICCTL_LAB
// ("" = none).
func labDirFor(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(labEnv)
}

// useLab points every switch of f at its twin in lab directory dir: the
// twin's address, the lab CA and the lab's credentials files; the switch's
// profile is the twin's when the intent names none. A switch the lab does
// not run is an error (the lab was started from another intent), as is a
// twin of another platform or profile.
func useLab(f *intent.Fabric, dir string) (*labDir, error) {
	l, err := readLabDir(dir)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var missing []string
	for i := range f.Switches {
		sw := &f.Switches[i]
		ls, ok := l.Switches[sw.Name]
		if !ok {
			missing = append(missing, sw.Name)
			continue
		}
		if ls.Platform != string(sw.Platform) {
			return nil, fmt.Errorf("--lab %s: switch %s is a %s twin there, the intent says platform %s: start the lab again from this intent", dir, sw.Name, ls.Platform, sw.Platform)
		}
		if sw.Profile != "" && ls.Profile != "" && sw.Profile != ls.Profile {
			return nil, fmt.Errorf("--lab %s: switch %s runs profile %s there, the intent says %s: start the lab again from this intent", dir, sw.Name, ls.Profile, sw.Profile)
		}
		sw.Address = ls.Address
		sw.TLS = intent.TLS{CA: filepath.Join(abs, l.CA), Pos: sw.TLS.Pos}
		sw.Credentials = intent.Credentials{UsernameFile: filepath.Join(abs, l.UsernameFile), PasswordFile: filepath.Join(abs, l.PasswordFile), Pos: sw.Credentials.Pos}
		if sw.Profile == "" {
			sw.Profile = ls.Profile
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("--lab %s: the lab (fabric %q) runs no twin for switch %s: start the lab again from this intent", dir, l.Fabric, strings.Join(missing, ", "))
	}
	return l, nil
}

// sayLab tells w that the switches are twins (stderr of every --lab run).
func sayLab(w io.Writer, dir string, l *labDir, n int) {
	fmt.Fprintf(w, "fabricctl: --lab %s: the %d %s are DEVICE TWINS of lab %q (pid %d), not switches; plan, diff and apply leave the remote hosts out\n",
		dir, n, plural(n, "switch", "switches"), l.Fabric, l.PID)
}
