package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/clab"
	"github.com/fabricctl/fabricctl/internal/durable"
)

func newInventoryCmd(d *deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inventory",
		Short: "Build the inventory part of an intent from other sources",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("inventory needs a subcommand: import")
		},
	}
	cmd.AddCommand(newInventoryImportCmd(d))
	return cmd
}

type inventoryImportOptions struct {
	containerlab string
	out          string
	output       string
	name         string
	speed        string
	cable        string
	sshUser      string
	sshKey       string
	knownHosts   string
}

func newInventoryImportCmd(_ *deps) *cobra.Command {
	o := &inventoryImportOptions{}
	cmd := &cobra.Command{
		Use:   "import --containerlab TOPOLOGY [--out FILE] [--name FABRIC]",
		Short: "Write the inventory of a containerlab lab as an intent file",
		Long: `Import reads a containerlab topology file (*.clab.yml) or the topology-data.json
of a deployed lab (clab-<lab>/topology-data.json; a directory means either) and
writes the inventory part of an intent: apiVersion, kind, metadata and inventory, no policy. Merge it with a
policy file: fabricctl check -f policy.yaml -f inventory.yaml.

  node kinds       nokia_srlinux/srl -> srlinux, sonic-vs/sonic-vm -> sonic,
                   arista_ceos/ceos -> eos, linux (with data links) -> host;
                   bridge/ovs-bridge nodes and their links are left out
  interfaces       SR Linux e1-1 -> ethernet-1/1; SONiC eth1 -> Ethernet0,
                   eth2 -> Ethernet4; cEOS eth1 -> Ethernet1; hosts as named
  addresses        the node's mgmt-ipv4 (or, without one, the container name
                   clab-<lab>-<node> that containerlab puts in /etc/hosts) with
                   the platform's gNMI port: SR Linux 57400, SONiC 8080, EOS 6030
  host NICs        the linked interfaces, with the Soft-RoCE device and IPv4
                   address the node's exec commands set up
                   (rdma link add rxe0 type rxe netdev eth1; ip addr add ...)
  credentials      environment variables SRL_/SONIC_/EOS_USERNAME and _PASSWORD
  TLS              SR Linux: the lab CA containerlab generates
                   (clab-<lab>/.tls/ca/ca.pem); SONiC: skipVerify; EOS: insecure
                   (both lab only)

Ports get --speed and --cable (veth links have neither). The output is checked
to parse before it is written. metadata.name is the lab's name, or --name:
files merged into one fabric must agree on it, so give the name your policy
file has (or leave metadata out of the policy file).

Exit codes: 0 written, 1 the topology cannot be read or imported, 64 usage.`,
		Example: `  fabricctl inventory import --containerlab srl-leafspine.clab.yml --out inventory.yaml
  fabricctl inventory import --containerlab srl-leafspine.clab.yml --name pod1 --out inventory.yaml
  fabricctl inventory import --containerlab clab-srl-leafspine/topology-data.json --speed 400G
  fabricctl inventory import --containerlab clab-srl-leafspine  # a deployed lab
  fabricctl check -f policy.yaml -f inventory.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.containerlab, "containerlab", "", "containerlab topology file or topology-data.json (required)")
	cmd.Flags().StringVar(&o.out, "out", "", "write to FILE instead of stdout")
	cmd.Flags().StringVarP(&o.output, "output", "o", "yaml", "output format: yaml (the intent format; a file is --out FILE)")
	cmd.Flags().StringVar(&o.name, "name", "", "fabric name for metadata.name (default: the lab name); match your policy file's")
	cmd.Flags().StringVar(&o.speed, "speed", "100G", "line rate of every switch port")
	cmd.Flags().StringVar(&o.cable, "cable", "3m", "cable length of every switch port")
	cmd.Flags().StringVar(&o.sshUser, "ssh-user", "root", "SSH user for the hosts")
	cmd.Flags().StringVar(&o.sshKey, "ssh-key", "", "SSH private key file for the hosts (relative to the output file)")
	cmd.Flags().StringVar(&o.knownHosts, "known-hosts", "", "known_hosts file for the hosts (relative to the output file)")
	return cmd
}

func (o *inventoryImportOptions) validate() error {
	if o.output != "yaml" {
		return usagef("--output %q: want yaml (-o is a format everywhere; write a file with --out %s)", o.output, o.output)
	}
	if o.containerlab == "" {
		return usagef("--containerlab is required: a *.clab.yml topology or a lab's topology-data.json")
	}
	if _, err := parseSpeedFlag("speed", o.speed); err != nil {
		return err
	}
	if _, err := parseCableFlag("cable", o.cable); err != nil {
		return err
	}
	return nil
}

// importCheckPolicy is merged with the written inventory to prove it parses.
const importCheckPolicy = "apiVersion: " + intent.APIVersion + "\nkind: " + intent.Kind + "\npolicy: {preset: roce-lossless}\n"

func (o *inventoryImportOptions) run(stdout io.Writer) error {
	t, err := clab.Load(o.containerlab)
	if err != nil {
		return withCode(ExitError, err)
	}
	base := "."
	if o.out != "" {
		base = filepath.Dir(o.out)
	}
	opts := clab.ImportOptions{Speed: o.speed, Cable: o.cable, SSHUser: o.sshUser, SSHKeyFile: o.sshKey,
		KnownHosts: o.knownHosts, BaseDir: base, Source: o.containerlab, Name: o.name}
	inv, err := clab.Import(t, opts)
	if err != nil {
		return withCode(ExitError, err)
	}
	var buf bytes.Buffer
	if err := inv.WriteYAML(&buf, opts); err != nil {
		return withCode(ExitError, fmt.Errorf("inventory import: %w", err))
	}
	name := "<stdout>"
	if o.out != "" {
		name = o.out
	}
	if _, err := intent.ParseSources(intent.Source{Name: "policy", Data: []byte(importCheckPolicy)},
		intent.Source{Name: name, Data: buf.Bytes()}); err != nil {
		return withCode(ExitError, fmt.Errorf("inventory import: the written inventory does not parse (a fabricctl bug): %w", err))
	}
	if o.out == "" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	if err := writeInventoryFile(o.out, buf.Bytes()); err != nil {
		return withCode(ExitError, fmt.Errorf("inventory import: %w", err))
	}
	return nil
}

// writeInventoryFile writes data to path through a temporary file in the same
// directory, so a reader never sees half a file, and syncs file and directory
// (a GitOps job commits it next).
func writeInventoryFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	return durable.SyncDir(filepath.Dir(path))
}
