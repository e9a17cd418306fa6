// Package transport is fabricctl's one gNMI client: it dials a switch of the
// intent (TLS by default, mTLS, plaintext only when asked for), sends the
// credentials as per-RPC metadata, and wraps Capabilities, Get, Set and
// Subscribe ONCE with a per-target timeout, bounded retries on transient
// errors (never for Set) and errors that name the switch and the path.
// Credentials never reach logs or errors.
package transport
