package ros

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
	rcl_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
	tdi_srv "github.com/fsmnodes/fsmnodes/msgs/type_description_interfaces/srv"
)

// domainTypeDesc is this file's ROS_DOMAIN_ID (the type description work
// uses 100-104; test/e2e uses 101 and 102).
const stringHash = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"

func typeDescReq(name, hash string, sources bool) *tdi_srv.GetTypeDescription_Request {
	return &tdi_srv.GetTypeDescription_Request{TypeName: name, TypeHash: hash, IncludeTypeSources: sources}
}

// TestGetTypeDescriptionHandler drives the handler directly with the
// types of a node's publisher and client, wrong input, and a type that
// stops being used when its only publisher closes.
func TestGetTypeDescriptionHandler(t *testing.T) {
	domainTypeDesc := testenv.Domain(t)
	c := newTestContext(t, domainTypeDesc)
	n := mustNode(t, c, "typedesc_handler", "/")
	pub, err := NewPublisher[std_msgs_msg.Header](n, "hdr", QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewClient(n, "set", std_srvs_srv.SetBool); err != nil {
		t.Fatal(err)
	}

	// A message with a reference: Header -> builtin_interfaces/msg/Time.
	hdr := std_msgs_msg.Header_TypeInfo
	resp := n.getTypeDescription(typeDescReq(hdr.Name, hdr.Hash, true))
	if !resp.Successful || resp.FailureReason != "" {
		t.Fatalf("Header: %+v", resp)
	}
	td := resp.TypeDescription
	if td.TypeDescription.TypeName != hdr.Name || len(td.TypeDescription.Fields) != 2 ||
		td.TypeDescription.Fields[0].Name != "stamp" || td.TypeDescription.Fields[0].Type.TypeId != 1 ||
		td.TypeDescription.Fields[0].Type.NestedTypeName != "builtin_interfaces/msg/Time" ||
		td.TypeDescription.Fields[1].Name != "frame_id" || td.TypeDescription.Fields[1].Type.TypeId != 17 {
		t.Errorf("Header description %+v", td.TypeDescription)
	}
	if len(td.ReferencedTypeDescriptions) != 1 || td.ReferencedTypeDescriptions[0].TypeName != "builtin_interfaces/msg/Time" {
		t.Errorf("Header references %+v", td.ReferencedTypeDescriptions)
	}
	if len(resp.TypeSources) != 2 || resp.TypeSources[0].TypeName != hdr.Name || resp.TypeSources[0].Encoding != "msg" ||
		resp.TypeSources[0].RawFileContents != hdr.Definition || resp.TypeSources[1].TypeName != "builtin_interfaces/msg/Time" {
		t.Errorf("Header sources %+v", resp.TypeSources)
	}
	// The response is a valid message (bounded type names).
	if err := resp.Validate(); err != nil {
		t.Error(err)
	}

	// Without sources; an empty type_name is accepted as by rcl; the hash
	// may be upper case.
	resp = n.getTypeDescription(typeDescReq("", "RIHS01_"+strings.ToUpper(hdr.Hash[7:]), false))
	if !resp.Successful || len(resp.TypeSources) != 0 || resp.TypeDescription.TypeDescription.TypeName != hdr.Name {
		t.Errorf("Header without sources: %+v", resp)
	}

	// The client's service type and its halves.
	st := std_srvs_srv.SetBool_ServiceType
	resp = n.getTypeDescription(typeDescReq(st.Name, st.Hash, true))
	if !resp.Successful || resp.TypeDescription.TypeDescription.TypeName != st.Name ||
		len(resp.TypeSources) != 6 || resp.TypeSources[0].Encoding != "srv" || resp.TypeSources[0].RawFileContents != st.Definition {
		t.Errorf("SetBool: %+v", resp)
	}
	for _, half := range []string{st.Request.Hash, st.Response.Hash} {
		if r := n.getTypeDescription(typeDescReq("", half, true)); !r.Successful {
			t.Errorf("SetBool half %s: %+v", half, r)
		}
	}
	// Extension types: /rosout and /parameter_events publishers.
	for _, h := range []string{rcl_interfaces_msg.Log_TypeInfo.Hash, rcl_interfaces_msg.ParameterEvent_TypeInfo.Hash} {
		if r := n.getTypeDescription(typeDescReq("", h, false)); !r.Successful {
			t.Errorf("extension type %s: %s", h, r.FailureReason)
		}
	}

	// Failures.
	bad := []struct {
		name, hash, reason string
	}{
		{"std_msgs/msg/String", stringHash, typeDescNotInUse},
		{"", "RIHS01_" + strings.Repeat("0", 64), typeDescNotInUse},
		{"", "", typeDescBadHash},
		{"", "RIHS01_xyz", typeDescBadHash},
		{"", "RIHS02_" + hdr.Hash[7:], typeDescBadHash},
		{"", hdr.Hash + "0", typeDescBadHash},
		{"", "RIHS01_" + strings.Repeat("g", 64), typeDescBadHash},
		{"", "\x00\xff" + strings.Repeat("é", 40), typeDescBadHash},
		{"std_msgs/msg/String", hdr.Hash, "does not match"},
	}
	for _, b := range bad {
		r := n.getTypeDescription(typeDescReq(b.name, b.hash, true))
		if r.Successful || !strings.Contains(r.FailureReason, b.reason) || len(r.TypeSources) != 0 {
			t.Errorf("(%q, %q): successful=%v reason %q, want %q", b.name, b.hash, r.Successful, r.FailureReason, b.reason)
		}
	}

	// Closing the only user of a type removes it from the cache.
	if err := pub.Close(); err != nil {
		t.Fatal(err)
	}
	if r := n.getTypeDescription(typeDescReq("", hdr.Hash, true)); r.Successful || r.FailureReason != typeDescNotInUse {
		t.Errorf("after close: %+v", r)
	}
	if _, ok := n.usedTypeHashes()[hdr.Hash]; ok {
		t.Error("Header still listed after its publisher closed")
	}
	if name := n.usedTypeHashes()[st.Hash]; name != st.Name {
		t.Errorf("SetBool listed as %q", name)
	}
}

// An action server and an action client register the action type itself,
// as rcl_action does, and drop it when they close.
func TestGetTypeDescriptionActionType(t *testing.T) {
	domainTypeDesc := testenv.Domain(t)
	c := newTestContext(t, domainTypeDesc)
	at := nav2_msgs_action.NavigateToPose_ActionType
	if at.Desc == nil || at.Hash == "" {
		t.Fatal("NavigateToPose has no generated description")
	}
	check := func(n *Node, what string) {
		t.Helper()
		r := n.getTypeDescription(typeDescReq(at.Name, at.Hash, true))
		if !r.Successful || r.TypeDescription.TypeDescription.TypeName != at.Name {
			t.Fatalf("%s: %+v", what, r)
		}
		if len(r.TypeSources) == 0 || r.TypeSources[0].Encoding != "action" || r.TypeSources[0].RawFileContents != at.Definition {
			t.Errorf("%s: sources %+v", what, r.TypeSources)
		}
	}
	srvNode := mustNode(t, c, "typedesc_action_server", "/")
	testNavServer(t, srvNode, nil, nil)
	check(srvNode, "server")

	cliNode := mustNode(t, c, "typedesc_action_client", "/")
	cli, err := NewActionClient(cliNode, "/navigate_to_pose", nav2_msgs_action.NavigateToPose)
	if err != nil {
		t.Fatal(err)
	}
	check(cliNode, "client")
	if err := cli.Close(); err != nil {
		t.Fatal(err)
	}
	if r := cliNode.getTypeDescription(typeDescReq("", at.Hash, false)); r.Successful || r.FailureReason != typeDescNotInUse {
		t.Errorf("after the client closed: %+v", r)
	}
}

// TestGetTypeDescriptionOverDDS calls ~/get_type_description of a node in
// another context and checks the parameter that controls the service.
func TestGetTypeDescriptionOverDDS(t *testing.T) {
	domainTypeDesc := testenv.Domain(t)
	c1 := newTestContext(t, domainTypeDesc)
	c2 := newTestContext(t, domainTypeDesc)
	srvNode := mustNode(t, c1, "typedesc_talker", "/td")
	if _, err := NewPublisher[std_msgs_msg.String](srvNode, "chatter", QoSDefault); err != nil {
		t.Fatal(err)
	}
	if on, err := srvNode.ParamBool(startTypeDescriptionParam); err != nil || !on {
		t.Fatalf("%s = %v, %v", startTypeDescriptionParam, on, err)
	}
	if err := srvNode.SetParameter(startTypeDescriptionParam, false); !errors.Is(err, param.ErrReadOnly) {
		t.Errorf("setting the read-only parameter: %v", err)
	}
	d, err := srvNode.DescribeParameter(startTypeDescriptionParam)
	if err != nil || !d.ReadOnly || d.Type != param.TypeBool {
		t.Errorf("descriptor %+v, %v", d, err)
	}

	caller := mustNode(t, c2, "typedesc_caller", "/")
	cl, err := NewClient(caller, "/td/typedesc_talker/get_type_description", tdi_srv.GetTypeDescription)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	if err := cl.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	resp, err := cl.Call(ctx, typeDescReq("std_msgs/msg/String", stringHash, true))
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Successful || resp.TypeDescription.TypeDescription.TypeName != "std_msgs/msg/String" ||
		len(resp.TypeSources) != 1 || resp.TypeSources[0].RawFileContents != "string data\n" {
		t.Errorf("String over DDS: %+v", resp)
	}
	resp, err = cl.Call(ctx, typeDescReq("", "RIHS01_"+strings.Repeat("ab", 32), true))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Successful || resp.FailureReason != typeDescNotInUse {
		t.Errorf("unknown hash over DDS: %+v", resp)
	}
}

// TestTypeDescriptionServiceDisabled: -p start_type_description_service:=false
// at startup means no service (and the parameter reads false).
func TestTypeDescriptionServiceDisabled(t *testing.T) {
	domainTypeDesc := testenv.Domain(t)
	c := newTestContext(t, domainTypeDesc, "--ros-args", "-p", "start_type_description_service:=false")
	n := mustNode(t, c, "typedesc_off", "/")
	if on, err := n.ParamBool(startTypeDescriptionParam); err != nil || on {
		t.Fatalf("%s = %v, %v", startTypeDescriptionParam, on, err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	services := 0
	for _, e := range n.entities {
		if s, ok := e.(*Service); ok {
			services++
			if strings.HasSuffix(s.name, "/get_type_description") {
				t.Errorf("service %s exists", s.name)
			}
		}
	}
	if services != 6 { // the parameter services
		t.Errorf("%d services, want the 6 parameter services", services)
	}
}

// TestTypeDescriptionHumble: Humble nodes have neither the parameter nor
// the service.
func TestTypeDescriptionHumble(t *testing.T) {
	domainTypeDesc := testenv.Domain(t)
	domain := uint32(domainTypeDesc)
	c, err := NewContext(ContextOptions{DomainID: &domain, Distro: "humble", Getenv: testEnv, NoSignals: true, LogOutput: testenv.LogWriter{T: t}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n := mustNode(t, c, "typedesc_humble", "/")
	if n.HasParameter(startTypeDescriptionParam) {
		t.Errorf("Humble node declares %s", startTypeDescriptionParam)
	}
	if !n.HasParameter("use_sim_time") {
		t.Error("Humble node lacks use_sim_time")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, e := range n.entities {
		if s, ok := e.(*Service); ok && strings.HasSuffix(s.name, "/get_type_description") {
			t.Errorf("Humble node offers %s", s.name)
		}
	}
}
