// Command foxglove_bridge serves the Foxglove WebSocket protocol
// (foxglove.websocket.v1) for the ROS 2 graph, as foxglove_bridge does,
// and the dashboard page on the same port; see internal/foxglove.
//
//	foxglove_bridge [--ros-args -p port:=8765 -p address:=127.0.0.1 ...]
//
// Connect Foxglove or Lichtblick to ws://127.0.0.1:8765, or open
// http://127.0.0.1:8765/ in a browser.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/foxglove/rosbridge"
	"github.com/fsmnodes/fsmnodes/internal/ros"
)

// placeholder is served at / until the dashboard package is wired in.
const placeholder = `<!doctype html>
<html><head><meta charset="utf-8"><title>foxglove_bridge</title></head>
<body><h1>foxglove_bridge</h1>
<p>This port speaks the Foxglove WebSocket protocol (<code>foxglove.websocket.v1</code>).
Open Foxglove or Lichtblick and connect to <code>ws://</code> this address.</p>
</body></html>
`

func main() {
	static := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, placeholder)
	})
	if err := ros.Run(context.Background(), os.Args[1:], rosbridge.NodeName, rosbridge.Setup(static, nil)); err != nil {
		fmt.Fprintln(os.Stderr, "foxglove_bridge:", err)
		os.Exit(1)
	}
}
