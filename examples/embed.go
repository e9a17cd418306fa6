// Package examples holds the example intents. They are embedded so the lab
// command can run without a checkout, and a test parses and checks every one
// of them so they never rot.
package examples

import "embed"

// FS holds every example intent.
//
//go:embed *.yaml mixed/*.yaml
var FS embed.FS

// Lab is the intent `fabricctl lab` runs against device twins.
const Lab = "lab.yaml"
