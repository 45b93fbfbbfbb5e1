package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHeavySlots takes the slots of a private temporary directory: two
// single takers fill two slots and a third waits; a taker of two waits for
// both; a single taker waits while a collector of several slots holds the
// whole lock.
func TestHeavySlots(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	const slots = 2
	never := func() {}
	a, err := acquireHeavy(1, slots, never)
	if err != nil {
		t.Fatal(err)
	}
	b, err := acquireHeavy(1, slots, never)
	if err != nil {
		t.Fatal(err)
	}
	got := func(n int) <-chan func() {
		c := make(chan func(), 1)
		go func() {
			r, err := acquireHeavy(n, slots, never)
			if err != nil {
				t.Error(err)
				r = func() {}
			}
			c <- r
		}()
		return c
	}
	// stillWaits fails the test if the taker behind c gets its slots
	// within a second.
	stillWaits := func(c <-chan func(), what string) {
		t.Helper()
		select {
		case r := <-c:
			r()
			t.Fatal(what)
		case <-time.After(time.Second):
		}
	}
	// A third single taker waits while both slots are held.
	third := got(1)
	stillWaits(third, "a third slot was handed out with two of two held")
	a()
	r3 := <-third // the freed slot
	// A taker of two waits for both.
	both := got(2)
	b()
	stillWaits(both, "two slots were handed out with one of two held")
	r3()
	(<-both)()

	// A single taker waits behind a collector of several slots (here the
	// test, holding the whole lock as a collector does) although both
	// slots are free.
	whole, err := os.OpenFile(filepath.Join(os.TempDir(), "fsmnodes-heavy-tests", "whole.lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := flock(whole, syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	single := got(1)
	stillWaits(single, "a single taker went before a collector of several slots")
	whole.Close()
	(<-single)()
}

// TestHeavyLedger: a test that held slots leaves one line in the ledger of
// FSMNODES_HEAVY_LOG when it ends, with its slots, the machine's and its
// name; its subtest, which runs in its parent's slots, leaves none.
func TestHeavyLedger(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("FSMNODES_TEST_HEAVY", "3")
	ledger := filepath.Join(t.TempDir(), "heavy.log")
	t.Setenv("FSMNODES_HEAVY_LOG", ledger)
	t.Run("system", func(t *testing.T) {
		HeavyN(t, 2)
		t.Run("part", func(t *testing.T) { Heavy(t) })
	})
	b, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 1 {
		t.Fatalf("ledger has %d lines, want 1:\n%s", len(lines), b)
	}
	f := strings.Fields(lines[0])
	if len(f) != 7 || f[3] != "2" || f[4] != "3" || f[5] != "testenv" || f[6] != "TestHeavyLedger/system" {
		t.Errorf("ledger line %q: want slot-seconds, held, waited, 2 slots of 3, package testenv, TestHeavyLedger/system", lines[0])
	}
}
