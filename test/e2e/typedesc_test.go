package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	rcl_interfaces_srv "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/srv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	tdi_srv "github.com/fsmnodes/fsmnodes/msgs/type_description_interfaces/srv"
)

const typeDescSrvType = "type_description_interfaces/srv/GetTypeDescription"

// TestTypeDescriptionService asks a separate peer process
// ("talker", publishing std_msgs/msg/String on /crosstalk) for the
// description of the type hash the graph advertises for its publisher, as
// ROS tools do, and for a type it does not use.
func TestTypeDescriptionService(t *testing.T) {
	domainTypeDesc := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process test")
	}
	t.Parallel()
	bin := buildPeer(t)
	startNodes(t, bin, domainTypeDesc, nil, "talker", "typedesc")
	c := newContext(t, domainTypeDesc, nil)

	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	// Wait until the graph shows both the publisher (with its hash) and
	// the service with its type; only the deadline fails.
	var hash string
	var svcs []ros.NameAndTypes
	if err := c.WaitForGraph(ctx, func() bool {
		hash = ""
		for _, p := range c.PublishersInfo("/crosstalk") {
			if p.NodeName == "talker" {
				hash = p.TopicTypeHash
			}
		}
		svcs, _ = c.ServiceNamesAndTypesByNode("talker", "/")
		return hash != "" && hasService(svcs, "/talker/get_type_description", typeDescSrvType)
	}); err != nil {
		t.Fatalf("waiting for the talker's publisher (hash %q) and /talker/get_type_description (services %v): %v", hash, svcs, err)
	}
	if want := std_msgs_msg.String_TypeInfo.Hash; hash != want {
		t.Fatalf("advertised hash %q, want %q", hash, want)
	}

	n, err := c.NewNode("typedesc_probe", "")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := ros.NewClient(n, "/talker/get_type_description", tdi_srv.GetTypeDescription)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	resp, err := cl.Call(ctx, &tdi_srv.GetTypeDescription_Request{TypeName: "std_msgs/msg/String", TypeHash: hash, IncludeTypeSources: true})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Successful || resp.FailureReason != "" {
		t.Fatalf("String: successful=%v reason %q", resp.Successful, resp.FailureReason)
	}
	td := resp.TypeDescription
	if td.TypeDescription.TypeName != "std_msgs/msg/String" || len(td.TypeDescription.Fields) != 1 ||
		td.TypeDescription.Fields[0].Name != "data" || td.TypeDescription.Fields[0].Type.TypeId != 17 ||
		len(td.ReferencedTypeDescriptions) != 0 {
		t.Errorf("String description %+v", td)
	}
	if len(resp.TypeSources) != 1 || resp.TypeSources[0].TypeName != "std_msgs/msg/String" ||
		resp.TypeSources[0].Encoding != "msg" || resp.TypeSources[0].RawFileContents != "string data\n" {
		t.Errorf("String sources %+v", resp.TypeSources)
	}

	// A well-formed hash of a type the node does not use, and garbage.
	for _, h := range []string{"RIHS01_" + strings.Repeat("0", 64), "not a hash", ""} {
		resp, err = cl.Call(ctx, &tdi_srv.GetTypeDescription_Request{TypeHash: h, IncludeTypeSources: true})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Successful || resp.FailureReason == "" || len(resp.TypeSources) != 0 {
			t.Errorf("hash %q: successful=%v reason %q", h, resp.Successful, resp.FailureReason)
		}
	}
	if resp.FailureReason != "Failed to parse type hash" {
		t.Errorf("empty hash: reason %q", resp.FailureReason)
	}
}

// TestTypeDescriptionServiceDisabled starts a peer "server" with
// -p start_type_description_service:=false: its parameter reads false and
// it offers no ~/get_type_description.
func TestTypeDescriptionServiceDisabled(t *testing.T) {
	domainTypeDescOff := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process test")
	}
	t.Parallel()
	bin := buildPeer(t)
	startNodes(t, bin, domainTypeDescOff, nil, "server", "--ros-args", "-p", "start_type_description_service:=false")
	c := newContext(t, domainTypeDescOff, nil)

	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	var svcs []ros.NameAndTypes
	// The node creates get_type_description (if at all) before ~/set, and a
	// participant's readers are announced in creation order, so once ~/set
	// is listed, an absent get_type_description does not exist.
	if err := c.WaitForGraph(ctx, func() bool {
		svcs, _ = c.ServiceNamesAndTypesByNode("server", "/")
		return hasService(svcs, "/server/set", "std_srvs/srv/SetBool")
	}); err != nil {
		t.Fatalf("waiting for /server/set: %v", err)
	}
	if hasService(svcs, "/server/get_type_description", typeDescSrvType) {
		t.Errorf("server offers get_type_description although disabled: %v", svcs)
	}

	n, err := c.NewNode("typedesc_param_probe", "")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := ros.NewClient(n, "/server/get_parameters", rcl_interfaces_srv.GetParameters)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	resp, err := cl.Call(ctx, &rcl_interfaces_srv.GetParameters_Request{Names: []string{"start_type_description_service"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Values) != 1 || resp.Values[0].Type != 1 || resp.Values[0].BoolValue {
		t.Errorf("start_type_description_service = %+v, want bool false", resp.Values)
	}
}

func hasService(svcs []ros.NameAndTypes, name, typ string) bool {
	for _, s := range svcs {
		if s.Name == name && slices.Contains(s.Types, typ) {
			return true
		}
	}
	return false
}
