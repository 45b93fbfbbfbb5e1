package docscheck

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/fsm"
	"github.com/fsmnodes/fsmnodes/internal/hexapod"
	"github.com/fsmnodes/fsmnodes/internal/ros/lifecycle"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
	"github.com/fsmnodes/fsmnodes/internal/velma"
)

var updateFSM = flag.Bool("update-fsm", false, "rewrite the graph tables of docs/fsm.md")

// publishedGraphs are the graphs the nodes publish on ~/fsm/graph with
// their default parameters: motion_control's at 100 Hz
// (params/hexapod.yaml), the mux's starting STOPPED.
func publishedGraphs() []fsm.Graph {
	return []fsm.Graph{
		lifecycle.FSMGraph(),
		hexapod.Graph(hexapod.DefaultConfig(), 10*time.Millisecond),
		velma.BodyGraph(),
		velma.CSGraph(),
		rsm.Graph(rsm.DefaultConfig()),
		rsm.MuxGraph(rsm.OperationMode{}),
	}
}

// fsmCell escapes a table cell.
func fsmCell(s string) string {
	if s == "" {
		return "(none)"
	}
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
}

// fsmTables renders a graph as docs/fsm.md shows it between its markers.
func fsmTables(g fsm.Graph) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- fsm:%s -->\nInitial state: %s.\n\n| state | dwell bound |\n|---|---|\n", g.Machine, fsmCell(g.Initial))
	for _, s := range g.States {
		bound := "—"
		if s.MaxDwell > 0 {
			bound = s.MaxDwell.String()
		}
		fmt.Fprintf(&b, "| %s | %s |\n", fsmCell(s.Name), bound)
	}
	b.WriteString("\n| from | to | guard |\n|---|---|---|\n")
	for _, e := range g.Edges {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", fsmCell(e.From), fsmCell(e.To), fsmCell(e.Guard))
	}
	fmt.Fprintf(&b, "<!-- /fsm:%s -->", g.Machine)
	return b.String()
}

// TestFSMGraphs_EqualDocs holds every published graph equal to its tables
// in docs/fsm.md (states, bounds, transitions and guards, in order);
// go test ./internal/docscheck -run FSM -update-fsm rewrites them after a
// deliberate change of a machine's table.
func TestFSMGraphs_EqualDocs(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "fsm.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, g := range publishedGraphs() {
		if err := g.Validate(); err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(`(?s)<!-- fsm:` + regexp.QuoteMeta(g.Machine) + ` -->.*?<!-- /fsm:` + regexp.QuoteMeta(g.Machine) + ` -->`)
		want := fsmTables(g)
		got := re.FindString(doc)
		switch {
		case got == "":
			t.Errorf("docs/fsm.md has no tables of %s (markers <!-- fsm:%s --> … <!-- /fsm:%s -->)", g.Machine, g.Machine, g.Machine)
		case got != want && *updateFSM:
			doc = strings.Replace(doc, got, want, 1)
		case got != want:
			t.Errorf("docs/fsm.md's tables of %s differ from the published graph (-update-fsm rewrites them); want:\n%s", g.Machine, want)
		}
	}
	if *updateFSM {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
