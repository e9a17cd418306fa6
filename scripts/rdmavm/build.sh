#!/usr/bin/env bash
# Builds the soft-RoCE test VM of validate/rdmavm: Debian's kernel and an
# initramfs made from the files of the installed Debian packages (busybox-static,
# rdma-core's libraries and the rxe provider, perftest, iproute2, openssh-server)
# with their shared libraries (found with ldd) and the kernel modules rdma_rxe,
# rdma_ucm, virtio_net and the tc classifiers need (found with modprobe
# --show-depends). fabricctl is not in it: the test appends a second cpio
# archive with the freshly built binary and the per-run keys (the kernel
# unpacks concatenated archives in order).
#
# The result is cached under ${FABRICCTL_RDMAVM_CACHE:-$HOME/.cache/fabricctl-rdmavm}/KEY,
# KEY being a hash of the packages' versions and of this directory's files, so
# a package upgrade or an edit here builds a new image and an unchanged
# machine reuses it. Prints the image directory (vmlinuz, base.cpio.gz, kver).
#
#   scripts/rdmavm/build.sh            build if needed, print the directory
#   scripts/rdmavm/build.sh --install  apt-get the packages first (root)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pkgs=(qemu-system-x86 linux-image-amd64 busybox-static rdma-core ibverbs-providers cpio
  libibverbs1 librdmacm1 perftest iproute2 openssh-server dash ethtool)

if [ "${1:-}" = --install ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
fi

# The kernel linux-image-amd64 points at (the newest installed one otherwise).
kpkg=$(dpkg-query -W -f '${Depends}' linux-image-amd64 2>/dev/null | grep -o 'linux-image-[0-9][^ ,]*-amd64' | head -1 || true)
if [ -z "$kpkg" ]; then
  kpkg=$(dpkg-query -W -f '${Package}\n' 'linux-image-[0-9]*-amd64' 2>/dev/null | sort -V | tail -1 || true)
fi
kver=${kpkg#linux-image-}
if [ -z "$kver" ] || [ ! -f "/boot/vmlinuz-$kver" ] || [ ! -d "/lib/modules/$kver" ]; then
  echo "rdmavm: no Debian kernel installed (apt-get install linux-image-amd64)" >&2
  exit 2
fi
missing=()
for p in "${pkgs[@]}" "$kpkg"; do
  dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "rdmavm: packages not installed: ${missing[*]} (scripts/rdmavm/build.sh --install)" >&2
  exit 2
fi

key=$({ for p in "${pkgs[@]}" "$kpkg" libc6; do dpkg-query -W -f '${Package}=${Version}\n' "$p"; done
  cat "$here"/build.sh "$here"/init.sh "$here"/inittab; } | sha256sum | cut -c1-16)
cache=${FABRICCTL_RDMAVM_CACHE:-$HOME/.cache/fabricctl-rdmavm}
out=$cache/$key
if [ -f "$out/base.cpio.gz" ]; then
  echo "$out"
  exit 0
fi
mkdir -p "$cache"
stage=$(mktemp -d "$cache/.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root=$stage/root
mkdir -p "$root"/{usr/bin,usr/lib,usr/lib64,etc,proc,sys,dev,run,tmp,root/.ssh,var/log,var/empty}
ln -s usr/bin "$root/bin"; ln -s usr/bin "$root/sbin"; ln -s bin "$root/usr/sbin"
ln -s usr/lib "$root/lib"; ln -s usr/lib64 "$root/lib64"
chmod 700 "$root/root" "$root/root/.ssh"; chmod 1777 "$root/tmp"

# copy FILE: into the tree at the same path (symlinks resolved: the tree is
# merged-usr, so /lib/x and /usr/lib/x are one file).
copy() {
  local f=$1 dst
  dst=$root$(realpath -s "$f" | sed 's#^/lib/#/usr/lib/#; s#^/lib64/#/usr/lib64/#; s#^/bin/#/usr/bin/#; s#^/sbin/#/usr/bin/#; s#^/usr/sbin/#/usr/bin/#')
  [ -e "$dst" ] && return 0
  mkdir -p "$(dirname "$dst")"
  cp -L "$f" "$dst"
}
# libs FILE: the shared libraries FILE needs, per ldd.
libs() {
  ldd "$1" 2>/dev/null | awk '/=> \//{print $3} /^\t\/lib/{print $1}' || true
}

cp /bin/busybox "$root/usr/bin/busybox"
for l in $(libs /bin/busybox); do copy "$l"; done # none when busybox-static
# /bin/sh is dash, not busybox: Debian's busybox shell runs its own applets
# before $PATH (so `tc` in an SSH session would be busybox's tc, not iproute2's).
copy /bin/dash
ln -s dash "$root/usr/bin/sh"
for a in $("$root/usr/bin/busybox" --list); do
  [ -e "$root/usr/bin/$a" ] || ln -s busybox "$root/usr/bin/$a"
done
bins=(ib_write_bw ib_write_lat ib_send_bw ib_send_lat ib_read_bw ib_read_lat
  rdma ip tc ss sshd ethtool)
for b in "${bins[@]}"; do
  p=$(command -v "$b" || true)
  [ -n "$p" ] || { p=/usr/sbin/$b; [ -x "$p" ] || { echo "rdmavm: $b not found" >&2; exit 2; }; }
  rm -f "$root/usr/bin/$b" # a busybox applet of the same name (ip, tc) gives way
  copy "$p"
  for l in $(libs "$p"); do copy "$l"; done
done
# The rxe verbs provider is dlopen'ed by libibverbs, so ldd does not list it.
for f in /etc/libibverbs.d/rxe.driver /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so; do
  copy "$f"
  for l in $(libs "$f"); do copy "$l"; done
done
[ -d /usr/share/iproute2 ] && { mkdir -p "$root/usr/share"; cp -r /usr/share/iproute2 "$root/usr/share/"; }

# Kernel modules, in dependency order.
mods=(crc32_generic configfs virtio_net virtio_pci rdma_rxe rdma_ucm sch_ingress cls_flower cls_u32 act_gact)
order=$root/etc/rdmavm-modules
: > "$order"
for m in "${mods[@]}"; do
  modprobe -S "$kver" --show-depends "$m" | awk '$1=="insmod"{print $2}' | while read -r ko; do
    grep -qxF "$ko" "$order" && continue
    echo "$ko" >> "$order"
    mkdir -p "$root$(dirname "$ko")"
    case $ko in
      *.ko) cp "$ko" "$root$ko" ;;
      *.ko.xz) xz -dc "$ko" > "$root${ko%.xz}" ;;
      *.ko.zst) zstd -qdc "$ko" > "$root${ko%.zst}" ;;
    esac
  done
done
sed -i 's/\.ko\.\(xz\|zst\)$/.ko/' "$order"

cat > "$root/etc/passwd" <<'P'
root:x:0:0:root:/root:/bin/sh
sshd:x:100:65534::/run/sshd:/bin/false
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
P
cat > "$root/etc/group" <<'P'
root:x:0:
nogroup:x:65534:
P
printf 'root:*:19000:0:99999:7:::\nsshd:*:19000:0:99999:7:::\n' > "$root/etc/shadow"
chmod 600 "$root/etc/shadow"
mkdir -p "$root/etc/ssh"
cat > "$root/etc/ssh/sshd_config" <<'P'
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
UseDNS no
MaxSessions 32
MaxStartups 32
PrintMotd no
StrictModes no
P
echo 'hosts: files' > "$root/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n' > "$root/etc/hosts"
install -m 755 "$here/init.sh" "$root/etc/rdmavm-init"
cp "$here/inittab" "$root/etc/inittab"
ln -s usr/bin/busybox "$root/init"

mkdir -p "$stage/out"
(cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 > "$stage/out/base.cpio.gz"
cp "/boot/vmlinuz-$kver" "$stage/out/vmlinuz"
echo "$kver" > "$stage/out/kver"
for p in "${pkgs[@]}" "$kpkg" libc6; do dpkg-query -W -f '${Package}=${Version}\n' "$p"; done > "$stage/out/packages"
rm -rf "$out"
mv "$stage/out" "$out"
echo "rdmavm: built $out in ${SECONDS}s" >&2
echo "$out"
