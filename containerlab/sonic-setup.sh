#!/bin/bash
# Shared steps of the SONiC lab nodes (sonic-vm takes no partial startup
# config). e2e.sh sends this file followed by the node's configs/<switch>.sh
# to the switch over SSH:
#   cat sonic-setup.sh sonic/configs/leaf1.sh | sshpass -e ssh admin@<mgmt> 'bash -s'
# The node files only list ports, addresses and routes. Routing only:
# fabricctl owns the QoS.
set -euo pipefail

# port PORT CIDR: take PORT out of Vlan1000 (the L2 preset puts every port
# there), bring it up and give it an address.
port() {
  sudo config vlan member del 1000 "$1" 2>/dev/null || true
  sudo config interface startup "$1"
  sudo config interface ip add "$1" "$2"
}

# route PREFIX NEXTHOPS: a static route; NEXTHOPS is comma-separated.
route() {
  sudo sonic-db-cli CONFIG_DB hset "STATIC_ROUTE|$1" nexthop "$2"
}

# finish: gNMI on 8080 over TLS with a self-signed certificate (the intents
# use tls.skipVerify: lab only), password authentication, no client
# certificate; then save the configuration. Recent images that find no
# GNMI|certs serve gNMI without TLS on 127.0.0.1 only.
finish() {
  sudo mkdir -p /etc/sonic/telemetry
  sudo openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=$(hostname)" \
    -keyout /etc/sonic/telemetry/gnmi.key -out /etc/sonic/telemetry/gnmi.cer 2>/dev/null
  # GNMI|* for the gnmi container, TELEMETRY|* for images that still run the
  # telemetry container instead.
  local table
  for table in GNMI TELEMETRY; do
    sudo sonic-db-cli CONFIG_DB hset "$table|certs" server_crt /etc/sonic/telemetry/gnmi.cer \
      server_key /etc/sonic/telemetry/gnmi.key ca_crt /etc/sonic/telemetry/gnmi.cer >/dev/null
    sudo sonic-db-cli CONFIG_DB hset "$table|gnmi" port 8080 client_auth false user_auth password log_level 2 >/dev/null
  done
  if systemctl cat gnmi.service >/dev/null 2>&1; then
    sudo config feature state gnmi enabled 2>/dev/null || true
    sudo systemctl restart gnmi
  else
    sudo config feature state telemetry enabled 2>/dev/null || true
    sudo systemctl restart telemetry
  fi
  sudo config save -y
}
