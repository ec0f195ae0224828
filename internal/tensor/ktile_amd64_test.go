//go:build amd64 && !purego

package tensor

import "testing"

// TestKTilePanels: with panels of four rows (every group's weights loaded
// again per panel, the last panel short) the tiled K kernels still give
// the Go reference's bits (testPackedBlocks, n = 1..9).
func TestKTilePanels(t *testing.T) {
	saved := kTilePanel
	kTilePanel = 1
	defer func() { kTilePanel = saved }()
	pool := NewPool(2)
	defer pool.Close()
	for _, typ := range []DType{Q4_K, Q6_K, Q5_K, Q3_K} {
		c := CodecOf(typ)
		t.Run(c.Name, func(t *testing.T) { testPackedBlocks(t, c, pool) })
	}
}
