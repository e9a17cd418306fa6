// Package netnstest gives tests a private network namespace with veth pairs,
// so kernel behaviour (rtnetlink, dcbnl, MTU) is exercised for real without
// touching the host's own interfaces. Tests that use it skip, with a message
// saying why, when the process is not root or namespaces are unavailable.
package netnstest
