package foxglove

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestServiceCalls(t *testing.T) {
	h := newHarness(t, Options{ServiceWhitelist: mustWhitelist(t, "/rsm/.*")})
	h.b.call = func(ctx context.Context, svc Service, req []byte) ([]byte, error) {
		if svc.Name == "/rsm/broken" {
			return nil, errors.New("service is not available")
		}
		return append([]byte("re:"), req...), nil
	}
	h.srv.SetServices([]ServiceInfo{serviceInfo("/rsm/set"), serviceInfo("/rsm/broken"), serviceInfo("/hidden/x")})
	c := h.dial()
	adv := c.expect("advertiseServices")
	ids := map[string]uint32{}
	for _, s := range adv["services"].([]any) {
		sv := s.(map[string]any)
		ids[sv["name"].(string)] = uint32(sv["id"].(float64))
		if sv["requestSchema"] != "bool data" || sv["request"].(map[string]any)["schemaName"] != "std_srvs/srv/SetBool_Request" {
			t.Errorf("service %v lacks its schemas", sv)
		}
	}
	if len(ids) != 2 {
		t.Fatalf("advertised %v; /hidden/x is not whitelisted", ids)
	}
	c.sendBinary(callFrame(ids["/rsm/set"], 77, "cdr", []byte{0, 1, 0, 0, 1}))
	resp := c.expectBinary()
	want := AppendServiceCallResponse(nil, ids["/rsm/set"], 77, "cdr", []byte("re:\x00\x01\x00\x00\x01"))
	if !bytes.Equal(resp, want) {
		t.Errorf("response % x, want % x", resp, want)
	}
	c.sendBinary(callFrame(ids["/rsm/broken"], 78, "cdr", nil))
	f := c.expect("serviceCallFailure")
	if f["callId"].(float64) != 78 || !strings.Contains(f["message"].(string), "not available") {
		t.Errorf("failure = %v", f)
	}
	c.sendBinary(callFrame(999, 79, "cdr", nil))
	if f := c.expect("serviceCallFailure"); !strings.Contains(f["message"].(string), "does not exist") {
		t.Errorf("failure = %v", f)
	}
	c.sendBinary(callFrame(ids["/rsm/set"], 80, "json", nil))
	if f := c.expect("serviceCallFailure"); !strings.Contains(f["message"].(string), "not supported") {
		t.Errorf("failure = %v", f)
	}
	bad := callFrame(ids["/rsm/set"], 81, "cdr", nil)
	binary.LittleEndian.PutUint32(bad[9:], 1000)
	c.sendBinary(bad)
	c.expectStatus(StatusError, "encoding length 1000")
	// Services that vanish are unadvertised.
	h.srv.SetServices([]ServiceInfo{serviceInfo("/rsm/set")})
	un := c.expect("unadvertiseServices")
	if ids2 := un["serviceIds"].([]any); len(ids2) != 1 || uint32(ids2[0].(float64)) != ids["/rsm/broken"] {
		t.Errorf("unadvertiseServices = %v", un)
	}
}

// A client may not pile up calls without bound.
func TestServiceCallsBounded(t *testing.T) {
	h := newHarness(t, Options{MaxPendingCalls: 2})
	release := make(chan struct{})
	h.b.call = func(ctx context.Context, svc Service, req []byte) ([]byte, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return []byte{0, 1, 0, 0}, nil
	}
	h.srv.SetServices([]ServiceInfo{serviceInfo("/slow")})
	c := h.dial()
	adv := c.expect("advertiseServices")
	id := uint32(adv["services"].([]any)[0].(map[string]any)["id"].(float64))
	for i := range 3 {
		c.sendBinary(callFrame(id, uint32(i), "cdr", nil))
	}
	if f := c.expect("serviceCallFailure"); f["callId"].(float64) != 2 || !strings.Contains(f["message"].(string), "already pending") {
		t.Errorf("failure = %v", f)
	}
	close(release)
	for range 2 {
		if b := c.expectBinary(); b[0] != OpServiceCallResponse {
			t.Errorf("got % x", b)
		}
	}
}

func TestParameters(t *testing.T) {
	h := newHarness(t, Options{ParamWhitelist: mustWhitelist(t, "/mux\\..*")})
	h.b.params = map[string]any{"/mux.timer": 0.5, "/mux.joy": true, "/mux.blob": []byte("AB"), "/mux.ids": []int64{1, 2},
		"/secret.key": "x"}
	c := h.dial()
	c.expect("advertiseServices")
	c.send(map[string]any{"op": "getParameters", "parameterNames": []any{}, "id": "all"})
	pv := c.expect("parameterValues")
	if pv["id"] != "all" {
		t.Errorf("id = %v", pv["id"])
	}
	got, _ := json.Marshal(pv["parameters"])
	want := `[{"name":"/mux.blob","type":"byte_array","value":"QUI="},{"name":"/mux.ids","value":[1,2]},` +
		`{"name":"/mux.joy","value":true},{"name":"/mux.timer","type":"float64","value":0.5}]`
	if string(got) != want {
		t.Errorf("parameters\n got %s\nwant %s", got, want)
	}
	c.send(map[string]any{"op": "subscribeParameterUpdates", "parameterNames": []any{"/mux.timer", "/secret.key"}})
	c.send(map[string]any{"op": "setParameters", "id": "s1", "parameters": []any{
		map[string]any{"name": "/mux.timer", "value": 2, "type": "float64"},
		map[string]any{"name": "/secret.key", "value": "y"}}})
	c.expectStatus(StatusWarning, "not in param_whitelist")
	pv = c.expect("parameterValues")
	got, _ = json.Marshal(pv)
	if string(got) != `{"id":"s1","op":"parameterValues","parameters":[{"name":"/mux.timer","type":"float64","value":2}]}` {
		t.Errorf("set reply = %s", got)
	}
	if h.b.params["/secret.key"] != "x" {
		t.Error("a parameter outside the whitelist was set")
	}
	// Updates reach subscribers of the parameter only.
	h.srv.UpdateParameters([]Parameter{{Name: "/mux.joy", Value: false}, {Name: "/mux.timer", Value: 3.5}, {Name: "/secret.key", Value: "z"}})
	pv = c.expect("parameterValues")
	got, _ = json.Marshal(pv["parameters"])
	if string(got) != `[{"name":"/mux.timer","type":"float64","value":3.5}]` || pv["id"] != nil {
		t.Errorf("update = %v", pv)
	}
	c.send(map[string]any{"op": "unsubscribeParameterUpdates", "parameterNames": []any{}})
	c.send(map[string]any{"op": "getParameters", "parameterNames": []any{"/mux.joy"}, "id": "after"})
	pv = c.expect("parameterValues")
	if pv["id"] != "after" {
		t.Errorf("after unsubscribing, got %v", pv)
	}
	// An empty list subscribes to every parameter known now (whitelisted).
	c.send(map[string]any{"op": "subscribeParameterUpdates", "parameterNames": []any{}})
	waitFor(t, "the subscription to all parameters", func() bool {
		h.srv.mu.Lock()
		defer h.srv.mu.Unlock()
		for cl := range h.srv.clients {
			return len(cl.paramSubs) == 4
		}
		return false
	})
	h.srv.UpdateParameters([]Parameter{{Name: "/mux.joy", Value: true}, {Name: "/secret.key", Value: "w"}})
	pv = c.expect("parameterValues")
	got, _ = json.Marshal(pv["parameters"])
	if string(got) != `[{"name":"/mux.joy","value":true}]` {
		t.Errorf("update after subscribing to all: %s", got)
	}
	h.b.mu.Lock()
	h.b.setErr = errors.New("parameter timer: rejected by the node")
	h.b.mu.Unlock()
	c.send(map[string]any{"op": "setParameters", "parameters": []any{map[string]any{"name": "/mux.timer", "value": 1.5}}})
	c.expectStatus(StatusError, "rejected by the node")
	c.send(map[string]any{"op": "setParameters", "parameters": []any{map[string]any{"name": "/mux.timer", "value": map[string]any{"a": 1}}}})
	c.expectStatus(StatusError, "unsupported value")
}
