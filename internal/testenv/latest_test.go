package testenv

import (
	"slices"
	"testing"
)

func TestLatest(t *testing.T) {
	var l Latest[string]
	if l.Get() != nil || l.Mark() != 0 || l.Seen("a") {
		t.Fatal("zero Latest not empty")
	}
	for _, s := range []string{"a", "a", "b", "", "b", "c"} {
		v := s
		l.Set(&v, s)
	}
	if got := *l.Get(); got != "c" {
		t.Errorf("Get = %q, want c", got)
	}
	if h := l.History(); !slices.Equal(h, []string{"a", "b", "c"}) {
		t.Errorf("History = %q, want [a b c] (repeats and empty labels left out)", h)
	}
	m := l.Mark()
	l.Set(nil, "d")
	if s := l.Since(m); !slices.Equal(s, []string{"d"}) || l.Get() != nil {
		t.Errorf("Since(mark) = %q, Get = %v", s, l.Get())
	}
	if !l.Seen("b") || l.Seen("x") || l.Since(99) != nil {
		t.Error("Seen or Since out of range wrong")
	}
}
