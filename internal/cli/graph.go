package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	diagnostic_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/diagnostic_msgs/msg"
)

func graphVerbs() map[string]verb {
	return map[string]verb{
		"node list": {
			usage: "node list [-a] [-c]",
			help:  "List the nodes of the ROS graph (-a also hidden nodes, -c only count them).",
			run:   (*App).nodeList,
		},
		"node info": {
			usage: "node info NODE [--include-hidden]",
			help:  "Print the publishers, subscribers, services and actions of a node.",
			run:   (*App).nodeInfo,
		},
		"topic list": {
			usage: "topic list [-t] [-a] [-c] [-v]",
			help:  "List topics (-t with types, -a include hidden topics, -c only count them).",
			run:   (*App).topicList,
		},
		"topic info": {
			usage: "topic info TOPIC [-v]",
			help:  "Print the type and the publisher/subscription counts of a topic (-v: every endpoint with its QoS).",
			run:   (*App).topicInfo,
		},
		"topic type": {
			usage: "topic type TOPIC",
			help:  "Print the type of a topic.",
			run:   (*App).topicType,
		},
		"service list": {
			usage: "service list [-t] [-a] [-c]",
			help:  "List services (-t with types, -a include hidden services, -c only count them).",
			run:   (*App).serviceList,
		},
		"service type": {
			usage: "service type SERVICE",
			help:  "Print the type of a service.",
			run:   (*App).serviceType,
		},
		"service find": {
			usage: "service find TYPE",
			help:  "List the services of a type.",
			run:   (*App).serviceFind,
		},
		"topic find": {
			usage: "topic find TYPE",
			help:  "List the topics of a type.",
			run:   (*App).topicFind,
		},
	}
}

// graphSession parses the common flags of graph verbs, opens a session and
// waits for discovery.
func (a *App) graphSession(ctx context.Context, args []string, spec flagSpec, npos int, usage string) (*session, *parsed, error) {
	s, p, _, err := a.graphSessionTimed(ctx, args, spec, npos, usage)
	return s, p, err
}

// graphSessionTimed is graphSession that also returns a function waiting,
// for what is left of the spin time, until cond holds (session.waitGraph).
func (a *App) graphSessionTimed(ctx context.Context, args []string, spec flagSpec, npos int, usage string) (*session, *parsed, func(cond func() bool) bool, error) {
	spec[spinTimeFlag] = true
	spec["--no-daemon"] = false
	p, err := parseFlags(args, spec)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(p.pos) != npos {
		return nil, nil, nil, usagef("usage: fsmnodes %s", usage)
	}
	st, err := spinTime(p)
	if err != nil {
		return nil, nil, nil, err
	}
	s, err := a.open(ctx, "graph")
	if err != nil {
		return nil, nil, nil, err
	}
	start := time.Now()
	s.settle(ctx, st)
	wait := func(cond func() bool) bool { return s.waitGraph(ctx, start, st, cond) }
	return s, p, wait, nil
}

// topicKnown reports whether fqn has a type in the graph and every
// endpoint on it has its node's name (ros_discovery_info can come after
// the endpoint itself).
func topicKnown(s *session, fqn string) bool {
	if len(typesOf(s.rc.TopicNamesAndTypes(), fqn)) == 0 {
		return false
	}
	for _, e := range append(s.rc.PublishersInfo(fqn), s.rc.SubscriptionsInfo(fqn)...) {
		if e.NodeName == ros.UnknownNodeName {
			return false
		}
	}
	return true
}

func (a *App) nodeList(ctx context.Context, args []string) error {
	s, p, err := a.graphSession(ctx, args, flagSpec{"-a": false, "--all": false, "-c": false, "--count-nodes": false}, 0, "node list [-a] [-c]")
	if err != nil {
		return err
	}
	defer s.close()
	all := p.has("-a", "--all")
	var names []string
	for _, n := range s.rc.NodeNames() {
		if !all && strings.HasPrefix(n.Name, "_") {
			continue
		}
		names = append(names, n.FullyQualifiedName())
	}
	if p.has("-c", "--count-nodes") {
		fmt.Fprintln(a.Stdout, len(names))
		return nil
	}
	for _, n := range names {
		fmt.Fprintln(a.Stdout, n)
	}
	return nil
}

// splitNodeName splits "/ns/name" into name and namespace.
func splitNodeName(fqn string) (name, ns string) {
	if !strings.HasPrefix(fqn, "/") {
		fqn = "/" + fqn
	}
	i := strings.LastIndexByte(fqn, '/')
	ns = fqn[:i]
	if ns == "" {
		ns = "/"
	}
	return fqn[i+1:], ns
}

func filterHidden(in []ros.NameAndTypes, all bool) []ros.NameAndTypes {
	if all {
		return in
	}
	var out []ros.NameAndTypes
	for _, nt := range in {
		if !ros.IsHiddenName(nt.Name) {
			out = append(out, nt)
		}
	}
	return out
}

// actionsOf derives the actions of a node from its hidden action services
// (<action>/_action/send_goal) and their types.
func actionsOf(services []ros.NameAndTypes) []ros.NameAndTypes {
	var out []ros.NameAndTypes
	for _, nt := range services {
		name, ok := strings.CutSuffix(nt.Name, "/_action/send_goal")
		if !ok {
			continue
		}
		var types []string
		for _, t := range nt.Types {
			types = append(types, strings.TrimSuffix(t, "_SendGoal"))
		}
		out = append(out, ros.NameAndTypes{Name: name, Types: types})
	}
	return out
}

func (a *App) nodeInfo(ctx context.Context, args []string) error {
	s, p, err := a.graphSession(ctx, args, flagSpec{"--include-hidden": false}, 1, "node info NODE")
	if err != nil {
		return err
	}
	defer s.close()
	fqn := p.pos[0]
	if !strings.HasPrefix(fqn, "/") {
		fqn = "/" + fqn
	}
	name, ns := splitNodeName(fqn)
	found := false
	for _, n := range s.rc.NodeNames() {
		found = found || n.FullyQualifiedName() == fqn
	}
	if !found {
		return fmt.Errorf("unable to find node '%s'", fqn)
	}
	all := p.has("--include-hidden")
	subs, err := s.rc.SubscriberNamesAndTypesByNode(name, ns)
	if err != nil {
		return err
	}
	pubs, err := s.rc.PublisherNamesAndTypesByNode(name, ns)
	if err != nil {
		return err
	}
	srvs, err := s.rc.ServiceNamesAndTypesByNode(name, ns)
	if err != nil {
		return err
	}
	clis, err := s.rc.ClientNamesAndTypesByNode(name, ns)
	if err != nil {
		return err
	}
	section := func(title string, list []ros.NameAndTypes) {
		fmt.Fprintf(a.Stdout, "  %s:\n", title)
		if len(list) == 0 {
			fmt.Fprintln(a.Stdout)
			return
		}
		for _, nt := range list {
			fmt.Fprintf(a.Stdout, "    %s: %s\n", nt.Name, strings.Join(nt.Types, ", "))
		}
	}
	fmt.Fprintln(a.Stdout, fqn)
	section("Subscribers", filterHidden(subs, all))
	section("Publishers", filterHidden(pubs, all))
	section("Service Servers", filterHidden(srvs, all))
	section("Service Clients", filterHidden(clis, all))
	section("Action Servers", actionsOf(srvs))
	section("Action Clients", actionsOf(clis))
	for _, nt := range pubs {
		if nt.Name == ros.DiagnosticsTopic {
			a.printCounters(ctx, s, fqn)
			break
		}
	}
	return nil
}

// countersWait bounds how long node info waits for a node's counters on
// /diagnostics (transient local, so normally they arrive with the match).
const countersWait = 3 * ros.DiagnosticsPeriod

// printCounters prints the counters the node fqn last reported on
// /diagnostics (fsmnodes nodes publish them; see docs/client-library.md).
func (a *App) printCounters(ctx context.Context, s *session, fqn string) {
	got := make(chan []diagnostic_msgs_msg.KeyValue, 1)
	name := ros.DiagnosticsStatusName(fqn)
	sub, err := ros.NewSubscription(s.node, ros.DiagnosticsTopic, ros.QoSDiagnosticsReader, func(m *diagnostic_msgs_msg.DiagnosticArray) {
		for _, st := range m.Status {
			if st.Name == name {
				select {
				case got <- st.Values:
				default:
				}
			}
		}
	})
	fmt.Fprintln(a.Stdout, "  Counters:")
	if err != nil {
		fmt.Fprintf(a.Stdout, "    (cannot subscribe to %s: %v)\n", ros.DiagnosticsTopic, err)
		return
	}
	defer sub.Close()
	t := time.NewTimer(countersWait)
	defer t.Stop()
	select {
	case vals := <-got:
		for _, kv := range vals {
			fmt.Fprintf(a.Stdout, "    %s: %s\n", kv.Key, kv.Value)
		}
	case <-t.C:
		fmt.Fprintf(a.Stdout, "    (no report on %s within %v)\n", ros.DiagnosticsTopic, countersWait)
	case <-ctx.Done():
	}
}

func (a *App) topicList(ctx context.Context, args []string) error {
	s, p, err := a.graphSession(ctx, args, flagSpec{"-t": false, "--show-types": false, "-a": false,
		"--include-hidden-topics": false, "-c": false, "--count-topics": false, "-v": false, "--verbose": false}, 0, "topic list [-t] [-a] [-c]")
	if err != nil {
		return err
	}
	defer s.close()
	topics := filterHidden(s.rc.TopicNamesAndTypes(), p.has("-a", "--include-hidden-topics"))
	if p.has("-c", "--count-topics") {
		fmt.Fprintln(a.Stdout, len(topics))
		return nil
	}
	if p.has("-v", "--verbose") {
		a.verboseTopicList(s, topics)
		return nil
	}
	printNames(a.Stdout, topics, p.has("-t", "--show-types"))
	return nil
}

func (a *App) verboseTopicList(s *session, topics []ros.NameAndTypes) {
	for _, kind := range []string{"Published", "Subscribed"} {
		fmt.Fprintf(a.Stdout, "%s topics:\n", kind)
		for _, t := range topics {
			n := len(s.rc.PublishersInfo(t.Name))
			word := "publisher"
			if kind == "Subscribed" {
				n, word = len(s.rc.SubscriptionsInfo(t.Name)), "subscriber"
			}
			if n == 0 {
				continue
			}
			if n != 1 {
				word += "s"
			}
			fmt.Fprintf(a.Stdout, " * %s [%s] %d %s\n", t.Name, strings.Join(t.Types, ", "), n, word)
		}
		fmt.Fprintln(a.Stdout)
	}
}

// resolveTopic expands a user-given topic name as ros2 does (relative names
// are relative to "/").
func resolveTopic(s *session, name string) (string, error) {
	fqn, err := s.node.ResolveTopicName(name)
	if err != nil {
		return "", err // the error names the topic
	}
	return fqn, nil
}

func typesOf(list []ros.NameAndTypes, name string) []string {
	for _, nt := range list {
		if nt.Name == name {
			return nt.Types
		}
	}
	return nil
}

func (a *App) topicType(ctx context.Context, args []string) error {
	s, p, wait, err := a.graphSessionTimed(ctx, args, flagSpec{}, 1, "topic type TOPIC")
	if err != nil {
		return err
	}
	defer s.close()
	fqn, err := resolveTopic(s, p.pos[0])
	if err != nil {
		return err
	}
	wait(func() bool { return topicKnown(s, fqn) })
	types := typesOf(s.rc.TopicNamesAndTypes(), fqn)
	if len(types) == 0 {
		return fmt.Errorf("unknown topic '%s'", fqn)
	}
	for _, t := range types {
		fmt.Fprintln(a.Stdout, t)
	}
	return nil
}

func (a *App) topicFind(ctx context.Context, args []string) error {
	s, p, err := a.graphSession(ctx, args, flagSpec{"-a": false, "--include-hidden-topics": false}, 1, "topic find TYPE")
	if err != nil {
		return err
	}
	defer s.close()
	for _, t := range filterHidden(s.rc.TopicNamesAndTypes(), p.has("-a", "--include-hidden-topics")) {
		for _, ty := range t.Types {
			if ty == p.pos[0] {
				fmt.Fprintln(a.Stdout, t.Name)
			}
		}
	}
	return nil
}

func (a *App) topicInfo(ctx context.Context, args []string) error {
	s, p, wait, err := a.graphSessionTimed(ctx, args, flagSpec{"-v": false, "--verbose": false}, 1, "topic info TOPIC [-v]")
	if err != nil {
		return err
	}
	defer s.close()
	fqn, err := resolveTopic(s, p.pos[0])
	if err != nil {
		return err
	}
	wait(func() bool { return topicKnown(s, fqn) })
	types := typesOf(s.rc.TopicNamesAndTypes(), fqn)
	if len(types) == 0 {
		return fmt.Errorf("unknown topic '%s'", fqn)
	}
	pubs, subs := s.rc.PublishersInfo(fqn), s.rc.SubscriptionsInfo(fqn)
	verbose := p.has("-v", "--verbose")
	fmt.Fprintf(a.Stdout, "Type: %s\n", strings.Join(types, ", "))
	if verbose {
		fmt.Fprintln(a.Stdout)
	}
	fmt.Fprintf(a.Stdout, "Publisher count: %d\n", len(pubs))
	if verbose {
		fmt.Fprintln(a.Stdout)
		a.printEndpoints(pubs)
	}
	fmt.Fprintf(a.Stdout, "Subscription count: %d\n", len(subs))
	if verbose {
		fmt.Fprintln(a.Stdout)
		a.printEndpoints(subs)
	}
	return nil
}

func formatDuration(d time.Duration) string {
	if d == 0 || d == ros.DurationInfinite {
		return "Infinite"
	}
	return fmt.Sprintf("%d nanoseconds", d.Nanoseconds())
}

// formatGID prints a GUID as ros2 does: dotted hex bytes.
func formatGID(hexStr string) string {
	var parts []string
	for i := 0; i+1 < len(hexStr); i += 2 {
		parts = append(parts, hexStr[i:i+2])
	}
	return strings.Join(parts, ".")
}

func (a *App) printEndpoints(list []ros.EndpointInfo) {
	sort.SliceStable(list, func(i, j int) bool { return list[i].NodeName < list[j].NodeName })
	for _, e := range list {
		fmt.Fprintf(a.Stdout, "Node name: %s\n", e.NodeName)
		fmt.Fprintf(a.Stdout, "Node namespace: %s\n", e.NodeNamespace)
		fmt.Fprintf(a.Stdout, "Topic type: %s\n", e.TopicType)
		hash := e.TopicTypeHash
		if hash == "" {
			hash = "INVALID"
		}
		fmt.Fprintf(a.Stdout, "Topic type hash: %s\n", hash)
		fmt.Fprintf(a.Stdout, "Endpoint type: %s\n", e.Kind)
		fmt.Fprintf(a.Stdout, "GID: %s\n", formatGID(e.GID.String()))
		q := e.QoS
		fmt.Fprintln(a.Stdout, "QoS profile:")
		fmt.Fprintf(a.Stdout, "  Reliability: %s\n", q.Reliability)
		fmt.Fprintf(a.Stdout, "  History (Depth): %s (%d)\n", q.History, q.Depth)
		fmt.Fprintf(a.Stdout, "  Durability: %s\n", q.Durability)
		fmt.Fprintf(a.Stdout, "  Lifespan: %s\n", formatDuration(q.Lifespan))
		fmt.Fprintf(a.Stdout, "  Deadline: %s\n", formatDuration(q.Deadline))
		fmt.Fprintf(a.Stdout, "  Liveliness: %s\n", q.Liveliness)
		fmt.Fprintf(a.Stdout, "  Liveliness lease duration: %s\n", formatDuration(q.LivelinessLeaseDuration))
		fmt.Fprintln(a.Stdout)
	}
}

func (a *App) serviceList(ctx context.Context, args []string) error {
	s, p, err := a.graphSession(ctx, args, flagSpec{"-t": false, "--show-types": false, "-a": false,
		"--include-hidden-services": false, "-c": false, "--count-services": false}, 0, "service list [-t] [-a] [-c]")
	if err != nil {
		return err
	}
	defer s.close()
	srvs := filterHidden(s.rc.ServiceNamesAndTypes(), p.has("-a", "--include-hidden-services"))
	if p.has("-c", "--count-services") {
		fmt.Fprintln(a.Stdout, len(srvs))
		return nil
	}
	printNames(a.Stdout, srvs, p.has("-t", "--show-types"))
	return nil
}

func (a *App) serviceType(ctx context.Context, args []string) error {
	s, p, err := a.graphSession(ctx, args, flagSpec{}, 1, "service type SERVICE")
	if err != nil {
		return err
	}
	defer s.close()
	fqn, err := s.node.ResolveServiceName(p.pos[0])
	if err != nil {
		return err // the error names the service
	}
	types := typesOf(s.rc.ServiceNamesAndTypes(), fqn)
	if len(types) == 0 {
		return fmt.Errorf("unknown service '%s'", fqn)
	}
	for _, t := range types {
		fmt.Fprintln(a.Stdout, t)
	}
	return nil
}

func (a *App) serviceFind(ctx context.Context, args []string) error {
	s, p, err := a.graphSession(ctx, args, flagSpec{"-a": false, "--include-hidden-services": false}, 1, "service find TYPE")
	if err != nil {
		return err
	}
	defer s.close()
	for _, t := range filterHidden(s.rc.ServiceNamesAndTypes(), p.has("-a", "--include-hidden-services")) {
		for _, ty := range t.Types {
			if ty == p.pos[0] {
				fmt.Fprintln(a.Stdout, t.Name)
			}
		}
	}
	return nil
}

// printNames prints one name a line, as `NAME [TYPE, ...]` with types (the
// -t flag of topic, service and action list).
func printNames(w io.Writer, list []ros.NameAndTypes, types bool) {
	for _, nt := range list {
		if types {
			fmt.Fprintf(w, "%s [%s]\n", nt.Name, strings.Join(nt.Types, ", "))
		} else {
			fmt.Fprintln(w, nt.Name)
		}
	}
}
