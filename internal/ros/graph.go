package ros

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

// DDS topic name prefixes and suffixes of ROS entities.
const (
	topicPrefix    = "rt"
	requestPrefix  = "rq"
	replyPrefix    = "rr"
	requestSuffix  = "Request"
	replySuffix    = "Reply"
	unknownNode    = "_NODE_NAME_UNKNOWN_"
	unknownNodeNS  = "_NODE_NAMESPACE_UNKNOWN_"
	nodeNotFoundFn = "node %q not found in the ROS graph"
)

// UnknownNodeName is the NodeName of an endpoint whose node is not known
// (yet): its participant's ros_discovery_info has not named it, as rmw
// reports it.
const UnknownNodeName = unknownNode

// NodeName identifies a node in the graph.
type NodeName struct {
	Name      string
	Namespace string
}

// FullyQualifiedName returns "/ns/name".
func (n NodeName) FullyQualifiedName() string { return FullyQualifiedNodeName(n.Namespace, n.Name) }

// NameAndTypes is a topic or service name with the ROS types seen on it.
type NameAndTypes struct {
	Name  string
	Types []string
}

// EndpointKind says whether an endpoint publishes or subscribes.
type EndpointKind int

// Endpoint kinds.
const (
	EndpointPublisher EndpointKind = iota
	EndpointSubscription
)

// String returns "PUBLISHER" or "SUBSCRIPTION" as ros2 topic info -v does.
func (k EndpointKind) String() string {
	if k == EndpointSubscription {
		return "SUBSCRIPTION"
	}
	return "PUBLISHER"
}

// EndpointInfo describes one publisher or subscription on a topic, as
// `ros2 topic info -v` prints it.
type EndpointInfo struct {
	// NodeName and NodeNamespace are "_NODE_NAME_UNKNOWN_" and
	// "_NODE_NAMESPACE_UNKNOWN_" when no ros_discovery_info names the
	// endpoint.
	NodeName, NodeNamespace string
	// TopicType is the ROS type ("std_msgs/msg/String").
	TopicType string
	// TopicTypeHash is the advertised REP-2011 hash ("" if none: Humble or
	// non-ROS peers).
	TopicTypeHash string
	Kind          EndpointKind
	// GID is the DDS GUID of the reader or writer.
	GID dds.GUID
	QoS QoS
}

// gEndpoint is a reader or writer seen by built-in discovery.
type gEndpoint struct {
	kind       dds.EntityKind
	key, part  dds.GUID
	topic, typ string
	qos        dds.QoS
	userData   []byte
	local      bool
}

// graph is the graph cache: built-in discovery plus ros_discovery_info.
type graph struct {
	self dds.GUID

	mu           sync.Mutex
	participants map[dds.GUID]string // gid -> enclave
	infos        map[dds.GUID]participantInfo
	endpoints    map[dds.GUID]*gEndpoint
	changed      chan struct{}

	malformedInfo atomic.Uint64
}

func newGraph(self dds.GUID) *graph {
	return &graph{
		self:         self,
		participants: map[dds.GUID]string{},
		infos:        map[dds.GUID]participantInfo{},
		endpoints:    map[dds.GUID]*gEndpoint{},
		changed:      make(chan struct{}),
	}
}

// notifyLocked wakes everyone waiting for a graph change. g.mu is held.
func (g *graph) notifyLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

func (g *graph) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.notifyLocked()
}

// onDiscovery handles a built-in discovery event (receive goroutine).
func (g *graph) onDiscovery(ev dds.DiscoveryEvent) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch ev.Kind {
	case dds.KindParticipant:
		if ev.Alive {
			ud := parseUserData(ev.UserData)
			if enclave, ok := ud["enclave"]; ok {
				g.participants[ev.Key] = enclave
			}
		} else {
			delete(g.participants, ev.Key)
			delete(g.infos, ev.Key)
			for k, e := range g.endpoints {
				if e.part == ev.Key {
					delete(g.endpoints, k)
				}
			}
		}
	case dds.KindWriter, dds.KindReader:
		if ev.Alive {
			g.endpoints[ev.Key] = &gEndpoint{
				kind: ev.Kind, key: ev.Key, part: ev.ParticipantKey,
				topic: ev.TopicName, typ: ev.TypeName, qos: ev.QoS,
				userData: append([]byte(nil), ev.UserData...), local: ev.Local,
			}
		} else {
			delete(g.endpoints, ev.Key)
		}
	}
	g.notifyLocked()
}

// matchChanged wakes the graph's waiters after a reader or writer of this
// context matched a peer or lost one (receive goroutine): conditions on
// matched counts (SubscriptionCount, PublisherCount, ServiceIsReady) are
// evaluated again once the match is in place.
func (g *graph) matchChanged() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.notifyLocked()
}

// setParticipantInfo replaces the node list of one participant.
func (g *graph) setParticipantInfo(info participantInfo) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.infos[info.GID] = info
	g.notifyLocked()
}

// infoPending reports whether a peer whose dialect is fixed (its
// ros_discovery_info writer is not marked dialect=auto) has a
// ros_discovery_info writer but has not sent a sample yet.
func (g *graph) infoPending() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, e := range g.endpoints {
		if e.kind != dds.KindWriter || e.local || e.topic != discoveryInfoTopic || isAutoDialect(e.userData) {
			continue
		}
		if _, ok := g.infos[e.part]; !ok {
			return true
		}
	}
	return false
}

// changedChan returns the channel closed at the next change.
func (g *graph) changedChan() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.changed
}

// countEndpoints counts discovered endpoints of a kind on a DDS topic.
func (g *graph) countEndpoints(ddsTopic string, kind dds.EntityKind) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, e := range g.endpoints {
		if e.kind == kind && e.topic == ddsTopic {
			n++
		}
	}
	return n
}

// nodeOf finds the node that lists gid among its readers or writers. g.mu
// is held.
func (g *graph) nodeOfLocked(gid dds.GUID, kind dds.EntityKind) (NodeName, bool) {
	for _, info := range g.infos {
		for _, n := range info.Nodes {
			list := n.Readers
			if kind == dds.KindWriter {
				list = n.Writers
			}
			for _, x := range list {
				if x == gid {
					return NodeName{Name: n.Name, Namespace: n.Namespace}, true
				}
			}
		}
	}
	return NodeName{}, false
}

// demangleTopic returns the ROS topic name of a DDS topic ("rt/x" -> "/x").
func demangleTopic(ddsName string) (string, bool) {
	if strings.HasPrefix(ddsName, topicPrefix+"/") {
		return ddsName[len(topicPrefix):], true
	}
	return "", false
}

// demangleService returns the ROS service name of a request or reply DDS
// topic ("rq/xRequest" or "rr/xReply" -> "/x").
func demangleService(ddsName string) (string, bool) {
	switch {
	case strings.HasPrefix(ddsName, requestPrefix+"/") && strings.HasSuffix(ddsName, requestSuffix):
		return ddsName[len(requestPrefix) : len(ddsName)-len(requestSuffix)], true
	case strings.HasPrefix(ddsName, replyPrefix+"/") && strings.HasSuffix(ddsName, replySuffix):
		return ddsName[len(replyPrefix) : len(ddsName)-len(replySuffix)], true
	}
	return "", false
}

// demangleType turns a DDS type name into the ROS one (unchanged if it is
// not a ROS type).
func demangleType(ddsType string) string {
	if t, ok := rosidl.ROSTypeName(ddsType); ok {
		return t
	}
	return ddsType
}

// demangleServiceType strips the _Request/_Response suffix of a demangled
// request or reply type.
func demangleServiceType(ddsType string) string {
	t := demangleType(ddsType)
	for _, suf := range []string{"_Request", "_Response"} {
		if strings.HasSuffix(t, suf) {
			return strings.TrimSuffix(t, suf)
		}
	}
	return t
}

// collect builds sorted NameAndTypes from name -> set of types.
func collect(m map[string]map[string]bool) []NameAndTypes {
	out := make([]NameAndTypes, 0, len(m))
	for name, types := range m {
		nt := NameAndTypes{Name: name}
		for t := range types {
			nt.Types = append(nt.Types, t)
		}
		sort.Strings(nt.Types)
		out = append(out, nt)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func add(m map[string]map[string]bool, name, typ string) {
	if m[name] == nil {
		m[name] = map[string]bool{}
	}
	m[name][typ] = true
}

// IsHiddenName reports whether a topic or service name has a token starting
// with '_' (hidden from ros2 tools unless asked for).
func IsHiddenName(name string) bool {
	for _, tok := range strings.Split(name, "/") {
		if strings.HasPrefix(tok, "_") {
			return true
		}
	}
	return false
}

// ---- public graph queries (on Context) ----

// NodeNames returns every node of the ROS graph known from
// ros_discovery_info (this process's nodes included), sorted by fully
// qualified name.
func (c *Context) NodeNames() []NodeName {
	g := c.graph
	g.mu.Lock()
	var out []NodeName
	for _, info := range g.infos {
		for _, n := range info.Nodes {
			out = append(out, NodeName{Name: n.Name, Namespace: n.Namespace})
		}
	}
	g.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].FullyQualifiedName() < out[j].FullyQualifiedName() })
	return out
}

// TopicNamesAndTypes returns every ROS topic (DDS "rt/" topics) with its
// types, sorted by name. Hidden topics are included (see IsHiddenName).
func (c *Context) TopicNamesAndTypes() []NameAndTypes {
	g := c.graph
	g.mu.Lock()
	m := map[string]map[string]bool{}
	for _, e := range g.endpoints {
		if name, ok := demangleTopic(e.topic); ok {
			add(m, name, demangleType(e.typ))
		}
	}
	g.mu.Unlock()
	return collect(m)
}

// ServiceNamesAndTypes returns every ROS service (from "rq/…Request" and
// "rr/…Reply" endpoints) with its types ("pkg/srv/Name"), sorted by name.
func (c *Context) ServiceNamesAndTypes() []NameAndTypes {
	g := c.graph
	g.mu.Lock()
	m := map[string]map[string]bool{}
	for _, e := range g.endpoints {
		if name, ok := demangleService(e.topic); ok {
			add(m, name, demangleServiceType(e.typ))
		}
	}
	g.mu.Unlock()
	return collect(m)
}

// PublishersInfo returns the publishers on a fully qualified topic name
// ("/chatter"), sorted by node FQN.
func (c *Context) PublishersInfo(topic string) []EndpointInfo {
	return c.endpointsInfo(topic, dds.KindWriter)
}

// SubscriptionsInfo returns the subscriptions on a fully qualified topic
// name, sorted by node FQN.
func (c *Context) SubscriptionsInfo(topic string) []EndpointInfo {
	return c.endpointsInfo(topic, dds.KindReader)
}

func (c *Context) endpointsInfo(topic string, kind dds.EntityKind) []EndpointInfo {
	g := c.graph
	g.mu.Lock()
	var out []EndpointInfo
	for _, e := range g.endpoints {
		if e.kind != kind || e.topic != topicPrefix+topic {
			continue
		}
		ei := EndpointInfo{
			NodeName: unknownNode, NodeNamespace: unknownNodeNS,
			TopicType:     demangleType(e.typ),
			TopicTypeHash: parseUserData(e.userData)["typehash"],
			GID:           e.key,
			QoS:           qosFromDDS(e.qos),
		}
		if kind == dds.KindReader {
			ei.Kind = EndpointSubscription
		}
		if n, ok := g.nodeOfLocked(e.key, kind); ok {
			ei.NodeName, ei.NodeNamespace = n.Name, n.Namespace
		}
		out = append(out, ei)
	}
	g.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := FullyQualifiedNodeName(out[i].NodeNamespace, out[i].NodeName), FullyQualifiedNodeName(out[j].NodeNamespace, out[j].NodeName)
		if a != b {
			return a < b
		}
		return string(out[i].GID[:]) < string(out[j].GID[:])
	})
	return out
}

// CountPublishers returns the number of writers on a fully qualified topic.
func (c *Context) CountPublishers(topic string) int {
	return c.graph.countEndpoints(topicPrefix+topic, dds.KindWriter)
}

// CountSubscribers returns the number of readers on a fully qualified topic.
func (c *Context) CountSubscribers(topic string) int {
	return c.graph.countEndpoints(topicPrefix+topic, dds.KindReader)
}

// byNode collects the names and types of a node's endpoints: kind selects
// the node's readers or writers, demangle maps a DDS topic to a ROS name
// (false = skip) and typ maps the DDS type.
func (c *Context) byNode(name, namespace string, kind dds.EntityKind, demangle func(string) (string, bool), typ func(string) string) ([]NameAndTypes, error) {
	namespace = NormalizeNamespace(namespace)
	g := c.graph
	g.mu.Lock()
	defer g.mu.Unlock()
	var gids []dds.GUID
	found := false
	for _, info := range g.infos {
		for _, n := range info.Nodes {
			if n.Name == name && n.Namespace == namespace {
				found = true
				if kind == dds.KindWriter {
					gids = append(gids, n.Writers...)
				} else {
					gids = append(gids, n.Readers...)
				}
			}
		}
	}
	if !found {
		return nil, fmt.Errorf(nodeNotFoundFn, FullyQualifiedNodeName(namespace, name))
	}
	m := map[string]map[string]bool{}
	for _, gid := range gids {
		e, ok := g.endpoints[gid]
		if !ok || e.kind != kind {
			continue
		}
		if n, ok := demangle(e.topic); ok {
			add(m, n, typ(e.typ))
		}
	}
	return collect(m), nil
}

func requestTopic(ddsName string) (string, bool) {
	if strings.HasPrefix(ddsName, requestPrefix+"/") {
		return demangleService(ddsName)
	}
	return "", false
}

// PublisherNamesAndTypesByNode lists the topics a node publishes.
func (c *Context) PublisherNamesAndTypesByNode(name, namespace string) ([]NameAndTypes, error) {
	return c.byNode(name, namespace, dds.KindWriter, demangleTopic, demangleType)
}

// SubscriberNamesAndTypesByNode lists the topics a node subscribes to.
func (c *Context) SubscriberNamesAndTypesByNode(name, namespace string) ([]NameAndTypes, error) {
	return c.byNode(name, namespace, dds.KindReader, demangleTopic, demangleType)
}

// ServiceNamesAndTypesByNode lists the services a node serves (its request
// readers).
func (c *Context) ServiceNamesAndTypesByNode(name, namespace string) ([]NameAndTypes, error) {
	return c.byNode(name, namespace, dds.KindReader, requestTopic, demangleServiceType)
}

// ClientNamesAndTypesByNode lists the services a node is a client of (its
// request writers).
func (c *Context) ClientNamesAndTypesByNode(name, namespace string) ([]NameAndTypes, error) {
	return c.byNode(name, namespace, dds.KindWriter, requestTopic, demangleServiceType)
}

// GraphChanged returns a channel that is closed at the next change of the
// graph cache (an endpoint, participant or node appearing or leaving) or
// of the matches of this context's own publishers, subscriptions, clients
// and services (a peer endpoint matched or lost). Call it again after each
// wake-up.
//
// A peer endpoint appears in the graph cache before it is matched with
// ours, so a condition on matched counts may be false at the discovery
// event and become true only at the match event that follows it.
func (c *Context) GraphChanged() <-chan struct{} { return c.graph.changedChan() }

// WaitForGraph blocks until cond returns true, evaluating it now and after
// every graph change (see GraphChanged: matches included, so cond may test
// SubscriptionCount or PublisherCount), or until ctx is done (returns
// ctx.Err()) or the Context is closed (ErrClosed).
func (c *Context) WaitForGraph(ctx context.Context, cond func() bool) error {
	for {
		ch := c.GraphChanged()
		if cond() {
			return nil
		}
		c.beforeWait()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.done:
			c.mu.Lock()
			closed := c.closed
			c.mu.Unlock()
			if closed {
				return ErrClosed
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// MalformedDiscoveryInfo returns how many ros_discovery_info samples could
// not be decoded (for example from a peer of the other distro).
func (c *Context) MalformedDiscoveryInfo() uint64 { return c.graph.malformedInfo.Load() }

// Participant is a ROS participant of the graph (a DDS participant that
// announced a ROS enclave), as `fsmnodes doctor` reports it.
type Participant struct {
	// GUID is the participant's DDS GUID; its first 12 bytes (the prefix)
	// are shared by every reader and writer of the participant.
	GUID dds.GUID
	// Enclave is the enclave of its USER_DATA ("/" by default).
	Enclave string
	// Self is true for this Context's own participant.
	Self bool
	// Nodes are its nodes, from its ros_discovery_info.
	Nodes []NodeName
	// Dialect is the wire dialect its endpoints show: Jazzy when any of
	// them carries a REP-2011 type hash in its USER_DATA (every Jazzy
	// endpoint does, ros_discovery_info's included), Humble when it has
	// endpoints and none does; unknown (-1) before any endpoint is seen.
	Dialect Distro
	// Endpoints is the number of its readers and writers seen; Services
	// how many of them are request or reply endpoints of services (and
	// actions).
	Endpoints, Services int
}

// DialectUnknown is Participant.Dialect before any endpoint is seen.
const DialectUnknown Distro = -1

// Participants returns the ROS participants of the graph (this Context's
// own included), sorted by GUID.
func (c *Context) Participants() []Participant {
	g := c.graph
	g.mu.Lock()
	defer g.mu.Unlock()
	byGID := map[dds.GUID]*Participant{}
	for gid, enclave := range g.participants {
		byGID[gid] = &Participant{GUID: gid, Enclave: enclave, Self: gid == g.self, Dialect: DialectUnknown}
	}
	hashed := map[dds.GUID]bool{}
	for _, e := range g.endpoints {
		p := byGID[e.part]
		if p == nil {
			continue
		}
		p.Endpoints++
		if strings.HasPrefix(e.topic, "rq/") || strings.HasPrefix(e.topic, "rr/") {
			p.Services++
		}
		if _, ok := parseUserData(e.userData)["typehash"]; ok {
			hashed[e.part] = true
		}
	}
	out := make([]Participant, 0, len(byGID))
	for gid, p := range byGID {
		if info, ok := g.infos[gid]; ok {
			for _, n := range info.Nodes {
				p.Nodes = append(p.Nodes, NodeName{Name: n.Name, Namespace: n.Namespace})
			}
		}
		switch {
		case hashed[gid]:
			p.Dialect = Jazzy
		case p.Endpoints > 0:
			p.Dialect = Humble
		}
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].GUID[:], out[j].GUID[:]) < 0 })
	return out
}
