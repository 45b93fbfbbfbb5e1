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

// The introspection graphs are the σ tables: every row, in order, with its
// condition; cs adds its three fallbacks to safe.
func TestGraphs_AreTheTables(t *testing.T) {
	body := BodyGraph()
	if err := body.Validate(); err != nil {
		t.Fatal(err)
	}
	if body.Initial != "idle" || len(body.States) != 6 || len(body.Edges) != len(BodyTransitions()) {
		t.Fatalf("ve_body graph: %+v", body)
	}
	for i, tr := range BodyTransitions() {
		if e := body.Edges[i]; e.From != tr.From.String() || e.To != tr.To.String() || e.Guard != tr.Cond.Name {
			t.Errorf("ve_body edge %d = %+v, table %v -> %v (%s)", i, e, tr.From, tr.To, tr.Cond.Name)
		}
	}
	for _, s := range body.States {
		bounded := s.Name == "safe_st" || s.Name == "safe_st_ok" || s.Name == "transp_st"
		if (s.MaxDwell > 0) != bounded {
			t.Errorf("ve_body state %s bound %v", s.Name, s.MaxDwell)
		}
	}
	cs := CSGraph()
	if err := cs.Validate(); err != nil {
		t.Fatal(err)
	}
	trs := CSTransitions()
	if cs.Initial != "idle" || len(cs.States) != 5 || len(cs.Edges) != len(trs)+3 {
		t.Fatalf("cs graph: %+v", cs)
	}
	for i, tr := range trs[1:] {
		if e := cs.Edges[i+1]; e.From != tr.From.String() || e.To != tr.To.String() || e.Guard != tr.Cond.Name {
			t.Errorf("cs edge %d = %+v, table %v -> %v (%s)", i+1, e, tr.From, tr.To, tr.Cond.Name)
		}
	}
	for _, e := range cs.Edges[len(trs):] {
		if e.To != "safe" || e.Guard != CSFallbackGuard {
			t.Errorf("cs fallback edge %+v", e)
		}
	}
	// The fallback is real: cart_imp in self-collision while a cart_imp
	// command arrives ends the state with no σ holding.
	st := NewCSFSM().Next(CSCartImp, CSPredicates{VeBodyStatusValid: true, CurrentBehaviorOK: true,
		RecvOneCmd: true, RecvCartImpCmd: true, InSelfCollision: true})
	if !st.Fallback || st.Next != CSSafe || !cs.HasEdge("cart_imp", "safe") {
		t.Errorf("cart_imp in self-collision: %+v", st)
	}
}
