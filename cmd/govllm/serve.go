package main

import (
	"context"
	"errors"
	"io"
)

// runServe is being built; this placeholder is replaced by its implementation.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("serve: not implemented yet")
}
