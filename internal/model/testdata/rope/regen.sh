#!/usr/bin/env bash
# Regenerates the RoPE goldens of this directory with llama.cpp (README.md).
#   LLAMA_CPP=/tmp/llama.cpp internal/model/testdata/rope/regen.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
llama=${LLAMA_CPP:-/tmp/llama.cpp}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -O2 -std=c++17 -I "$llama/include" -I "$llama/ggml/include" "$here/dump_rope_golden.cpp" -o "$work/dump_rope_golden" \
	-L "$llama/build/bin" -lllama -lggml -lggml-base -Wl,-rpath,"$llama/build/bin"
(cd "$here/../.." && GOVLLM_ROPE_GGUF_DIR="$work" go test -count=1 -run TestRopeGoldens .)
for f in "$work"/*.gguf; do
	name=$(basename "$f" .gguf)
	flags=()
	case $name in
	qwen2-yarn-beta) flags=(--yarn-beta-fast 16 --yarn-beta-slow 2) ;; # the GGUF's yarn_beta_* keys, which llama.cpp reads only for other archs
	phi3-longrope-short) flags=(--n-ctx 256) ;;                          # a context of 256 = the original one: short factors
	esac
	"$work/dump_rope_golden" "$f" "$work/$name.prompts" "$here/$name.json" --threads 1 "${flags[@]}"
	echo "$name.json"
done
