package msgs_test

import (
	"bytes"
	"errors"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/cdr"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/msgs"
	rcl_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/msg"
	rmw_dds_common_msg "github.com/fsmnodes/fsmnodes/msgs/rmw_dds_common/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
)

// fill sets every field of v (a struct value) to pseudo-random data:
// strings of up to 3 letters, slices of up to maxLen elements.
func fill(v reflect.Value, r *rand.Rand, maxLen int) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fill(v.Field(i), r, maxLen)
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fill(v.Index(i), r, maxLen)
		}
	case reflect.Slice:
		n := r.Intn(maxLen + 1)
		if n == 0 {
			v.SetZero()
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := 0; i < n; i++ {
			fill(v.Index(i), r, maxLen)
		}
	case reflect.String:
		b := make([]byte, r.Intn(4))
		for i := range b {
			b[i] = byte('a' + r.Intn(26))
		}
		v.SetString(string(b))
	case reflect.Bool:
		v.SetBool(r.Intn(2) == 1)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(r.Int63() - r.Int63()) // truncated to the field width
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(r.Uint64()) // truncated to the field width
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(float32(r.NormFloat64() * 100)))
	}
}

// TestRoundTripAll encodes and decodes every registered type (and every
// service's event type), first with its default values, then filled with
// random data, in both byte orders.
func TestRoundTripAll(t *testing.T) {
	reg := msgs.Registry()
	r := rand.New(rand.NewSource(1))
	count := 0
	var types []*rosidl.TypeInfo
	for _, name := range reg.Names() {
		if ti, err := reg.Message(name); err == nil {
			types = append(types, ti)
		} else if s, err := reg.Service(name); err == nil && s.Event != nil {
			types = append(types, s.Event)
		}
	}
	for _, ti := range types {
		name := ti.Name
		count++
		for round := 0; round < 20; round++ {
			m := ti.New()
			if round > 0 {
				fill(reflect.ValueOf(m).Elem(), r, 3)
				if v, ok := m.(interface{ Validate() error }); ok && v.Validate() != nil {
					fill(reflect.ValueOf(m).Elem(), r, 1) // stay within bounds of 1
				}
			}
			for _, big := range []bool{false, true} {
				e := cdr.NewEncoder(nil)
				if big {
					e = cdr.NewBigEndianEncoder(nil)
				}
				m.MarshalCDR(e)
				payload := e.Bytes()
				got := ti.New()
				if err := rosidl.Unmarshal(payload, got); err != nil {
					t.Fatalf("%s round %d big=%v: %v", name, round, big, err)
				}
				if !reflect.DeepEqual(got, m) {
					t.Fatalf("%s round %d big=%v: round trip changed the value\n got %+v\nwant %+v", name, round, big, got, m)
				}
				if len(payload)%4 != 0 {
					t.Fatalf("%s: payload length %d not a multiple of 4", name, len(payload))
				}
			}
		}
	}
	if count < 100 {
		t.Errorf("only %d message types registered", count)
	}
}

func TestCloneIsDeep(t *testing.T) {
	a := &sensor_msgs_msg.JointState{Name: []string{"j1"}, Position: []float64{1}}
	b := a.Clone()
	b.Name[0] = "x"
	b.Position[0] = 2
	if a.Name[0] != "j1" || a.Position[0] != 1 {
		t.Errorf("Clone shares slices: %+v", a)
	}
	p := &rcl_interfaces_msg.ParameterEvent{NewParameters: []rcl_interfaces_msg.Parameter{
		{Name: "p", Value: rcl_interfaces_msg.ParameterValue{StringArrayValue: []string{"s"}}}}}
	q := p.Clone()
	q.NewParameters[0].Value.StringArrayValue[0] = "t"
	if p.NewParameters[0].Value.StringArrayValue[0] != "s" {
		t.Errorf("Clone shares nested slices")
	}
}

func TestDefaults(t *testing.T) {
	m := rcl_interfaces_msg.NewParameterDescriptor()
	if m.ReadOnly || m.DynamicTyping {
		t.Errorf("defaults: %+v", m)
	}
	reg := msgs.Registry()
	ti, err := reg.Message("geometry_msgs/msg/PoseStamped")
	if err != nil {
		t.Fatal(err)
	}
	// The identity quaternion default reaches nested messages.
	if got := reflect.ValueOf(ti.New()).Elem().FieldByName("Pose").FieldByName("Orientation").FieldByName("W").Float(); got != 1 {
		t.Errorf("PoseStamped default orientation.w = %v, want 1", got)
	}
}

func TestValidate(t *testing.T) {
	long := strings.Repeat("n", 257)
	cases := []struct {
		name string
		msg  interface{ Validate() error }
		want string
	}{
		{"ok", &rmw_dds_common_msg.NodeEntitiesInfo{NodeName: strings.Repeat("n", 256)}, ""},
		{"bounded string", &rmw_dds_common_msg.NodeEntitiesInfo{NodeName: long},
			"rmw_dds_common/msg/NodeEntitiesInfo.node_name: string of 257 bytes exceeds the bound 256"},
		{"bounded sequence", &rcl_interfaces_msg.ParameterDescriptor{IntegerRange: make([]rcl_interfaces_msg.IntegerRange, 2)},
			"rcl_interfaces/msg/ParameterDescriptor.integer_range: 2 elements exceed the bound 1"},
		{"nested", &rmw_dds_common_msg.ParticipantEntitiesInfo{NodeEntitiesInfoSeq: []rmw_dds_common_msg.NodeEntitiesInfo{{}, {NodeNamespace: long}}},
			"rmw_dds_common/msg/ParticipantEntitiesInfo.node_entities_info_seq[1]: rmw_dds_common/msg/NodeEntitiesInfo.node_namespace: string of 257 bytes exceeds the bound 256"},
	}
	for _, c := range cases {
		err := c.msg.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.name, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// badPayloads are inputs the decoder must reject with the given error.
var badPayloads = []struct {
	name string
	msg  rosidl.Message
	hex  string
	want error
}{
	{"no header", &sensor_msgs_msg.JointState{}, "00 01", cdr.ErrHeader},
	{"PL_CDR header", &sensor_msgs_msg.JointState{}, "00 03 00 00 | 00*32", cdr.ErrHeader},
	{"huge name count", &sensor_msgs_msg.JointState{},
		"00 01 00 00 | 00*8 | 01 00 00 00 | 00 00 00 00 | ff ff ff ff | 00*12", cdr.ErrLength},
	{"position count larger than the rest", &sensor_msgs_msg.JointState{},
		"00 01 00 00 | 00*8 | 01 00 00 00 | 00 00 00 00 | 00 00 00 00 | 03 00 00 00 | 00*16", cdr.ErrLength},
	{"string without NUL", &sensor_msgs_msg.JointState{},
		"00 01 00 00 | 00*8 | 02 00 00 00 | 61 62 00 00 | 00*16", cdr.ErrString},
	{"string length past the end", &sensor_msgs_msg.JointState{},
		"00 01 00 00 | 00*8 | 40 00 00 00 | 00*4", cdr.ErrString},
	{"bounded string too long", &rmw_dds_common_msg.NodeEntitiesInfo{},
		"00 01 00 00 | 02 00 00 00 | 2f 00 00 00 | 02 01 00 00 | 61*257 00 | 00 00 | 00*8", cdr.ErrLength},
	{"bounded sequence too long", &rcl_interfaces_msg.ParameterDescriptor{},
		"00 01 00 00 | 01 00 00 00 | 00 00 00 00 | 01 00 00 00 | 00 | 00 00 00 | 01 00 00 00 | 00 00 00 00 |" +
			" 02 00 00 00 | 00*4 | 00*48 | 00 00 00 00", cdr.ErrLength},
	{"truncated float64", &sensor_msgs_msg.JointState{},
		"00 01 00 00 | 00*8 | 01 00 00 00 | 00 00 00 00 | 00 00 00 00 | 01 00 00 00 | 00 00 00 00", cdr.ErrLength},
}

func TestDecodeRejects(t *testing.T) {
	for _, c := range badPayloads {
		t.Run(c.name, func(t *testing.T) {
			m := c.msg.ROSType().New()
			err := rosidl.Unmarshal(unhex(t, c.hex), m)
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
		})
	}
}

// TestTruncatedPrefixes cuts a valid payload at every length: each cut that
// removes data (not just the trailing padding) must fail cleanly.
func TestTruncatedPrefixes(t *testing.T) {
	for _, g := range goldens {
		if g.fresh != nil {
			continue
		}
		full := unhex(t, g.hex)
		e := cdr.NewEncoder(nil)
		g.msg.MarshalCDR(e)
		bodyEnd := e.Len()
		for n := 0; n < bodyEnd; n++ {
			m := g.msg.ROSType().New()
			if err := rosidl.Unmarshal(full[:n], m); err == nil {
				t.Errorf("%s: prefix of %d/%d bytes decoded without error", g.name, n, bodyEnd)
			}
		}
	}
}

// TestEncodeDeterministic checks that reusing an encoder buffer gives the
// same bytes.
func TestEncodeDeterministic(t *testing.T) {
	m := &sensor_msgs_msg.JointState{Name: []string{"a", "b"}, Position: []float64{1, 2}}
	a := rosidl.Marshal(m, nil)
	b := rosidl.Marshal(m, make([]byte, 0, 3))
	if !bytes.Equal(a, b) {
		t.Errorf("% x != % x", a, b)
	}
}

// TestDecodeReuse decodes into a value that already holds longer slices:
// the result must equal the new message exactly.
func TestDecodeReuse(t *testing.T) {
	long := &sensor_msgs_msg.JointState{Name: []string{"a", "b", "c"}, Position: []float64{1, 2, 3}, Effort: []float64{4}}
	short := &sensor_msgs_msg.JointState{Name: []string{"x"}, Velocity: []float64{9}}
	var m sensor_msgs_msg.JointState
	if err := rosidl.Unmarshal(rosidl.Marshal(long, nil), &m); err != nil {
		t.Fatal(err)
	}
	if err := rosidl.Unmarshal(rosidl.Marshal(short, nil), &m); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&m, short) {
		t.Errorf("reused decode\n got %+v\nwant %+v", m, short)
	}
}

// maxFill sets v to the largest message its type allows: bounded strings
// and sequences at their capacity (from the rostype tag), every other
// field at its fixed size.
func maxFill(v reflect.Value, rostype string) {
	capOf := func(s string) int {
		i := strings.Index(s, "<=")
		if i < 0 {
			return 0
		}
		j := i + 2
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		n := 0
		for _, c := range s[i+2 : j] {
			n = 10*n + int(c-'0')
		}
		return n
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			maxFill(v.Field(i), v.Type().Field(i).Tag.Get("rostype"))
		}
	case reflect.Array:
		elem, _, _ := strings.Cut(rostype, "[")
		for i := 0; i < v.Len(); i++ {
			maxFill(v.Index(i), elem)
		}
	case reflect.Slice:
		n := capOf(rostype[strings.LastIndexByte(rostype, '['):])
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		elem, _, _ := strings.Cut(rostype, "[")
		for i := 0; i < n; i++ {
			maxFill(v.Index(i), elem)
		}
	case reflect.String:
		v.SetString(strings.Repeat("x", capOf(rostype)))
	}
}

// MaxCDRSize bounds every message of every bounded registered type: the
// largest message a type allows serializes to at most the bound, and types
// with unbounded strings or sequences report no bound.
func TestMaxCDRSize(t *testing.T) {
	reg := msgs.Registry()
	bounded := 0
	for _, name := range reg.Names() {
		ti, err := reg.Message(name)
		if err != nil {
			continue
		}
		bound, ok := ti.Desc.MaxCDRSize()
		if !ok {
			continue
		}
		bounded++
		m := ti.New()
		maxFill(reflect.ValueOf(m).Elem(), "")
		if v, ok := m.(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				t.Fatalf("%s: largest message invalid: %v", name, err)
			}
		}
		e := cdr.NewEncoder(nil)
		m.MarshalCDR(e)
		if body := e.Len() - cdr.HeaderSize; body > bound {
			t.Errorf("%s: largest message has %d body bytes, bound %d", name, body, bound)
		}
	}
	if bounded < 50 {
		t.Errorf("only %d bounded types", bounded)
	}
	for _, c := range []struct {
		ti      *rosidl.TypeInfo
		bounded bool
	}{
		{sensor_msgs_msg.JointState_TypeInfo, false},
		{rcl_interfaces_msg.ParameterDescriptor_TypeInfo, false},
	} {
		if _, ok := c.ti.Desc.MaxCDRSize(); ok != c.bounded {
			t.Errorf("%s: bounded = %v", c.ti.Name, ok)
		}
	}
}
