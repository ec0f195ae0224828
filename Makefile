# govllm — `make test` is the README's test command and what CI runs.
GO ?= go

.PHONY: test build vet bench fuzz

build:
	$(GO) build -o bin/govllm ./cmd/govllm

vet:
	$(GO) vet ./...
	@unformatted=$$(gofmt -l cmd internal); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi

# -tags invariants compiles in the expensive KV-cache consistency checks.
test: vet
	$(GO) test -race -tags invariants -timeout 20m ./...

bench:
	$(GO) test -run '^$$' -bench . -benchtime 2x ./...
