package foxglove

import (
	"encoding/json"
	"testing"
)

func TestConnectionGraph(t *testing.T) {
	h := newHarness(t, Options{})
	h.srv.SetGraph(Graph{
		Published:  map[string][]string{"/odom": {"/sim", "/sim"}, "/scan": {"/sim"}},
		Subscribed: map[string][]string{"/cmd_vel": {"/sim"}},
		Services:   map[string][]string{"/rsm/set": {"/rsm"}},
	})
	c := h.dial()
	c.expect("advertiseServices")
	c.send(map[string]any{"op": "subscribeConnectionGraph"})
	g := c.expect("connectionGraphUpdate")
	got, _ := json.Marshal(g)
	want := `{"advertisedServices":[{"name":"/rsm/set","providerIds":["/rsm"]}],"op":"connectionGraphUpdate",` +
		`"publishedTopics":[{"name":"/odom","publisherIds":["/sim"]},{"name":"/scan","publisherIds":["/sim"]}],` +
		`"removedServices":[],"removedTopics":[],"subscribedTopics":[{"name":"/cmd_vel","subscriberIds":["/sim"]}]}`
	if string(got) != want {
		t.Errorf("full graph\n got %s\nwant %s", got, want)
	}
	h.srv.SetGraph(Graph{
		Published:  map[string][]string{"/odom": {"/sim", "/other"}},
		Subscribed: map[string][]string{"/cmd_vel": {"/sim"}, "/odom": {"/bridge"}},
	})
	g = c.expect("connectionGraphUpdate")
	got, _ = json.Marshal(g)
	want = `{"advertisedServices":[],"op":"connectionGraphUpdate",` +
		`"publishedTopics":[{"name":"/odom","publisherIds":["/other","/sim"]}],` +
		`"removedServices":["/rsm/set"],"removedTopics":["/scan"],"subscribedTopics":[{"name":"/odom","subscriberIds":["/bridge"]}]}`
	if string(got) != want {
		t.Errorf("diff\n got %s\nwant %s", got, want)
	}
	c.send(map[string]any{"op": "unsubscribeConnectionGraph"})
	c.send(map[string]any{"op": "getParameters", "parameterNames": []any{}, "id": "sync"})
	c.expect("parameterValues") // the unsubscribe has been handled
	h.srv.SetGraph(Graph{})
	c.send(map[string]any{"op": "getParameters", "parameterNames": []any{}, "id": "sync2"})
	for {
		m := <-c.text
		if m["op"] == "connectionGraphUpdate" {
			t.Fatal("update after unsubscribeConnectionGraph")
		}
		if m["op"] == "parameterValues" {
			break
		}
	}
}
