package rosidl

import (
	"errors"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/cdr"
)

func TestDDSNames(t *testing.T) {
	for ros, dds := range map[string]string{
		"std_msgs/msg/String":                              "std_msgs::msg::dds_::String_",
		"rcl_interfaces/srv/GetParameters_Request":         "rcl_interfaces::srv::dds_::GetParameters_Request_",
		"nav2_msgs/action/NavigateToPose_SendGoal_Request": "nav2_msgs::action::dds_::NavigateToPose_SendGoal_Request_",
	} {
		if got := DDSTypeName(ros); got != dds {
			t.Errorf("DDSTypeName(%s) = %s, want %s", ros, got, dds)
		}
		if got, ok := ROSTypeName(dds); !ok || got != ros {
			t.Errorf("ROSTypeName(%s) = %s %v, want %s", dds, got, ok, ros)
		}
	}
	if _, ok := ROSTypeName("DCPSParticipant"); ok {
		t.Error("non-ROS type name accepted")
	}
}

// tiny is a one-field message used to exercise the registry and helpers.
type tiny struct{ v uint8 }

var tinyInfo = &TypeInfo{Name: "t_msgs/msg/Tiny", DDSName: "t_msgs::msg::dds_::Tiny_", New: func() Message { return &tiny{} }}

func (m *tiny) MarshalCDR(e *cdr.Encoder) { e.Uint8(m.v) }
func (m *tiny) UnmarshalCDR(d *cdr.Decoder) error {
	m.v = d.Uint8()
	return d.Err()
}
func (m *tiny) ROSType() *TypeInfo { return tinyInfo }
func (m *tiny) Validate() error {
	if m.v > 9 {
		return errors.New("too big")
	}
	return nil
}

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	r.AddMessage(tinyInfo)
	r.AddService(&ServiceType{Name: "t_msgs/srv/S", Request: tinyInfo, Response: tinyInfo})
	if got, err := r.Message("t_msgs/Tiny"); err != nil || got != tinyInfo {
		t.Errorf("short name lookup: %v %v", got, err)
	}
	if _, err := r.Service("t_msgs/S"); err != nil {
		t.Errorf("service lookup: %v", err)
	}
	if _, err := r.Message("t_msgs/msg/Nope"); err == nil || err.Error() != `unknown message type "t_msgs/msg/Nope"` {
		t.Errorf("unknown type error: %v", err)
	}
	if got := strings.Join(r.Names(), ","); got != "t_msgs/msg/Tiny,t_msgs/srv/S" {
		t.Errorf("names %s", got)
	}
}

func TestMarshalValidate(t *testing.T) {
	b := Marshal(&tiny{v: 7}, nil)
	var m tiny
	if err := Unmarshal(b, &m); err != nil || m.v != 7 {
		t.Fatalf("round trip: %v %v", m, err)
	}
	if err := Unmarshal(b[:4], &m); err == nil || !errors.Is(err, cdr.ErrShort) ||
		!strings.HasPrefix(err.Error(), "decode t_msgs/msg/Tiny: ") {
		t.Errorf("short payload error: %v", err)
	}
	if err := Validate(&tiny{v: 10}); err == nil {
		t.Error("Validate passed an invalid message")
	}
	if err := Validate(&tiny{v: 1}); err != nil {
		t.Errorf("Validate: %v", err)
	}
}
