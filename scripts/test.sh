#!/usr/bin/env bash
# The test command the README names. Kernel tests (netns, veth, dcbnl) run when
# root and skip with a reason otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -race -count=1 -timeout 20m ./...
