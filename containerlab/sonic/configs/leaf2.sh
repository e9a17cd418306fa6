#!/bin/bash
# SONiC node leaf2: its ports, addresses and static routes. Not run alone:
# e2e.sh sends ../../sonic-setup.sh (which defines port, route and finish)
# and then this file to the switch over SSH.
port Ethernet0 10.20.3.1/24
port Ethernet4 10.20.4.1/24
port Ethernet8 192.168.1.4/31
port Ethernet12 192.168.1.6/31
route 10.20.1.0/24 192.168.1.5,192.168.1.7
route 10.20.2.0/24 192.168.1.5,192.168.1.7
finish
