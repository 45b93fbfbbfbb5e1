package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/msgyaml"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

func topicVerbs() map[string]verb {
	return map[string]verb{
		"topic echo": {
			usage: "topic echo TOPIC [TYPE] [--once] [--field F] [--csv] [--flow-style] [--no-arr] [--no-str] [-l N|--truncate-length N] [-f|--full-length] [--qos-*]",
			help: "Print the messages of a topic as YAML, each followed by '---'. Without TYPE the type\n" +
				"is taken from the graph. Reliability and durability follow the publishers unless given\n" +
				"(--qos-profile, --qos-depth, --qos-history, --qos-reliability, --qos-durability).\n" +
				"Strings and sequences longer than --truncate-length (default 128) end in '...' unless\n" +
				"--full-length; --no-arr and --no-str replace sequences and strings by a summary;\n" +
				"--flow-style prints sequences in flow style ([1, 2]); --csv prints one line of\n" +
				"comma-separated values per message.",
			run: (*App).topicEcho,
		},
		"topic pub": {
			usage: "topic pub TOPIC TYPE [VALUES] [-r RATE] [-1|--once] [-t|--times N] [-w N] [-p N] [-n NAME] [--keep-alive S] [--qos-*]",
			help: "Publish a message built from YAML VALUES (e.g. '{linear: {x: 0.5}}'), at RATE Hz (default 1)\n" +
				"until Ctrl-C, once (-1), or N times (-t). With --once/--times it first waits for -w matching\n" +
				"subscriptions (default 1).",
			run: (*App).topicPub,
		},
		"topic bw": topicBwVerb(),
		"topic hz": {
			usage: "topic hz TOPIC [TYPE] [-w WINDOW] [--qos-*]",
			help:  "Print the average publishing rate of a topic every second.",
			run:   (*App).topicHz,
		},
	}
}

// messageType resolves a message type name with a clear error.
func (a *App) messageType(name string) (*rosidl.TypeInfo, error) {
	ti, err := a.Registry.Message(name)
	if err != nil || ti.New == nil {
		return nil, fmt.Errorf("the passed message type %q is invalid or unknown (see 'fsmnodes interface list')", name)
	}
	return ti, nil
}

// buildMessage makes a message of ti from YAML values and checks it.
func buildMessage(ti *rosidl.TypeInfo, values string) (rosidl.Message, error) {
	m, _, err := buildStamped(ti, values, time.Now())
	return m, err
}

// buildStamped is buildMessage with every "now" / "auto" stamp field set to
// at; stamped says whether values had any (ros2 topic pub restamps them
// at every publication).
func buildStamped(ti *rosidl.TypeInfo, values string, at time.Time) (_ rosidl.Message, stamped bool, _ error) {
	m := ti.New()
	now := func() time.Time { stamped = true; return at }
	if err := msgyaml.DecodeWith(values, m, msgyaml.Options{Now: now}); err != nil {
		return nil, false, fmt.Errorf("failed to populate field: %w", err)
	}
	if v, ok := m.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, false, fmt.Errorf("failed to populate field: %w", err)
		}
	}
	return m, stamped, nil
}

// topicTypeFromGraph finds the single type of a topic.
func topicTypeFromGraph(s *session, fqn string) (string, error) {
	types := typesOf(s.rc.TopicNamesAndTypes(), fqn)
	switch len(types) {
	case 0:
		return "", fmt.Errorf("could not determine the type for the passed topic %s (it does not appear to be published yet; give the TYPE)", fqn)
	case 1:
		return types[0], nil
	}
	return "", fmt.Errorf("topic %s has more than one type (%s); give the TYPE", fqn, strings.Join(types, ", "))
}

// subscribeArgs handles what echo and hz share: topic, optional type, QoS.
func (a *App) subscribeArgs(ctx context.Context, p *parsed, verbName string) (*session, string, *rosidl.TypeInfo, ros.QoS, error) {
	if len(p.pos) < 1 || len(p.pos) > 2 {
		return nil, "", nil, ros.QoS{}, usagef("usage: fsmnodes topic %s TOPIC [TYPE]", verbName)
	}
	q, setRel, setDur, err := qosFromFlags(p, ros.QoSDefault)
	if err != nil {
		return nil, "", nil, q, err
	}
	var ti *rosidl.TypeInfo
	if len(p.pos) == 2 {
		if ti, err = a.messageType(p.pos[1]); err != nil {
			return nil, "", nil, q, err
		}
	}
	s, err := a.open(ctx, verbName)
	if err != nil {
		return nil, "", nil, q, err
	}
	fqn, err := resolveTopic(s, p.pos[0])
	if err != nil {
		s.close()
		return nil, "", nil, q, err
	}
	if ti == nil || !setRel || !setDur {
		s.settle(ctx, 2*time.Second)
	}
	if ti == nil {
		name, err := topicTypeFromGraph(s, fqn)
		if err == nil {
			ti, err = a.messageType(name)
		}
		if err != nil {
			s.close()
			return nil, "", nil, q, err
		}
	}
	q = adaptQoS(q, s.rc.PublishersInfo(fqn), setRel, setDur)
	return s, fqn, ti, q, nil
}

// fieldOf follows a dotted field path (ros2 echo --field) through a message.
func fieldOf(m rosidl.Message, path string) (any, error) {
	var cur any = m
	for _, part := range strings.Split(path, ".") {
		v, err := msgyaml.Field(cur, part)
		if err != nil {
			return nil, err
		}
		cur = v
	}
	return cur, nil
}

func (a *App) topicEcho(ctx context.Context, args []string) error {
	p, err := parseFlags(args, addFlags(flagSpec{"--once": false, "--field": true, "--no-daemon": false,
		"--full-length": false, "-f": false, "--truncate-length": true, "-l": true, "--no-arr": false,
		"--no-str": false, "--flow-style": false, "--csv": false}, qosFlags))
	if err != nil {
		return err
	}
	trunc, err := nonNegativeInt(p, "128", "--truncate-length", "-l")
	if err != nil {
		return err
	}
	if p.has("--full-length", "-f") {
		trunc = 0
	}
	show := msgyaml.EchoOptions{TruncateLength: trunc, NoArr: p.has("--no-arr"), NoStr: p.has("--no-str"), FlowStyle: p.has("--flow-style")}
	csv := p.has("--csv")
	if csv && p.has("--field") {
		return usagef("--csv and --field cannot be combined")
	}
	s, fqn, ti, q, err := a.subscribeArgs(ctx, p, "echo")
	if err != nil {
		return err
	}
	defer s.close()
	once := p.has("--once")
	field := p.get("", "--field")
	done := make(chan struct{})
	var doneOnce sync.Once
	var mu sync.Mutex
	var outErr error
	cb := func(m rosidl.Message) {
		mu.Lock()
		defer mu.Unlock()
		if outErr != nil || (once && isClosed(done)) {
			return
		}
		var text string
		var err error
		if csv {
			if text, err = msgyaml.CSV(m, show); err == nil {
				text += "\n"
			}
		} else if field != "" {
			var v any
			if v, err = fieldOf(m, field); err == nil {
				text, err = msgyaml.EchoValueWith(v, show)
			}
		} else {
			text, err = msgyaml.EchoWith(m, show)
		}
		if err == nil {
			_, err = fmt.Fprint(a.Stdout, text)
		}
		if err != nil {
			outErr = err
			doneOnce.Do(func() { close(done) })
			return
		}
		if once {
			doneOnce.Do(func() { close(done) })
		}
	}
	if _, err := ros.NewDynamicSubscription(s.node, fqn, ti, q, cb); err != nil {
		return fmt.Errorf("subscribe to %s: %w", fqn, err)
	}
	select {
	case <-ctx.Done():
	case <-done:
	}
	mu.Lock()
	defer mu.Unlock()
	return outErr
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func positiveFloat(p *parsed, def string, names ...string) (float64, error) {
	v := p.get(def, names...)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f > 0) || math.IsInf(f, 0) {
		return 0, usagef("%s: %q is not a positive number", names[0], v)
	}
	return f, nil
}

// rateFlag reads a rate in Hz (positiveFloat) and returns it with its
// period, refusing a rate whose period rounds to 0 ns (a ticker of 0
// would panic).
func rateFlag(p *parsed, def string, names ...string) (float64, time.Duration, error) {
	rate, err := positiveFloat(p, def, names...)
	if err != nil {
		return 0, 0, err
	}
	period := time.Duration(float64(time.Second) / rate)
	if period <= 0 {
		return 0, 0, usagef("%s: %g Hz is a period of %g s, which rounds to 0 ns", names[0], rate, 1/rate)
	}
	return rate, period, nil
}

func nonNegativeInt(p *parsed, def string, names ...string) (int, error) {
	v := p.get(def, names...)
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, usagef("%s: %q is not a non-negative integer", names[0], v)
	}
	return n, nil
}

func (a *App) topicPub(ctx context.Context, args []string) error {
	p, err := parseFlags(args, addFlags(flagSpec{"-r": true, "--rate": true, "-1": false, "--once": false,
		"-t": true, "--times": true, "-w": true, "--wait-matching-subscriptions": true, "-p": true, "--print": true,
		"--keep-alive": true, "-n": true, "--node-name": true, "--no-daemon": false}, qosFlags))
	if err != nil {
		return err
	}
	if len(p.pos) < 2 || len(p.pos) > 3 {
		return usagef("usage: fsmnodes topic pub TOPIC TYPE [VALUES]")
	}
	_, period, err := rateFlag(p, "1", "--rate", "-r")
	if err != nil {
		return err
	}
	times, err := nonNegativeInt(p, "0", "--times", "-t")
	if err != nil {
		return err
	}
	once := p.has("-1", "--once")
	if once && times > 0 {
		return usagef("cannot pass both --once and --times")
	}
	if once {
		times = 1
	}
	waitDefault := "0"
	if times > 0 {
		waitDefault = "1"
	}
	waitSubs, err := nonNegativeInt(p, waitDefault, "--wait-matching-subscriptions", "-w")
	if err != nil {
		return err
	}
	printNth, err := nonNegativeInt(p, "1", "--print", "-p")
	if err != nil {
		return err
	}
	keepAlive, err := positiveFloat(p, "0.5", "--keep-alive")
	if err != nil {
		return err
	}
	q, _, _, err := qosFromFlags(p, ros.QoSDefault)
	if err != nil {
		return err
	}
	ti, err := a.messageType(p.pos[1])
	if err != nil {
		return err
	}
	values := "{}"
	if len(p.pos) == 3 {
		values = p.pos[2]
	}
	msg, stamped, err := buildStamped(ti, values, time.Now())
	if err != nil {
		return err
	}
	var s *session
	if name := p.get("", "-n", "--node-name"); name != "" {
		s, err = a.openNode(ctx, name) // as ros2 topic pub -n
	} else {
		s, err = a.open(ctx, "pub")
	}
	if err != nil {
		return err
	}
	defer s.close()
	pub, err := ros.NewDynamicPublisher(s.node, p.pos[0], ti, q)
	if err != nil {
		return fmt.Errorf("publish on %s: %w", p.pos[0], err)
	}
	defer pub.Close()
	if waitSubs > 0 {
		fmt.Fprintf(a.Stdout, "Waiting for at least %d matching subscription(s)...\n", waitSubs)
		if err := waitMatched(ctx, s.rc, pub, waitSubs); err != nil {
			return nilIfCanceled(err)
		}
	}
	fmt.Fprintln(a.Stdout, "publisher: beginning loop")
	tick := time.NewTicker(period)
	defer tick.Stop()
	for count := 1; times == 0 || count <= times; count++ {
		if count > 1 {
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
		}
		if stamped { // "now" / "auto": the time of this publication, as ros2 topic pub
			if msg, _, err = buildStamped(ti, values, time.Now()); err != nil {
				return err
			}
		}
		if printNth > 0 && count%printNth == 0 {
			fmt.Fprintf(a.Stdout, "publishing #%d: %s\n\n", count, msgyaml.Repr(msg))
		}
		if err := pub.Publish(msg); err != nil {
			return fmt.Errorf("publish on %s: %w", pub.TopicName(), err)
		}
	}
	// Give reliable delivery time to finish before the writer goes away.
	select {
	case <-ctx.Done():
	case <-time.After(time.Duration(keepAlive * float64(time.Second))):
	}
	return nil
}

// waitMatched waits until the publisher has matched n subscriptions (a
// match is a graph change of rc).
func waitMatched(ctx context.Context, rc *ros.Context, pub *ros.DynamicPublisher, n int) error {
	var countErr error
	err := rc.WaitForGraph(ctx, func() bool {
		c, err := pub.SubscriptionCount()
		if err != nil {
			countErr = fmt.Errorf("matched subscriptions of %s: %w", pub.TopicName(), err)
			return true
		}
		return c >= n
	})
	if countErr != nil {
		return countErr
	}
	return err
}

func nilIfCanceled(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func (a *App) topicHz(ctx context.Context, args []string) error {
	p, err := parseFlags(args, addFlags(flagSpec{"-w": true, "--window": true, "--no-daemon": false}, qosFlags))
	if err != nil {
		return err
	}
	window, err := nonNegativeInt(p, "10000", "--window", "-w")
	if err != nil {
		return err
	}
	if window < 2 {
		return usagef("--window must be at least 2")
	}
	s, fqn, ti, q, err := a.subscribeArgs(ctx, p, "hz")
	if err != nil {
		return err
	}
	defer s.close()
	var mu sync.Mutex
	var stamps []time.Time
	cb := func(rosidl.Message) {
		mu.Lock()
		defer mu.Unlock()
		stamps = append(stamps, time.Now())
		if len(stamps) > window+1 {
			stamps = stamps[len(stamps)-window-1:]
		}
	}
	if _, err := ros.NewDynamicSubscription(s.node, fqn, ti, q, cb); err != nil {
		return fmt.Errorf("subscribe to %s: %w", fqn, err)
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		mu.Lock()
		st := append([]time.Time(nil), stamps...)
		mu.Unlock()
		if len(st) < 2 || st[len(st)-1].Equal(last) {
			if len(st) < 2 {
				fmt.Fprintln(a.Stdout, "WARNING: topic ["+fqn+"] does not appear to be published yet")
			} else {
				fmt.Fprintln(a.Stdout, "no new messages")
			}
			continue
		}
		last = st[len(st)-1]
		fmt.Fprint(a.Stdout, hzReport(st))
	}
}

// hzReport formats the statistics of arrival times as ros2 topic hz does.
func hzReport(st []time.Time) string {
	n := len(st) - 1
	deltas := make([]float64, n)
	sum := 0.0
	for i := 1; i < len(st); i++ {
		deltas[i-1] = st[i].Sub(st[i-1]).Seconds()
		sum += deltas[i-1]
	}
	mean := sum / float64(n)
	var sq float64
	for _, d := range deltas {
		sq += (d - mean) * (d - mean)
	}
	std := math.Sqrt(sq / float64(n))
	sort.Float64s(deltas)
	rate := 0.0
	if mean > 0 {
		rate = 1 / mean
	}
	return fmt.Sprintf("average rate: %.3f\n\tmin: %.3fs max: %.3fs std dev: %.5fs window: %d\n",
		rate, deltas[0], deltas[n-1], std, n+1)
}
