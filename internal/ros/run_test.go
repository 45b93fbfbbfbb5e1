package ros

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// TestRun_LoopsAndShutdownHooks: a failing background loop ends Run with
// its error, the other loop is cancelled, and the shutdown hooks run after
// the loops, last registered first, with their errors returned too.
func TestRun_LoopsAndShutdownHooks(t *testing.T) {
	t.Setenv("ROS_DOMAIN_ID", fmt.Sprint(testenv.Domain(t)))
	var mu sync.Mutex
	var events []string
	record := func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	boom := errors.New("loop failed")
	hookErr := errors.New("hook failed")
	err := Run(context.Background(), []string{"--ros-args", "--disable-rosout-logs"}, "run_test", func(ctx context.Context, n *Node) error {
		rc := n.Context()
		rc.OnShutdown(func() error { record("hook 1"); return nil })
		rc.OnShutdown(func() error { record("hook 2"); return hookErr })
		rc.Go(func(ctx context.Context) error {
			<-ctx.Done()
			record("patient loop stopped")
			return ctx.Err()
		})
		rc.Go(func(ctx context.Context) error {
			time.Sleep(20 * time.Millisecond)
			return boom
		})
		return nil
	})
	if !errors.Is(err, boom) || !errors.Is(err, hookErr) {
		t.Fatalf("Run = %v, want both the loop's and the hook's error", err)
	}
	want := []string{"patient loop stopped", "hook 2", "hook 1"}
	if !reflect.DeepEqual(events, want) {
		t.Fatalf("events %q, want %q", events, want)
	}
}

// TestRun_ContextEndsLoops: when ctx ends, Run stops its loops and returns
// nil; a setup error is returned with the node's name and still stops the
// loops started before it.
func TestRun_ContextEndsLoops(t *testing.T) {
	t.Setenv("ROS_DOMAIN_ID", fmt.Sprint(testenv.Domain(t)))
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	err := Run(ctx, []string{"--ros-args", "--disable-rosout-logs"}, "run_test", func(_ context.Context, n *Node) error {
		n.Context().Go(func(ctx context.Context) error {
			cancel() // the loop is running: end the node
			<-ctx.Done()
			close(stopped)
			return nil
		})
		return nil
	})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	select {
	case <-stopped:
	default:
		t.Fatal("the loop was still running when Run returned")
	}

	setupErr := errors.New("bad parameter")
	looped := make(chan struct{})
	err = Run(context.Background(), []string{"--ros-args", "--disable-rosout-logs"}, "run_test", func(_ context.Context, n *Node) error {
		n.Context().Go(func(ctx context.Context) error { <-ctx.Done(); close(looped); return nil })
		return setupErr
	})
	if !errors.Is(err, setupErr) || err.Error() != "node /run_test: bad parameter" {
		t.Fatalf("Run = %v", err)
	}
	select {
	case <-looped:
	default:
		t.Fatal("a loop outlived a failed setup")
	}
}
