//go:build tools

// Package tools pins module dependencies that packages adopt as they land, so
// parallel work never races on go.mod. It is never built.
package tools

import (
	_ "github.com/ardanlabs/jinja"
	_ "github.com/openai/openai-go/v3"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/common/expfmt"
	_ "go.uber.org/goleak"
	_ "golang.org/x/sys/cpu"
)
