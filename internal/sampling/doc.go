// Package sampling owns SamplingParams (Params) and their validation, and
// the Sampler that turns a row of logits into a token.
//
// vLLM counterpart: vllm/sampling_params.py and vllm/v1/sample/sampler.py.
// Imports: internal/apierr only (a leaf).
//
// # Sampler
//
// Sampler.Sample(logits, params, prompt, output, eos, rng) processes one
// row in vLLM v1's order:
//
//  1. min_tokens: while len(output) < MinTokens, StopTokenIDs and eos (unless
//     IgnoreEOS) are masked to -Inf;
//  2. repetition penalty over the distinct tokens of prompt+output (positive
//     logits divided, others multiplied), then frequency penalty (× count in
//     output) and presence penalty (once per token in output);
//  3. Temperature < 1e-5: greedy argmax, ties to the lowest id (the filters
//     below are ignored, as in vLLM);
//  4. otherwise softmax(logits/T) restricted by min_p (prob ≥ min_p·max),
//     then top_k, then top_p (smallest prefix in descending order whose mass
//     reaches top_p), each renormalising; one uniform number from rng picks
//     the token by inverse CDF. (vLLM v1 applies min_p before top_k/top_p;
//     V0 applied it after. Since min_p and top_k are ratios to the maximum
//     they commute; only top_p sees the min_p-trimmed mass.)
//
// Candidate order is strict: higher logit first, ties to the lower id, so
// selection is deterministic. top_k streams the logits through a k-element
// heap; top_p over the whole vocabulary finds the nucleus boundary with a
// histogram of |z| and partition-selects only the boundary bucket (after
// top_k, it partition-selects the k candidates); no full-vocabulary sort
// happens. The exp pass is an inlined float32 Cephes exp. Scratch is kept
// in the Sampler: no allocation in steady state (only a returned *Logprobs).
//
// Logprobs are vLLM's default "raw_logprobs": log_softmax of the logits as
// the model produced them, before min_tokens masking, penalties and
// temperature. Rank is vLLM's: the number of tokens whose raw logit is ≥ the
// sampled token's (1 = most likely). Top holds the Logprobs highest tokens in
// descending order, ties to the lower id.
//
// Reproducibility: a seeded request's draw for output token i uses
// SeededRNG(seed, i), which depends on nothing else, so its tokens do not
// depend on batch mates, scheduling or preemption (given batch-invariant
// logits). Unseeded requests draw from one long-lived RNG of the caller.
// Parallel samples (n > 1) of one seeded request must get distinct seeds
// (vLLM uses seed+index per child); that is the front end's job.
package sampling
