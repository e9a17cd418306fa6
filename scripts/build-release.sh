#!/usr/bin/env bash
# Builds what a release publishes, the same way on a laptop and in
# .github/workflows/release.yml:
#   OUT/fabricctl_linux_amd64, OUT/fabricctl_linux_arm64   static binaries
#   OUT/SHA256SUMS                                         their sha256
#   with --image, the container image (tools/imagebuild, no Docker daemon):
#   OUT/oci/                             OCI image layout (the index)
#   OUT/fabricctl_oci.tar                the same as an oci-archive
#   OUT/fabricctl_image_linux_ARCH.tar   docker-archive per platform, for
#                                        docker load / podman load
#   and their sums in SHA256SUMS too; stdout: the digest of the image index
#
# usage: scripts/build-release.sh [--image] VERSION [OUT [imagebuild flags]]
#        (OUT: dist; e.g. --push ghcr.io/fabricctl/fabricctl:v1.2.3)
#
# The binaries are static (CGO_ENABLED=0) and reproducible: -trimpath, no VCS
# stamping, no build ID; `fabricctl version` prints VERSION and the revision
# (REVISION, default: git rev-parse HEAD). SOURCE_DATE_EPOCH (default: the
# commit time) fixes every timestamp in the image.
set -euo pipefail
image=false
if [ "${1:-}" = --image ]; then image=true; shift; fi
version=${1:?usage: scripts/build-release.sh [--image] VERSION [OUT]}
out=${2:-dist}
case $version in
  v[0-9]*) ;;
  *) echo "build-release: VERSION $version: want a tag such as v1.2.3" >&2; exit 64 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root"
revision=${REVISION:-$(git rev-parse HEAD)}
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD)}
export SOURCE_DATE_EPOCH

for arch in amd64 arm64; do
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch GOFLAGS='' go build -trimpath -buildvcs=false \
    -ldflags "-s -w -buildid= -X main.version=$version -X main.revision=$revision" \
    -o "$out/fabricctl_linux_$arch" ./cmd/fabricctl
done
(cd "$out" && sha256sum fabricctl_linux_amd64 fabricctl_linux_arm64 > SHA256SUMS)

if $image; then
  (cd tools/imagebuild && GOFLAGS='' go run . \
    --binary "linux/amd64=$out/fabricctl_linux_amd64" \
    --binary "linux/arm64=$out/fabricctl_linux_arm64" \
    --version "$version" --revision "$revision" \
    --out "$out" "${@:3}")
  (cd "$out" && sha256sum fabricctl_image_linux_amd64.tar fabricctl_image_linux_arm64.tar fabricctl_oci.tar >> SHA256SUMS)
fi
