// Package clab reads containerlab labs: topology files (*.clab.yml) and the
// topology-data.json containerlab writes into the lab directory on deploy.
// It maps them onto a fabricctl inventory: node kinds to switch platforms or
// hosts, containerlab interface names to the names the NOS uses, management
// addresses to gNMI addresses, and links to host-NIC and switch-port links.
//
// Nothing here talks to Docker or containerlab; the package only reads files.
// Errors carry file:line:col when they come from a YAML topology file.
package clab
