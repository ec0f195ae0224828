package main

import (
	"context"
	"errors"
	"io"
)

// runBench is being built; this placeholder is replaced by its implementation.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("bench: not implemented yet")
}
