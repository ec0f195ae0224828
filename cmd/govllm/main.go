// Command govllm is a vLLM-style LLM inference server with a CPU backend.
//
//	govllm generate [flags]      generate text from a prompt
//	govllm serve [MODEL] [flags] OpenAI-compatible HTTP server
//	govllm bench serve [flags]   benchmark an OpenAI-compatible server
//
// This is the only package that knows every other one: it turns flags into
// configs and wires the pieces together.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "start the OpenAI-compatible server (built-in dummy model when MODEL is absent)", runServe},
		{"generate", "generate text from a prompt and report prefill/decode speed", runGenerate},
		{"bench", "benchmark a running server: govllm bench serve --help", runBench},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first SIGINT/SIGTERM starts a graceful shutdown; restoring the
		// default handling lets a second one end the process at once.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: govllm <command> [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'govllm <command> --help' for the flags of a command.\n")
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		if wantsHelp(args[1:]) {
			// Asked-for help is output, not an error: it goes to stdout
			// (the flag package writes usage to the FlagSet's output).
			stderr = stdout
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			return 2
		}
		fmt.Fprintf(stderr, "govllm %s: %v\n", c.name, err)
		return 1
	}
	fmt.Fprintf(stderr, "govllm: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// errUsage marks an error already reported with usage text.
var errUsage = errors.New("usage")

// wantsHelp reports whether args ask for help (-h, -help, --h, --help
// before a "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--h", "--help":
			return true
		}
	}
	return false
}
