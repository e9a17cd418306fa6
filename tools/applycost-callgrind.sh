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
# count, without the set-up (tools/callgrind-sides.sh, shared with
# tools/plancost-callgrind.sh, says how).
#
#   tools/applycost-callgrind.sh [SWITCHES [LOW HIGH]]   (default 20 2 6)
set -euo pipefail

switches=${1:-20}
low=${2:-2}
high=${3:-6}
cd "$(dirname "$0")/.."
# shellcheck source=tools/callgrind-sides.sh
. tools/callgrind-sides.sh
declare -A per
callgrind_sides ApplyCostSide "$switches" "$low" "$high" fabricctl minimal lean
awk -v f="${per[fabricctl]}" -v m="${per[minimal]}" -v l="${per[lean]}" 'BEGIN {
	printf "x_minimal (instructions): %.3f\n", f / m
	printf "x_lean (instructions): %.3f (the lean client: %.3f of the minimal one)\n", f / l, l / m
}'
