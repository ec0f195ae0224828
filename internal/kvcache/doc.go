// Package kvcache manages logical KV-cache blocks: the block pool, the free
// queue (LRU for cached blocks), reference counts, and automatic prefix
// caching (full blocks keyed by a hash chain over parent hash and block
// tokens). Physical KV tensors live in the runner, indexed by BlockID.
//
// vLLM counterpart: vllm/v1/core/kv_cache_manager.py, block_pool.py,
// kv_cache_utils.py. Imports: stats only. Never net/http, Prometheus, the
// tokenizer or the environment.
package kvcache

// BlockID names one physical KV block (index into the runner's KV storage).
type BlockID int32
