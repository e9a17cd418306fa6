#!/usr/bin/env bash
# Compares one `fabricctl apply` run (plan, backup, Set, verify) with the
# minimal verified client (Get + Set + Get) as a user meets them: each side
# once, in a process of its own, started afresh every time, so that each
# pays for the memory its own heap grows into and nothing is warm from an
# earlier run of it. BenchmarkApplyCostSide's set-up (twins, YANG schema,
# the minimal client's compiled payloads) is outside the figures.
#
# Rounds alternate which side starts. Prints, per round, each side's wall
# time, CPU time (process: client and twins) and page faults per switch,
# and the ratios fabricctl / minimal; then the medians of the ratios, and
# each side's median and the ratio of those.
#
#   tools/applycost-fresh.sh [ROUNDS [SWITCHES]]   (default 6 200)
set -euo pipefail

rounds=${1:-6}
switches=${2:-200}

cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/switchdrv.test" ./switchdrv/

# run SIDE: "wall cpu faults" per switch of one iteration in a new process.
run() {
	FABRICCTL_BENCH_SWITCHES=$switches "$work/switchdrv.test" -test.run '^$' \
		-test.bench "ApplyCostSide/$1\$" -test.benchtime 1x >"$work/$1.out" 2>&1 || {
		cat "$work/$1.out" >&2
		exit 1
	}
	awk '/^BenchmarkApplyCostSide/ {
		for (i = 1; i < NF; i++) m[$(i+1)] = $i
		print m["ms/switch"], m["cpu-ms/switch"], m["faults/switch"]
	}' "$work/$1.out"
}

printf '%-5s %-24s %-24s %s\n' round "fabricctl wall/cpu/flt" "minimal wall/cpu/flt" "x_minimal wall cpu"
for ((r = 1; r <= rounds; r++)); do
	if ((r % 2)); then
		f=$(run fabricctl)
		m=$(run minimal)
	else
		m=$(run minimal)
		f=$(run fabricctl)
	fi
	read -r fw fc ff <<<"$f"
	read -r mw mc mf <<<"$m"
	awk -v r="$r" -v fw="$fw" -v fc="$fc" -v ff="$ff" -v mw="$mw" -v mc="$mc" -v mf="$mf" \
		'BEGIN {printf "%-5d %-24s %-24s %.3f %.3f\n", r, fw "/" fc "/" ff, mw "/" mc "/" mf, fw / mw, fc / mc}'
done | tee "$work/rounds"
awk 'function median(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
	}
	{
		n++; w[n] = $4; c[n] = $5
		split($2, f, "/"); split($3, m, "/")
		fw[n] = f[1]; fc[n] = f[2]; mw[n] = m[1]; mc[n] = m[2]
	}
	END {
		printf "median x_minimal: %.3f (wall), %.3f (CPU) over %d rounds\n", median(w, n), median(c, n), n
		# Each side alone swings less than the ratio of one round on a
		# busy machine: the ratio of the medians of the two sides.
		a = median(fw, n); b = median(mw, n); x = median(fc, n); y = median(mc, n)
		printf "median per switch: fabricctl %.3f ms wall, %.3f ms CPU; minimal %.3f, %.3f; ratio of medians %.3f (wall), %.3f (CPU)\n", a, x, b, y, a / b, x / y
	}' "$work/rounds"
