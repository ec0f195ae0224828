package kvcache

import (
	"errors"
	"fmt"
)

// ErrInvalidConfig is wrapped by every Config.Validate error.
var ErrInvalidConfig = errors.New("kvcache: invalid config")

// Config sizes the block pool.
type Config struct {
	// NumBlocks is the number of KV blocks (all usable; no null block).
	NumBlocks int
	// BlockSize is the number of tokens per block.
	BlockSize int
	// EnablePrefixCaching turns on automatic prefix caching.
	EnablePrefixCaching bool
}

// DefaultBlockSize is vLLM's default block size.
const DefaultBlockSize = 16

// DefaultConfig returns BlockSize 16, prefix caching on and 1024 blocks
// (callers normally derive NumBlocks with NumBlocksForMemory).
func DefaultConfig() Config {
	return Config{NumBlocks: 1024, BlockSize: DefaultBlockSize, EnablePrefixCaching: true}
}

// Validate reports a configuration error wrapping ErrInvalidConfig.
func (c Config) Validate() error {
	switch {
	case c.BlockSize < 1:
		return fmt.Errorf("%w: block size must be at least 1, got %d", ErrInvalidConfig, c.BlockSize)
	case c.NumBlocks < 1:
		return fmt.Errorf("%w: num blocks must be at least 1, got %d", ErrInvalidConfig, c.NumBlocks)
	case c.NumBlocks > 1<<31-1:
		return fmt.Errorf("%w: num blocks %d does not fit a BlockID", ErrInvalidConfig, c.NumBlocks)
	}
	return nil
}

// NumBlocksForMemory returns how many blocks of blockSize tokens fit in
// budgetBytes when one token's KV (all layers, K and V) takes bytesPerToken
// bytes. It returns 0 when nothing fits or an argument is not positive.
func NumBlocksForMemory(budgetBytes, bytesPerToken, blockSize int) int {
	if budgetBytes <= 0 || bytesPerToken <= 0 || blockSize <= 0 {
		return 0
	}
	perBlock := bytesPerToken * blockSize
	if perBlock/blockSize != bytesPerToken { // overflow
		return 0
	}
	return budgetBytes / perBlock
}
