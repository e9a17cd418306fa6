# Sourced by tools/applycost-callgrind.sh and tools/plancost-callgrind.sh:
# the instruction count of one iteration of each side of a switchdrv
# benchmark with sides (BenchmarkApplyCostSide, BenchmarkPlanCostSide),
# under valgrind's callgrind.
#
# callgrind_sides BENCH SWITCHES LOW HIGH SIDE...
#   runs BENCH/SIDE at LOW and at HIGH iterations for each SIDE, in a
#   process each, and sets per[SIDE] to the difference divided by the
#   difference in iterations: one iteration's count without the set-up
#   (twins, YANG schema, compile for the clients). It prints each side's
#   count per switch. GOMAXPROCS=1 and no asynchronous preemption:
#   callgrind serialises threads and does not survive Go's preemption
#   signals; idle processors spinning for work would make the count swing.
#   The caller declares `declare -A per` and runs from the repository root.
# shellcheck shell=bash

callgrind_sides() {
	local bench=$1 switches=$2 low=$3 high=$4
	shift 4
	command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 2; }
	local work
	work=$(mktemp -d)
	# shellcheck disable=SC2064 # expand $work now: it is local
	trap "rm -rf '$work'" EXIT
	go test -c -o "$work/switchdrv.test" ./switchdrv/
	local side a b
	for side in "$@"; do
		a=$(callgrind_count "$work" "$bench" "$side" "$low" "$switches")
		b=$(callgrind_count "$work" "$bench" "$side" "$high" "$switches")
		if [[ -z $a || -z $b ]]; then
			echo "callgrind gave no count for $side; its log:" >&2
			cat "$work/cg.$side.$high.log" >&2
			exit 1
		fi
		# shellcheck disable=SC2004 # per is associative: $side is its key
		per[$side]=$(((b - a) / (high - low)))
		# shellcheck disable=SC2004
		echo "$side: $((per[$side] / switches)) instructions per switch ($switches switches)"
	done
}

# callgrind_count WORK BENCH SIDE ITERATIONS SWITCHES: the instructions
# callgrind collected, the test binary run in its package's folder as go
# test runs it.
callgrind_count() {
	local work=$1 bench=$2 side=$3 n=$4 switches=$5
	(cd switchdrv && GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 FABRICCTL_BENCH_SWITCHES=$switches \
		valgrind --tool=callgrind --callgrind-out-file="$work/cg.$side.$n.out" \
		"$work/switchdrv.test" -test.run '^$' -test.bench "$bench/$side\$" -test.benchtime "${n}x" \
		2>"$work/cg.$side.$n.log" >/dev/null)
	awk '/Collected :/ {print $4}' "$work/cg.$side.$n.log"
}
