// Package shipcheck holds the tests that check what fabricctl ships with
// the real tools: every GitHub Actions workflow with actionlint (and
// shellcheck), and every Kubernetes manifest rendered by kustomize and
// decoded strictly into the Kubernetes API types. It is a module of its own
// so that k8s.io/api, kustomize and actionlint stay out of fabricctl's
// go.mod; scripts/test.sh runs its tests.
package shipcheck
