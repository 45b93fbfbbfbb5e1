package velma

import (
	"os"
	"strings"
	"testing"
)

// docs/velma.md must show the diagrams generated from the tables.
func TestDiagrams_ShownInDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/velma.md")
	if err != nil {
		t.Skipf("docs/velma.md: %v", err)
	}
	for name, d := range map[string]string{"ve_body": BodyMermaid(), "cs": CSMermaid()} {
		if !strings.Contains(string(doc), "```mermaid\n"+d+"```") {
			t.Errorf("docs/velma.md lacks the current %s diagram:\n%s", name, d)
		}
	}
	if n := strings.Count(BodyMermaid(), "-->"); n != 13 {
		t.Errorf("ve_body diagram has %d edges, want 12 σ + start", n)
	}
	if n := strings.Count(CSMermaid(), "-->"); n != 17 {
		t.Errorf("cs diagram has %d edges, want 16 σ + start", n)
	}
}
