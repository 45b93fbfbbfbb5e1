package foxglove

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParameterJSON_RoundTripAllTypes(t *testing.T) {
	for _, tc := range []struct {
		p    Parameter
		json string
	}{
		{Parameter{Name: "/n.unset"}, `{"name":"/n.unset"}`},
		{Parameter{Name: "/n.b", Value: true}, `{"name":"/n.b","value":true}`},
		{Parameter{Name: "/n.i", Value: int64(-9007199254740993)}, `{"name":"/n.i","value":-9007199254740993}`},
		{Parameter{Name: "/n.d", Value: 2.0}, `{"name":"/n.d","value":2,"type":"float64"}`},
		{Parameter{Name: "/n.d", Value: 0.1}, `{"name":"/n.d","value":0.1,"type":"float64"}`},
		{Parameter{Name: "/n.s", Value: "héllo \"x\""}, `{"name":"/n.s","value":"héllo \"x\""}`},
		{Parameter{Name: "/n.by", Value: []byte{0, 255, 7}}, `{"name":"/n.by","value":"AP8H","type":"byte_array"}`},
		{Parameter{Name: "/n.ba", Value: []bool{true, false}}, `{"name":"/n.ba","value":[true,false]}`},
		{Parameter{Name: "/n.ia", Value: []int64{1, -2}}, `{"name":"/n.ia","value":[1,-2]}`},
		{Parameter{Name: "/n.da", Value: []float64{1, 2.5}}, `{"name":"/n.da","value":[1,2.5],"type":"float64_array"}`},
		{Parameter{Name: "/n.sa", Value: []string{"a", ""}}, `{"name":"/n.sa","value":["a",""]}`},
	} {
		got, err := json.Marshal(tc.p)
		if err != nil {
			t.Fatalf("%v: %v", tc.p, err)
		}
		if string(got) != tc.json {
			t.Errorf("marshal %v\n got %s\nwant %s", tc.p, got, tc.json)
		}
		var back Parameter
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("unmarshal %s: %v", got, err)
		}
		if !reflect.DeepEqual(back, tc.p) {
			t.Errorf("round trip of %s: %#v, want %#v", got, back, tc.p)
		}
	}
}

func TestParameterJSON_ClientForms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
		err  string
	}{
		{`{"name":"a","value":3}`, int64(3), ""},
		{`{"name":"a","value":3.0}`, 3.0, ""},
		{`{"name":"a","value":1e3}`, 1000.0, ""},
		{`{"name":"a","value":3,"type":"float64"}`, 3.0, ""},
		{`{"name":"a","value":null}`, nil, ""},
		{`{"name":"a","value":[1,2.5]}`, []float64{1, 2.5}, ""},
		{`{"name":"a","value":[1,2],"type":"float64_array"}`, []float64{1, 2}, ""},
		{`{"name":"a","value":[]}`, EmptyArray{}, ""},
		{`{"name":"a","value":[true,1]}`, nil, "mixes"},
		{`{"name":"a","value":["x",1]}`, nil, "mixes"},
		{`{"name":"a","value":[1,"x"]}`, nil, "mixes"},
		{`{"name":"a","value":[[1]]}`, nil, "booleans, numbers or strings"},
		{`{"name":"a","value":{"x":1}}`, nil, "unsupported value"},
		{`{"name":"a","value":"!!","type":"byte_array"}`, nil, "byte_array"},
		{`{"name":"a","value":"x","type":"float64"}`, nil, "not a number"},
		{`{"name":"a","value":1,"type":"int128"}`, nil, "unknown parameter type"},
		{`{"name":"a","value":99999999999999999999}`, 1e20, ""},
	} {
		var p Parameter
		err := json.Unmarshal([]byte(tc.in), &p)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(p.Value, tc.want) {
			t.Errorf("%s: value %#v, want %#v", tc.in, p.Value, tc.want)
		}
	}
	// JSON cannot carry NaN: it is sent as null rather than failing.
	got, err := json.Marshal(Parameter{Name: "x", Value: math.NaN()})
	if err != nil || string(got) != `{"name":"x","value":null,"type":"float64"}` {
		t.Errorf("NaN: %s, %v", got, err)
	}
}

func TestParseClientText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
		err  string
	}{
		{`{"op":"subscribe","subscriptions":[{"id":1,"channelId":2}]}`, &SubscribeMsg{Subscriptions: []Subscription{{1, 2}}}, ""},
		{`{"op":"unsubscribe","subscriptionIds":[1,4294967295]}`, &UnsubscribeMsg{SubscriptionIDs: []uint32{1, 4294967295}}, ""},
		{`{"op":"unsubscribe","subscriptionIds":[4294967296]}`, nil, "invalid unsubscribe"},
		{`{"op":"getParameters","parameterNames":["/a.b"],"id":"x"}`, &GetParametersMsg{Names: []string{"/a.b"}, ID: "x"}, ""},
		{`{"op":"subscribeConnectionGraph"}`, &SubscribeGraphMsg{}, ""},
		{`{"op":"unsubscribeConnectionGraph"}`, &UnsubscribeGraphMsg{}, ""},
		{`{"op":"advertise","channels":[{"id":1,"topic":"/t","encoding":"cdr","schemaName":"a/msg/B"}]}`,
			&ClientAdvertiseMsg{Channels: []ClientChannel{{ID: 1, Topic: "/t", Encoding: "cdr", SchemaName: "a/msg/B"}}}, ""},
		{`{"op":"advertise","channels":[{"id":1,"topic":"/t","encoding":"cdr"}]}`, nil, "required"},
		{`{"op":5}`, nil, "invalid JSON"},
		{`[]`, nil, "invalid JSON"},
		{`{}`, nil, `no "op"`},
		{`{"op":"fetchAsset","uri":"package://x","requestId":1}`, nil, "unrecognized"},
	} {
		got, err := ParseClientText([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %#v, %v; want %#v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseClientBinary(t *testing.T) {
	got, err := ParseClientBinary([]byte{1, 5, 0, 0, 0, 9, 9})
	if err != nil || !reflect.DeepEqual(got, &ClientMessageData{ChannelID: 5, Payload: []byte{9, 9}}) {
		t.Errorf("message data: %#v, %v", got, err)
	}
	got, err = ParseClientBinary(callFrame(3, 4, "cdr", []byte{1}))
	if err != nil || !reflect.DeepEqual(got, &ServiceCallRequest{ServiceID: 3, CallID: 4, Encoding: "cdr", Payload: []byte{1}}) {
		t.Errorf("service call: %#v, %v", got, err)
	}
	for _, bad := range [][]byte{nil, {1, 0, 0}, {2, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 'c'}, {2, 1}, {9}, callFrame(1, 1, "\xff", nil)} {
		if _, err := ParseClientBinary(bad); err == nil {
			t.Errorf("% x parsed", bad)
		}
	}
}

func TestServiceCallResponseLayout(t *testing.T) {
	got := AppendServiceCallResponse(nil, 0x01020304, 7, "cdr", []byte{0xAA})
	want := []byte{3, 4, 3, 2, 1, 7, 0, 0, 0, 3, 0, 0, 0, 'c', 'd', 'r', 0xAA}
	if !bytes.Equal(got, want) {
		t.Errorf("% x, want % x", got, want)
	}
	var h [MessageDataHeaderLen]byte
	PutMessageDataHeader(&h, 0x0A0B0C0D, 0x0102030405060708)
	if want := []byte{1, 0x0D, 0x0C, 0x0B, 0x0A, 8, 7, 6, 5, 4, 3, 2, 1}; !bytes.Equal(h[:], want) {
		t.Errorf("header % x, want % x", h, want)
	}
}

func TestSendQueue_DropsOldestDataKeepsControl(t *testing.T) {
	q := newSendQueue(3, 100, 2)
	data := func(i byte, n int) outMsg { return outMsg{payload: append([]byte{i}, make([]byte, n-1)...)} }
	for i := range byte(5) {
		q.pushData(data(i, 10))
	}
	if err := q.pushControl(outMsg{text: []byte("c1")}); err != nil {
		t.Fatal(err)
	}
	d, db, n, nb := q.stats()
	if d != 2 || db != 20 || n != 3 || nb != 30 {
		t.Errorf("stats %d %d %d %d, want 2 dropped (20 B), 3 queued (30 B)", d, db, n, nb)
	}
	// Control first, then the three newest data messages in order.
	ctx := context.Background()
	if m, _ := q.pop(ctx); string(m.text) != "c1" {
		t.Errorf("first pop %q, want the control message", m.text)
	}
	for want := byte(2); want < 5; want++ {
		if m, _ := q.pop(ctx); m.payload[0] != want {
			t.Errorf("pop %d, want %d", m.payload[0], want)
		}
	}
	// A message bigger than the byte limit replaces everything queued.
	q.pushData(data(7, 10))
	q.pushData(data(8, 150))
	if m, _ := q.pop(ctx); m.payload[0] != 8 {
		t.Errorf("big message: pop %d", m.payload[0])
	}
	// Too many control messages close the queue.
	q.pushControl(outMsg{text: []byte("a")})
	q.pushControl(outMsg{text: []byte("b")})
	if err := q.pushControl(outMsg{text: []byte("c")}); err != errQueueOverflow {
		t.Errorf("third control message: %v, want overflow", err)
	}
	if _, ok := q.pop(ctx); ok {
		t.Error("pop after overflow succeeded")
	}
}

// On a slow client the newest message of every subscription stays: a
// state published once (subscription 1) survives a flood on another
// (subscription 2), whose oldest messages go; when every waiting message
// is the newest of its subscription, the oldest goes.
func TestSendQueue_KeepsNewestOfEachSubscription(t *testing.T) {
	msg := func(sub uint32, seq byte) outMsg {
		m := outMsg{hdrLen: MessageDataHeaderLen, payload: []byte{seq, 0, 0, 0, 0, 0, 0}}
		PutMessageDataHeader(&m.hdr, sub, uint64(seq))
		return m
	}
	ctx := context.Background()
	popAll := func(q *sendQueue) (got [][2]int) {
		for q.n > 0 {
			m, _ := q.pop(ctx)
			got = append(got, [2]int{int(m.sub()), int(m.payload[0])})
		}
		return got
	}
	for _, tc := range []struct {
		name    string
		limit   int // messages
		push    [][2]int
		want    [][2]int
		dropped uint64
	}{
		{"state survives a flood", 3, [][2]int{{1, 1}, {2, 1}, {2, 2}, {2, 3}, {2, 4}, {2, 5}},
			[][2]int{{1, 1}, {2, 4}, {2, 5}}, 3},
		{"the older of a subscription goes first", 3, [][2]int{{1, 1}, {2, 1}, {1, 2}, {3, 1}},
			[][2]int{{2, 1}, {1, 2}, {3, 1}}, 1},
		{"all newest: the oldest goes", 2, [][2]int{{1, 1}, {2, 1}, {3, 1}},
			[][2]int{{2, 1}, {3, 1}}, 1},
		{"one subscription: plain drop-oldest", 2, [][2]int{{4, 1}, {4, 2}, {4, 3}},
			[][2]int{{4, 2}, {4, 3}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newSendQueue(tc.limit, 1<<20, 4)
			for _, p := range tc.push {
				q.pushData(msg(uint32(p[0]), byte(p[1])))
			}
			d, _, _, _ := q.stats()
			if got := popAll(q); fmt.Sprint(got) != fmt.Sprint(tc.want) || d != tc.dropped {
				t.Errorf("delivered %v with %d dropped, want %v with %d", got, d, tc.want, tc.dropped)
			}
			if len(q.perSub) != 0 {
				t.Errorf("per-subscription counts left after the queue emptied: %v", q.perSub)
			}
		})
	}
	// The byte limit: a flood of big messages on one subscription never
	// pushes out the small state of another.
	q := newSendQueue(1024, 100, 4)
	q.pushData(msg(1, 1))
	for i := range byte(20) {
		m := msg(2, i)
		m.payload = append(m.payload, make([]byte, 30)...)
		q.pushData(m)
	}
	if got := popAll(q); len(got) == 0 || got[0] != [2]int{1, 1} {
		t.Errorf("byte limit: delivered %v, want the state of subscription 1 first", got)
	}
}

// The fuzz targets feed client messages to the parsers the server runs
// on every frame: they must never panic, and what they accept must be
// consistent.
func FuzzParseClientText(f *testing.F) {
	for _, s := range []string{
		`{"op":"subscribe","subscriptions":[{"id":1,"channelId":2}]}`,
		`{"op":"setParameters","parameters":[{"name":"/a.b","value":[1,2.5]},{"name":"/a.c","value":"QQ==","type":"byte_array"}],"id":"x"}`,
		`{"op":"setParameters","parameters":[{"name":"/a.b","value":[]},{"name":"/a.d","value":1,"type":"float64_array"}]}`,
		`{"op":"advertise","channels":[{"id":1,"topic":"/t","encoding":"cdr","schemaName":"a/msg/B","schema":"","schemaEncoding":"ros2msg"}]}`,
		`{"op":"getParameters","parameterNames":[]}`, `{"op":"subscribeParameterUpdates","parameterNames":["x"]}`,
		`{"op":"unsubscribeConnectionGraph"}`, `{"op":"unadvertise","channelIds":[1]}`, `{`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msg, err := ParseClientText(data)
		if err != nil {
			if msg != nil {
				t.Fatalf("error %v with a message %#v", err, msg)
			}
			if !utf8.ValidString(err.Error()) && utf8.Valid(data) {
				t.Fatalf("error text is not UTF-8: %q", err)
			}
			return
		}
		if sp, ok := msg.(*SetParametersMsg); ok {
			for _, p := range sp.Parameters {
				if _, err := json.Marshal(p); err != nil && p.Value != (EmptyArray{}) {
					t.Fatalf("accepted parameter %#v cannot be written back: %v", p, err)
				}
			}
		}
	})
}

func FuzzParseClientBinary(f *testing.F) {
	f.Add([]byte{1, 5, 0, 0, 0, 0, 1, 0, 0})
	f.Add(callFrame(1, 2, "cdr", []byte{0, 1, 0, 0, 1}))
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, data []byte) {
		msg, err := ParseClientBinary(data)
		if err != nil {
			return
		}
		switch m := msg.(type) {
		case *ClientMessageData:
			if len(m.Payload) != len(data)-5 {
				t.Fatalf("payload %d bytes from a %d-byte frame", len(m.Payload), len(data))
			}
		case *ServiceCallRequest:
			if 13+len(m.Encoding)+len(m.Payload) != len(data) {
				t.Fatalf("call request parts do not add up to the frame")
			}
			if !bytes.Equal(callFrame(m.ServiceID, m.CallID, m.Encoding, m.Payload), data) {
				t.Fatal("re-encoding the request differs from the frame")
			}
		default:
			t.Fatalf("unexpected %T", msg)
		}
	})
}
