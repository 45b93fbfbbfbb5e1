package dashboard

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, target string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec.Result()
}

func TestHandlerServesThePage(t *testing.T) {
	h := Handler()
	cases := []struct {
		target, contentType, contains string
	}{
		{"/", "text/html; charset=utf-8", `<script type="module" src="js/app.js">`},
		{"/style.css", "text/css; charset=utf-8", ".topbar"},
		{"/js/app.js", "text/javascript; charset=utf-8", "discoverRobots"},
		{"/js/cdr.js", "text/javascript; charset=utf-8", "export function decode"},
		{"/favicon.svg", "image/svg+xml", "<svg"},
		{"/js/../style.css", "text/css; charset=utf-8", ".topbar"},
	}
	for _, c := range cases {
		resp := get(t, h, http.MethodGet, c.target)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s", c.target, resp.Status)
			continue
		}
		if ct := resp.Header.Get("Content-Type"); ct != c.contentType {
			t.Errorf("GET %s: Content-Type %q, want %q", c.target, ct, c.contentType)
		}
		if !strings.Contains(string(body), c.contains) {
			t.Errorf("GET %s: body lacks %q", c.target, c.contains)
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("GET %s: Cache-Control %q", c.target, cc)
		}
	}
	for _, target := range []string{"/nope.js", "/js/", "/js", "/../dashboard.go", "/static/index.html"} {
		if resp := get(t, h, http.MethodGet, target); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", target, resp.Status)
		}
	}
	if resp := get(t, h, http.MethodPost, "/"); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %s, want 405", resp.Status)
	}
	if resp := get(t, h, http.MethodHead, "/js/ui.js"); resp.StatusCode != http.StatusOK {
		t.Errorf("HEAD /js/ui.js: %s", resp.Status)
	}
}

var (
	importRE = regexp.MustCompile(`(?m)^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'`)
	srcRE    = regexp.MustCompile(`(?:src|href)="([^"]+)"|url\(([^)]+)\)`)
	remoteRE = regexp.MustCompile(`(?i)\b(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}/|@import|fonts\.googleapis`)
)

// TestEveryReferenceResolves checks that every module import and every
// src/href/url() of the embedded files names an embedded file, and that
// nothing is loaded from the network (the page must work offline).
func TestEveryReferenceResolves(t *testing.T) {
	files := Files()
	n := 0
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(files, p)
		if err != nil {
			return err
		}
		text := string(b)
		// XML namespace names (xmlns="http://www.w3.org/...") are identifiers, not fetches.
		text = strings.ReplaceAll(text, `xmlns="http://www.w3.org/2000/svg"`, "")
		if m := remoteRE.FindString(text); m != "" {
			t.Errorf("%s refers to the network (%q): the dashboard must work offline", p, m)
		}
		var refs []string
		for _, m := range importRE.FindAllStringSubmatch(text, -1) {
			refs = append(refs, m[1])
		}
		for _, m := range srcRE.FindAllStringSubmatch(text, -1) {
			refs = append(refs, m[1]+m[2])
		}
		for _, r := range refs {
			// data: URLs and fragments of the same document (an SVG
			// marker's url(#id)) fetch nothing.
			if strings.HasPrefix(r, "data:") || strings.HasPrefix(r, "#") {
				continue
			}
			target := path.Clean(path.Join(path.Dir(p), r))
			if _, err := fs.Stat(files, target); err != nil {
				t.Errorf("%s refers to %q (%s), which is not embedded", p, r, target)
			}
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("only %d references found: the patterns no longer match the sources", n)
	}
}
