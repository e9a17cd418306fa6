#!/usr/bin/env bash
# Installs the pinned fabricctl release binary, and only after its SHA-256
# matches the pin. The workflow sets, in its env:
#   FABRICCTL_VERSION        the release tag, e.g. v1.2.3
#   FABRICCTL_SHA256_AMD64   sha256 of fabricctl_linux_amd64 of that release
#   FABRICCTL_SHA256_ARM64   sha256 of fabricctl_linux_arm64 (arm64 runners)
# Take the sums from the release's SHA256SUMS once, when you choose the
# release, and commit them: a binary that differs later (a re-uploaded
# asset, a tampered download) then never runs.
# FABRICCTL_RELEASE_URL overrides where releases are downloaded from (a
# mirror); FABRICCTL_INSTALL_DIR where the binary goes.
set -euo pipefail

version=${FABRICCTL_VERSION:?set FABRICCTL_VERSION to a release tag}
base=${FABRICCTL_RELEASE_URL:-https://github.com/fabricctl/fabricctl/releases/download}
dir=${FABRICCTL_INSTALL_DIR:-${RUNNER_TEMP:-/tmp}/fabricctl-bin}

case $(uname -m) in
  x86_64 | amd64) arch=amd64 want=${FABRICCTL_SHA256_AMD64:-} ;;
  aarch64 | arm64) arch=arm64 want=${FABRICCTL_SHA256_ARM64:-} ;;
  *) echo "::error::fabricctl releases are built for linux amd64 and arm64, not $(uname -m)"; exit 1 ;;
esac
if ! [[ $want =~ ^[0-9a-f]{64}$ ]]; then
  echo "::error::FABRICCTL_SHA256_${arch^^} is not a sha256 (\"$want\"): pin the sum of fabricctl_linux_$arch from SHA256SUMS of release $version"
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
curl -fsSL --retry 3 --proto '=https' -o "$tmp/fabricctl" "$base/$version/fabricctl_linux_$arch"
got=$(sha256sum "$tmp/fabricctl" | cut -d' ' -f1)
if [ "$got" != "$want" ]; then
  echo "::error::fabricctl_linux_$arch of $version has sha256 $got, the pin says $want: not installing it"
  exit 1
fi
mkdir -p "$dir"
install -m 0755 "$tmp/fabricctl" "$dir/fabricctl"
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$dir" >> "$GITHUB_PATH"
fi
"$dir/fabricctl" version
