package clab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The structure of topology-data.json, as containerlab's export template
// core/export_templates/auto.tmpl (srl-labs/containerlab) writes it into the
// lab directory (clab-<lab>/topology-data.json) on every deploy: name, type,
// clab.config.{prefix, mgmt}, nodes keyed by name (kind, image,
// mgmt-ipv4-address, labels ...) and links. Older releases wrote each link as
// {"a": {...}, "z": {...}}, newer ones (v0.73 on, going by the history of that
// template) as {"endpoints": {"a": {...}, "z": {...}}}; a link with one lab
// end (host, mgmt-net, macvlan, dummy) has only "a". Both forms are read.
type dataFile struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Clab struct {
		Config struct {
			Prefix *string `json:"prefix"`
			Mgmt   struct {
				Network    string `json:"network"`
				IPv4Subnet string `json:"ipv4-subnet"`
			} `json:"mgmt"`
		} `json:"config"`
	} `json:"clab"`
	Nodes map[string]dataNode `json:"nodes"`
	Links []json.RawMessage   `json:"links"`
}

type dataNode struct {
	ShortName       string            `json:"shortname"`
	LongName        string            `json:"longname"`
	Kind            string            `json:"kind"`
	Image           string            `json:"image"`
	MgmtIPv4Address string            `json:"mgmt-ipv4-address"`
	Labels          map[string]string `json:"labels"`
}

type dataEndpoint struct {
	Node      string `json:"node"`
	Interface string `json:"interface"`
	MAC       string `json:"mac"`
	IPv4      string `json:"ipv4"`
}

type dataLink struct {
	A         *dataEndpoint `json:"a"`
	Z         *dataEndpoint `json:"z"`
	Endpoints *struct {
		A *dataEndpoint `json:"a"`
		Z *dataEndpoint `json:"z"`
	} `json:"endpoints"`
}

// ParseData reads the topology-data.json of a deployed lab. Management
// addresses in it are the ones containerlab assigned.
func ParseData(name string, data []byte) (*Topology, error) {
	var f dataFile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: not a containerlab topology-data.json: %w", name, err)
	}
	if f.Name == "" {
		return nil, fmt.Errorf("%s: topology-data.json has no lab name", name)
	}
	t := &Topology{Name: f.Name, File: name, Prefix: f.Clab.Config.Prefix, FromData: true,
		Mgmt: Mgmt{Network: f.Clab.Config.Mgmt.Network, IPv4Subnet: f.Clab.Config.Mgmt.IPv4Subnet}}
	for key, n := range f.Nodes {
		if n.Kind == "" {
			return nil, fmt.Errorf("%s: node %s: no kind", name, key)
		}
		t.Nodes = append(t.Nodes, Node{
			Name:     key,
			Kind:     n.Kind,
			Image:    n.Image,
			Type:     n.Labels["clab-node-type"],
			MgmtIPv4: strings.SplitN(n.MgmtIPv4Address, "/", 2)[0],
			Pos:      Pos{File: name},
		})
	}
	sort.Slice(t.Nodes, func(i, j int) bool { return naturalLess(t.Nodes[i].Name, t.Nodes[j].Name) })
	used := map[string]int{}
	for i, raw := range f.Links {
		var l dataLink
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("%s: links[%d]: %w", name, i, err)
		}
		a, z := l.A, l.Z
		if l.Endpoints != nil {
			a, z = l.Endpoints.A, l.Endpoints.Z
		}
		if a == nil || z == nil || z.Node == "" {
			continue // a link with one lab end (host, mgmt-net, macvlan, dummy)
		}
		if specialNodes[a.Node] || specialNodes[z.Node] {
			continue
		}
		ends := [2]Endpoint{
			{Node: a.Node, Interface: a.Interface, IPv4: a.IPv4},
			{Node: z.Node, Interface: z.Interface, IPv4: z.IPv4},
		}
		for _, e := range ends {
			if e.Node == "" || e.Interface == "" {
				return nil, fmt.Errorf("%s: links[%d]: endpoint without node or interface", name, i)
			}
			if t.Node(e.Node) == nil {
				return nil, fmt.Errorf("%s: links[%d]: node %q is not among the nodes", name, i, e.Node)
			}
			if prev, dup := used[e.String()]; dup {
				return nil, fmt.Errorf("%s: links[%d]: %s is already used by links[%d]", name, i, e, prev)
			}
			used[e.String()] = i
		}
		t.Links = append(t.Links, Link{A: ends[0], B: ends[1], Pos: Pos{File: name}})
	}
	return t, nil
}
