#!/bin/bash
# Routing and gNMI for the SONiC node leaf1. SONiC (sonic-vm) takes no
# partial startup config, so e2e.sh runs this on the switch after deploy:
#   sshpass -e ssh admin@<mgmt> 'bash -s' < configs/leaf1.sh
# Routing only: fabricctl owns the QoS.
set -euo pipefail
sudo config vlan member del 1000 Ethernet0 2>/dev/null || true  # the L2 preset puts ports in Vlan1000
sudo config interface startup Ethernet0
sudo config interface ip add Ethernet0 10.30.1.1/24
sudo config vlan member del 1000 Ethernet4 2>/dev/null || true  # the L2 preset puts ports in Vlan1000
sudo config interface startup Ethernet4
sudo config interface ip add Ethernet4 10.30.2.1/24
sudo config vlan member del 1000 Ethernet8 2>/dev/null || true  # the L2 preset puts ports in Vlan1000
sudo config interface startup Ethernet8
sudo config interface ip add Ethernet8 192.168.2.0/31
sudo config vlan member del 1000 Ethernet12 2>/dev/null || true  # the L2 preset puts ports in Vlan1000
sudo config interface startup Ethernet12
sudo config interface ip add Ethernet12 192.168.2.2/31
sudo sonic-db-cli CONFIG_DB hset "STATIC_ROUTE|10.30.3.0/24" nexthop "192.168.2.1,192.168.2.3"
sudo sonic-db-cli CONFIG_DB hset "STATIC_ROUTE|10.30.4.0/24" nexthop "192.168.2.1,192.168.2.3"
# gNMI on 8080 over TLS with a self-signed certificate (the intent uses
# tls.skipVerify: lab only), password authentication, no client certificate.
# Recent images that find no GNMI|certs serve gNMI without TLS on 127.0.0.1 only.
sudo mkdir -p /etc/sonic/telemetry
sudo openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=$(hostname)" \
  -keyout /etc/sonic/telemetry/gnmi.key -out /etc/sonic/telemetry/gnmi.cer 2>/dev/null
# GNMI|* for the gnmi container, TELEMETRY|* for images that still run the
# telemetry container instead.
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
