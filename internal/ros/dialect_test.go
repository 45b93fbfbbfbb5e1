package ros

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

func TestSniffParticipantInfoTellsTheLayout(t *testing.T) {
	part := guid(0x40)
	infos := []participantInfo{
		{GID: part},
		{GID: part, Nodes: []nodeEntities{{Namespace: "/", Name: "n"}}},
		{GID: part, Nodes: []nodeEntities{
			{Namespace: "/a/b", Name: "talker", Readers: []dds.GUID{guid(1)}, Writers: []dds.GUID{guid(2), guid(3)}},
			{Namespace: "/", Name: "x"},
		}},
	}
	for i, p := range infos {
		for _, d := range []Distro{Jazzy, Humble} {
			payload := encodeParticipantInfo(p, d)
			for _, prefer := range []Distro{Jazzy, Humble} {
				for _, wp := range []dds.GUID{{}, part} {
					got, gotD, ok := sniffParticipantInfo(payload, prefer, wp)
					if !ok || gotD != d || got.GID != p.GID || len(got.Nodes) != len(p.Nodes) {
						t.Errorf("info %d in %s, prefer %s, writer %v: got %+v %s %v", i, d, prefer, wp, got, gotD, ok)
					}
				}
			}
			// A sample that names another participant than its writer's is
			// not taken as this layout.
			if _, _, ok := sniffParticipantInfo(payload, d, guid(0x77)); ok {
				t.Errorf("info %d in %s: accepted for a writer of another participant", i, d)
			}
			// Padded as Cyclone may pad it: still exact.
			if _, gotD, ok := sniffParticipantInfo(append(payload, 0, 0, 0), d.other(), part); !ok || gotD != d {
				t.Errorf("info %d in %s with 3 bytes of padding: %s %v", i, d, gotD, ok)
			}
		}
	}
	// Garbage, trailing bytes and non-zero Humble Gid padding fit neither.
	bad := [][]byte{
		nil,
		{0, 1, 0, 0},
		append(encodeParticipantInfo(infos[1], Jazzy), 1, 2, 3, 4, 5, 6, 7, 8),
	}
	h := encodeParticipantInfo(infos[0], Humble)
	h[4+20] = 1 // a byte of the participant Gid's padding
	bad = append(bad, h)
	for i, b := range bad {
		if p, d, ok := sniffParticipantInfo(b, Jazzy, dds.GUID{}); ok {
			t.Errorf("bad sample %d accepted as %s: %+v", i, d, p)
		}
	}
}

func TestDialectObserve(t *testing.T) {
	type step struct {
		peer               Distro
		want               Distro
		switched, warn, ok bool // ok: something is logged
	}
	for _, tc := range []struct {
		name     string
		start    Distro
		explicit bool
		steps    []step
	}{
		{"explicit jazzy ignores a humble peer and warns once", Jazzy, true, []step{
			{peer: Jazzy, want: Jazzy},
			{peer: Humble, want: Jazzy, warn: true, ok: true},
			{peer: Humble, want: Jazzy},
		}},
		{"explicit humble warns about a jazzy peer", Humble, true, []step{
			{peer: Jazzy, want: Humble, warn: true, ok: true},
		}},
		{"auto follows the first humble peer", Jazzy, false, []step{
			{peer: Humble, want: Humble, switched: true, ok: true},
			{peer: Humble, want: Humble},
			{peer: Jazzy, want: Humble, warn: true, ok: true},
			{peer: Jazzy, want: Humble},
		}},
		{"auto follows the first jazzy peer and stays", Jazzy, false, []step{
			{peer: Jazzy, want: Jazzy, ok: true},
			{peer: Humble, want: Jazzy, warn: true, ok: true},
			{peer: Humble, want: Jazzy},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dl := newDialect(tc.start, tc.explicit, 7)
			for i, s := range tc.steps {
				ev := dl.observe(s.peer, guid(9))
				if dl.get() != s.want || ev.switched != s.switched || ev.warn != s.warn || (ev.msg != "") != s.ok {
					t.Errorf("step %d (peer %s): dialect %s, event %+v; want %s switched=%v warn=%v logged=%v",
						i, s.peer, dl.get(), ev, s.want, s.switched, s.warn, s.ok)
				}
			}
			select {
			case <-dl.decided:
				if tc.explicit {
					t.Error("an explicit dialect was marked as followed")
				}
			default:
				if !tc.explicit {
					t.Error("following a peer did not close decided")
				}
			}
		})
	}
}

// dialectEnv is a hermetic environment whose Cyclone configuration is the
// same for both distros (Humble and Jazzy read different discovery
// variables, and contexts of one process share their domain's
// configuration): discovery by unicast on localhost only, from
// CYCLONEDDS_URI, with Jazzy's range SYSTEM_DEFAULT so that Jazzy adds no
// fragment of its own (Humble has no range).
func dialectEnv(distro string) func(string) string {
	const uri = `<CycloneDDS><Domain><General><AllowMulticast>false</AllowMulticast></General>` +
		`<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex>` +
		`<Peers><Peer address="localhost"/></Peers></Discovery></Domain></CycloneDDS>`
	return func(k string) string {
		switch k {
		case "ROS_DISTRO":
			return distro
		case "CYCLONEDDS_URI":
			return uri
		case "ROS_AUTOMATIC_DISCOVERY_RANGE":
			return "SYSTEM_DEFAULT"
		}
		return ""
	}
}

func dialectContext(t *testing.T, domain uint32, distro string, log *syncBuffer) *Context {
	t.Helper()
	c, err := NewContext(ContextOptions{DomainID: &domain, Getenv: dialectEnv(distro), NoSignals: true, LogOutput: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// rawInfo reads ros_discovery_info as a peer of one distro does: every
// sample decoded in that distro's layout only. It records, per participant,
// the node names of the latest sample that decoded, and counts the others.
type rawInfo struct {
	mu     sync.Mutex
	latest map[dds.GUID][]string // participant gid -> fully qualified node names
	bad    int
}

func newRawInfo(t *testing.T, c *Context, distro Distro) *rawInfo {
	t.Helper()
	r := &rawInfo{latest: map[dds.GUID][]string{}}
	topic, err := c.Participant().Topic(discoveryInfoTopic, discoveryInfoType)
	if err != nil {
		t.Fatal(err)
	}
	q, err := QoSLatched.KeepAll().ddsQoS(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := c.Participant().NewReader(topic, q, func(batch []dds.Sample) {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, s := range batch {
			p, err := decodeParticipantInfo(s.Data, distro)
			if err != nil {
				r.bad++
				continue
			}
			names := []string{}
			for _, n := range p.Nodes {
				names = append(names, FullyQualifiedNodeName(n.Namespace, n.Name))
			}
			r.latest[p.GID] = names
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	return r
}

// has reports whether the latest sample of participant p decoded and lists
// node.
func (r *rawInfo) has(p dds.GUID, node string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.latest[p] {
		if n == node {
			return true
		}
	}
	return false
}

// A Context without ROS_DISTRO started beside Humble peers speaks Humble
// from the start: a strict Humble reader sees its node, and its node has no
// Jazzy-only ~/get_type_description.
func TestDialectFollowsHumblePeersAtStart(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	hlog, alog := &syncBuffer{}, &syncBuffer{}
	h := dialectContext(t, domain, "humble", hlog)
	mustNode(t, h, "humble_node", "/")
	raw := newRawInfo(t, h, Humble)

	// The start-up waits are stretched: on a loaded machine discovery of
	// the peer can take longer than the 150 ms/1 s NewContext gives it, and
	// what is tested here is the choice once the peer's sample is there
	// (a peer found later is TestDialectSwitchesWhenHumblePeerAppearsLater).
	a, err := NewContext(ContextOptions{DomainID: &domain, Getenv: dialectEnv(""), NoSignals: true, LogOutput: alog,
		dialectWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if a.Distro() != Humble {
		t.Fatalf("Distro after NewContext beside a Humble peer = %s; log:\n%s", a.Distro(), alog)
	}
	mustNode(t, a, "follower", "/ns")
	srvs, err := a.ServiceNamesAndTypesByNode("follower", "/ns")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range srvs {
		if strings.HasSuffix(s.Name, "/get_type_description") {
			t.Errorf("a Humble-dialect node offers %s", s.Name)
		}
	}
	testenv.WaitFor(t, failAfter, "a strict Humble reader to see /ns/follower", func() bool { return raw.has(a.GUID(), "/ns/follower") })
	if got := strings.Count(alog.String(), "ROS_DISTRO is not set: speaking humble"); got != 1 {
		t.Errorf("the choice is logged %d times, want once; log:\n%s", got, alog)
	}
	if strings.Contains(hlog.String(), "speaks") {
		t.Errorf("the Humble peer warned about the follower:\n%s", hlog)
	}
}

// A Context without ROS_DISTRO that started alone (Jazzy) switches to
// Humble when a Humble peer appears, and re-announces its nodes so that
// Humble readers decode them.
func TestDialectSwitchesWhenHumblePeerAppearsLater(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	alog := &syncBuffer{}
	a := dialectContext(t, domain, "", alog)
	if a.Distro() != Jazzy {
		t.Fatalf("alone: Distro = %s, want the Jazzy default", a.Distro())
	}
	mustNode(t, a, "early", "/")

	h := dialectContext(t, domain, "humble", &syncBuffer{})
	raw := newRawInfo(t, h, Humble)
	mustNode(t, h, "late_humble", "/")
	testenv.WaitFor(t, failAfter, "a strict Humble reader to see /early", func() bool { return raw.has(a.GUID(), "/early") })
	if a.Distro() != Humble {
		t.Errorf("Distro = %s after a Humble peer appeared", a.Distro())
	}
	// Our own graph still lists both nodes.
	waitGraph(t, a, "both nodes in the follower's graph", func() bool {
		names := a.NodeNames()
		return len(names) == 2
	})
	if !strings.Contains(alog.String(), "nodes re-announced") {
		t.Errorf("the switch is not logged:\n%s", alog)
	}
}

// Contexts that follow the domain do not follow each other: two of them
// alone stay undecided (Jazzy), and both switch when a Humble peer comes.
func TestDialectFollowersDoNotDecideForEachOther(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	a := dialectContext(t, domain, "", &syncBuffer{})
	mustNode(t, a, "a", "/")
	b := dialectContext(t, domain, "", &syncBuffer{})
	mustNode(t, b, "b", "/")
	waitGraph(t, b, "b to see a's node", func() bool { return len(b.NodeNames()) == 2 })
	for _, c := range []*Context{a, b} {
		select {
		case <-c.dialect.decided:
			t.Errorf("%s followed another follower", c.GUID())
		default:
		}
	}
	h := dialectContext(t, domain, "humble", &syncBuffer{})
	raw := newRawInfo(t, h, Humble)
	mustNode(t, h, "h", "/")
	testenv.WaitFor(t, failAfter, "both followers re-announced in Humble's layout", func() bool {
		return raw.has(a.GUID(), "/a") && raw.has(b.GUID(), "/b")
	})
}

// An explicit ROS_DISTRO always wins, with one warning about the peer.
func TestDialectExplicitDistroWins(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	h := dialectContext(t, domain, "humble", &syncBuffer{})
	mustNode(t, h, "h", "/")
	jlog := &syncBuffer{}
	j := dialectContext(t, domain, "jazzy", jlog)
	mustNode(t, j, "j", "/")
	testenv.WaitFor(t, failAfter, "a warning about the Humble peer", func() bool {
		return strings.Contains(jlog.String(), "ROS_DISTRO selects jazzy")
	})
	// It still lists the Humble node (reading either layout).
	waitGraph(t, j, "the Humble node in the Jazzy graph", func() bool { return len(j.NodeNames()) == 2 })
	if j.Distro() != Jazzy {
		t.Errorf("Distro = %s with ROS_DISTRO=jazzy", j.Distro())
	}
	if got := strings.Count(jlog.String(), "ROS_DISTRO selects"); got != 1 {
		t.Errorf("warned %d times:\n%s", got, jlog)
	}
}
