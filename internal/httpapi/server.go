package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"govllm/internal/apierr"
	"govllm/internal/chattemplate"
	"govllm/internal/llm"
	"govllm/internal/output"
	"govllm/internal/pooling"
	"govllm/internal/sampling"
	"govllm/internal/tokenizer"
)

// Engine is what the server needs from the engine front end
// (*llm.AsyncEngine implements it).
type Engine interface {
	// Prepare validates the requests of one API call (llm.Preparer): every
	// check of a request field happens there, none here.
	Prepare(reqs ...llm.Request) ([]*llm.Prepared, error)
	// Submit starts a prepared request; cancelling ctx aborts it.
	Submit(ctx context.Context, pr *llm.Prepared) (*output.Stream, error)
	Tokenizer() *tokenizer.Tokenizer
	MaxModelLen() int
	// Err is non-nil once the engine has died.
	Err() error
}

// DefaultMaxBodyBytes limits request bodies when Config.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 32 << 20

// Config configures the server. ServedModelNames must not be empty.
type Config struct {
	// ServedModelNames are the accepted "model" values; the first is the
	// name reported in responses when a request omits "model".
	ServedModelNames []string
	// APIKey, when set, is required as "Authorization: Bearer <key>" on /v1/*.
	APIKey string
	// APIKeys are more keys, each accepted as APIKey is (vLLM's --api-key
	// takes several).
	APIKeys []string
	// MaxBodyBytes limits request bodies (413 above); 0 = DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// ChatTemplate overrides the tokenizer's chat template (template text).
	ChatTemplate string
	// DefaultParams are the sampling defaults (e.g. from
	// generation_config.json); nil means sampling.Default().
	DefaultParams *sampling.Params
	// Metrics serves GET /metrics; nil leaves /metrics unrouted (404).
	Metrics http.Handler
	// UI serves the page at GET / and GET /ui/... (package webui), without
	// the API key; nil leaves them unrouted (404).
	UI http.Handler
	// Instrument wraps each route's handler with HTTP metrics; handler is
	// the route path ("/v1/completions", "none" for unmatched paths).
	Instrument func(handler string, h http.Handler) http.Handler
	// Logger receives request and error logs; nil discards them.
	Logger *slog.Logger
	// DisableLogRequests turns off the one-line log per generation request.
	DisableLogRequests bool
	// Version is reported by GET /version.
	Version string
	// Now is the clock of "created" timestamps; nil means time.Now.
	Now func() time.Time
	// AllowUnknownFields accepts top-level request fields that are neither
	// OpenAI's nor vLLM's (logged once per field name) instead of
	// answering 400 naming them.
	AllowUnknownFields bool
	// EnableAutoToolChoice and ToolCallParser (vLLM's
	// --enable-auto-tool-choice, --tool-call-parser) parse tool calls out
	// of the output for tool_choice "auto"; ReasoningParser (vLLM's
	// --reasoning-parser) splits reasoning_content off every chat answer.
	// The names are package toolparser's and package reasoning's.
	EnableAutoToolChoice bool
	ToolCallParser       string
	ReasoningParser      string
	// ResponsesStoreSize bounds the responses kept in memory for
	// previous_response_id and GET /v1/responses/{id} (least recently used
	// evicted first): 0 means DefaultResponsesStoreSize, < 0 keeps none
	// (every response then reports "store": false).
	ResponsesStoreSize int
	// CORS is the cross-origin policy; nil means DefaultCORS (vLLM's).
	CORS *CORS
	// Pooler is the pooling of /v1/embeddings (--pooler-config); nil means
	// pooling.Default() (vLLM's for a decoder model: LAST, normalized).
	Pooler *pooling.Params
	// ResponseTimings puts each sequence's timings (openai.Timings) beside
	// usage in completion, chat and embeddings responses (a stream's usage
	// chunk) (--enable-response-timings); the engine must collect request
	// statistics (llm.Config.RequestStats, or a stat logger).
	ResponseTimings bool
	// Runner is vLLM's --runner as resolved: "" serves generation and
	// embeddings alike, RunnerGenerate only generation, RunnerPooling only
	// embeddings; the other endpoints answer 400 as vLLM does.
	Runner string
}

// The values of Config.Runner besides "".
const (
	RunnerGenerate = "generate"
	RunnerPooling  = "pooling"
)

func (c *Config) corsConfig() CORS {
	if c.CORS == nil {
		return DefaultCORS()
	}
	return *c.CORS
}

// Server is the HTTP handler. It is safe for concurrent use.
type Server struct {
	cfg      Config
	eng      Engine
	tok      *tokenizer.Tokenizer
	tmpl     *chattemplate.Template
	defaults sampling.Params
	log      *slog.Logger
	mux      *http.ServeMux
	handler  http.Handler
	unknown  sync.Map // field name → struct{}: unknown fields logged so far
	// fingerprint is every response's system_fingerprint: the server build.
	fingerprint string
	drain       drain
	// routeKeys are the method and handler label of every route (Routes).
	routeKeys [][2]string
	// store keeps Responses API responses (nil: none).
	store *responseStore
}

// New builds the server. It fails when no model name is given or the chat
// template does not compile.
func New(cfg Config, eng Engine) (*Server, error) {
	if len(cfg.ServedModelNames) == 0 || slices.Contains(cfg.ServedModelNames, "") {
		return nil, errors.New("httpapi: ServedModelNames must hold at least one non-empty name")
	}
	if eng == nil || eng.Tokenizer() == nil {
		return nil, errors.New("httpapi: an engine with a tokenizer is required")
	}
	if err := checkParsers(cfg); err != nil {
		return nil, err
	}
	if r := cfg.Runner; r != "" && r != RunnerGenerate && r != RunnerPooling {
		return nil, fmt.Errorf("httpapi: unknown runner %q", r)
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, tok: eng.Tokenizer(), log: cfg.Logger, defaults: sampling.Default(), store: newResponseStore(cfg.ResponsesStoreSize)}
	s.eng = drainEngine{Engine: eng, d: &s.drain}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if cfg.DefaultParams != nil {
		s.defaults = *cfg.DefaultParams
	}
	src := cfg.ChatTemplate
	if src == "" {
		src = s.tok.ChatTemplate()
	}
	tmpl, err := chattemplate.New(src, s.tok.BOSToken(), s.tok.EOSToken())
	if err != nil {
		return nil, fmt.Errorf("httpapi: chat template: %w", err)
	}
	s.tmpl = tmpl
	s.fingerprint = fingerprint(cfg.Version)
	s.routes()
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// route is one endpoint: a method, a path, and its handler.
type route struct {
	method, path string
	h            http.HandlerFunc
}

func (s *Server) routes() {
	rs := []route{
		{"POST", "/v1/completions", s.admit(s.serves(RunnerGenerate, "Completions", s.completions))},
		{"POST", "/v1/chat/completions", s.admit(s.serves(RunnerGenerate, "Chat Completions", s.chat))},
		{"POST", "/v1/embeddings", s.admit(s.serves(RunnerPooling, "Embeddings", s.embeddings))},
		{"POST", "/v1/responses", s.admit(s.serves(RunnerGenerate, "Responses", s.responses))},
		{"GET", "/v1/responses/{response_id}", s.getResponse},
		{"POST", "/v1/responses/{response_id}/cancel", s.cancelResponse},
		{"GET", "/v1/models", s.models},
		{"GET", "/v1/models/{id...}", s.model},
		{"POST", "/tokenize", s.tokenize},
		{"POST", "/detokenize", s.detokenize},
		{"GET", "/health", s.health},
		{"GET", "/ping", s.ping},
		{"POST", "/ping", s.ping},
		{"GET", "/version", s.version},
	}
	if s.cfg.Metrics != nil {
		rs = append(rs, route{"GET", "/metrics", s.cfg.Metrics.ServeHTTP})
	}
	mux := http.NewServeMux()
	allowed := map[string][]string{}
	var paths []string
	for _, rt := range rs {
		mux.Handle(rt.method+" "+rt.path, s.instrument(rt.path, rt.h))
		if _, seen := allowed[rt.path]; !seen {
			paths = append(paths, rt.path)
		}
		allowed[rt.path] = append(allowed[rt.path], rt.method)
	}
	// The same paths without a method answer 405 with the envelope (the
	// method-specific patterns above are more specific and win).
	for _, p := range paths {
		mux.Handle(p, s.instrument(p, methodNotAllowed(allowed[p])))
	}
	mux.Handle("/", s.instrument("none", http.HandlerFunc(notFound)))
	if s.cfg.UI != nil { // "/{$}" is / alone; the handler label is "/"
		mux.Handle("GET /{$}", s.instrument("/", s.cfg.UI))
		mux.Handle("GET /ui/", s.instrument("/ui/", s.cfg.UI))
		s.routeKeys = append(s.routeKeys, [2]string{"GET", "/"}, [2]string{"GET", "/ui/"})
	}
	for _, rt := range rs {
		s.routeKeys = append(s.routeKeys, [2]string{rt.method, rt.path})
	}
	s.routeKeys = append(s.routeKeys, [2]string{"GET", "none"}, [2]string{"POST", "none"})
	s.mux = mux
	// The API key is checked before routing, for every /v1 path: an
	// unauthenticated client cannot tell routes and methods apart. CORS
	// comes first: a browser's preflight carries no key (vLLM's
	// authentication lets OPTIONS through for it).
	s.handler = s.recoverPanics(s.cors(s.limitBody(s.auth(mux, append(paths, "none")))))
}

// serves is h when the server's runner serves the task (RunnerGenerate
// or RunnerPooling), else vLLM's answer: 400 "The model does not support
// <api> API", naming the model.
func (s *Server) serves(task, api string, h http.HandlerFunc) http.HandlerFunc {
	if s.cfg.Runner == "" || s.cfg.Runner == task {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusBadRequest, "model", "The model does not support "+api+" API (the server runs with --runner "+s.cfg.Runner+")")
	}
}

// Routes lists the method and the handler label (the route's path) of
// every route, then GET and POST of "none", the label of unmatched paths:
// the label values Config.Instrument sees, for pre-creating series.
func (s *Server) Routes() [][2]string { return slices.Clone(s.routeKeys) }

func (s *Server) instrument(path string, h http.Handler) http.Handler {
	if s.cfg.Instrument == nil {
		return h
	}
	return s.cfg.Instrument(path, h)
}

// modelName checks the request's "model" against the served names; "" means
// the first served name.
func (s *Server) modelName(m string) (string, error) {
	if m == "" {
		return s.cfg.ServedModelNames[0], nil
	}
	if slices.Contains(s.cfg.ServedModelNames, m) {
		return m, nil
	}
	return "", s.unknownModel(m)
}

// unknownModel is the 404 of a model name that is not served.
func (s *Server) unknownModel(m string) error {
	return &apierr.Error{Status: http.StatusNotFound, Param: "model", Msg: fmt.Sprintf("The model `%s` does not exist.", m)}
}

// onUnknown is what openai.DecodeRequest does with an unknown field: nil
// (refuse it) by default; with AllowUnknownFields, accept it and log its
// name the first time it is seen.
func (s *Server) onUnknown() func(string) {
	if !s.cfg.AllowUnknownFields {
		return nil
	}
	return func(field string) {
		if _, seen := s.unknown.LoadOrStore(field, struct{}{}); !seen {
			s.log.Warn("accepting an unknown request field (--allow-unknown-fields); it has no effect", "field", field)
		}
	}
}

// fingerprint is the system_fingerprint of a server of the given version
// ("fp_govllm" alone when the version is unknown).
func fingerprint(version string) string {
	if version == "" {
		return "fp_govllm"
	}
	return "fp_govllm_" + version
}
