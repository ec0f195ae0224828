// dump_rope_golden.cpp - record llama.cpp's greedy continuation and first-step logits for given prompt ids.
// shared/models/synthetic/dump_golden.cpp with three options more: --n-ctx (the context size, which picks
// LongRoPE's long or short factors) and --yarn-beta-fast/--yarn-beta-slow (llama.cpp reads the GGUF keys
// of these only for a few architectures; this passes them as context parameters instead).
//
// Build (from the llama.cpp source root, after building libllama):
//   g++ -O2 -std=c++17 -I include -I ggml/include dump_rope_golden.cpp -o dump_rope_golden \
//       -L build/bin -lllama -lggml -lggml-base -Wl,-rpath,$PWD/build/bin
// Usage:
//   dump_rope_golden MODEL.gguf PROMPTS.txt OUT.json [--threads 1] [--n-gen 32] [--kv f32|f16]
//               [--fa off|on|auto] [--commit dc02e1f83] [--model-name NAME] [--n-ctx 512]
//               [--yarn-beta-fast F] [--yarn-beta-slow F]
// PROMPTS.txt: one prompt per line, token ids separated by spaces (used verbatim: no BOS is added).
// OUT.json: a JSON array, one object per prompt (fields described in README.md).
//
// Each prompt gets a fresh context (n_ctx 512 unless --n-ctx, n_batch = n_ubatch = 512, one sequence). The prompt is
// decoded as one batch with logits for its last token only; then 32 tokens are generated greedily
// (argmax of the raw logits, lowest id on ties; EOS does not stop generation), one token per decode.
#include "llama.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

static void die(const char * msg) { fprintf(stderr, "dump_rope_golden: %s\n", msg); exit(1); }

static void quiet_log(enum ggml_log_level level, const char * text, void *) {
    if (level >= GGML_LOG_LEVEL_WARN) fputs(text, stderr);
}

static std::string fmt_float(double v) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

int main(int argc, char ** argv) {
    if (argc < 4) die("usage: dump_rope_golden MODEL PROMPTS OUT [--threads N] [--n-gen N] [--kv f32|f16] [--fa off|on|auto] [--commit X] [--model-name NAME] [--n-ctx N] [--yarn-beta-fast F] [--yarn-beta-slow F]");
    std::string model_path = argv[1], prompts_path = argv[2], out_path = argv[3];
    int threads = 1, n_gen = 32, n_ctx = 512;
    float beta_fast = -1.0f, beta_slow = -1.0f;
    std::string kv = "f32", fa = "off", commit = "dc02e1f83", model_name;
    for (int i = 4; i + 1 < argc; i += 2) {
        std::string k = argv[i], v = argv[i + 1];
        if (k == "--threads") threads = atoi(v.c_str());
        else if (k == "--n-gen") n_gen = atoi(v.c_str());
        else if (k == "--kv") kv = v;
        else if (k == "--fa") fa = v;
        else if (k == "--commit") commit = v;
        else if (k == "--model-name") model_name = v;
        else if (k == "--n-ctx") n_ctx = atoi(v.c_str());
        else if (k == "--yarn-beta-fast") beta_fast = (float) atof(v.c_str());
        else if (k == "--yarn-beta-slow") beta_slow = (float) atof(v.c_str());
        else die(("unknown option " + k).c_str());
    }
    if (model_name.empty()) {
        auto p = model_path.find_last_of('/');
        model_name = p == std::string::npos ? model_path : model_path.substr(p + 1);
    }

    std::vector<std::vector<llama_token>> prompts;
    {
        std::ifstream in(prompts_path);
        if (!in) die("cannot open prompts");
        std::string line;
        while (std::getline(in, line)) {
            std::istringstream ss(line);
            std::vector<llama_token> ids;
            long t;
            while (ss >> t) ids.push_back((llama_token) t);
            if (!ids.empty()) prompts.push_back(ids);
        }
    }

    llama_log_set(quiet_log, nullptr);
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    mp.use_mmap = true;
    llama_model * model = llama_model_load_from_file(model_path.c_str(), mp);
    if (!model) die("model load failed");
    const llama_vocab * vocab = llama_model_get_vocab(model);
    const int n_vocab = llama_vocab_n_tokens(vocab);

    std::string json = "[\n";
    for (size_t pi = 0; pi < prompts.size(); ++pi) {
        auto & prompt = prompts[pi];
        llama_context_params cp = llama_context_default_params();
        cp.n_ctx = n_ctx;
        cp.n_batch = 512;
        cp.n_ubatch = 512;
        cp.yarn_beta_fast = beta_fast;
        cp.yarn_beta_slow = beta_slow;
        cp.n_seq_max = 1;
        cp.n_threads = threads;
        cp.n_threads_batch = threads;
        cp.type_k = kv == "f16" ? GGML_TYPE_F16 : GGML_TYPE_F32;
        cp.type_v = kv == "f16" ? GGML_TYPE_F16 : GGML_TYPE_F32;
        cp.flash_attn_type = fa == "on" ? LLAMA_FLASH_ATTN_TYPE_ENABLED
                           : fa == "auto" ? LLAMA_FLASH_ATTN_TYPE_AUTO : LLAMA_FLASH_ATTN_TYPE_DISABLED;
        cp.no_perf = true;
        llama_context * ctx = llama_init_from_model(model, cp);
        if (!ctx) die("context init failed");

        std::vector<llama_token> toks = prompt;
        if (llama_decode(ctx, llama_batch_get_one(toks.data(), (int32_t) toks.size())) != 0) die("prompt decode failed");

        std::vector<std::pair<float, int>> first_top;
        std::vector<double> first_logprob_top;
        double l2 = 0.0;
        std::vector<llama_token> gen;
        std::vector<double> margins;
        std::vector<llama_token> runner_up;
        for (int step = 0; step < n_gen; ++step) {
            const float * logits = llama_get_logits_ith(ctx, -1);
            if (!logits) die("no logits");
            int best = 0, second = -1;
            for (int i = 1; i < n_vocab; ++i) {
                if (logits[i] > logits[best]) { second = best; best = i; }
                else if (second < 0 || logits[i] > logits[second]) second = i;
            }
            if (step == 0) {
                std::vector<std::pair<float, int>> all(n_vocab);
                double mx = logits[best], se = 0.0;
                for (int i = 0; i < n_vocab; ++i) {
                    all[i] = {logits[i], i};
                    l2 += (double) logits[i] * logits[i];
                    se += std::exp((double) logits[i] - mx);
                }
                double lse = mx + std::log(se);
                std::partial_sort(all.begin(), all.begin() + 20, all.end(), [](auto & a, auto & b) {
                    return a.first != b.first ? a.first > b.first : a.second < b.second;
                });
                first_top.assign(all.begin(), all.begin() + 20);
                for (auto & p : first_top) first_logprob_top.push_back(p.first - lse);
                l2 = std::sqrt(l2);
            }
            gen.push_back(best);
            runner_up.push_back(second);
            margins.push_back((double) logits[best] - logits[second]);
            if (step + 1 == n_gen) break;
            llama_token t = best;
            if (llama_decode(ctx, llama_batch_get_one(&t, 1)) != 0) die("decode failed");
        }
        llama_free(ctx);

        auto ids_json = [](const std::vector<llama_token> & v) {
            std::string s = "[";
            for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
            return s + "]";
        };
        json += "  {\"model\": \"" + model_name + "\", \"prompt_ids\": " + ids_json(prompt);
        json += ", \"greedy_ids\": " + ids_json(gen);
        json += ", \"first_logits_top20\": [";
        for (size_t i = 0; i < first_top.size(); ++i)
            json += (i ? ", [" : "[") + std::to_string(first_top[i].second) + ", " + fmt_float(first_top[i].first) + "]";
        json += "], \"last_prompt_logits_l2\": " + fmt_float(l2);
        json += ", \"llama_cpp_commit\": \"" + commit + "\"";
        json += ", \"first_logprobs_top20\": [";
        for (size_t i = 0; i < first_top.size(); ++i)
            json += (i ? ", [" : "[") + std::to_string(first_top[i].second) + ", " + fmt_float(first_logprob_top[i]) + "]";
        json += "], \"greedy_margins\": [";
        for (size_t i = 0; i < margins.size(); ++i) json += (i ? ", " : "") + fmt_float(margins[i]);
        json += "], \"greedy_runner_up\": " + ids_json(runner_up);
        json += ", \"settings\": {\"threads\": " + std::to_string(threads) + ", \"kv_type\": \"" + kv +
                "\", \"flash_attn\": \"" + fa + "\", \"n_ctx\": " + std::to_string(n_ctx) + ", \"n_batch\": 512, \"n_gen\": " + std::to_string(n_gen) + "}}";
        json += pi + 1 < prompts.size() ? ",\n" : "\n";
    }
    json += "]\n";
    llama_model_free(model);
    llama_backend_free();
    FILE * f = fopen(out_path.c_str(), "w");
    if (!f) die("cannot write output");
    fputs(json.c_str(), f);
    fclose(f);
    return 0;
}
