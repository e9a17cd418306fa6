#!/bin/sh
# Set-up of one rdmavm guest (run by busybox init). The kernel command line
# names the host and its RoCE link: rdmavm.name=gpu1 rdmavm.addr=192.168.77.1/24
# rdmavm.mgmt=MAC (user-mode NIC, SSH from the test) rdmavm.roce=MAC (the
# socket netdev to the other guest), rdmavm.netdev=roce0 rdmavm.ibdev=rxe0.
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs run /run
mkdir -p /run/sshd && chmod 755 /run/sshd
while read -r ko; do
  insmod "$ko" || echo "rdmavm: insmod $ko failed"
done < /etc/rdmavm-modules
mount -t configfs none /sys/kernel/config

name=guest addr='' mgmt='' roce='' netdev=roce0 ibdev=rxe0
read -r cmdline < /proc/cmdline
for w in $cmdline; do
  case $w in
    rdmavm.name=*) name=${w#*=} ;;
    rdmavm.addr=*) addr=${w#*=} ;;
    rdmavm.mgmt=*) mgmt=${w#*=} ;;
    rdmavm.roce=*) roce=${w#*=} ;;
    rdmavm.netdev=*) netdev=${w#*=} ;;
    rdmavm.ibdev=*) ibdev=${w#*=} ;;
  esac
done
hostname "$name"
/usr/bin/ip link set lo up
# Netdevs by MAC: the kernel's ethN order is not promised.
for d in /sys/class/net/*; do
  n=${d##*/}
  m=$(cat "$d/address")
  if [ "$m" = "$mgmt" ]; then
    /usr/bin/ip link set "$n" name mgmt0
  elif [ "$m" = "$roce" ]; then
    /usr/bin/ip link set "$n" name "$netdev"
  fi
done
/usr/bin/ip addr add 10.0.2.15/24 dev mgmt0
/usr/bin/ip link set mgmt0 up
/usr/bin/ip addr add "$addr" dev "$netdev"
/usr/bin/ip link set "$netdev" up
/usr/bin/rdma link add "$ibdev" type rxe netdev "$netdev" || echo "rdmavm: rdma link add $ibdev failed"
echo "rdmavm: $name up: $(cat "/sys/class/infiniband/$ibdev/ports/1/state" 2>/dev/null) $ibdev on $netdev $addr"
