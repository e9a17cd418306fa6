// Package perftest drives the linux-rdma perftest tools (ib_write_bw,
// ib_write_lat, ib_send_bw ...) and reads their text output.
//
// Parse reads every table variant perftest prints (MB/MiB/Gb headers, -a
// multi-row, duration-mode bandwidth and latency, QoS and --cpu_util columns)
// and normalises units to Gb/s, Mpps and microseconds. Command builds the
// exact argv of a server and a client (always -d -i -x -F --report_gbits and
// an explicit -p), GIDIndex finds the RoCE v2 IPv4 GID index from sysfs, and
// RunPair starts a server, waits until it listens, runs the client and tears
// both down, over a remote.Runner. perftest's own --out_json is not used: it
// was not valid JSON before 24.01 and is overwritten per report.
package perftest
