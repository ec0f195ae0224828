#!/bin/sh
# bench-serve.sh — start `govllm serve`, run `govllm bench serve` at several
# concurrencies, print one summary line per run, stop the server.
#
#   scripts/bench-serve.sh LABEL [serve args...]
#
# Environment (all optional):
#   GOVLLM   binary (default: build ./cmd/govllm into /tmp/govllm-bench)
#   PORT     server port (default 18700)
#   CONCS    concurrencies (default "1 4 16 64")
#   IN, OUT  prompt / output length in tokens (default 128 / 128)
#   WAVES    requests per run = WAVES × concurrency, at least MINREQ (default 4, 16)
#   OUTDIR   where the server log and bench outputs go (default /tmp/bench-serve)
#   CHECK    metrics flag of the bench (default --verify-metrics; use
#            --no-metrics-check against a server run with --disable-log-stats)
#   SCRAPE   also time a /metrics scrape this often during each run (e.g.
#            100ms) and add the scrapes' p99 (ms) to the line
#   DATASET  a custom JSONL dataset ({"prompt": …} per line) sent without a
#            chat template instead of random prompts (OUT tokens each), e.g.
#            scripts/grounded-prompts.jsonl
#   BENCHARGS more `govllm bench serve` arguments (e.g. --temperature 0)
#
# Each line: label, concurrency, output tok/s, median TTFT, median TPOT,
# server CPU seconds during the run, output tokens per server CPU-second
# (steadier than tok/s on a shared machine), and the load average.
set -eu
LABEL=$1; shift
PORT=${PORT:-18700}; CONCS=${CONCS:-"1 4 16 64"}; IN=${IN:-128}; OUT=${OUT:-128}
WAVES=${WAVES:-4}; MINREQ=${MINREQ:-16}; OUTDIR=${OUTDIR:-/tmp/bench-serve}
CHECK=${CHECK:---verify-metrics}
mkdir -p "$OUTDIR"
if [ -z "${GOVLLM:-}" ]; then
	GOVLLM=/tmp/govllm-bench
	go build -o "$GOVLLM" ./cmd/govllm
fi
"$GOVLLM" serve "$@" --port "$PORT" --disable-log-requests >"$OUTDIR/$LABEL.server.log" 2>&1 &
SRV=$!
trap 'kill $SRV 2>/dev/null; wait $SRV 2>/dev/null || true' EXIT INT TERM
i=0
until curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; do
	i=$((i + 1))
	if [ $i -gt 3000 ] || ! kill -0 $SRV 2>/dev/null; then
		echo "server did not start; see $OUTDIR/$LABEL.server.log" >&2
		exit 1
	fi
	sleep 0.2
done
cpu() { awk '{print $14 + $15}' /proc/$SRV/stat; }
tck=$(getconf CLK_TCK)
printf '%-28s %4s %10s %10s %10s %8s %10s  %s\n' label conc "out tok/s" "TTFT ms" "TPOT ms" "srv CPU s" "tok/CPU-s" "load avg"
for c in $CONCS; do
	n=$((WAVES * c)); [ $n -lt "$MINREQ" ] && n=$MINREQ
	f="$OUTDIR/$LABEL.c$c.txt"
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	a=$(cpu)
	if [ -n "${DATASET:-}" ]; then
		data="--dataset-name custom --dataset-path $DATASET --custom-output-len $OUT --skip-chat-template"
	else
		data="--random-input-len $IN --random-output-len $OUT"
	fi
	# shellcheck disable=SC2086 # $data and $BENCHARGS are word lists
	"$GOVLLM" bench serve --base-url "http://127.0.0.1:$PORT" --num-prompts $n $data --max-concurrency "$c" \
		--ignore-eos "$CHECK" --disable-tqdm --seed "$c" ${SCRAPE:+--metrics-scrape-interval "$SCRAPE"} ${BENCHARGS:-} >"$f" 2>&1 || { echo "bench failed (c=$c): see $f" >&2; exit 1; }
	b=$(cpu)
	awk -v label="$LABEL" -v c="$c" -v cpu="$(( b - a ))" -v tck="$tck" -v load="$load" '
		/^Output token throughput/ { tps = $NF }
		/^Total generated tokens/ { gen = $NF }
		/^Median TTFT/ { ttft = $NF }
		/^Median TPOT/ { tpot = $NF }
		/^P99 scrape latency/ { scrape = "  scrape p99 " $NF " ms" }
		END { s = cpu / tck; printf "%-28s %4d %10.1f %10.1f %10.2f %8.1f %10.1f  %s%s\n", label, c, tps, ttft, tpot, s, (s > 0 ? gen / s : 0), load, scrape }' "$f"
done
