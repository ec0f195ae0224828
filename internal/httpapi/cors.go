package httpapi

import (
	"net/http"
	"slices"
	"strings"
)

// CORS is vLLM's CORS configuration (--allowed-origins, --allowed-methods,
// --allowed-headers, --allow-credentials), applied as vLLM applies it:
// with Starlette's CORSMiddleware, whose behaviour cors reproduces.
type CORS struct {
	AllowedOrigins   []string // "*" allows every origin
	AllowedMethods   []string // "*" allows DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT
	AllowedHeaders   []string // "*" allows (and echoes) every requested header
	AllowCredentials bool
}

// DefaultCORS is vLLM's default: every origin, method and header, no
// credentials.
func DefaultCORS() CORS {
	return CORS{AllowedOrigins: []string{"*"}, AllowedMethods: []string{"*"}, AllowedHeaders: []string{"*"}}
}

// corsAllMethods is what "*" in AllowedMethods stands for (Starlette's
// ALL_METHODS); corsSafelisted are the headers always allowed
// (SAFELISTED_HEADERS); corsMaxAge is Starlette's default max_age.
var (
	corsAllMethods = []string{"DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"}
	corsSafelisted = []string{"Accept", "Accept-Language", "Content-Language", "Content-Type"}
)

const corsMaxAge = "600"

// corsPolicy is a CORS configuration compiled into the headers of
// preflight and simple responses.
type corsPolicy struct {
	origins           []string
	allOrigins        bool
	methods           []string
	allHeaders        bool
	headers           []string // lowercased, the safelisted ones included
	explicitOrigin    bool     // a preflight names the origin rather than "*"
	simple, preflight [][2]string
}

func newCORSPolicy(c CORS) *corsPolicy {
	p := &corsPolicy{origins: c.AllowedOrigins, methods: c.AllowedMethods}
	if slices.Contains(p.methods, "*") {
		p.methods = corsAllMethods
	}
	p.allOrigins = slices.Contains(c.AllowedOrigins, "*")
	p.allHeaders = slices.Contains(c.AllowedHeaders, "*")
	p.explicitOrigin = !p.allOrigins || c.AllowCredentials
	if p.allOrigins {
		p.simple = append(p.simple, [2]string{"Access-Control-Allow-Origin", "*"})
	}
	if c.AllowCredentials {
		p.simple = append(p.simple, [2]string{"Access-Control-Allow-Credentials", "true"})
	}
	if p.explicitOrigin {
		p.preflight = append(p.preflight, [2]string{"Vary", "Origin"})
	} else {
		p.preflight = append(p.preflight, [2]string{"Access-Control-Allow-Origin", "*"})
	}
	p.preflight = append(p.preflight, [2]string{"Access-Control-Allow-Methods", strings.Join(p.methods, ", ")},
		[2]string{"Access-Control-Max-Age", corsMaxAge})
	headers := slices.Concat(corsSafelisted, c.AllowedHeaders)
	slices.Sort(headers)
	headers = slices.Compact(headers)
	if !p.allHeaders {
		p.preflight = append(p.preflight, [2]string{"Access-Control-Allow-Headers", strings.Join(headers, ", ")})
	}
	if c.AllowCredentials {
		p.preflight = append(p.preflight, [2]string{"Access-Control-Allow-Credentials", "true"})
	}
	for _, h := range headers {
		p.headers = append(p.headers, strings.ToLower(h))
	}
	return p
}

func (p *corsPolicy) allowedOrigin(origin string) bool {
	return p.allOrigins || slices.Contains(p.origins, origin)
}

// cors answers preflight requests (OPTIONS with Origin and
// Access-Control-Request-Method) itself, before authentication and
// routing, and adds the CORS headers to every other response to a request
// with an Origin. A request without Origin passes untouched.
func (s *Server) cors(next http.Handler) http.Handler {
	p := newCORSPolicy(s.cfg.corsConfig())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin, hasOrigin := r.Header["Origin"]
		switch {
		case !hasOrigin || len(origin) == 0:
			next.ServeHTTP(w, r)
		case r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "":
			p.answerPreflight(w, r)
		default:
			p.addSimple(w.Header(), r)
			next.ServeHTTP(w, r)
		}
	})
}

// answerPreflight is Starlette's preflight_response: 200 "OK", or 400
// "Disallowed CORS origin, method, headers" naming what failed.
func (p *corsPolicy) answerPreflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	for _, kv := range p.preflight {
		h.Set(kv[0], kv[1])
	}
	origin := r.Header.Get("Origin")
	var failures []string
	switch {
	case !p.allowedOrigin(origin):
		failures = append(failures, "origin")
	case p.explicitOrigin:
		h.Set("Access-Control-Allow-Origin", origin)
	}
	if !slices.Contains(p.methods, r.Header.Get("Access-Control-Request-Method")) {
		failures = append(failures, "method")
	}
	if requested, ok := r.Header["Access-Control-Request-Headers"]; ok {
		list := strings.Join(requested, ",")
		if p.allHeaders {
			h.Set("Access-Control-Allow-Headers", list)
		} else if !p.headersAllowed(list) {
			failures = append(failures, "headers")
		}
	}
	status, body := http.StatusOK, "OK"
	if len(failures) > 0 {
		status, body = http.StatusBadRequest, "Disallowed CORS "+strings.Join(failures, ", ")
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	w.Write([]byte(body))
}

func (p *corsPolicy) headersAllowed(list string) bool {
	for _, name := range strings.Split(strings.ToLower(list), ",") {
		if !slices.Contains(p.headers, strings.TrimSpace(name)) {
			return false
		}
	}
	return true
}

// addSimple sets the headers of a non-preflight response (Starlette's
// simple_response): the allowed origin is echoed with Vary: Origin when
// origins are listed, or when every origin is allowed and the request
// carries a cookie.
func (p *corsPolicy) addSimple(h http.Header, r *http.Request) {
	for _, kv := range p.simple {
		h.Set(kv[0], kv[1])
	}
	origin := r.Header.Get("Origin")
	_, cookie := r.Header["Cookie"]
	if (p.allOrigins && cookie) || (!p.allOrigins && p.allowedOrigin(origin)) {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
	}
}
