#!/usr/bin/env bash
# govulncheck over every module of the repository, with the toolchain go.mod
# names (its toolchain line: what CI and the release build with), against a
# vulnerability database built offline from the module proxy:
#
#   golang.org/x/vulndb (the Go vulnerability database's own repository,
#   served by the module proxy as a Go module) holds every report as OSV JSON
#   under data/osv; its cmd/indexdb writes the v1 database layout govulncheck
#   reads with -db file:///DIR. No network is used but the module proxy.
#
# The database is as current as the vulndb module version used: "latest"
# (the newest commit the proxy serves) unless VULNDB_VERSION names one. The
# version and its newest report are printed, so a run says what it covered.
# Exit status: govulncheck's (non-zero when a called vulnerability is found).
set -euo pipefail
cd "$(dirname "$0")/.."
GOVULNCHECK_VERSION=${GOVULNCHECK_VERSION:-v1.10.0}
VULNDB_VERSION=${VULNDB_VERSION:-latest}

# The toolchain go.mod names, downloaded through the module proxy when it
# is not the local one: govulncheck judges the standard library by it.
toolchain=$(sed -n 's/^toolchain //p' go.mod)
export GOTOOLCHAIN=${toolchain:-local}
export GOFLAGS=-buildvcs=false

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== vulnerability database: golang.org/x/vulndb@${VULNDB_VERSION}"
dl=$(go mod download -json "golang.org/x/vulndb@${VULNDB_VERSION}")
dir=$(printf '%s\n' "$dl" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
version=$(printf '%s\n' "$dl" | sed -n 's/^[[:space:]]*"Version": "\(.*\)",$/\1/p')
if [ -z "$dir" ] || [ ! -d "$dir/data/osv" ]; then
  echo "golang.org/x/vulndb@${VULNDB_VERSION} has no data/osv" >&2
  exit 2
fi
go run "golang.org/x/vulndb/cmd/indexdb@${version}" -vulns "$dir/data/osv" -out "$work/db"
reports=$(find "$dir/data/osv" -name 'GO-*.json' | wc -l)
newest=$(find "$dir/data/osv" -name 'GO-*.json' -printf '%f\n' | sort -V | tail -1)
echo "golang.org/x/vulndb ${version}: ${reports} reports, newest ${newest%.json}"

GOBIN="$work/bin" go install "golang.org/x/vuln/cmd/govulncheck@${GOVULNCHECK_VERSION}"
echo "== govulncheck ${GOVULNCHECK_VERSION} with $(go env GOVERSION)"
rc=0
for m in . tools/imagebuild tools/shipcheck tools/lemmingcheck; do
  echo "-- module $m"
  (cd "$m" && "$work/bin/govulncheck" -db "file://$work/db" ./...) || rc=$?
done
exit "$rc"
