package ros

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// TestSpin_EndsOnCallbackPanic: a panicking timer callback ends Spin with a
// *CallbackPanicError that names the node and carries the stack, and the
// log shows the stack.
func TestSpin_EndsOnCallbackPanic(t *testing.T) {
	domain := testenv.Domain(t)
	var out syncBuffer
	c, err := NewContext(ContextOptions{DomainID: &domain, Getenv: testEnv, NoSignals: true, LogOutput: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n, err := c.NewNode("panicky", "/ns")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.NewTimer(10*time.Millisecond, func() { panic("boom") }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	err = c.Spin(ctx)
	var pe *CallbackPanicError
	if !errors.As(err, &pe) {
		t.Fatalf("Spin returned %v, want a *CallbackPanicError", err)
	}
	if pe.Node != "/ns/panicky" || pe.Value != "boom" || !strings.Contains(string(pe.Stack), "panic_test.go") {
		t.Errorf("error = %+v (stack %d bytes)", pe, len(pe.Stack))
	}
	if n.Panics() < 1 {
		t.Errorf("Panics() = %d", n.Panics())
	}
	if log := out.String(); !strings.Contains(log, "callback panicked: boom") || !strings.Contains(log, "panic_test.go") {
		t.Errorf("log has no panic with its stack:\n%s", log)
	}
}

// TestSpin_KeepRunningOnPanic: with KeepRunningOnPanic the node goes on
// running its callbacks after panics, which are counted.
func TestSpin_KeepRunningOnPanic(t *testing.T) {
	domain := testenv.Domain(t)
	var out syncBuffer
	c, err := NewContext(ContextOptions{DomainID: &domain, Getenv: testEnv, NoSignals: true, LogOutput: &out, KeepRunningOnPanic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n, err := c.NewNode("panicky", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.NewTimer(5*time.Millisecond, func() { panic("again") }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	spun := make(chan error, 1)
	go func() { spun <- c.Spin(ctx) }()
	testenv.WaitFor(t, failAfter, "three panics", func() bool { return n.Panics() >= 3 })
	select {
	case err := <-spun:
		t.Fatalf("Spin ended on a panic: %v", err)
	default:
	}
	cancel()
	if err := <-spun; !errors.Is(err, context.Canceled) {
		t.Fatalf("Spin = %v, want context.Canceled", err)
	}
}
