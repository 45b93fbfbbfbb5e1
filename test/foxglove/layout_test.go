package foxglovetest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fsmnodes/fsmnodes/internal/foxglove"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/msgs"
)

const layoutFile = "../../docs/foxglove-layout.json"

type layoutDoc struct {
	ConfigByID map[string]json.RawMessage `json:"configById"`
	Layout     any                        `json:"layout"`
}

// panelIDs collects the panel ids a layout tree names, following tabs.
func panelIDs(t *testing.T, doc *layoutDoc, node any, out map[string]bool) {
	switch n := node.(type) {
	case string:
		if out[n] {
			t.Errorf("panel %s appears twice in the layout", n)
		}
		out[n] = true
		if strings.HasPrefix(n, "Tab!") {
			var tab struct {
				Tabs []struct {
					Title  string `json:"title"`
					Layout any    `json:"layout"`
				} `json:"tabs"`
			}
			if err := json.Unmarshal(doc.ConfigByID[n], &tab); err != nil || len(tab.Tabs) == 0 {
				t.Errorf("tab panel %s: %v", n, err)
			}
			for _, tb := range tab.Tabs {
				panelIDs(t, doc, tb.Layout, out)
			}
		}
	case map[string]any:
		if d := n["direction"]; d != "row" && d != "column" {
			t.Errorf("split with direction %v", d)
		}
		if p, ok := n["splitPercentage"].(float64); ok && (p <= 0 || p >= 100) {
			t.Errorf("split percentage %v", p)
		}
		panelIDs(t, doc, n["first"], out)
		panelIDs(t, doc, n["second"], out)
	default:
		t.Errorf("layout node %T (%v)", node, node)
	}
}

// layoutRefs lists what the panels of the layout need from the bridge.
type layoutRefs struct {
	topics   map[string]string   // topic -> required schema ("" for any)
	paths    map[string][]string // message path -> panels
	services map[string]string   // service -> request payload (JSON)
}

func readLayout(t *testing.T) (*layoutDoc, layoutRefs) {
	t.Helper()
	b, err := os.ReadFile(layoutFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc layoutDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", layoutFile, err)
	}
	ids := map[string]bool{}
	panelIDs(t, &doc, doc.Layout, ids)
	for id := range doc.ConfigByID {
		if !ids[id] {
			t.Errorf("panel %s is configured but not in the layout", id)
		}
	}
	for id := range ids {
		if _, ok := doc.ConfigByID[id]; !ok {
			t.Errorf("panel %s is in the layout but has no configuration", id)
		}
	}
	refs := layoutRefs{topics: map[string]string{}, paths: map[string][]string{}, services: map[string]string{}}
	for id, raw := range doc.ConfigByID {
		kind, _, _ := strings.Cut(id, "!")
		var c struct {
			Topics map[string]struct {
				Visible bool `json:"visible"`
			} `json:"topics"`
			Layers map[string]struct {
				SourceType string `json:"sourceType"`
				Topic      string `json:"topic"`
			} `json:"layers"`
			Publish struct {
				Type      string `json:"type"`
				PoseTopic string `json:"poseTopic"`
			} `json:"publish"`
			Paths []struct {
				Value string `json:"value"`
			} `json:"paths"`
			TopicPath      string `json:"topicPath"`
			Topic          string `json:"topic"`
			TopicToRender  string `json:"topicToRender"`
			ServiceName    string `json:"serviceName"`
			RequestPayload string `json:"requestPayload"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Errorf("panel %s: %v", id, err)
			continue
		}
		for topic := range c.Topics {
			refs.topics[topic] = ""
		}
		for _, l := range c.Layers {
			if l.SourceType == "topic" {
				refs.topics[l.Topic] = "std_msgs/msg/String"
			}
		}
		switch kind {
		case "3D":
			// The map's publish tool sends RSM simple goals.
			if c.Publish.Type == "pose" {
				refs.topics[c.Publish.PoseTopic] = "geometry_msgs/msg/PoseStamped"
			}
		case "Plot", "StateTransitions":
			for _, p := range c.Paths {
				refs.paths[p.Value] = append(refs.paths[p.Value], id)
			}
		case "RawMessages":
			refs.paths[c.TopicPath] = append(refs.paths[c.TopicPath], id)
		case "Teleop":
			refs.topics[c.Topic] = "geometry_msgs/msg/Twist"
		case "RosOut":
			refs.topics[c.TopicToRender] = "rcl_interfaces/msg/Log"
		case "DiagnosticSummary":
			refs.topics[c.TopicToRender] = "diagnostic_msgs/msg/DiagnosticArray"
		case "CallService":
			refs.services[c.ServiceName] = c.RequestPayload
		}
	}
	return &doc, refs
}

// fieldPath follows a Foxglove message path (".a.b[3].c") through a type.
func fieldPath(reg *rosidl.Registry, typ, path string) error {
	ti, err := reg.Message(typ)
	if err != nil || ti.Desc == nil {
		return fmt.Errorf("type %s unknown", typ)
	}
	d := ti.Desc
	index := regexp.MustCompile(`^([a-z_0-9]+)(\[\d+\])?$`)
	for _, part := range strings.Split(path, ".") {
		m := index.FindStringSubmatch(part)
		if m == nil {
			return fmt.Errorf("path element %q", part)
		}
		var f *rosidl.FieldDescription
		for i := range d.Fields {
			if d.Fields[i].Name == m[1] {
				f = &d.Fields[i]
			}
		}
		if f == nil {
			return fmt.Errorf("%s has no field %q", d.Name, m[1])
		}
		if m[2] != "" && f.TypeID < 48 {
			return fmt.Errorf("%s.%s is not an array", d.Name, m[1])
		}
		if f.TypeID%48 == 1 {
			nt, err := reg.Message(f.NestedTypeName)
			if err != nil || nt.Desc == nil {
				return fmt.Errorf("type %s unknown", f.NestedTypeName)
			}
			d = nt.Desc
		}
	}
	return nil
}

// checkPayload checks that the keys of a request payload are fields of
// the request type (recursively).
func checkPayload(reg *rosidl.Registry, d *rosidl.TypeDescription, v map[string]any) error {
	for k, x := range v {
		var f *rosidl.FieldDescription
		for i := range d.Fields {
			if d.Fields[i].Name == k {
				f = &d.Fields[i]
			}
		}
		if f == nil {
			return fmt.Errorf("%s has no field %q", d.Name, k)
		}
		if sub, ok := x.(map[string]any); ok {
			nt, err := reg.Message(f.NestedTypeName)
			if err != nil || nt.Desc == nil {
				return fmt.Errorf("%s.%s is not a message", d.Name, k)
			}
			if err := checkPayload(reg, nt.Desc, sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// The shipped Foxglove layout is consistent (every panel placed once and
// configured) and names only what the demo offers: its topics with the
// right types, message paths that exist in those types, and services whose
// request payloads have the fields of the request type.
func TestLayoutMatchesDemo(t *testing.T) {
	_, refs := readLayout(t)
	if len(refs.topics) < 10 || len(refs.paths) < 10 || len(refs.services) < 10 {
		t.Fatalf("layout references too little: %d topics, %d paths, %d services", len(refs.topics), len(refs.paths), len(refs.services))
	}
	if testing.Short() {
		t.Skip("the rest starts the whole demo")
	}
	domain := testenv.Domain(t)
	port := bridgePort(t, testenv.LaunchDemo(t, domain, "foxglove_port:=0"))

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, fmt.Sprintf("ws://127.0.0.1:%d", port), &websocket.DialOptions{Subprotocols: []string{foxglove.Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 20)
	channels := map[string]string{}
	services := map[string]string{}
	missing := func() []string {
		var out []string
		for topic := range refs.topics {
			if _, ok := channels[topic]; !ok {
				out = append(out, topic)
			}
		}
		for p := range refs.paths {
			topic, _, _ := strings.Cut(p, ".")
			if _, ok := channels[topic]; !ok {
				out = append(out, topic)
			}
		}
		for s := range refs.services {
			if _, ok := services[s]; !ok {
				out = append(out, s)
			}
		}
		sort.Strings(out)
		return out
	}
	for len(missing()) > 0 {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("the demo's bridge never advertised %v: %v", missing(), err)
		}
		if typ != websocket.MessageText {
			continue
		}
		var m struct {
			Op       string             `json:"op"`
			Channels []foxglove.Channel `json:"channels"`
			Services []foxglove.Service `json:"services"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		for _, c := range m.Channels {
			channels[c.Topic] = c.SchemaName
		}
		for _, s := range m.Services {
			services[s.Name] = s.Type
		}
	}
	reg := msgs.Registry()
	for topic, want := range refs.topics {
		if want != "" && channels[topic] != want {
			t.Errorf("layout uses %s as %s; the demo's is %s", topic, want, channels[topic])
		}
	}
	for p, panels := range refs.paths {
		topic, fields, _ := strings.Cut(p, ".")
		if fields == "" {
			continue
		}
		if err := fieldPath(reg, channels[topic], fields); err != nil {
			t.Errorf("%v: message path %s: %v", panels, p, err)
		}
	}
	for s, payload := range refs.services {
		st, err := reg.Service(services[s])
		if err != nil {
			t.Errorf("service %s: %v", s, err)
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(payload), &v); err != nil {
			t.Errorf("service %s: request payload %q: %v", s, payload, err)
			continue
		}
		if err := checkPayload(reg, st.Request.Desc, v); err != nil {
			t.Errorf("service %s: request payload: %v", s, err)
		}
	}
	t.Logf("layout checked against the demo: %d topics, %d message paths, %d services", len(refs.topics), len(refs.paths), len(refs.services))
}

// The checks above can fail: wrong fields, indexes on scalars and unknown
// payload fields are caught.
func TestLayoutCheckers(t *testing.T) {
	reg := msgs.Registry()
	for path, ok := range map[string]bool{
		"twist.twist.linear.x": true, "pose.covariance[3]": true, "twist.twist.linear.q": false,
		"header.frame_id[0]": false, "child_frame_id": true, "Pose.x": false,
	} {
		if err := fieldPath(reg, "nav_msgs/msg/Odometry", path); (err == nil) != ok {
			t.Errorf("%s: %v", path, err)
		}
	}
	st, err := reg.Service("rsm_msgs/srv/SetOperationMode")
	if err != nil {
		t.Fatal(err)
	}
	good := map[string]any{"operation_mode": map[string]any{"emergency_stop": true, "mode": 0}}
	bad := map[string]any{"operation_mode": map[string]any{"estop": true}}
	if checkPayload(reg, st.Request.Desc, good) != nil || checkPayload(reg, st.Request.Desc, bad) == nil {
		t.Error("payload check is wrong")
	}
}
