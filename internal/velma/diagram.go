package velma

import (
	"fmt"
	"strings"
)

// BodyMermaid renders the ve_body FSM (σ rows, τ as notes) as a Mermaid
// state diagram; docs/velma.md shows it and a test keeps them equal.
func BodyMermaid() string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	fmt.Fprintf(&b, "    [*] --> %s\n", BodyIdle)
	for _, t := range BodyTransitions() {
		fmt.Fprintf(&b, "    %s --> %s: %s\n", t.From, t.To, t.Cond.Name)
	}
	return b.String()
}

// CSMermaid renders the cs FSM as a Mermaid state diagram. Every state
// but idle also has ε = ¬CURRENT_BEHAVIOR_OK ∨ ¬veBodyStatusValid ∨
// veBodyInSafeState leading to idle (the IN_ERROR rows).
func CSMermaid() string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	fmt.Fprintf(&b, "    [*] --> %s\n", CSIdle)
	term := CSTerminal()
	for _, t := range CSTransitions() {
		label := t.Cond.Name
		if t.From == CSIdle {
			label = "TRUE, once τ_idle = " + term[CSIdle].Name
		}
		fmt.Fprintf(&b, "    %s --> %s: %s\n", t.From, t.To, label)
	}
	return b.String()
}
