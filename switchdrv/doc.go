// Package switchdrv configures switches for lossless RoCE over gNMI. Platform
// packages (srl, sonic, eos, oc) compile the intent into a Desired state; this
// package owns the shared transport, plan, apply with rollback and drift
// detection on top of them.
package switchdrv
