#!/usr/bin/env bash
# The test command the README names. It installs the tools the tests use
# (scripts/install-deps.sh: strace, iproute2, perftest, openssh-server,
# staticcheck) when it can, then runs every test with the race detector.
# Kernel tests (network namespaces, veth, dcbnl) run as root and skip with a
# reason otherwise; tests that need an RDMA NIC or a switch OS say so.
#
# The output is what go test prints (the ok/FAIL line of each package and the
# output of failed tests), then every skipped test with its reason and a
# last line "N passed, N failed, N skipped" (scripts/testsummary), so a tool
# missing in CI shows up as a skip there. The exit code is go test's.
# Arguments replace the package list (default ./...).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/testsummary" ./scripts/testsummary
set +e
go test -json -race -count=1 -timeout 20m "${@:-./...}" | "$tmp/testsummary"
status=("${PIPESTATUS[@]}")
set -e
if [ "${status[0]}" -ne 0 ]; then
  exit "${status[0]}"
fi
exit "${status[1]}"
