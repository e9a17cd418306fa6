#!/bin/bash
# Regenerates the synthetic perftest outputs in output/ from perftest's own
# printf formats (RESULT_FMT*, REPORT_FMT*, RESULT_LINE in perftest_parameters.h,
# as compiled into the Debian perftest 4.5+0.17 binaries, "Version: 6.06",
# `strings /usr/bin/ib_write_bw`). The numbers are made up; the layout is byte
# for byte what perftest prints. See SOURCE.txt.
# The printf formats below are perftest's own, held in variables on purpose.
# shellcheck disable=SC2059
set -eu
cd "$(dirname "$0")/output"
RL='---------------------------------------------------------------------------------------'
BWH_MB=' #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]'
BWH_MIB=' #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]'
BWH_G=' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]'
BWH_QOS_G=' #bytes    #sl      #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]'
REPORT_FMT=' %-7d    %-10d       %-7.2f            %-7.2f\t\t   %-7.6f'
BWH_G_PP=' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]   BW Port1[Gb/sec]   MsgRate Port1[Mpps]   BW Port2[Gb/sec]   MsgRate Port2[Mpps]'
REPORT_FMT_PER_PORT=' %-7d    %-10d     %-7.2f            %-7.2f\t\t   %-7.6f        %-7.2f            %-7.6f              %-7.2f            %-7.6f'
REPORT_FMT_QOS=' %-7d    %d           %d           %-7.2f            %-7.2f                  %-7.6f\n'
LATH=' #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] '
REPORT_FMT_LAT=' %-7d %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f'
LATH_DUR=' #bytes        #iterations       t_avg[usec]    tps average'
REPORT_FMT_LAT_DUR=' %-7d       %d            %-7.2f        %-7.2f'
LATH_OLD=' #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]'
REPORT_FMT_LAT_OLD=' %-7d %d          %-7.2f        %-7.2f      %-7.2f\n'
CPU_H='    CPU_Util[%]'
CPU_R='\t    %-3.2f\n'
WARN='Conflicting CPU frequency values detected: 3000.000000 != 2200.000000. CPU Frequency is not max.'

head_bw() { # $1 title $2 device $3 gid
cat <<EOF
$RL
                    $1
 Dual-port       : OFF		Device         : $2
 Number of qps   : 1		Transport type : IB
 Connection type : RC		Using SRQ      : OFF
 PCIe relax order: ON
 ibv_wr* API     : ON
 TX depth        : 128
 CQ Moderation   : 1
 Mtu             : 4096[B]
 Link type       : Ethernet
 GID index       : $3
 Max inline data : 0[B]
 rdma_cm QPs	 : OFF
 Data ex. method : Ethernet
$RL
 local address: LID 0000 QPN 0x0108 PSN 0x9a3d2c RKey 0x1fffbd VAddr 0x007f3d2a1b0000
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:10:01
 remote address: LID 0000 QPN 0x0109 PSN 0x51f0b2 RKey 0x1ffebc VAddr 0x007fa1c2d40000
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:10:02
$RL
EOF
}

# 1. perftest 6.06 (Debian) default: MB/sec header, one row, client side.
{ head_bw "RDMA_Write BW Test" mlx5_0 3; echo "$BWH_MB"
  printf "$REPORT_FMT\n" 65536 5000 11030.78 11030.45 0.176487; echo "$RL"; } > ib_write_bw_606_mb.txt

# 2. perftest >= 24.07: MiB/sec header, -a (all sizes) with a CPU frequency
#    warning between header and first row.
{ head_bw "RDMA_Write BW Test" mlx5_1 3; echo "$BWH_MIB"; echo "$WARN"
  s=2
  while [ $s -le 8388608 ]; do
    # peak/average grow with size up to the 400G line (~46,000 MiB/s);
    # MsgRate[Mpps] = average * 2^20 / size / 10^6, as perftest computes it.
    read -r peak avg rate < <(awk -v s=$s 'BEGIN{p=s*2.2; if(p>46567.34)p=46567.34; a=s*2.1; if(a>46557.03)a=46557.03; printf "%.2f %.2f %.6f", p, a, a*1048576/s/1e6; print ""}')
    printf "$REPORT_FMT\n" "$s" 5000 "$peak" "$avg" "$rate"
    s=$((s*2))
  done; echo "$RL"; } > ib_write_bw_mib_all.txt

# 3. --report_gbits -D 10 --cpu_util: duration mode prints peak 0.00, and
#    RESULT_EXT_CPU_UTIL / REPORT_EXT_CPU_UTIL add a CPU_Util column.
{ head_bw "RDMA_Write BW Test" mlx5_0 3; echo "$BWH_G$CPU_H"
  printf "$REPORT_FMT$CPU_R" 65536 3519200 0.00 369.07 0.703950 4.31; echo "$RL"; } > ib_write_bw_gbits_duration_cpu.txt

# 4. QoS table variant (RESULT_FMT_G_QOS / REPORT_FMT_QOS), --report_gbits.
{ head_bw "Send BW Test" mlx5_0 3; echo "$BWH_QOS_G"
  printf "$REPORT_FMT_QOS" 65536 3 5000 97.12 96.88 0.184796; echo "$RL"; } > ib_send_bw_qos_gbits.txt

# 4b. Dual-port (-O) with --report-per-port (RESULT_FMT_G_PER_PORT /
#     REPORT_FMT_PER_PORT): the per-port columns are read, the totals kept, --report_gbits, duration mode.
{ head_bw "RDMA_Write BW Test" mlx5_0 3; echo "$BWH_G_PP"
  printf "$REPORT_FMT_PER_PORT\n" 65536 7000000 0.00 188.40 0.359344 94.21 0.179690 94.19 0.179654; echo "$RL"; } |
  sed 's/Dual-port       : OFF\t\t/Dual-port       : ON\t\t/' > ib_write_bw_dualport_gbits.txt

# 5. Latency, iteration mode, -a -n 1000 with a warning in the table.
{ echo "$RL"; echo "                    RDMA_Write Latency Test"; echo " Link type       : Ethernet"; echo " GID index       : 3"; echo "$RL"
  echo "$LATH"; echo "$WARN"
  printf "$REPORT_FMT_LAT\n" 2 1000 0.98 4.21 1.02 1.04 0.06 1.31 4.21
  printf "$REPORT_FMT_LAT\n" 4 1000 0.99 3.87 1.03 1.05 0.05 1.29 3.87
  printf "$REPORT_FMT_LAT\n" 8 1000 0.99 5.02 1.03 1.06 0.08 1.40 5.02
  echo "$RL"; } > ib_write_lat_all.txt

# 6. Latency, duration mode (-D 5): only the average and tps.
{ echo "$RL"; echo "                    RDMA_Write Latency Test"; echo " GID index       : 3"; echo "$RL"; echo "$LATH_DUR"
  printf "$REPORT_FMT_LAT_DUR\n" 2 4795310 1.04 479531.00; echo "$RL"; } > ib_write_lat_duration.txt

# 7. Latency, duration mode with --cpu_util.
{ echo "$RL"; echo "                    Send Latency Test"; echo "$RL"; echo "$LATH_DUR$CPU_H"
  printf "$REPORT_FMT_LAT_DUR$CPU_R" 2 4611200 1.08 461120.00 99.87; echo "$RL"; } > ib_send_lat_duration_cpu.txt

# 8. Old perftest (2.x/3.x) latency table: t_min t_max t_typical only.
{ echo "$RL"; echo "                    RDMA_Write Latency Test"; echo "$RL"; echo "$LATH_OLD"
  printf "$REPORT_FMT_LAT_OLD" 2 1000 1.10 6.41 1.14; echo "$RL"; } > ib_write_lat_old.txt
