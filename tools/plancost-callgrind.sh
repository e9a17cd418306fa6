#!/usr/bin/env bash
# Counts the instructions of one `fabricctl plan -o text` run on an
# in-sync fabric (as `diff` runs it too) and of the floor it is measured
# against, a client that only does the Get of the owned paths, on the same
# SR Linux twins, in one process each, under valgrind's callgrind, and
# prints x_get in instructions: the steady referee of BenchmarkPlanCost's
# CPU ratio on a loaded machine. Each side runs BenchmarkPlanCostSide at
# two iteration counts; the difference divided by the difference in
# iterations is one iteration's count, without the set-up. As
# tools/applycost-callgrind.sh: GOMAXPROCS=1, no asynchronous preemption.
#
#   tools/plancost-callgrind.sh [SWITCHES [LOW HIGH]]   (default 20 2 6)
#   SIDES="text get" tools/plancost-callgrind.sh        (leave out plan -o json)
set -euo pipefail

switches=${1:-20}
low=${2:-2}
high=${3:-6}
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 2; }

cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/switchdrv.test" ./switchdrv/

count() {
	local out="$work/cg.$1.$2.out"
	(cd switchdrv && GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 FABRICCTL_BENCH_SWITCHES=$switches \
		valgrind --tool=callgrind --callgrind-out-file="$out" \
		"$work/switchdrv.test" -test.run '^$' -test.bench "PlanCostSide/$1\$" -test.benchtime "${2}x" \
		2>"$work/cg.$1.$2.log" >/dev/null)
	awk '/Collected :/ {print $4}' "$work/cg.$1.$2.log"
}

declare -A per
for side in ${SIDES:-text json get}; do
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
awk -v t="${per[text]:-0}" -v j="${per[json]:-0}" -v g="${per[get]:-1}" 'BEGIN {
	if (t) printf "x_get (instructions): %.3f (plan -o text, diff)\n", t / g
	if (j) printf "json_x_get (instructions): %.3f (plan -o json / --out)\n", j / g
}'
