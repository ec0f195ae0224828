#!/bin/sh
# scrape-latency.sh — time N scrapes of GET /metrics with curl and print
# p50, p90, p99 and max in milliseconds.
#
#   scripts/scrape-latency.sh BASE_URL [N] [INTERVAL_S]
#
# Run it while a load (govllm bench serve) keeps the server saturated.
set -eu
URL=$1/metrics; N=${2:-300}; GAP=${3:-0.05}
i=0
while [ $i -lt "$N" ]; do
	curl -sf -o /dev/null -w '%{time_total}\n' "$URL" || { echo "scrape $i failed: is the server up?" >&2; exit 1; }
	sleep "$GAP"
	i=$((i + 1))
done | sort -n | awk '{ v[NR] = $1 * 1000 }
	function q(p,   r, lo, f) { r = 1 + (NR - 1) * p; lo = int(r); f = r - lo; return lo < NR ? v[lo] + f * (v[lo + 1] - v[lo]) : v[NR] }
	END { printf "scrapes %d  p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  max %.2f ms\n", NR, q(0.50), q(0.90), q(0.99), v[NR] }'
