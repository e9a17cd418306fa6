#!/usr/bin/env bash
# Tests the tool modules, which have go.mod files of their own so that
# their dependencies stay out of fabricctl's (.ci/run runs this after
# scripts/test.sh):
#   tools/imagebuild  builds the release (scripts/build-release.sh --image:
#                     static binaries, SHA256SUMS, the image) and checks the
#                     image from its tarballs; go install from the checkout;
#                     the GitOps example's pinned, checksum-verified install
#   tools/shipcheck   actionlint + shellcheck on every workflow; kustomize
#                     renders examples/k8s and every object decodes strictly
#                     into the k8s.io/api types
#   tools/lemmingcheck  the fabricctl binary against lemming v0.4.0's
#                     reference gNMI server (OpenConfig, real gRPC on
#                     127.0.0.1): check, render, plan, apply, diff
# No -race: they build and lint, they have no concurrency of their own.
# Run scripts/install-deps.sh first (scripts/test.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."
for m in tools/imagebuild tools/shipcheck tools/lemmingcheck; do
  echo "== $m"
  (cd "$m" && go vet ./... && go test -count=1 -timeout 20m ./...)
done
