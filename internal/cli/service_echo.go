package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/msgyaml"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

// serviceEchoVerb is `service echo`, as Jazzy's ros2service echo verb.
func serviceEchoVerb() verb {
	return verb{
		usage: "service echo SERVICE [TYPE] [--csv] [--flow-style] [--no-arr] [--no-str] [-l N|--truncate-length N] [-f|--full-length]",
		help: "Print the introspection events of a service (REQUEST_SENT, REQUEST_RECEIVED, RESPONSE_SENT,\n" +
			"RESPONSE_RECEIVED) from SERVICE/_service_event as YAML, each followed by '---'. Events\n" +
			"come only from servers and clients whose introspection is switched on (Jazzy). Without\n" +
			"TYPE the service type is taken from the graph. Display options as in topic echo;\n" +
			"--flow-style prints sequences in flow style ([1, 2]); --csv prints one line of\n" +
			"comma-separated values per event.",
		run: (*App).serviceEcho,
	}
}

// eventTypeNames are the names ros2 service echo prints for the
// ServiceEventInfo event types.
var eventTypeNames = []string{"REQUEST_SENT", "REQUEST_RECEIVED", "RESPONSE_SENT", "RESPONSE_RECEIVED"}

func (a *App) serviceEcho(ctx context.Context, args []string) error {
	p, err := parseFlags(args, flagSpec{"--full-length": false, "-f": false, "--truncate-length": true, "-l": true,
		"--no-arr": false, "--no-str": false, "--no-daemon": false, "--flow-style": false, "--csv": false})
	if err != nil {
		return err
	}
	if len(p.pos) < 1 || len(p.pos) > 2 {
		return usagef("usage: fsmnodes service echo SERVICE [TYPE]")
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
	name := p.pos[0]
	var st *rosidl.ServiceType
	if len(p.pos) == 2 {
		if st, err = a.Registry.Service(p.pos[1]); err != nil || st.Event == nil {
			return fmt.Errorf("the service type '%s' is invalid or unknown (see 'fsmnodes interface list -s')", p.pos[1])
		}
	}
	s, err := a.open(ctx, "service_echo")
	if err != nil {
		return err
	}
	defer s.close()
	if st == nil {
		fqn, err := s.node.ResolveServiceName(name)
		if err != nil {
			return fmt.Errorf("the service name '%s' is invalid: %w", name, err)
		}
		s.settle(ctx, 2*time.Second)
		types := typesOf(s.rc.ServiceNamesAndTypes(), fqn)
		if len(types) == 0 {
			return fmt.Errorf("the service name '%s' is invalid (no such service in the graph; give the TYPE)", name)
		}
		if st, err = a.Registry.Service(types[0]); err != nil || st.Event == nil {
			return fmt.Errorf("the service type '%s' is invalid or unknown (see 'fsmnodes interface list -s')", types[0])
		}
	}
	// As ros2: the topic is the name as given plus the suffix, resolved as
	// a topic name.
	topic := name + ros.ServiceEventSuffix
	var mu sync.Mutex
	var outErr error
	done := make(chan struct{})
	var doneOnce sync.Once
	sub, err := ros.NewDynamicSubscription(s.node, topic, st.Event, ros.QoSServices, func(m rosidl.Message) {
		mu.Lock()
		defer mu.Unlock()
		if outErr != nil {
			return
		}
		var text string
		var err error
		if csv {
			if text, err = msgyaml.CSV(m, show); err == nil {
				text += "\n"
			}
		} else {
			text, err = eventYAML(m, show)
		}
		if err == nil {
			_, err = fmt.Fprint(a.Stdout, text)
		}
		if err != nil {
			outErr = err
			doneOnce.Do(func() { close(done) })
		}
	})
	if err != nil {
		return fmt.Errorf("subscribe to %s: %w", topic, err)
	}
	s.settle(ctx, time.Second)
	if n, err := sub.PublisherCount(); err == nil && n < 1 {
		mu.Lock()
		fmt.Fprintf(a.Stdout, "No publishers on topic '%s'; is service introspection on the client or server enabled?\n", topic)
		mu.Unlock()
	}
	select {
	case <-ctx.Done():
	case <-done:
	}
	mu.Lock()
	defer mu.Unlock()
	return outErr
}

// eventYAML renders an X_Event as ros2 service echo does: the message as
// YAML with info.event_type replaced by its name, then "---".
func eventYAML(m rosidl.Message, show msgyaml.EchoOptions) (string, error) {
	text, err := msgyaml.EchoWith(m, show)
	if err != nil {
		return "", err
	}
	v, err := fieldOf(m, "info.event_type")
	if err != nil {
		return "", err
	}
	kind, ok := v.(uint8)
	if !ok || int(kind) >= len(eventTypeNames) {
		return text, nil
	}
	prefix := "info:\n  event_type: " + strconv.Itoa(int(kind)) + "\n"
	if rest, ok := strings.CutPrefix(text, prefix); ok {
		text = "info:\n  event_type: " + eventTypeNames[kind] + "\n" + rest
	}
	return text, nil
}
