package webui

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var files embed.FS

// contentTypes are the types of the page's files.
var contentTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
}

// Handler serves the page: GET / is static/index.html and GET /ui/NAME is
// static/NAME. Anything else is a 404. Every answer forbids framing and
// loading code from elsewhere (the page needs nothing but its own origin).
func Handler() http.Handler {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embedded tree always has static/
	}
	static := http.StripPrefix("/ui/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-cache")
		switch {
		case r.URL.Path == "/":
			http.ServeFileFS(w, r, sub, "index.html")
		case strings.HasPrefix(r.URL.Path, "/ui/") && !strings.HasSuffix(r.URL.Path, "/"):
			if t, ok := contentTypes[path.Ext(r.URL.Path)]; ok {
				h.Set("Content-Type", t) // not the system's MIME table: nosniff needs these exact types
			}
			static.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	})
}
