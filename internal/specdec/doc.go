// Package specdec holds speculative decoding's configuration (vLLM's
// --speculative-config JSON) and its draft proposers.
//
// A proposer guesses the next tokens of a decoding sequence; the scheduler
// feeds them to the target model after the sequence's last token in one
// step, and the runner keeps the longest prefix the target itself samples
// (one more token than it accepted: the correction or the bonus token).
// Proposals are deterministic (one token per position), so sampling each
// position from the target distribution and accepting while the sample
// equals the draft is exactly vLLM's rejection sampling with a one-hot
// draft distribution: greedy and seeded outputs are those of a run
// without speculation, and every sampled token keeps the target
// distribution.
//
// Ngram is vLLM's prompt-lookup proposer ("method": "ngram"): the longest
// suffix of the sequence of length prompt_lookup_min…prompt_lookup_max
// that occurred before, earliest occurrence first, proposes the tokens
// that followed it. A draft model ("model": PATH) is run by the runner
// package (runner.DraftModel).
package specdec
