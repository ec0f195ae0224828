# govllm — `make test` is the README's test command and what CI runs.
GO ?= go

.PHONY: test build vet bench fuzz

build:
	$(GO) build -o bin/govllm ./cmd/govllm

# The portable builds are vetted too: arm64 and the purego tag compile
# none of the amd64 assembly.
vet:
	$(GO) vet ./...
	GOARCH=arm64 $(GO) vet ./...
	$(GO) vet -tags purego ./...
	@unformatted=$$(gofmt -l cmd internal); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi

# -tags invariants compiles in the expensive KV-cache consistency checks.
# Then the serving packages run once more without the race detector, whose
# slowdown hides timing faults (tokens that reach a stream a step late), and
# the kernels and model once more with the portable (purego) kernels only,
# and the model at the lower x86 levels (the kernel tests run every level
# themselves): avx2, and avx512 without AVX512_VBMI (no packed Q4_0; the Go
# runtime warns that it does not know cpu.avx512vbmi, which x/sys/cpu does).
# go test prints a skipped test's reason only with -v: say here, loudly,
# what a machine without the shared models or the npm references skips.
test: vet
	@test -d ../shared/models || echo "*** NOTE: ../shared/models not found: every test that needs a real model will SKIP (CI provides it)"
	@for d in internal/*/testdata/npm; do test -d $$d/node_modules || echo "*** NOTE: $$d/node_modules missing: reference comparisons will SKIP (.ci/run installs them; or npm ci --prefix $$d)"; done
	$(GO) test -race -tags invariants -timeout 20m ./...
	$(GO) test -count 1 -timeout 5m ./cmd/govllm ./internal/llm ./internal/httpapi
	$(GO) test -count 1 -timeout 5m -tags purego ./internal/tensor ./internal/model
	GODEBUG=cpu.avx512f=off $(GO) test -count 1 -timeout 5m ./internal/model
	GODEBUG=cpu.avx512vbmi=off $(GO) test -count 1 -timeout 5m ./internal/model
	$(MAKE) fuzz FUZZTIME=15s

# The request-path fuzz target, briefly in `make test`; longer by hand:
# make fuzz FUZZTIME=10m
FUZZTIME ?= 1m
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzRequestPath -fuzztime $(FUZZTIME) ./internal/httpapi

bench:
	$(GO) test -run '^$$' -bench . -benchtime 2x ./...
