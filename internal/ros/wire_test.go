package ros

import (
	"context"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// The service payload is the 16-byte {guid, seq} header followed by the
// request body, in one CDR stream (docs/wire.md#the-request-header).
func TestRequestHeaderBytes(t *testing.T) {
	h := requestHeader{GUID: 0x0102030405060708, Seq: 3}
	got := encodeWithHeader(h, &std_srvs_srv.SetBool_Request{Data: true}, nil)
	want := "00010000" + "0807060504030201" + "0300000000000000" + "01" + "000000"
	if hex.EncodeToString(got) != want {
		t.Errorf("request bytes\n got %x\nwant %s", got, want)
	}
	var back std_srvs_srv.SetBool_Request
	hb, err := decodeWithHeader(got, &back)
	if err != nil || hb != h || !back.Data {
		t.Errorf("decode = %+v %+v, %v", hb, back, err)
	}
	if _, err := decodeWithHeader(got[:12], &back); err == nil {
		t.Error("truncated header accepted")
	}
}

// endpointOn returns the discovered endpoint of kind on a DDS topic.
func endpointOn(c *Context, topic string, kind dds.EntityKind) (*gEndpoint, bool) {
	c.graph.mu.Lock()
	defer c.graph.mu.Unlock()
	for _, e := range c.graph.endpoints {
		if e.topic == topic && e.kind == kind {
			cp := *e
			return &cp, true
		}
	}
	return nil, false
}

func waitEndpoint(t *testing.T, c *Context, topic string, kind dds.EntityKind) *gEndpoint {
	t.Helper()
	var e *gEndpoint
	waitGraph(t, c, topic, func() bool {
		var ok bool
		e, ok = endpointOn(c, topic, kind)
		return ok
	})
	return e
}

// What a peer sees of our endpoints: names, types, QoS and USER_DATA as
// rmw_cyclonedds would announce them (Jazzy).
func TestAnnouncedEndpointsJazzy(t *testing.T) {
	domainWire := testenv.Domain(t)
	t.Parallel()
	c1 := newTestContext(t, domainWire)
	c2 := newTestContext(t, domainWire)
	n := mustNode(t, c1, "wire", "/w")
	if _, err := NewPublisher[std_msgs_msg.String](n, "~/chatter", QoSDefault); err != nil {
		t.Fatal(err)
	}
	srv, err := NewService(n, "srv", std_srvs_srv.SetBool, func(context.Context, *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
		return &std_srvs_srv.SetBool_Response{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}

	pub := waitEndpoint(t, c2, "rt/w/wire/chatter", dds.KindWriter)
	if pub.typ != "std_msgs::msg::dds_::String_" || string(pub.userData) != "typehash="+std_msgs_msg.String_TypeInfo.Hash+";" {
		t.Errorf("publisher endpoint %s %q", pub.typ, pub.userData)
	}
	if pub.qos.Reliability != dds.Reliable || pub.qos.Durability != dds.Volatile || pub.qos.History != dds.KeepLast || pub.qos.Depth != 10 {
		t.Errorf("publisher QoS %+v", pub.qos)
	}
	req := waitEndpoint(t, c2, "rq/w/srvRequest", dds.KindReader)
	rep := waitEndpoint(t, c2, "rr/w/srvReply", dds.KindWriter)
	id := "serviceid=" + srv.id.String() + ";"
	if string(req.userData) != id+"typehash="+std_srvs_srv.SetBool_Request_TypeInfo.Hash+";" ||
		req.typ != "std_srvs::srv::dds_::SetBool_Request_" {
		t.Errorf("request reader %s %q", req.typ, req.userData)
	}
	if string(rep.userData) != id+"typehash="+std_srvs_srv.SetBool_Response_TypeInfo.Hash+";" ||
		rep.typ != "std_srvs::srv::dds_::SetBool_Response_" {
		t.Errorf("reply writer %s %q", rep.typ, rep.userData)
	}
	if g := c1.GUID(); !strings.HasPrefix(srv.id.String(), hex.EncodeToString(g[:1])+".") {
		t.Errorf("service id %s does not start with the participant GUID prefix %s", srv.id, c1.GUID())
	}
	info := waitEndpoint(t, c2, discoveryInfoTopic, dds.KindWriter)
	if info.typ != discoveryInfoType || info.qos.Durability != dds.TransientLocal || info.qos.Depth != 1 ||
		string(info.userData) != "typehash="+discoveryInfoHash+";" {
		t.Errorf("ros_discovery_info writer %s %+v %q", info.typ, info.qos, info.userData)
	}
	infoR := waitEndpoint(t, c2, discoveryInfoTopic, dds.KindReader)
	if infoR.qos.History != dds.KeepAll || infoR.qos.Durability != dds.TransientLocal {
		t.Errorf("ros_discovery_info reader QoS %+v", infoR.qos)
	}
	c2.graph.mu.Lock()
	enclave, ok := c2.graph.participants[c1.GUID()]
	c2.graph.mu.Unlock()
	if !ok || enclave != "/" {
		t.Errorf("participant enclave %q (known %v), want /", enclave, ok)
	}
}

// Humble: no type hashes anywhere, service ids only.
func TestAnnouncedEndpointsHumble(t *testing.T) {
	domainWireHumble := testenv.Domain(t)
	t.Parallel()
	humble := func(k string) string {
		if k == "ROS_DISTRO" {
			return "humble"
		}
		return testEnv(k)
	}
	domain := uint32(domainWireHumble)
	c, err := NewContext(ContextOptions{DomainID: &domain, Getenv: humble, NoSignals: true, LogOutput: testenv.LogWriter{T: t}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Distro() != Humble {
		t.Fatalf("Distro = %v", c.Distro())
	}
	n := mustNode(t, c, "old", "")
	if _, err := NewPublisher[std_msgs_msg.String](n, "chatter", QoSDefault); err != nil {
		t.Fatal(err)
	}
	if _, err := NewClient(n, "x", std_srvs_srv.Trigger); err != nil {
		t.Fatal(err)
	}
	if pub := waitEndpoint(t, c, "rt/chatter", dds.KindWriter); len(pub.userData) != 0 {
		t.Errorf("Humble publisher USER_DATA %q, want none", pub.userData)
	}
	w := waitEndpoint(t, c, "rq/xRequest", dds.KindWriter)
	if ud := string(w.userData); !strings.HasPrefix(ud, "clientid=") || strings.Contains(ud, "typehash") {
		t.Errorf("Humble client USER_DATA %q", ud)
	}
	if info := waitEndpoint(t, c, discoveryInfoTopic, dds.KindWriter); len(info.userData) != 0 {
		t.Errorf("Humble ros_discovery_info USER_DATA %q", info.userData)
	}
}
