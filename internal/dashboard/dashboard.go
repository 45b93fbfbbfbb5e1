// Package dashboard holds the built-in browser dashboard: static HTML, CSS
// and JavaScript modules, embedded in the binary, that talk the Foxglove
// WebSocket protocol (subprotocol foxglove.websocket.v1) to the server at
// the page's own origin. The foxglove_bridge node serves Handler at "/".
//
// The page needs no build step and nothing from the network: no CDN, no
// web fonts. Its CDR codec (static/js/cdr.js) decodes and encodes messages
// from the ros2msg schemas the bridge advertises.
package dashboard

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var static embed.FS

// Files returns the dashboard's files, rooted at the directory that holds
// index.html.
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree always has static/
	}
	return sub
}

// contentTypes are set explicitly so that a host with an odd
// /etc/mime.types cannot make browsers refuse the JavaScript modules.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".ico":  "image/x-icon",
}

// Handler returns an http.Handler that serves the dashboard: GET and HEAD
// of "/" give index.html, other paths the embedded files; anything else is
// 404 (or 405 for other methods). Responses ask the browser to revalidate,
// so a rebuilt bridge serves the new page at once.
func Handler() http.Handler {
	files := Files()
	fileServer := http.FileServerFS(files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		p := path.Clean("/" + r.URL.Path)
		name := strings.TrimPrefix(p, "/")
		if name == "" {
			name = "index.html"
		}
		st, err := fs.Stat(files, name)
		if err != nil || st.IsDir() {
			http.NotFound(w, r)
			return
		}
		if ct, ok := contentTypes[path.Ext(name)]; ok {
			w.Header().Set("Content-Type", ct)
		}
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		fileServer.ServeHTTP(w, r) // serves index.html for "/"
	})
}
