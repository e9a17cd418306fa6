#!/usr/bin/env bash
# The test command the README names. It installs the tools the tests use
# (scripts/install-deps.sh: strace, iproute2, perftest, openssh-server,
# skopeo, shellcheck, staticcheck) when it can, then runs every test with the
# race detector, then the tests of the two tool modules (without -race: they
# build the release and run linters, and race-instrumenting them buys nothing):
#   tools/imagebuild  release binaries + container image, checked from the tarballs
#   tools/shipcheck   actionlint + shellcheck on every workflow; kustomize +
#                     strict k8s.io/api decoding of every manifest
# Kernel tests (network namespaces, veth, dcbnl) run as root and skip with a
# reason otherwise; tests that need an RDMA NIC or a switch OS say so.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
go test -race -count=1 -timeout 20m ./...
for m in tools/imagebuild tools/shipcheck; do
  (cd "$m" && go vet ./... && go test -count=1 -timeout 20m ./...)
done
