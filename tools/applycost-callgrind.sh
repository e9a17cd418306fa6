#!/usr/bin/env bash
# Counts the instructions of one `fabricctl apply` run (plan, backup, Set,
# verify), of the minimal verified client (Get + Set + Get) and of the lean
# one (the minimal client with fabricctl's transport calls, which decode
# the replies no further than fabricctl does) on the same SR Linux twins,
# in one process each, under valgrind's callgrind, and prints x_minimal and
# x_lean in instructions: the steady referee of BenchmarkApplyCost's time
# ratios on a machine whose CPU time swings by 20 % from run to run.
#
# Each side runs BenchmarkApplyCostSide at two iteration counts; the
# difference divided by the difference in iterations is one iteration's
# count, without the set-up (twins, YANG schema, compile for the clients).
# GOMAXPROCS=1 and no asynchronous preemption: callgrind serialises threads
# and does not survive Go's preemption signals; idle processors spinning
# for work would make the count swing.
#
#   tools/applycost-callgrind.sh [SWITCHES [LOW HIGH]]   (default 20 2 6)
set -euo pipefail

switches=${1:-20}
low=${2:-2}
high=${3:-6}
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 2; }

cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/switchdrv.test" ./switchdrv/

# count SIDE ITERATIONS: the instructions callgrind collected.
count() {
	local out="$work/cg.$1.$2.out"
	GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 FABRICCTL_BENCH_SWITCHES=$switches \
		valgrind --tool=callgrind --callgrind-out-file="$out" \
		"$work/switchdrv.test" -test.run '^$' -test.bench "ApplyCostSide/$1\$" -test.benchtime "${2}x" \
		2>"$work/cg.$1.$2.log" >/dev/null
	awk '/Collected :/ {print $4}' "$work/cg.$1.$2.log"
}

declare -A per
for side in fabricctl minimal lean; do
	a=$(count "$side" "$low")
	b=$(count "$side" "$high")
	if [[ -z $a || -z $b ]]; then
		echo "callgrind gave no count for $side; its log:" >&2
		cat "$work/cg.$side.$high.log" >&2
		exit 1
	fi
	per[$side]=$(((b - a) / (high - low)))
	echo "$side: $((per[$side] / switches)) instructions per switch ($switches switches)"
done
awk -v f="${per[fabricctl]}" -v m="${per[minimal]}" -v l="${per[lean]}" 'BEGIN {
	printf "x_minimal (instructions): %.3f\n", f / m
	printf "x_lean (instructions): %.3f (the lean client: %.3f of the minimal one)\n", f / l, l / m
}'
