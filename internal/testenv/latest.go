package testenv

import (
	"slices"
	"sync"
)

// Latest keeps the newest message of a topic and the history of the labels
// given with the messages (a state machine's state names, say), a label
// recorded only when it differs from the one before. Subscription callbacks
// Set it; the test reads it from its own goroutine. The zero value is ready.
type Latest[T any] struct {
	mu      sync.Mutex
	last    *T
	history []string
}

// Set records v as the newest message and label ("" for none) in the
// history unless it repeats the last label.
func (l *Latest[T]) Set(v *T, label string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = v
	if label != "" && (len(l.history) == 0 || l.history[len(l.history)-1] != label) {
		l.history = append(l.history, label)
	}
}

// Get returns the newest message, nil before the first.
func (l *Latest[T]) Get() *T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// Mark returns the length of the history, for a later Since.
func (l *Latest[T]) Mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.history)
}

// Since returns the labels recorded after Mark returned i.
func (l *Latest[T]) Since(i int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i > len(l.history) {
		return nil
	}
	return slices.Clone(l.history[i:])
}

// History returns every label recorded.
func (l *Latest[T]) History() []string { return l.Since(0) }

// Seen reports whether label was ever recorded.
func (l *Latest[T]) Seen(label string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Contains(l.history, label)
}
