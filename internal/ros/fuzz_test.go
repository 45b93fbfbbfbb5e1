package ros

import (
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/dds"
)

// Untrusted input never panics: ros_discovery_info samples from the
// network, names and command lines from users.

func FuzzDecodeParticipantInfo(f *testing.F) {
	f.Add(encodeParticipantInfo(participantInfo{GID: guid(1), Nodes: []nodeEntities{{Namespace: "/", Name: "n", Readers: []dds.GUID{guid(2)}}}}, Jazzy), false)
	f.Add(encodeParticipantInfo(participantInfo{GID: guid(1), Nodes: []nodeEntities{{Namespace: "/a", Name: "b", Writers: []dds.GUID{guid(3)}}}}, Humble), true)
	f.Add([]byte{0, 1, 0, 0}, false)
	f.Add([]byte{0, 0, 0, 0, 1, 2, 3}, true)
	f.Fuzz(func(t *testing.T, data []byte, humble bool) {
		d := Jazzy
		if humble {
			d = Humble
		}
		// Telling the layout never panics, and a layout it tells survives
		// re-encoding: the sample is read back in the same layout.
		if sp, sd, ok := sniffParticipantInfo(data, d, dds.GUID{}); ok {
			if _, again, ok := sniffParticipantInfo(encodeParticipantInfo(sp, sd), d, sp.GID); !ok || again != sd {
				t.Fatalf("%s sample %+v re-encoded is read as %s (%v)", sd, sp, again, ok)
			}
		}
		p, err := decodeParticipantInfo(data, d)
		if err != nil {
			return
		}
		// What decodes re-encodes to something that decodes the same way.
		again, err := decodeParticipantInfo(encodeParticipantInfo(p, d), d)
		if err != nil || len(again.Nodes) != len(p.Nodes) {
			t.Fatalf("re-encoding changed %+v into %+v (%v)", p, again, err)
		}
	})
}

func FuzzExpandTopicName(f *testing.F) {
	for _, s := range []string{"chatter", "~/x", "{node}/{ns}", "/a/b", "~", "{", "a//b", "1x", "rostopic://x"} {
		f.Add(s, "node", "/ns")
	}
	f.Fuzz(func(t *testing.T, name, node, ns string) {
		out, err := ExpandTopicName(name, node, ns)
		if err == nil {
			if verr := ValidateFullTopicName(out); verr != nil {
				t.Fatalf("ExpandTopicName(%q) = %q, which is invalid: %v", name, out, verr)
			}
		}
	})
}

func FuzzParseArgs(f *testing.F) {
	f.Add("--ros-args -r a:=b -p x:=1 --log-level n:=debug -- user")
	f.Add("--ros-args -r __node:= -r __ns:=/x --params-file")
	f.Add("--ros-args -e /e --enable-rosout-logs -r n:rostopic://a:=b")
	f.Fuzz(func(t *testing.T, line string) {
		a, err := ParseArgs(strings.Fields(line))
		if err != nil {
			return
		}
		for _, r := range a.Remaps {
			if _, err := ParseRemapRule(r.String()); err != nil {
				t.Fatalf("rule %+v prints as %q, which does not parse: %v", r, r.String(), err)
			}
		}
	})
}
