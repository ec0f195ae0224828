#!/bin/sh
# spec-bench.sh — single-stream decode with and without speculative
# decoding, interleaved, on the input-grounded prompts.
#
#   scripts/spec-bench.sh [SHAPE QUANT]...     (default: stories110m q8_0 tinyllama-1.1b q4_0)
#
# For each shape of the built-in random-weight model, each of the first
# NPROMPTS prompts of scripts/grounded-prompts.jsonl is generated greedily
# (OUT tokens, --threads THREADS) without and with SPEC (vLLM's
# --speculative-config JSON), alternately, and one line per pair gives
# both decode speeds, their ratio, the acceptance and whether the two
# outputs are identical (they must be). The last line per shape is the
# median ratio.
#
# Environment: GOVLLM (binary; default: build ./cmd/govllm), NPROMPTS (6),
# OUT (64), THREADS (2), SPEC (ngram, k = 4, lookup 1…3), TEMP (0: greedy;
# above 0 the runs are seeded, so both outputs are still identical).
set -eu
NPROMPTS=${NPROMPTS:-6}; OUT=${OUT:-64}; THREADS=${THREADS:-2}; TEMP=${TEMP:-0}
SPEC=${SPEC:-'{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":3,"prompt_lookup_min":1}'}
if [ -z "${GOVLLM:-}" ]; then
	GOVLLM=/tmp/govllm-specbench
	go build -o "$GOVLLM" ./cmd/govllm
fi
[ $# -eq 0 ] && set -- stories110m q8_0 tinyllama-1.1b q4_0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "$(date -u +%H:%M) load $(cut -d' ' -f1-3 /proc/loadavg) temperature $TEMP spec $SPEC"
while [ $# -ge 2 ]; do
	shape=$1 quant=$2; shift 2
	: >"$tmp/ratios"
	i=0
	head -n "$NPROMPTS" scripts/grounded-prompts.jsonl | while IFS= read -r line; do
		i=$((i + 1))
		prompt=$(printf '%s' "$line" | sed 's/^{"prompt": "//; s/"}$//' | sed 's/\\n/\n/g; s/\\"/"/g')
		for mode in plain spec; do
			set -- --load-format dummy --dummy-shape "$shape" --quantization "$quant" --prompt "$prompt" \
				--max-tokens "$OUT" --ignore-eos --temperature "$TEMP" --threads "$THREADS"
			[ $mode = spec ] && set -- "$@" --speculative-config "$SPEC"
			"$GOVLLM" generate "$@" >"$tmp/$mode.out" 2>"$tmp/$mode.err"
		done
		p=$(sed -n 's/.*decode [0-9.]*s (\([0-9.]*\) tok\/s).*/\1/p' "$tmp/plain.err")
		s=$(sed -n 's/.*decode [0-9.]*s (\([0-9.]*\) tok\/s).*/\1/p' "$tmp/spec.err")
		acc=$(sed -n 's/^speculative: \(.*\)/\1/p' "$tmp/spec.err")
		same=identical; cmp -s "$tmp/plain.out" "$tmp/spec.out" || same=DIFFERENT
		r=$(awk -v a="$p" -v b="$s" 'BEGIN { printf "%.2f", b / a }')
		echo "$r" >>"$tmp/ratios"
		printf '%-16s %-6s prompt %2d  plain %7.1f  spec %7.1f tok/s  %s×  %s  (%s)\n' "$shape" "$quant" "$i" "$p" "$s" "$r" "$same" "${acc:-no drafts}"
	done
	sort -n "$tmp/ratios" | awk -v s="$shape" -v q="$quant" '{ r[NR] = $1 } END { printf "%-16s %-6s median %.2f× over %d prompts\n", s, q, (NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2), NR }'
done
