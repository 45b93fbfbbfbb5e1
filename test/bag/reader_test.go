package bagtest

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/bag"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// installReader copies reader/ (the script and its lock file) into a
// temporary directory and installs the exact packages there with npm ci.
func installReader(t *testing.T) string {
	t.Helper()
	return testenv.NPMInstall(t, "reader", "package.json", "package-lock.json", "reader.js")
}

// readerResult is what reader.js prints.
type readerResult struct {
	Error           string   `json:"error"`
	Files           []string `json:"files"`
	Profiles        []string `json:"profiles"`
	Failures        []string `json:"failures"`
	Messages        uint64   `json:"messages"`
	Rosbag2Metadata int      `json:"rosbag2Metadata"`
	Topics          map[string]struct {
		Type, Encoding, SchemaEncoding, QoS string
		Count                               uint64
		First                               map[string]any
	} `json:"topics"`
}

// TestDemoRecording_IndependentReader records the whole demo for a few
// seconds (logging the recorder's CPU and memory), then reads the bag with
// Foxglove's npm packages: every message of every topic decoded, the
// counts equal to metadata.yaml's.
func TestDemoRecording_IndependentReader(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the demo and installs npm packages")
	}
	t.Parallel()
	node := testenv.Tool(t, "node")
	readerDir := installReader(t)
	domain := testenv.Domain(t)
	dir := filepath.Join(t.TempDir(), "demo")
	testenv.LaunchDemo(t, domain, "foxglove:=false")
	rec := startRecord(t, domain, "record", []string{"/diffbot/odom", "/hexapod/joint_states", "/velma/joint_states", "/diffbot/rsm/operationMode", "/velma/velma_core/ve_body/state"},
		"-a", "-d", "3", "--report-period", "2", "-o", dir)
	time.Sleep(7 * time.Second)
	rec.MustRun(t)
	stop(t, rec)
	for _, line := range regexp.MustCompile(`(?m)^\[INFO\] \[bag_record\]: \d+ messages .*$`).FindAllString(rec.Output(), -1) {
		t.Logf("recorder while recording the demo: %s", strings.TrimPrefix(line, "[INFO] [bag_record]: "))
	}

	b, err := bag.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := b.Metadata
	if len(m.Files) < 2 || m.MessageCount < 1000 {
		t.Fatalf("the demo's recording: %d files, %d messages", len(m.Files), m.MessageCount)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(readerDir, "reader.js"), dir)
	cmd.Dir = readerDir
	out, err := cmd.Output()
	var r readerResult
	if jerr := json.Unmarshal(out, &r); jerr != nil || err != nil || r.Error != "" {
		t.Fatalf("reader.js: %v %v %s\n%s", err, jerr, r.Error, out)
	}
	if len(r.Files) != len(m.Files) || r.Rosbag2Metadata != len(m.Files) || len(r.Failures) > 0 {
		t.Errorf("files %v (metadata %d), rosbag2 records %d, failures %q", r.Files, len(m.Files), r.Rosbag2Metadata, r.Failures)
	}
	for _, p := range r.Profiles {
		if p != "ros2" {
			t.Errorf("profile %q", p)
		}
	}
	if r.Messages != m.MessageCount {
		t.Errorf("reader.js decoded %d messages, metadata.yaml says %d", r.Messages, m.MessageCount)
	}
	var lines []string
	for _, ti := range m.Topics {
		jt, ok := r.Topics[ti.Name]
		if !ok {
			t.Errorf("reader.js does not see %s", ti.Name)
			continue
		}
		if jt.Count != ti.MessageCount || jt.Type != ti.Type || jt.Encoding != "cdr" || jt.SchemaEncoding != "ros2msg" || !strings.Contains(jt.QoS, "reliability:") {
			t.Errorf("%s: reader.js %+v, metadata %d %s", ti.Name, jt, ti.MessageCount, ti.Type)
		}
		lines = append(lines, ti.Name+" "+ti.Type+" "+itoa(jt.Count))
	}
	sort.Strings(lines)
	t.Logf("reader.js (@mcap/core, @foxglove/rosmsg2-serialization) counts per topic, all decoded:\n  %s", strings.Join(lines, "\n  "))

	// A decoded value equals ours.
	var first string
	_ = b.Messages([]string{"/velma/velma_core/ve_body/state"}, func(msg *bag.Message) error {
		var s std_msgs_msg.String
		if err := rosidl.Unmarshal(msg.Data, &s); err != nil {
			return err
		}
		first = s.Data
		return bag.ErrStop
	})
	if got := r.Topics["/velma/velma_core/ve_body/state"].First["data"]; first == "" || got != first {
		t.Errorf("ve_body state: reader.js %v, ours %q", got, first)
	}
	if om := r.Topics["/diffbot/rsm/operationMode"].First; om == nil || om["emergency_stop"] != false {
		t.Errorf("operation mode decoded by reader.js: %v", om)
	}

	// The demo's flight recorder (launched by default) writes its window
	// on ~/snapshot.
	// An event of the demo's start may have written a snapshot just
	// before: the recorder then refuses for its 5 s holdoff, saying so;
	// ask again after it.
	var out2, e string
	var sm []string
	for try := 0; try < 4; try++ {
		var ok bool
		out2, e, ok = testenv.CLI(t, domain, "service", "call", "/flight_recorder/snapshot", "std_srvs/srv/Trigger")
		sm = regexp.MustCompile(`success=True, message='([^']+)'`).FindStringSubmatch(out2)
		if ok && sm != nil {
			break
		}
		if !strings.Contains(out2, "of the last snapshot: not written") {
			break
		}
		time.Sleep(3 * time.Second)
	}
	if sm == nil {
		t.Fatalf("flight_recorder ~/snapshot: %s %s", out2, e)
	}
	// The answer comes once the bag is complete: it opens at once.
	snap, err := bag.Open(sm[1])
	if err != nil {
		t.Fatalf("the snapshot ~/snapshot answered with: %v", err)
	}
	ev, isSnap := bag.EventOf(snap.Metadata)
	if _, ok := snap.Topic("/velma/joint_states"); !isSnap || ev.Kind != "manual" || !ok || snap.Metadata.Duration < 5*time.Second {
		t.Errorf("demo flight recorder snapshot %s: %+v, %v long, topics %v", sm[1], ev, snap.Metadata.Duration, snap.SortedTopicNames())
	}
}

func itoa(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
