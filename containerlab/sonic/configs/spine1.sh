#!/bin/bash
# SONiC node spine1: its ports, addresses and static routes. Not run alone:
# e2e.sh sends ../../sonic-setup.sh (which defines port, route and finish)
# and then this file to the switch over SSH.
port Ethernet0 192.168.1.1/31
port Ethernet4 192.168.1.5/31
route 10.20.1.0/24 192.168.1.0
route 10.20.2.0/24 192.168.1.0
route 10.20.3.0/24 192.168.1.4
route 10.20.4.0/24 192.168.1.4
finish
