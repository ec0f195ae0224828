// Package kvcache manages logical KV-cache blocks: the block pool, the free
// queue (LRU for cached blocks), reference counts, and automatic prefix
// caching (full blocks keyed by a hash chain over parent hash and block
// tokens). Physical KV tensors live in the runner, indexed by BlockID.
//
// vLLM counterpart: vllm/v1/core/kv_cache_manager.py, block_pool.py,
// kv_cache_utils.py. Imports: stats only. Never net/http, Prometheus, the
// tokenizer or the environment.
//
// # Design
//
// Every one of Config.NumBlocks blocks is usable: unlike vLLM there is no
// reserved null block (govllm has no sliding-window or padding use for it), so
// block ids run 0..NumBlocks-1 and Usage is 1 − free/NumBlocks.
//
// The free queue is an intrusive doubly-linked list over block indices (no
// per-node allocation). Freed blocks are appended at the tail, allocation
// pops from the head, so among free blocks the least recently freed one is
// evicted first. A request frees its blocks in reverse order, so its tail
// blocks (the least shareable) are evicted before its head blocks.
//
// As in vLLM (allocate_slots → cache_blocks), the scheduler registers a
// request's full blocks in the prefix cache when it schedules their tokens
// (CacheScheduledBlocks), so a request admitted later in the same step hits
// blocks whose KV that step's forward pass writes. This is safe because the
// forward pass writes the K/V of every token of the batch in a layer before
// any token attends in that layer, and the writer precedes the reader in the
// batch. Until CommitScheduled the blocks are pending: a pending block freed
// by its last holder (a request preempted in the step that registered it) is
// evicted, and DropScheduled unregisters them all when the step did not run.
// The key of a full block is a 128-bit non-cryptographic hash of (parent key,
// block tokens); the block also keeps a copy of its tokens, and a lookup
// verifies them, so a hash collision can never make a request reuse the
// wrong KV.
//
// # Use (one request, as the scheduler drives it)
//
//	p := m.ComputedBlocks(id, tokens, preempted) // 0 computed tokens: look up the cached prefix
//	table, ok := m.AllocateSlots(id, p.NumTokens, n, p) // all-or-nothing
//	m.CacheScheduledBlocks(id, tokens, p.NumTokens+n) // register the full blocks the step writes
//	... forward pass computes n tokens ...
//	m.CommitScheduled()                          // once per executed step
//	table, ok = m.AllocateSlots(id, numComputed, 1, kvcache.Prefix{}) // decode
//	m.Free(id)                                  // finished, aborted or preempted
//
// # Invariants
//
//   - refcount(b) == number of live request block tables holding b;
//   - b is in the free queue iff refcount(b) == 0; numFree == len(free queue);
//   - the hash map holds (key → b) iff b is registered with key; a registered
//     block is full and its stored tokens hash to key;
//   - a pending block is registered, held by a request, and listed for the
//     next CommitScheduled or DropScheduled.
//
// Manager.CheckInvariants verifies them all (O(blocks)). Built with the
// `invariants` tag, every mutating Manager method calls it and panics on a
// violation; without the tag that call compiles to nothing.
//
// A Manager is not safe for concurrent use.
package kvcache

// BlockID names one physical KV block (index into the runner's KV storage).
type BlockID int32
