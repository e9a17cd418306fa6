#!/bin/bash
# SONiC node leaf1: its ports, addresses and static routes. Not run alone:
# e2e.sh sends ../../sonic-setup.sh (which defines port, route and finish)
# and then this file to the switch over SSH.
port Ethernet0 10.20.1.1/24
port Ethernet4 10.20.2.1/24
port Ethernet8 192.168.1.0/31
port Ethernet12 192.168.1.2/31
route 10.20.3.0/24 192.168.1.1,192.168.1.3
route 10.20.4.0/24 192.168.1.1,192.168.1.3
finish
