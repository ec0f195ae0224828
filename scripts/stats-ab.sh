#!/bin/sh
# stats-ab.sh — throughput with statistics on vs off (--disable-log-stats),
# interleaved: ROUNDS pairs of runs (on first in odd rounds, off first in even ones) of scripts/bench-serve.sh, each on a
# fresh server, then the per-round ratio on/off of output tok/s and of
# tokens per server CPU-second, and their medians.
#
#   scripts/stats-ab.sh [serve args...]     (default: the built-in model)
#
# Environment: ROUNDS (default 5), C (concurrency, default 16), and those of
# scripts/bench-serve.sh (GOVLLM, PORT, IN, OUT, WAVES, OUTDIR).
set -eu
ROUNDS=${ROUNDS:-5}; C=${C:-16}
dir=$(dirname "$0")
if [ -z "${GOVLLM:-}" ]; then
	GOVLLM=/tmp/govllm-bench
	go build -o "$GOVLLM" ./cmd/govllm
fi
export GOVLLM
r=1
while [ $r -le "$ROUNDS" ]; do
	# Alternate which runs first: the first run of a pair tends to be faster.
	if [ $((r % 2)) -eq 1 ]; then
		on=$(CONCS=$C "$dir/bench-serve.sh" "on$r" "$@" | tail -1)
		off=$(CHECK=--no-metrics-check CONCS=$C "$dir/bench-serve.sh" "off$r" "$@" --disable-log-stats | tail -1)
	else
		off=$(CHECK=--no-metrics-check CONCS=$C "$dir/bench-serve.sh" "off$r" "$@" --disable-log-stats | tail -1)
		on=$(CONCS=$C "$dir/bench-serve.sh" "on$r" "$@" | tail -1)
	fi
	echo "$on"
	echo "$off"
	echo "$on $off" | awk '{ printf "ratio %d: tok/s %.3f  tok/CPU-s %.3f\n", r, $3 / $13, $7 / $17 }' r=$r
	r=$((r + 1))
done | tee /dev/stderr | awk '/^ratio/ { a[++n] = $4; b[n] = $6 }
	function med(x, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && x[j - 1] > x[j]; j--) { t = x[j]; x[j] = x[j - 1]; x[j - 1] = t }
		return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2 }
	END { printf "median on/off over %d rounds: tok/s %.3f  tok/CPU-s %.3f\n", n, med(a, n), med(b, n) }'
