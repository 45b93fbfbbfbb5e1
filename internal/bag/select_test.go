package bag

import (
	"regexp"
	"testing"
)

// The recorder's choice of topics and services, row by row against
// rosbag2's TopicFilter::take_topic (Jazzy): a service's event topic is
// taken by the service options only, regexes match the service's name.
func TestRecorder_Wanted(t *testing.T) {
	const ev, evType = "/ping/_service_event", "std_srvs/srv/Trigger_Event"
	re := regexp.MustCompile
	for _, c := range []struct {
		name      string
		opts      RecordOptions
		topic, ty string
		want      bool
	}{
		{"all topics: a topic", RecordOptions{All: true}, "/chatter", "std_msgs/msg/String", true},
		{"all topics: no services", RecordOptions{All: true}, ev, evType, false},
		{"all topics: no hidden topic", RecordOptions{All: true}, "/_hidden", "std_msgs/msg/String", false},
		{"all topics with hidden ones: still no services", RecordOptions{All: true, IncludeHidden: true}, ev, evType, false},
		{"all services: a service", RecordOptions{AllServices: true}, ev, evType, true},
		{"all services: no topics", RecordOptions{AllServices: true}, "/chatter", "std_msgs/msg/String", false},
		{"-a: both", RecordOptions{All: true, AllServices: true}, ev, evType, true},
		{"a service by name", RecordOptions{Services: []string{ev}}, ev, evType, true},
		{"another service", RecordOptions{Services: []string{"/other/_service_event"}}, ev, evType, false},
		{"its event topic among the topics: not a service option", RecordOptions{Topics: []string{ev}}, ev, evType, false},
		{"excluded service", RecordOptions{AllServices: true, ExcludeServices: []string{ev}}, ev, evType, false},
		{"regex on the service's name", RecordOptions{Regex: re(`^/ping$`)}, ev, evType, true},
		{"regex on the event topic's name does not match the service", RecordOptions{Regex: re(`_service_event$`)}, ev, evType, false},
		{"exclude regex on the service's name", RecordOptions{AllServices: true, Exclude: re(`^/ping$`)}, ev, evType, false},
		{"exclude regex of a topic", RecordOptions{All: true, Exclude: re(`^/chatter$`)}, "/chatter", "std_msgs/msg/String", false},
		{"a listed hidden topic", RecordOptions{Topics: []string{"/_hidden"}}, "/_hidden", "std_msgs/msg/String", true},
		{"a _service_event topic of a message type is a topic", RecordOptions{All: true, IncludeHidden: true}, ev, "std_msgs/msg/String", true},
		{"a _service_event topic of a message type is no service", RecordOptions{AllServices: true}, ev, "std_msgs/msg/String", false},
	} {
		r := &Recorder{opts: c.opts}
		if got := r.wanted(c.topic, c.ty); got != c.want {
			t.Errorf("%s: wanted(%s, %s) = %v", c.name, c.topic, c.ty, got)
		}
	}
}

func TestServiceEventTopic(t *testing.T) {
	for in, want := range map[string]string{
		"/ping": "/ping/_service_event", "/ping/_service_event": "/ping/_service_event", "": "",
		"/_service_event": "/_service_event/_service_event",
	} {
		if got := ServiceEventTopic(in); got != want {
			t.Errorf("ServiceEventTopic(%q) = %q, want %q", in, got, want)
		}
	}
	for _, c := range []struct {
		name, typ string
		want      bool
	}{
		{"/ping/_service_event", "std_srvs/srv/Trigger_Event", true},
		{"/ping/_service_event", "std_msgs/msg/String", false},
		{"/ping/_service_event", "std_msgs/msg/Some_Event", false},
		{"/_service_event", "std_srvs/srv/Trigger_Event", false},
		{"/ping/service_event", "std_srvs/srv/Trigger_Event", false},
	} {
		if got := IsServiceEventTopic(c.name, c.typ); got != c.want {
			t.Errorf("IsServiceEventTopic(%s, %s) = %v", c.name, c.typ, got)
		}
	}
}
