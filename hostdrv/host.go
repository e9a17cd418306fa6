package hostdrv

import (
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
)

// FindHost returns the inventory host called name, or, when name is empty,
// the one whose name is this machine's hostname (full or up to the first dot).
func FindHost(f *intent.Fabric, name string) (*intent.Host, error) {
	names := make([]string, len(f.Hosts))
	for i, h := range f.Hosts {
		names[i] = h.Name
	}
	sort.Strings(names)
	if name != "" {
		if h := f.Host(name); h != nil {
			return h, nil
		}
		return nil, fmt.Errorf("host %q is not in the inventory (hosts: %s)", name, strings.Join(names, ", "))
	}
	hn, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("hostname: %w (use --host NAME)", err)
	}
	short, _, _ := strings.Cut(hn, ".")
	for _, cand := range []string{hn, short} {
		if h := f.Host(cand); h != nil {
			return h, nil
		}
	}
	return nil, fmt.Errorf("this machine (hostname %q) is not a host of the inventory (hosts: %s): use --host NAME", hn, strings.Join(names, ", "))
}

// WriteCommands prints the plan's steps as the equivalent command lines
// (iproute2 dcb, ethtool, ip link, echo > file), one per line, for review.
// Notes and errors become shell comments.
func WriteCommands(w io.Writer, p *Plan) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# host %s: %d steps\n", p.Target.Name, len(p.Steps))
	for _, n := range p.Target.Notes {
		fmt.Fprintf(&b, "# note: %s\n", n)
	}
	if p.Target.Error != "" {
		fmt.Fprintf(&b, "# ERROR: %s\n", strings.ReplaceAll(p.Target.Error, "\n", "\n# ERROR: "))
	}
	for _, s := range p.Steps {
		b.WriteString(s.Command + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteNetlink prints the raw netlink requests of the plan's steps in hex,
// one per line, each after a comment naming its command; steps that are not
// netlink (ethtool ioctl, files) appear as comments only.
func WriteNetlink(w io.Writer, p *Plan) error {
	var b strings.Builder
	for _, s := range p.Steps {
		if s.Netlink == nil {
			fmt.Fprintf(&b, "# not netlink: %s\n", s.Command)
			continue
		}
		fmt.Fprintf(&b, "# %s\n%s\n", s.Command, hex.EncodeToString(s.Netlink))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
