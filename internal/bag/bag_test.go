package bag

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/fsmnodes/fsmnodes/internal/ros"
)

var t0 = time.Unix(1_700_000_000, 123_456_789)

func writeBag(t *testing.T, dir string, opts WriterOptions, n int) {
	t.Helper()
	w, err := Create(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	topics := []Topic{
		{Name: "/chatter", Type: "std_msgs/msg/String", OfferedQoS: []ros.QoS{ros.QoSDefault.KeepLast(7)}, Schema: "string data\n", TypeHash: "RIHS01_00"},
		{Name: "/latched", Type: "std_msgs/msg/String", OfferedQoS: []ros.QoS{ros.QoSLatched, ros.QoSSensorData}, Schema: "string data\n"},
	}
	for _, tp := range topics {
		if err := w.AddTopic(tp); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write("/nope", t0, t0, []byte{0, 1, 0, 0}); err == nil {
		t.Error("a message on an undeclared topic was written")
	}
	for i := 0; i < n; i++ {
		recv := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		topic := topics[i%2].Name
		if err := w.Write(topic, recv, recv.Add(-time.Millisecond), []byte(fmt.Sprintf("\x00\x01\x00\x00msg%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	w.SetCustomData("trigger", "e-stop")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestWriteReadSplit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "b")
	writeBag(t, dir, WriterOptions{MaxFileDuration: time.Second, ROSDistro: "jazzy"}, 25)
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := b.Metadata
	if m.Version != MetadataVersion || m.StorageID != "mcap" || m.ROSDistro != "jazzy" || m.CustomData["trigger"] != "e-stop" {
		t.Errorf("metadata header: %+v", m)
	}
	if m.MessageCount != 25 || !m.Start.Equal(t0) || m.Duration != 2400*time.Millisecond {
		t.Errorf("count %d start %v duration %v", m.MessageCount, m.Start, m.Duration)
	}
	// 0..2.4 s in files of 1 s: messages 0-9, 10-19, 20-24.
	if len(m.Files) != 3 || m.Files[0].MessageCount != 10 || m.Files[2].MessageCount != 5 || m.Files[1].Path != "b_1.mcap" {
		t.Errorf("files: %+v", m.Files)
	}
	if len(m.Topics) != 2 || m.Topics[0].MessageCount != 13 || m.Topics[1].MessageCount != 12 {
		t.Fatalf("topics: %+v", m.Topics)
	}
	lat := m.Topics[1]
	if len(lat.OfferedQoS) != 2 || lat.OfferedQoS[0].Durability != ros.DurabilityTransientLocal || lat.OfferedQoS[1].Reliability != ros.ReliabilityBestEffort || lat.Schema != "string data\n" {
		t.Errorf("latched topic: %+v", lat)
	}
	var got []string
	err = b.Messages(nil, func(msg *Message) error {
		got = append(got, msg.Topic+":"+string(msg.Data[4:]))
		if msg.PublishTime != msg.LogTime.Add(-time.Millisecond) {
			t.Errorf("publish time %v, log time %v", msg.PublishTime, msg.LogTime)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 25 || got[0] != "/chatter:msg0" || got[24] != "/chatter:msg24" {
		t.Errorf("messages: %v", got)
	}
	n := 0
	if err := b.Messages([]string{"/latched"}, func(*Message) error { n++; return nil }); err != nil || n != 12 {
		t.Errorf("/latched: %d messages, %v", n, err)
	}
	// Each file is a valid MCAP of profile ros2 with the rosbag2 record.
	f, err := os.Open(filepath.Join(dir, "b_0.mcap"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := mcap.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	info, err := r.Info()
	if err != nil {
		t.Fatal(err)
	}
	if info.Header.Profile != "ros2" || len(info.MetadataIndexes) != 1 || info.MetadataIndexes[0].Name != "rosbag2" {
		t.Errorf("header %+v, metadata %+v", info.Header, info.MetadataIndexes)
	}
	for _, ch := range info.Channels {
		if ch.MessageEncoding != "cdr" || info.Schemas[ch.SchemaID].Encoding != "ros2msg" || !strings.Contains(ch.Metadata["offered_qos_profiles"], "history: 1") {
			t.Errorf("channel %+v", ch)
		}
	}
}

func TestSplitBySize(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	w, err := Create(dir, WriterOptions{MaxFileBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddTopic(Topic{Name: "/big", Type: "std_msgs/msg/String"}); err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 1500)
	for i := 0; i < 20; i++ {
		if err := w.Write("/big", t0.Add(time.Duration(i)), t0, payload); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Metadata.Files) < 5 {
		t.Errorf("20 × 1.5 kB in files of 4 kB: %d files", len(b.Metadata.Files))
	}
	var total uint64
	for _, f := range b.Metadata.Files {
		total += f.MessageCount
	}
	if total != 20 {
		t.Errorf("files hold %d messages", total)
	}
}

func TestCreateRefusesExistingDir(t *testing.T) {
	if _, err := Create(t.TempDir(), WriterOptions{}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("existing directory: %v", err)
	}
	if _, err := Create(filepath.Join(t.TempDir(), "x"), WriterOptions{Compression: "brotli"}); err == nil {
		t.Error("unknown compression accepted")
	}
}

func TestQoSProfilesRoundTrip(t *testing.T) {
	in := []ros.QoS{ros.QoSDefault, ros.QoSRosout, {History: ros.HistoryKeepAll, Reliability: ros.ReliabilityBestEffort, Durability: ros.DurabilityVolatile,
		Deadline: ros.DurationInfinite, Lifespan: ros.DurationInfinite, Liveliness: ros.LivelinessAutomatic, LivelinessLeaseDuration: ros.DurationInfinite}}
	s, err := MarshalQoSProfiles(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s, "sec: 9223372036") || !strings.Contains(s, "nsec: 854775807") || !strings.Contains(s, "lifespan:\n    sec: 10\n    nsec: 0") {
		t.Errorf("rosbag2's form:\n%s", s)
	}
	out, err := UnmarshalQoSProfiles(s)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(out) != fmt.Sprint(in) {
		t.Errorf("round trip:\n%v\n%v", in, out)
	}
	// Version 9 writes names instead of numbers.
	v9 := "- history: keep_last\n  depth: 5\n  reliability: best_effort\n  durability: transient_local\n  deadline:\n    sec: 9223372036\n    nsec: 854775807\n  lifespan:\n    sec: 0\n    nsec: 0\n  liveliness: automatic\n  liveliness_lease_duration:\n    sec: 0\n    nsec: 0\n  avoid_ros_namespace_conventions: false\n"
	q, err := UnmarshalQoSProfiles(v9)
	if err != nil || len(q) != 1 || q[0].Depth != 5 || q[0].Reliability != ros.ReliabilityBestEffort || q[0].Durability != ros.DurabilityTransientLocal || q[0].Deadline != ros.DurationInfinite {
		t.Errorf("version 9 profile: %+v %v", q, err)
	}
	if _, err := UnmarshalQoSProfiles("- history: sometimes\n"); err == nil {
		t.Error("unknown policy name accepted")
	}
}

func TestPlaybackQoS(t *testing.T) {
	for _, c := range []struct {
		name    string
		offered []ros.QoS
		want    ros.QoS
	}{
		{"none recorded", nil, ros.QoSDefault},
		{"all latched", []ros.QoS{ros.QoSLatched, ros.QoSLatched}, ros.QoSDefault.TransientLocal()},
		{"one best effort", []ros.QoS{ros.QoSDefault, ros.QoSSensorData}, ros.QoSDefault.BestEffort()},
		{"deep history", []ros.QoS{ros.QoSRosout}, ros.QoSDefault.KeepLast(1000).TransientLocal()},
	} {
		if got := PlaybackQoS(c.offered); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestMetadataYAMLForm(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "y")
	writeBag(t, dir, WriterOptions{ROSDistro: "humble"}, 3)
	b, err := os.ReadFile(filepath.Join(dir, MetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"rosbag2_bagfile_information:\n  version: 8\n  storage_identifier: mcap\n  duration:\n    nanoseconds: 200000000\n  starting_time:\n    nanoseconds_since_epoch: 1700000000123456789\n  message_count: 3\n",
		"    - topic_metadata:\n        name: /chatter\n        type: std_msgs/msg/String\n        serialization_format: cdr\n        offered_qos_profiles: |\n",
		"  relative_file_paths:\n    - y_0.mcap\n",
		"  ros_distro: humble\n",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metadata.yaml lacks %q:\n%s", want, b)
		}
	}
}

func TestFormatInfo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "i")
	writeBag(t, dir, WriterOptions{ROSDistro: "jazzy"}, 4)
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := FormatInfo(b, time.UTC)
	want := "\nFiles:             i_0.mcap\n" +
		"Bag size:          " + formatSize(b.Size) + "\n" +
		"Storage id:        mcap\n" +
		"ROS Distro:        jazzy\n" +
		"Duration:          0.300000000s\n" +
		"Start:             Nov 14 2023 22:13:20.123456789 (1700000000.123456789)\n" +
		"End:               Nov 14 2023 22:13:20.423456789 (1700000000.423456789)\n" +
		"Messages:          4\n" +
		"Topic information: Topic: /chatter | Type: std_msgs/msg/String | Count: 2 | Serialization Format: cdr\n" +
		"                   Topic: /latched | Type: std_msgs/msg/String | Count: 2 | Serialization Format: cdr\n" +
		"Service:           0\n" +
		"Service information: \n"
	if got != want {
		t.Errorf("info:\n%q\nwant\n%q", got, want)
	}
	if s := formatSize(1536); s != "1.5 KiB" {
		t.Errorf("1536 bytes: %s", s)
	}
}

func TestSubscriptionDepth(t *testing.T) {
	rosouts := func(n int) []ros.QoS {
		out := make([]ros.QoS, n)
		for i := range out {
			out[i] = ros.QoSRosout
		}
		return out
	}
	for _, c := range []struct {
		name    string
		offered []ros.QoS
		want    int
	}{
		{"one default publisher", []ros.QoS{ros.QoSDefault}, 100},
		{"two /rosout publishers", rosouts(2), 2000},
		{"twenty /rosout publishers", rosouts(20), MaxSubscriptionDepth},
		{"keep all", []ros.QoS{ros.QoSDefault.KeepAll()}, MaxSubscriptionDepth},
	} {
		if got := subscriptionDepth(c.offered, 100); got != c.want {
			t.Errorf("%s: depth %d, want %d", c.name, got, c.want)
		}
	}
}

func TestMetadataVersion9(t *testing.T) {
	// The form Jazzy's rosbag2 writes: version 9, offered_qos_profiles as a
	// YAML list with policy names.
	y := `rosbag2_bagfile_information:
  version: 9
  storage_identifier: mcap
  duration:
    nanoseconds: 1500000000
  starting_time:
    nanoseconds_since_epoch: 1700000000000000000
  message_count: 3
  topics_with_message_count:
    - topic_metadata:
        name: /chatter
        type: std_msgs/msg/String
        serialization_format: cdr
        offered_qos_profiles:
          - history: keep_last
            depth: 10
            reliability: reliable
            durability: volatile
            deadline:
              sec: 9223372036
              nsec: 854775807
            lifespan:
              sec: 9223372036
              nsec: 854775807
            liveliness: automatic
            liveliness_lease_duration:
              sec: 9223372036
              nsec: 854775807
            avoid_ros_namespace_conventions: false
        type_description_hash: RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18
      message_count: 3
  compression_format: ""
  compression_mode: ""
  relative_file_paths:
    - b_0.mcap
  files:
    - path: b_0.mcap
      starting_time:
        nanoseconds_since_epoch: 1700000000000000000
      duration:
        nanoseconds: 1500000000
      message_count: 3
  custom_data: ~
  ros_distro: jazzy
`
	m, err := UnmarshalMetadata([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 9 || len(m.Topics) != 1 || m.Topics[0].MessageCount != 3 || len(m.Files) != 1 || m.Duration != 1500*time.Millisecond || m.ROSDistro != "jazzy" {
		t.Fatalf("%+v", m)
	}
	q := m.Topics[0].OfferedQoS
	if len(q) != 1 || q[0] != (ros.QoS{History: ros.HistoryKeepLast, Depth: 10, Reliability: ros.ReliabilityReliable, Durability: ros.DurabilityVolatile,
		Deadline: ros.DurationInfinite, Lifespan: ros.DurationInfinite, Liveliness: ros.LivelinessAutomatic, LivelinessLeaseDuration: ros.DurationInfinite}) {
		t.Errorf("QoS %+v", q)
	}
	if _, err := UnmarshalMetadata([]byte("rosbag2_bagfile_information: {}\n")); err == nil {
		t.Error("metadata without a version accepted")
	}
	if _, err := UnmarshalMetadata([]byte("::: not yaml")); err == nil {
		t.Error("garbage accepted")
	}
}
