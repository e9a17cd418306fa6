#!/bin/bash
# Prepares a lab host container for fabricctl; containerlab runs it as the
# first exec step of every linux node (see the *.clab.yml files).
#   - installs iproute2 (ip, rdma, dcb), rdma-core + ibverbs-providers (the
#     Soft-RoCE provider), perftest (ib_write_bw ...), ethtool, sshd
#   - authorizes the lab key (lab_key.pub, bound to /tmp/lab_key.pub) for root
#   - starts sshd: fabricctl reaches hosts over SSH like real servers
# Needs network access to the Debian mirrors at deploy time.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
  iproute2 rdma-core ibverbs-providers ibverbs-utils perftest ethtool kmod \
  openssh-server ca-certificates >/dev/null
install -d -m 700 /root/.ssh
# sshd refuses an authorized_keys owned by another user (the bind mount keeps
# the lab host's owner), so copy it.
install -m 600 -o root -g root /tmp/lab_key.pub /root/.ssh/authorized_keys
mkdir -p /run/sshd
/usr/sbin/sshd
echo "host-setup: $(hostname) ready (perftest $(dpkg-query -W -f='${Version}' perftest))"
