#!/usr/bin/env bash
# Counts the instructions of one `fabricctl plan -o text` run on an
# in-sync fabric (as `diff` runs it too) and of the floor it is measured
# against, a client that only does the Get of the owned paths, on the same
# SR Linux twins, in one process each, under valgrind's callgrind, and
# prints x_get in instructions: the steady referee of BenchmarkPlanCost's
# CPU ratio on a loaded machine. Each side runs BenchmarkPlanCostSide at
# two iteration counts; the difference divided by the difference in
# iterations is one iteration's count, without the set-up
# (tools/callgrind-sides.sh, shared with tools/applycost-callgrind.sh).
#
#   tools/plancost-callgrind.sh [SWITCHES [LOW HIGH]]   (default 20 2 6)
#   SIDES="text get" tools/plancost-callgrind.sh        (leave out plan -o json)
set -euo pipefail

switches=${1:-20}
low=${2:-2}
high=${3:-6}
cd "$(dirname "$0")/.."
# shellcheck source=tools/callgrind-sides.sh
. tools/callgrind-sides.sh
declare -A per
# shellcheck disable=SC2086 # SIDES is a list of words
callgrind_sides PlanCostSide "$switches" "$low" "$high" ${SIDES:-text json get}
awk -v t="${per[text]:-0}" -v j="${per[json]:-0}" -v g="${per[get]:-1}" 'BEGIN {
	if (t) printf "x_get (instructions): %.3f (plan -o text, diff)\n", t / g
	if (j) printf "json_x_get (instructions): %.3f (plan -o json / --out)\n", j / g
}'
