#!/usr/bin/env bash
# sbs.sh — govllm side by side with llama.cpp on the same GGUF files, interleaved, in one command.
# Run with -h for the options; docs/performance.md ("Side by side with llama.cpp") explains the table.
set -euo pipefail

usage() {
	cat <<'EOF'
Usage: scripts/sbs.sh [-s SHAPES] [-f FORMATS] [-r ROUNDS] [-t THREADS] [-w WORK_DIR] [-S] [-h]

Runs govllm and llama.cpp side by side on the same random-weight GGUF files and prints one
table of ratios, with the machine's read bandwidth and FMA rate measured in the same minutes.

 1. Builds llama.cpp with ../shared/tools/build-llama-cpp.sh (under nice -n 19) when
    $LLAMA_DIR/build/bin/llama-bench is absent.
 2. Writes each shape as an F32 GGUF (scripts/sbs-gguf: random weights, the 32k Llama SPM
    vocabulary) and quantizes it with llama-quantize to each format, under WORK_DIR (kept
    between runs: delete a file to rewrite it).
 3. For each round, shape, format and thread count, runs
      llama-bench -m FILE -mmp 0 -p 128 -n 64 -r 1 -t T
      govllm generate --model FILE --max-tokens 64 --ignore-eos --threads T --prompt <128 tokens>
    one after the other, alternating which goes first from round to round.
 4. With -S, for each shape and format and round: llama-server -np 16 -c 4096 and govllm serve
    (interleaved), each loaded by the same client, govllm bench serve --backend openai, at each
    concurrency of CONCS (32-token prompts, 64-token outputs, EOS ignored).
 5. Measures the read bandwidth (scripts/stream-read.c, 1 GiB, one and two threads) and the FMA
    rate (scripts/fma-peak.c) before and after the runs, and prints the table.

Options (flags override the environment variables of the same meaning):
  -s SHAPES     shapes (default "stories110m tinyllama-1.1b"; also llama-3b)         SHAPES
  -f FORMATS    formats (default "Q8_0 Q4_0 Q4_K_M"; any llama-quantize type, or F32)  FORMATS
  -r ROUNDS     rounds (default 3)                                                      ROUNDS
  -t THREADS    thread counts (default "1 2")                                           THREADS
  -w WORK_DIR   models, binaries, logs and results (default /tmp/govllm-sbs)            WORK_DIR
  -S            also the serving comparison                                             SERVE=1
  -h            this text
Other variables: LLAMA_DIR (default /tmp/llama.cpp), SHARED_DIR (default ../shared relative to
the repository), PROMPT_TOKENS (128), GEN_TOKENS (64), CONCS (serving concurrencies, default
"1 4 16"), SERVE_THREADS (default the largest of THREADS), PORT (default 18800).
EOF
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHAPES=${SHAPES:-"stories110m tinyllama-1.1b"}
FORMATS=${FORMATS:-"Q8_0 Q4_0 Q4_K_M"}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-"1 2"}
WORK_DIR=${WORK_DIR:-/tmp/govllm-sbs}
SERVE=${SERVE:-0}
LLAMA_DIR=${LLAMA_DIR:-/tmp/llama.cpp}
SHARED_DIR=${SHARED_DIR:-$root/../shared}
PROMPT_TOKENS=${PROMPT_TOKENS:-128}
GEN_TOKENS=${GEN_TOKENS:-64}
CONCS=${CONCS:-"1 4 16"}
PORT=${PORT:-18800}
while getopts "s:f:r:t:w:Sh" opt; do
	case $opt in
	s) SHAPES=$OPTARG ;;
	f) FORMATS=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	t) THREADS=$OPTARG ;;
	w) WORK_DIR=$OPTARG ;;
	S) SERVE=1 ;;
	h)
		usage
		exit 0
		;;
	*)
		usage >&2
		exit 2
		;;
	esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then
	echo "sbs.sh: unexpected arguments: $*" >&2
	usage >&2
	exit 2
fi
SERVE_THREADS=${SERVE_THREADS:-$(echo "$THREADS" | tr ' ' '\n' | sort -n | tail -1)}
bin=$LLAMA_DIR/build/bin
vocab=$SHARED_DIR/models/vocab/ggml-vocab-llama-spm.gguf
for cmd in go gcc jq curl; do
	command -v "$cmd" >/dev/null || {
		echo "sbs.sh: needs $cmd" >&2
		exit 1
	}
done
mkdir -p "$WORK_DIR/logs"
results=$WORK_DIR/results.tsv   # kind shape format threads round engine metric value
: >"$results"
log() { echo "sbs: $(date -u +%H:%M:%S) $*" >&2; }

# 1. llama.cpp
if [ ! -x "$bin/llama-bench" ] || [ ! -x "$bin/llama-quantize" ] || { [ "$SERVE" = 1 ] && [ ! -x "$bin/llama-server" ]; }; then
	log "building llama.cpp in $LLAMA_DIR (about 15 minutes on 2 cores; log $WORK_DIR/logs/build-llama-cpp.log)"
	LLAMA_CPP_DIR=$LLAMA_DIR nice -n 19 "$SHARED_DIR/tools/build-llama-cpp.sh" >"$WORK_DIR/logs/build-llama-cpp.log" 2>&1
fi
export LD_LIBRARY_PATH=$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# govllm and the two machine probes
(cd "$root" && go build -o "$WORK_DIR/govllm" ./cmd/govllm)
govllm=$WORK_DIR/govllm
govllm_commit=$(cd "$root" && git describe --always --dirty 2>/dev/null || echo unknown)
gcc -O2 -mavx512f -o "$WORK_DIR/stream-read" "$root/scripts/stream-read.c"
gcc -O2 -o "$WORK_DIR/fma-peak" "$root/scripts/fma-peak.c"

# machine PHASE: one-thread and two-thread read bandwidth (median of each run's 5 passes,
# the two-thread figure is the sum of two concurrent runs) and the FMA / VPDPBUSD rates.
machine() {
	local phase=$1 a b
	med() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
	"$WORK_DIR/stream-read" | awk '{ print $1 }' | med | xargs printf "machine\t-\t-\t1\t%s\t-\tbw\t%s\n" "$phase" >>"$results"
	"$WORK_DIR/stream-read" >"$WORK_DIR/logs/bw-a" & a=$!
	"$WORK_DIR/stream-read" >"$WORK_DIR/logs/bw-b" & b=$!
	wait "$a" "$b"
	echo "$(awk '{ print $1 }' "$WORK_DIR/logs/bw-a" | med) $(awk '{ print $1 }' "$WORK_DIR/logs/bw-b" | med)" |
		awk -v p="$phase" '{ printf "machine\t-\t-\t2\t%s\t-\tbw\t%.1f\n", p, $1 + $2 }' >>"$results"
	"$WORK_DIR/fma-peak" >"$WORK_DIR/logs/fma"
	awk '{ print $3 }' "$WORK_DIR/logs/fma" | med | xargs printf "machine\t-\t-\t1\t%s\t-\tfma\t%s\n" "$phase" >>"$results"
	awk '{ print $7 }' "$WORK_DIR/logs/fma" | med | xargs printf "machine\t-\t-\t1\t%s\t-\tdp\t%s\n" "$phase" >>"$results"
}

# 2. the models
model_file() { echo "$WORK_DIR/$1-$2.gguf"; }
for s in $SHAPES; do
	f32=$(model_file "$s" F32)
	if [ ! -s "$f32" ]; then
		log "writing $f32"
		(cd "$root" && go run ./scripts/sbs-gguf -shape "$s" -vocab "$vocab" -o "$f32")
	fi
	for f in $FORMATS; do
		q=$(model_file "$s" "$f")
		if [ "$f" != F32 ] && [ ! -s "$q" ]; then
			log "quantizing $q"
			"$bin/llama-quantize" "$f32" "$q.tmp" "$f" >"$WORK_DIR/logs/quantize-$s-$f.log" 2>&1
			mv "$q.tmp" "$q"
		fi
	done
done

# A prompt of PROMPT_TOKENS tokens (BOS included) for govllm: words until the count fits.
first_shape=${SHAPES%% *}
words=$((PROMPT_TOKENS - 1))
prompt=
for _ in 1 2 3 4; do
	prompt=$(for ((i = 0; i < words; i++)); do printf 'hello '; done)
	prompt=${prompt% }
	n=$("$govllm" generate --model "$(model_file "$first_shape" F32)" --max-tokens 1 --threads 1 --prompt "$prompt" 2>&1 >/dev/null |
		sed -n 's/.*| prompt \([0-9]*\) tokens.*/\1/p')
	[ "$n" = "$PROMPT_TOKENS" ] && break
	words=$((words + PROMPT_TOKENS - n))
done
if [ "$n" != "$PROMPT_TOKENS" ]; then
	echo "sbs.sh: could not build a $PROMPT_TOKENS-token prompt (got $n)" >&2
	exit 1
fi

run_llama() { # shape format threads round
	local out=$WORK_DIR/logs/llama-bench-$1-$2-t$3-r$4.json
	"$bin/llama-bench" -m "$(model_file "$1" "$2")" -mmp 0 -p "$PROMPT_TOKENS" -n "$GEN_TOKENS" -r 1 -t "$3" -o json >"$out" 2>"$out.err"
	jq -r --arg s "$1" --arg f "$2" --arg t "$3" --arg r "$4" '.[] |
		["gen", $s, $f, $t, $r, "llama.cpp", (if .n_prompt > 0 then "prefill" else "decode" end), .avg_ts] | @tsv' "$out" >>"$results"
}

run_govllm() { # shape format threads round
	local out=$WORK_DIR/logs/govllm-$1-$2-t$3-r$4.txt
	"$govllm" generate --model "$(model_file "$1" "$2")" --max-tokens "$GEN_TOKENS" --ignore-eos --threads "$3" \
		--prompt "$prompt" 2>"$out" >/dev/null
	sed -n 's/.*prefill [0-9.]*s (\([0-9.]*\) tok\/s).*decode [0-9.]*s (\([0-9.]*\) tok\/s).*/\1 \2/p' "$out" |
		awk -v s="$1" -v f="$2" -v t="$3" -v r="$4" '{
			printf "gen\t%s\t%s\t%s\t%s\tgovllm\tprefill\t%s\n", s, f, t, r, $1
			printf "gen\t%s\t%s\t%s\t%s\tgovllm\tdecode\t%s\n", s, f, t, r, $2 }' >>"$results"
}

wait_up() { # pid url log
	local i=0
	until curl -sf "$2" >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 3000 ] || ! kill -0 "$1" 2>/dev/null; then
			echo "sbs.sh: server did not start; see $3" >&2
			return 1
		fi
		sleep 0.2
	done
}

srv=
stop_server() {
	if [ -n "$srv" ]; then
		kill "$srv" 2>/dev/null || true
		wait "$srv" 2>/dev/null || true
		srv=
	fi
}
trap stop_server EXIT INT TERM

run_serve() { # engine shape format round
	local eng=$1 s=$2 f=$3 r=$4 m slog c n out
	m=$(model_file "$s" "$f")
	slog=$WORK_DIR/logs/serve-$eng-$s-$f-r$r.log
	if [ "$eng" = llama.cpp ]; then
		"$bin/llama-server" -m "$m" -t "$SERVE_THREADS" -np 16 -c 4096 --host 127.0.0.1 --port "$PORT" >"$slog" 2>&1 &
		srv=$!
		wait_up "$srv" "http://127.0.0.1:$PORT/health" "$slog"
	else
		"$govllm" serve "$m" --threads "$SERVE_THREADS" --host 127.0.0.1 --port "$PORT" --disable-log-requests >"$slog" 2>&1 &
		srv=$!
		wait_up "$srv" "http://127.0.0.1:$PORT/health" "$slog"
	fi
	for c in $CONCS; do
		n=$((4 * c))
		[ $n -lt 16 ] && n=16
		out=$WORK_DIR/logs/bench-$eng-$s-$f-c$c-r$r.txt
		"$govllm" bench serve --backend openai --base-url "http://127.0.0.1:$PORT" --num-prompts "$n" \
			--random-input-len 32 --random-output-len "$GEN_TOKENS" --max-concurrency "$c" --ignore-eos \
			--tokenize=false --no-metrics-check --disable-tqdm --seed "$c" >"$out" 2>&1 ||
			{
				echo "sbs.sh: bench failed; see $out" >&2
				exit 1
			}
		awk -v s="$s" -v f="$f" -v c="$c" -v r="$r" -v e="$eng" '
			/^Output token throughput/ { printf "serve\t%s\t%s\t%s\t%s\t%s\tout\t%s\n", s, f, c, r, e, $NF }
			/^Median TTFT/ { printf "serve\t%s\t%s\t%s\t%s\t%s\tttft\t%s\n", s, f, c, r, e, $NF }
			/^Median TPOT/ { printf "serve\t%s\t%s\t%s\t%s\t%s\ttpot\t%s\n", s, f, c, r, e, $NF }' "$out" >>"$results"
	done
	stop_server
}

# 3–5. the runs, interleaved
start=$(date -u '+%Y-%m-%d %H:%M')
log "machine figures (before)"
machine before
for ((r = 1; r <= ROUNDS; r++)); do
	for s in $SHAPES; do
		for f in $FORMATS; do
			for t in $THREADS; do
				log "round $r/$ROUNDS: $s $f, $t thread(s)"
				if ((r % 2)); then
					run_llama "$s" "$f" "$t" "$r"
					run_govllm "$s" "$f" "$t" "$r"
				else
					run_govllm "$s" "$f" "$t" "$r"
					run_llama "$s" "$f" "$t" "$r"
				fi
			done
		done
	done
done
if [ "$SERVE" = 1 ]; then
	for ((r = 1; r <= ROUNDS; r++)); do
		for s in $SHAPES; do
			for f in $FORMATS; do
				log "serving round $r/$ROUNDS: $s $f, $SERVE_THREADS thread(s), concurrency $CONCS"
				if ((r % 2)); then
					run_serve llama.cpp "$s" "$f" "$r"
					run_serve govllm "$s" "$f" "$r"
				else
					run_serve govllm "$s" "$f" "$r"
					run_serve llama.cpp "$s" "$f" "$r"
				fi
			done
		done
	done
fi
log "machine figures (after)"
machine after
end=$(date -u '+%H:%M')

# llama-bench names its commit when built from git; a build from the tarball of
# ../shared/tools says "unknown", and the tarball's name gives the commit.
llama_commit=$(cat "$WORK_DIR"/logs/llama-bench-*.json 2>/dev/null | jq -r '.[0].build_commit // empty' 2>/dev/null | head -1 || true)
if [ -z "$llama_commit" ] || [ "$llama_commit" = unknown ]; then
	tarball=$(find "$SHARED_DIR/tools" -maxdepth 1 -name 'llama.cpp-*.tar.xz' 2>/dev/null | head -1)
	tarball=${tarball##*/llama.cpp-}
	llama_commit="${tarball%.tar.xz} (the tarball's build, by its name)"
fi
cpu=$(cat "$WORK_DIR"/logs/llama-bench-*.json 2>/dev/null | jq -r '.[0].cpu_info // empty' 2>/dev/null | head -1 || true)
# The table: per cell, each engine's median (min–max) over the rounds, and the median (min–max)
# of the per-round ratios govllm / llama.cpp (the two runs of a round are minutes apart at most).
echo
echo "govllm $govllm_commit vs llama.cpp ${llama_commit:-?}, $start–$end UTC, $(nproc) CPUs${cpu:+ ($cpu)}, load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rounds $ROUNDS; prompt $PROMPT_TOKENS tokens, $GEN_TOKENS generated; tok/s: median (min–max) over rounds; ratio: govllm / llama.cpp per round, median (min–max)"
awk -F'\t' '
function med(list,   n, v, i, j, t) {
	n = split(list, v, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
	lo = v[1]; hi = v[n]
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function cell(list, fmt,   m) { if (list == "") return "–"; m = med(list); return sprintf(fmt " (" fmt "–" fmt ")", m, lo, hi) }
function add(a, k, x) { a[k] = (k in a) ? a[k] " " x : x }
{ key = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4 }
$1 == "machine" { mach[$7, $4, $5] = $8; next }
{ val[key, $5, $6, $7] = $8; add(runs, key SUBSEP $6 SUBSEP $7, $8); if (!(key in seen)) { seen[key] = 1; order[++nk] = key }; rounds[key, $5] = 1; if ($5 > maxr) maxr = $5 }
END {
	hdr = 0
	for (i = 1; i <= nk; i++) {
		split(order[i], k, SUBSEP)
		if (k[1] != "gen") continue
		if (!hdr) {
			print ""
			print "| format | shape | threads | prefill govllm | prefill llama.cpp | prefill ratio | decode govllm | decode llama.cpp | decode ratio |"
			print "|---|---|---|---|---|---|---|---|---|"
			hdr = 1
		}
		line = "| " k[3] " | " k[2] " | " k[4]
		for (mi = 1; mi <= 2; mi++) {
			m = mi == 1 ? "prefill" : "decode"
			rl = ""
			for (r = 1; r <= maxr; r++) {
				a = val[order[i], r, "govllm", m]; b = val[order[i], r, "llama.cpp", m]
				if (a != "" && b + 0 > 0) rl = rl (rl == "" ? "" : " ") a / b
			}
			line = line " | " cell(runs[order[i], "govllm", m], "%.1f") " | " cell(runs[order[i], "llama.cpp", m], "%.1f") " | " cell(rl, "%.2f")
		}
		print line " |"
	}
	hdr = 0
	for (i = 1; i <= nk; i++) {
		split(order[i], k, SUBSEP)
		if (k[1] != "serve") continue
		if (!hdr) {
			print ""
			print "| format | shape | streams | out tok/s govllm | out tok/s llama-server | ratio | TTFT ms govllm / llama-server | TPOT ms govllm / llama-server |"
			print "|---|---|---|---|---|---|---|---|"
			hdr = 1
		}
		rl = ""
		for (r = 1; r <= maxr; r++) {
			a = val[order[i], r, "govllm", "out"]; b = val[order[i], r, "llama.cpp", "out"]
			if (a != "" && b + 0 > 0) rl = rl (rl == "" ? "" : " ") a / b
		}
		printf "| %s | %s | %s | %s | %s | %s | %.1f / %.1f | %.1f / %.1f |\n", k[3], k[2], k[4],
			cell(runs[order[i], "govllm", "out"], "%.1f"), cell(runs[order[i], "llama.cpp", "out"], "%.1f"), cell(rl, "%.2f"),
			med(runs[order[i], "govllm", "ttft"]), med(runs[order[i], "llama.cpp", "ttft"]),
			med(runs[order[i], "govllm", "tpot"]), med(runs[order[i], "llama.cpp", "tpot"])
	}
	print ""
	printf "machine, before / after the runs: read bandwidth %s / %s GB/s (1 thread), %s / %s GB/s (2 threads); FP32 FMA %.0f / %.0f GFLOP/s, VPDPBUSD %.0f / %.0f GOP/s per core\n",
		mach["bw", 1, "before"], mach["bw", 1, "after"], mach["bw", 2, "before"], mach["bw", 2, "after"],
		mach["fma", 1, "before"], mach["fma", 1, "after"], mach["dp", 1, "before"], mach["dp", 1, "after"]
}' "$results"
