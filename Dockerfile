# govllm in a container: a static binary on distroless, run as non-root,
# the model mounted read-only at /models.
#
#   docker build -t govllm .
#   docker run --rm -p 8000:8000 govllm                      # the built-in dummy model
#   docker run --rm -p 8000:8000 -v "$PWD/models:/models:ro" govllm \
#       /models/model.gguf --served-model-name model --threads 4 --shutdown-timeout 30
#
# Everything after the image name is `govllm serve`'s command line (vLLM's
# flags are accepted). Pass --threads: a container's CPU limit is not what
# the Go runtime reports as the machine's CPU count.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/govllm ./cmd/govllm

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/govllm /usr/local/bin/govllm
USER 65532:65532
EXPOSE 8000
ENTRYPOINT ["/usr/local/bin/govllm", "serve"]
