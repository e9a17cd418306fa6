#!/usr/bin/env bash
# The test command the README names. It installs the tools the tests use
# (scripts/install-deps.sh: strace, iproute2, perftest, openssh-server,
# staticcheck) when it can, then runs every test with the race detector.
# Kernel tests (network namespaces, veth, dcbnl) run as root and skip with a
# reason otherwise; tests that need an RDMA NIC or a switch OS say so.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
go test -race -count=1 -timeout 20m ./...
