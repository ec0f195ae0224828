// Package pooling turns a prompt's final hidden states into one vector
// (vLLM's Pooler for embedding requests): the pooling type (LAST, MEAN,
// CLS), the L2 normalization, the --pooler-config JSON that sets them, and
// Acc, which a runner feeds the rows of each prefill chunk in token order.
// Acc's result depends only on the rows, never on how the prompt was cut
// into chunks or batched, so an embedding is the same alone and in a
// batch, bit for bit. It imports nothing internal.
package pooling
