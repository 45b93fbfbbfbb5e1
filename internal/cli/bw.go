package cli

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

func topicBwVerb() verb {
	return verb{
		usage: "topic bw TOPIC [TYPE] [-w WINDOW] [--qos-*]",
		help:  "Print the bandwidth a topic uses (serialized message sizes) every second.",
		run:   (*App).topicBw,
	}
}

// sample is one received message: when and how many serialized bytes.
type sample struct {
	at   time.Time
	size int
}

func (a *App) topicBw(ctx context.Context, args []string) error {
	p, err := parseFlags(args, addFlags(flagSpec{"-w": true, "--window": true, "--no-daemon": false}, qosFlags))
	if err != nil {
		return err
	}
	window, err := nonNegativeInt(p, "100", "--window", "-w")
	if err != nil {
		return err
	}
	if window < 1 {
		return usagef("--window must be at least 1")
	}
	s, fqn, ti, q, err := a.subscribeArgs(ctx, p, "bw")
	if err != nil {
		return err
	}
	defer s.close()
	var mu sync.Mutex
	var win []sample
	var buf []byte
	cb := func(m rosidl.Message) {
		mu.Lock()
		defer mu.Unlock()
		buf = rosidl.Marshal(m, buf[:0])
		win = append(win, sample{at: time.Now(), size: len(buf)})
		if len(win) > window {
			win = win[len(win)-window:]
		}
	}
	if _, err := ros.NewDynamicSubscription(s.node, fqn, ti, q, cb); err != nil {
		return fmt.Errorf("subscribe to %s: %w", fqn, err)
	}
	fmt.Fprintf(a.Stdout, "Subscribed to [%s]\n", fqn)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		mu.Lock()
		ws := append([]sample(nil), win...)
		mu.Unlock()
		if len(ws) < 2 {
			continue
		}
		fmt.Fprint(a.Stdout, bwReport(ws, time.Now()))
	}
}

// bwReport formats bandwidth statistics as ros2 topic bw does.
func bwReport(ws []sample, now time.Time) string {
	total, lo, hi := 0, ws[0].size, ws[0].size
	for _, s := range ws {
		total += s.size
		lo, hi = min(lo, s.size), max(hi, s.size)
	}
	span := now.Sub(ws[0].at).Seconds()
	if span <= 0 {
		span = 1e-9
	}
	rate := float64(total) / span
	mean := float64(total) / float64(len(ws))
	unit, div := "B", 1.0
	switch {
	case rate >= 1e6:
		unit, div = "MB", 1e6
	case rate >= 1e3:
		unit, div = "KB", 1e3
	}
	f := func(v float64) string { return fmt.Sprintf("%.2f %s", v/div, unit) }
	return fmt.Sprintf("%s/s from %d messages\n\tMessage size mean: %s min: %s max: %s\n",
		f(rate), len(ws), f(mean), f(float64(lo)), f(float64(hi)))
}
