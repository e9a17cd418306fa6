#!/usr/bin/env bash
# End-to-end test of fabricctl against a containerlab lab:
#
#   preflight -> build -> check -> deploy -> wait for hosts and gNMI ->
#   plan -> apply -> diff (must be in sync) -> plan again (must be empty),
#   all for the switches (--skip-hosts) -> host plan over SSH (recorded, not
#   judged: lab NICs are veths without DCB) -> validate (rdma with Soft-RoCE,
#   else udp) -> reports -> destroy
#
# Usage:  sudo -E env "PATH=$PATH" containerlab/e2e.sh <srl-leafspine|sonic|mixed>
#
# It stops at the first broken step and names it; the lab is destroyed on exit
# (KEEP_LAB=1 keeps it for debugging). Reports (JSON, JUnit, Markdown) go to
# containerlab/reports/<lab>-<time>/ (REPORTS_DIR overrides).
#
# Needs: root (containerlab, ip netns), docker, containerlab, go (or FABRICCTL
# pointing at a built binary), ssh, ssh-keygen, ssh-keyscan; sshpass for the
# SONiC labs. gNMI credentials come from SRL_USERNAME/SRL_PASSWORD and
# SONIC_USERNAME/SONIC_PASSWORD; unset ones get containerlab's documented lab
# defaults. They are never printed.
set -euo pipefail

usage() {
	echo "usage: $0 <srl-leafspine|sonic|mixed>" >&2
	exit 64
}
[[ $# -eq 1 ]] || usage
topo=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
lab_dir="$here/$topo"
clab_file="$lab_dir/$topo.clab.yml"
intent="$lab_dir/fabric.yaml"
[[ -f $clab_file && -f $intent ]] || {
	echo "e2e: no lab $topo: want $clab_file and $intent" >&2
	usage
}
reports=${REPORTS_DIR:-"$here/reports/$topo-$(date -u +%Y%m%dT%H%M%SZ)"}
fabricctl="$here/.bin/fabricctl"
ready_timeout=${READY_TIMEOUT:-900} # seconds; SONiC VMs take minutes to boot
hosts=(gpu1 gpu2 gpu3 gpu4)
netns_created=()
current_step="start"
deployed=0

step() {
	current_step=$1
	printf '\n=== [%s] %s: %s\n' "$(date -u +%H:%M:%S)" "$topo" "$1" >&2
}

die() {
	echo "e2e: $topo: step \"$current_step\" FAILED: $*" >&2
	exit 1
}

# run NAME CMD... runs a fabricctl step, keeping its exit code for the caller.
run() {
	local name=$1
	shift
	echo "+ $*" >&2
	set +e
	"$@"
	local rc=$?
	set -e
	echo "$name exit $rc" >>"$reports/exit-codes.txt"
	return $rc
}

cleanup() {
	local rc=$?
	set +e
	if [[ $rc -ne 0 ]]; then
		printf '\ne2e: %s FAILED at step "%s" (exit %d); reports in %s\n' "$topo" "$current_step" "$rc" "$reports" >&2
	fi
	for ns in "${netns_created[@]}"; do
		ip netns delete "$ns" 2>/dev/null
	done
	if [[ $deployed -eq 1 ]]; then
		if [[ -d $reports ]]; then
			containerlab inspect -t "$clab_file" --format json >"$reports/containerlab-inspect.json" 2>/dev/null
			cp "$lab_dir/clab-$topo/topology-data.json" "$reports/" 2>/dev/null
		fi
		if [[ ${KEEP_LAB:-0} == 1 ]]; then
			echo "e2e: KEEP_LAB=1: the lab stays up; destroy it with: containerlab destroy -t $clab_file --cleanup" >&2
		else
			echo "=== destroying the lab" >&2
			containerlab destroy -t "$clab_file" --cleanup >&2 || echo "e2e: containerlab destroy failed; clean up by hand" >&2
		fi
	fi
	[[ $rc -eq 0 ]] && printf '\ne2e: %s PASSED; reports in %s\n' "$topo" "$reports" >&2
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_for DESCRIPTION CMD...: retry CMD every 5 s until it succeeds or
# ready_timeout passes.
wait_for() {
	local what=$1
	shift
	local deadline=$((SECONDS + ready_timeout))
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			[[ -s $reports/gnmi-wait.log && $what == gNMI* ]] && tail -n 5 "$reports/gnmi-wait.log" >&2
			die "$what: not ready after ${ready_timeout}s"
		fi
		sleep 5
	done
	echo "ready: $what" >&2
}

tcp_open() { timeout 3 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; }

mgmt_ip() { # the fixed mgmt-ipv4 of a node in the topology file
	awk -v n="    $1:" '$0 == n {f=1; next} f && /mgmt-ipv4:/ {print $2; exit}' "$clab_file"
}

kind_of() {
	awk -v n="    $1:" '$0 == n {f=1; next} f && /kind:/ {print $2; exit}' "$clab_file"
}

switches() { awk '/^    [a-z0-9-]+:$/ {n=$1; sub(":", "", n)} /kind: (nokia_srlinux|sonic-vm|sonic-vs)/ {print n}' "$clab_file"; }

step "preflight"
[[ $(id -u) -eq 0 ]] || die "run as root (sudo -E env PATH=\"$PATH\" $0 $topo): containerlab and ip netns need it"
need=(docker containerlab ssh ssh-keygen ssh-keyscan ip awk timeout)
if [[ $topo != srl-leafspine ]]; then need+=(sshpass); fi
if [[ -z ${FABRICCTL:-} ]]; then need+=(go); fi
for c in "${need[@]}"; do
	command -v "$c" >/dev/null || die "$c is not installed (or not on root's PATH, which sudo may reset: try sudo env PATH=\"\$PATH\" ..., or set FABRICCTL=/path/to/fabricctl to skip go)"
done
export SRL_USERNAME=${SRL_USERNAME:-admin}
export SRL_PASSWORD=${SRL_PASSWORD:-NokiaSrl1!}  # containerlab's SR Linux default
export SONIC_USERNAME=${SONIC_USERNAME:-admin}
export SONIC_PASSWORD=${SONIC_PASSWORD:-admin}   # containerlab's sonic-vm default
mkdir -p "$reports"
: >"$reports/exit-codes.txt"

step "build fabricctl"
mkdir -p "$here/.bin"
if [[ -n ${FABRICCTL:-} ]]; then
	install -m 755 "$FABRICCTL" "$fabricctl"
else
	(cd "$repo" && CGO_ENABLED=0 go build -o "$fabricctl" ./cmd/fabricctl) || die "go build failed"
fi
"$fabricctl" version >&2

step "lab SSH key and Soft-RoCE"
[[ -f $lab_dir/lab_key ]] || ssh-keygen -q -t ed25519 -N '' -C "fabricctl-e2e-$topo" -f "$lab_dir/lab_key"
rxe=1
modprobe rdma_rxe 2>/dev/null || {
	rxe=0
	echo "note: this kernel has no rdma_rxe module: validate will use the udp engine" >&2
}

cd "$lab_dir"

step "check"
run check "$fabricctl" check -f "$intent" -o json >"$reports/check.json" || die "the intent does not pass check (see $reports/check.json)"

step "deploy"
deployed=1
containerlab deploy -t "$clab_file" --reconfigure >&2 || die "containerlab deploy failed"

step "wait for the hosts (sshd)"
: >"$lab_dir/known_hosts"
for h in "${hosts[@]}"; do
	ip=$(mgmt_ip "$h")
	[[ -n $ip ]] || die "no mgmt-ipv4 for $h in $clab_file"
	wait_for "$h sshd ($ip:22)" tcp_open "$ip" 22
	ssh-keyscan -T 5 -t ed25519 "$ip" >>"$lab_dir/known_hosts" 2>/dev/null || die "ssh-keyscan $h ($ip)"
done

if [[ $topo != srl-leafspine ]]; then
	step "configure SONiC routing and gNMI (sonic-setup.sh + configs/<switch>.sh over SSH)"
	export SSHPASS=$SONIC_PASSWORD
	for sw in $(switches); do
		[[ $(kind_of "$sw") == sonic-* ]] || continue
		ip=$(mgmt_ip "$sw")
		wait_for "$sw SSH ($ip:22)" tcp_open "$ip" 22
		wait_for "$sw login" sshpass -e ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
			"$SONIC_USERNAME@$ip" true
		cat "$here/sonic-setup.sh" "configs/$sw.sh" |
			sshpass -e ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "$SONIC_USERNAME@$ip" 'bash -s' \
				>"$reports/setup-$sw.log" 2>&1 || die "configs/$sw.sh failed on $sw (see $reports/setup-$sw.log)"
	done
fi

step "wait for gNMI on every switch"
# diff reads every switch over gNMI: exit 0 (in sync) or 2 (drift) means all
# of them answered; 1 means one could not be reached yet.
gnmi_ready() {
	local rc=0
	"$fabricctl" diff -f "$intent" --skip-hosts --timeout 5s >/dev/null 2>"$reports/gnmi-wait.log" || rc=$?
	[[ $rc -eq 0 || $rc -eq 2 ]]
}
wait_for "gNMI on every switch" gnmi_ready

step "plan"
rc=0
run plan "$fabricctl" plan -f "$intent" --skip-hosts --out "$reports/plan.json" -o markdown >"$reports/plan.md" || rc=$?
[[ $rc -eq 0 ]] || die "plan failed (exit $rc)"

step "apply"
rc=0
run apply "$fabricctl" apply -f "$intent" "$reports/plan.json" --skip-hosts --backup-dir "$reports/backups" -o json >"$reports/apply.json" || rc=$?
case $rc in
0) ;;
4) die "apply failed and was rolled back (exit 4, see $reports/apply.json)" ;;
*) die "apply failed (exit $rc, see $reports/apply.json)" ;;
esac

if [[ $topo != srl-leafspine ]]; then
	# PFC_WD exists only once the watchdog was started, and SONiC's config
	# updater refuses to create it, so apply leaves it out and diff names it
	# as lacking, with the pfcwd commands to run. The operator's step:
	# start it on the ports apply made lossless (pfcwd skips ports without
	# PORT_QOS_MAP pfc_enable; sonic-utilities pfcwd/main.py), then apply
	# again to set the intent's timers on the table that now exists.
	step "start the SONiC PFC watchdog (what diff names as lacking), apply again"
	for sw in $(switches); do
		[[ $(kind_of "$sw") == sonic-* ]] || continue
		ip=$(mgmt_ip "$sw")
		sshpass -e ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "$SONIC_USERNAME@$ip" \
			'sudo pfcwd start --action drop all 200 --restoration-time 200 && sudo pfcwd interval 200 && sudo config save -y' \
			>"$reports/pfcwd-$sw.log" 2>&1 || die "pfcwd start failed on $sw (see $reports/pfcwd-$sw.log)"
	done
	rc=0
	run apply-watchdog "$fabricctl" apply -f "$intent" --skip-hosts --backup-dir "$reports/backups" -o json >"$reports/apply-watchdog.json" || rc=$?
	[[ $rc -eq 0 ]] || die "apply after starting the watchdog failed (exit $rc, see $reports/apply-watchdog.json)"
fi

step "diff (expect in sync)"
rc=0
run diff "$fabricctl" diff -f "$intent" --skip-hosts -o json >"$reports/diff.json" || rc=$?
case $rc in
0) ;;
2) die "drift right after apply (exit 2): the switches did not keep what was applied (see $reports/diff.json)" ;;
*) die "diff failed (exit $rc)" ;;
esac

step "plan again (expect no changes)"
rc=0
run replan "$fabricctl" plan -f "$intent" --skip-hosts --detailed-exitcode -o json >"$reports/replan.json" || rc=$?
[[ $rc -eq 0 ]] || die "a second plan is not empty (exit $rc): apply is not idempotent (see $reports/replan.json)"

step "host plan (over SSH)"
# Lab hosts are containers whose NICs are veths: the kernel's veth driver has
# no dcbnl ops, so DCB (PFC, ETS, APP) cannot be set there. fabricctl plans the
# hosts the way it does for real servers (SSH, then "fabricctl host plan -f -"
# with the binary the topology binds into each host) and the result is kept,
# but not judged: it is not a failure of the fabric under test.
host_args=()
for h in "${hosts[@]}"; do host_args+=(--host "$h"); done
rc=0
run host-plan "$fabricctl" plan -f "$intent" "${host_args[@]}" -o json >"$reports/host-plan.json" 2>"$reports/host-plan.log" || rc=$?
if [[ $rc -ne 0 ]]; then
	echo "note: host plan exit $rc (veth has no DCB; see $reports/host-plan.log)" >&2
fi

step "validate"
engine=udp
if [[ $rxe -eq 1 ]]; then
	engine=rdma
	for h in "${hosts[@]}"; do
		docker exec "clab-$topo-$h" rdma link show rxe0 >/dev/null 2>&1 || {
			engine=udp
			echo "note: $h has no rxe0: validate will use the udp engine" >&2
		}
	done
fi
args=(-f "$intent" --engine "$engine" --junit "$reports/validate.xml" --markdown "$reports/validate.md" -o json)
if [[ $engine == udp ]]; then
	# the udp engine runs in this process: name each host's network namespace
	for h in "${hosts[@]}"; do
		pid=$(docker inspect -f '{{.State.Pid}}' "clab-$topo-$h") || die "docker inspect $h"
		ns="fabricctl-e2e-$topo-$h"
		ip netns attach "$ns" "$pid" || die "ip netns attach $ns $pid"
		netns_created+=("$ns")
		args+=(--netns "$h=$ns")
	done
fi
echo "engine: $engine" >&2
rc=0
run validate "$fabricctl" validate "${args[@]}" >"$reports/validate.json" || rc=$?
case $rc in
0) ;;
3) die "validate: a check failed (exit 3, see $reports/validate.md)" ;;
*) die "validate could not run (exit $rc, see $reports/validate.json)" ;;
esac

step "done"
