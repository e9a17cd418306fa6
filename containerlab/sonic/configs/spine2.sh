#!/bin/bash
# SONiC node spine2: its ports, addresses and static routes. Not run alone:
# e2e.sh sends ../../sonic-setup.sh (which defines port, route and finish)
# and then this file to the switch over SSH.
port Ethernet0 192.168.1.3/31
port Ethernet4 192.168.1.7/31
route 10.20.1.0/24 192.168.1.2
route 10.20.2.0/24 192.168.1.2
route 10.20.3.0/24 192.168.1.6
route 10.20.4.0/24 192.168.1.6
finish
