#!/usr/bin/env bash
# Installs the tools fabricctl's tests use. Idempotent; safe on a fresh machine.
set -euo pipefail
STATICCHECK_VERSION=v0.8.2
need_apt=()
# yanglint (libyang2-tools) referees internal/yangcheck's datastore validation:
# with CI=true the tests that need it fail when it is missing.
# prometheus and promtool (Debian package prometheus) run the watch end-to-end
# test and the alert rule unit tests; with CI=true those fail when missing.
for pair in strace:strace ip:iproute2 dcb:iproute2 ib_write_bw:perftest sshd:openssh-server yanglint:libyang2-tools prometheus:prometheus promtool:prometheus; do
  bin=${pair%%:*} pkg=${pair##*:}
  command -v "$bin" >/dev/null 2>&1 || [ -x "/usr/sbin/$bin" ] || need_apt+=("$pkg")
done
# ethtool is also the referee of hostdrv's pause storm prevention ioctl
# (TestTunableRequestIsEthtools reads what ethtool --set-tunable passes to
# SIOCETHTOOL); with CI=true that test fails when it is missing.
# The soft-RoCE VM tests (internal/rdmavm, scripts/rdmavm/build.sh) boot
# Debian's kernel under qemu with an initramfs made from these packages; with
# CI=true they fail when one is missing.
for pair in qemu-system-x86_64:qemu-system-x86 busybox:busybox-static ethtool:ethtool cpio:cpio; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || [ -x "/usr/sbin/${pair%%:*}" ] || need_apt+=("${pair##*:}")
done
for pkg in linux-image-amd64 rdma-core ibverbs-providers busybox-static; do
  dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need_apt+=("$pkg")
done
# The shellcheck package serves actionlint's checks of the workflows' scripts (tools/shipcheck);
# skopeo: reads the image archives independently (tools/imagebuild).
for pair in shellcheck:shellcheck skopeo:skopeo; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need_apt+=("${pair##*:}")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  mapfile -t pkgs < <(printf '%s\n' "${need_apt[@]}" | sort -u)
  if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    # A package that cannot be installed only makes the tests that need it
    # skip (each says which tool is missing); say so loudly and go on.
    if ! { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null; }; then
      echo "WARNING: apt-get could not install: ${pkgs[*]} -- the tests that need them will skip" >&2
    fi
  else
    echo "note: not root, so not installing ${pkgs[*]}; the tests that need them (or root) will skip" >&2
  fi
fi
if ! command -v staticcheck >/dev/null 2>&1 && [ ! -x "$(go env GOPATH)/bin/staticcheck" ]; then
  GOFLAGS='' go install "honnef.co/go/tools/cmd/staticcheck@${STATICCHECK_VERSION}"
fi
go mod download
# The tool modules (release image, workflow and manifest checks, the lemming
# gNMI server) have their own go.mod; scripts/test-tools.sh tests them.
for m in tools/imagebuild tools/shipcheck tools/lemmingcheck; do
  (cd "$(dirname "$0")/../$m" && go mod download)
done
