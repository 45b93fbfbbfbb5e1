package ros2

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/bag"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	service_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/service_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// `fsmnodes bag record --services` records the introspection events an
// rclpy client publishes (Jazzy's configure_introspection, contents) as
// `ros2 bag record --services` does: the topic
// /ours_server/set/_service_event of type std_srvs/srv/SetBool_Event with
// rclpy's offered QoS; every recorded event decodes (REQUEST_SENT with the
// request, RESPONSE_RECEIVED with our server's answer) and `bag info`
// lists the service. Skipped against Humble, which has no service
// introspection.
func TestBagRecordsServiceEventsFromRclpy(t *testing.T) {
	d := newDom(t)
	if peer.distro != "jazzy" {
		t.Skipf("service introspection needs Jazzy; the ROS 2 peer is %q", peer.distro)
	}
	env := d.ours()
	d.start("ours server", env, ours("gopeer"), "ours_server").waitLine("gopeer ready")
	dir := filepath.Join(t.TempDir(), "services")
	rec := d.start("fsmnodes bag record --services", env, ours("fsmnodes"), "bag", "record", "--services", "/ours_server/set",
		"-o", dir, "--report-period", "0.2")
	caller := d.start("rclpy introspection_client", d.rosEnv(), "/usr/bin/python3",
		filepath.Join(peer.repo, "test/ros2/testdata/introspection_client.py"), "/ours_server/set")
	rec.waitLine("Subscribed to topic '/ours_server/set/_service_event'")
	// at least ten events, then whole calls on both sides of the stop
	rec.waitOutput("ten events recorded", regexp.MustCompile(`\]: ([1-9]\d+) messages \(`))
	rec.interrupt()
	if err := rec.wait(); err != nil {
		t.Fatalf("bag record: %v\n%s", err, rec.output())
	}
	caller.stop()

	b, err := bag.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ev, ok := b.Topic("/ours_server/set/_service_event")
	if !ok || len(b.Metadata.Topics) != 1 || ev.Type != "std_srvs/srv/SetBool_Event" || ev.MessageCount < 10 || len(ev.OfferedQoS) != 1 {
		t.Fatalf("recorded: %+v", b.Metadata.Topics)
	}
	kinds := map[uint8]int{}
	err = b.Messages(nil, func(m *bag.Message) error {
		var e std_srvs_srv.SetBool_Event
		if err := rosidl.Unmarshal(m.Data, &e); err != nil {
			return err
		}
		kinds[e.Info.EventType]++
		switch e.Info.EventType {
		case service_msgs_msg.ServiceEventInfo_REQUEST_SENT:
			if len(e.Request) != 1 || !e.Request[0].Data || len(e.Response) != 0 {
				return fmt.Errorf("REQUEST_SENT %+v", e)
			}
		case service_msgs_msg.ServiceEventInfo_RESPONSE_RECEIVED:
			if len(e.Response) != 1 || e.Response[0].Message != "set true" || len(e.Request) != 0 {
				return fmt.Errorf("RESPONSE_RECEIVED %+v", e)
			}
		default:
			return fmt.Errorf("event type %d from a client", e.Info.EventType)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := kinds[service_msgs_msg.ServiceEventInfo_REQUEST_SENT] + kinds[service_msgs_msg.ServiceEventInfo_RESPONSE_RECEIVED]; n != int(ev.MessageCount) || kinds[0] == 0 || kinds[3] == 0 {
		t.Errorf("events by type %v, %d in metadata.yaml", kinds, ev.MessageCount)
	}
	info := d.fsmnodes("bag", "info", dir)
	mustContain(t, "bag info", info, "Messages:          0\n", "Service:           1\n",
		fmt.Sprintf("Service: /ours_server/set | Type: std_srvs/srv/SetBool | Event Count: %d | Serialization Format: cdr", ev.MessageCount))
	if strings.Contains(info, "Topic: /ours_server") {
		t.Errorf("bag info lists the events as a topic:\n%s", info)
	}
}
