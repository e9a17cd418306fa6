// Package profile is the one place that holds the facts about a switch
// platform release: what its MTU means and which range it takes, how many
// lossless priorities a port may have, the PFC watchdog timer ranges and
// steps, the smallest scheduler weight, the buffer cell, the YANG feature set
// (SR Linux srl_nokia-features), the YANG module set of the release
// (yang.release, a release internal/yangcheck ships or derives) and the
// JSON shapes where releases differ, the gNMI write semantics (SONiC's sonic-gnmi
// and generic config updater per branch, OpenConfig default reporting) and the
// factory-default datastore a fresh install starts from.
//
// Every profile is a data file (data/profiles/*.json, embedded) that names
// its sources; ASIC facts (cell size, what BUFFER_PROFILE "size" means) are
// data too (data/asics.json). intent/check, the switch compilers (through
// switchdrv.Quirks), the device twins and `fabricctl lab` all read them from
// here.
//
// The package imports nothing of fabricctl, so the intent parser can check
// `switches[].profile` and `switches[].asic` against it.
package profile
