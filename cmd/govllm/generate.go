package main

import (
	"context"
	"errors"
	"io"
)

// runGenerate is being built; this placeholder is replaced by its implementation.
func runGenerate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("generate: not implemented yet")
}
