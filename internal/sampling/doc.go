// Package sampling owns SamplingParams (Params) and their validation.
//
// vLLM counterpart: vllm/sampling_params.py. Imports: nothing internal (a leaf).
package sampling
