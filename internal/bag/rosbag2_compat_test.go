package bag

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
	"gopkg.in/yaml.v3"
)

// rosbag2Reads is every value rosbag2's metadata decoders read, with the
// yaml-cpp conversion each applies, taken from rosbag2's sources (github
// ros2/rosbag2; branch jazzy at 64717ee8, branch humble at d256a5ba):
// YAML::convert<BagMetadata>::decode and the converters it calls, in
// jazzy's rosbag2_storage/include/rosbag2_storage/yaml.hpp and humble's
// rosbag2_storage/src/rosbag2_storage/metadata_io.cpp, for the version
// fsmnodes writes (8); Jazzy reads every key below, Humble (its own
// version 5) those without a "jazzy" note. A missing key or a value of
// another kind makes yaml-cpp throw, and ros2 bag info/play refuse the
// bag. "[]" stands for each element of a sequence.
var rosbag2Reads = []struct{ path, kind, note string }{
	{"version", "int", ""},
	{"storage_identifier", "str", ""},
	{"duration.nanoseconds", "uint", ""},
	{"starting_time.nanoseconds_since_epoch", "uint", ""},
	{"message_count", "uint", ""},
	{"topics_with_message_count", "seq", ""},
	{"topics_with_message_count[].topic_metadata.name", "str", ""},
	{"topics_with_message_count[].topic_metadata.type", "str", ""},
	{"topics_with_message_count[].topic_metadata.serialization_format", "str", ""},
	{"topics_with_message_count[].topic_metadata.offered_qos_profiles", "qos", "version >= 4: a YAML string, parsed again (up to 8)"},
	{"topics_with_message_count[].topic_metadata.type_description_hash", "str", "jazzy: version >= 7"},
	{"topics_with_message_count[].message_count", "uint", ""},
	{"relative_file_paths", "seq", ""},
	{"relative_file_paths[]", "str", ""},
	{"compression_format", "str", "version >= 3"},
	{"compression_mode", "str", "version >= 3"},
	{"files", "seq", "version >= 5"},
	{"files[].path", "str", ""},
	{"files[].starting_time.nanoseconds_since_epoch", "uint", ""},
	{"files[].duration.nanoseconds", "uint", ""},
	{"files[].message_count", "uint", ""},
	{"custom_data", "strmap", "jazzy: version >= 6"},
	{"ros_distro", "str", "jazzy: version >= 8"},
}

// rosbag2QoSReads is what convert<rclcpp::QoS>::decode (jazzy,
// rosbag2_storage/src/rosbag2_storage/qos.cpp) and
// convert<Rosbag2QoS>::decode (humble, rosbag2_transport/src/
// rosbag2_transport/qos.cpp) read of each offered profile: the policies as
// rmw's numbers (Jazzy takes a number history as the version-8 form).
var rosbag2QoSReads = []struct{ path, kind string }{
	{"history", "int"}, {"depth", "int"}, {"reliability", "int"}, {"durability", "int"},
	{"deadline.sec", "uint"}, {"deadline.nsec", "uint"}, {"lifespan.sec", "uint"}, {"lifespan.nsec", "uint"},
	{"liveliness", "int"}, {"liveliness_lease_duration.sec", "uint"}, {"liveliness_lease_duration.nsec", "uint"},
	{"avoid_ros_namespace_conventions", "bool"},
}

// yamlAt returns the nodes at path below n ("a.b", "a[].b"), nil when a
// key is missing.
func yamlAt(n *yaml.Node, path string) []*yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if path == "" {
		return []*yaml.Node{n}
	}
	head, rest, _ := strings.Cut(path, ".")
	key, each := strings.CutSuffix(head, "[]")
	var next *yaml.Node
	if key == "" {
		next = n
	} else if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
	}
	if next == nil {
		return nil
	}
	if !each {
		return yamlAt(next, rest)
	}
	if next.Kind != yaml.SequenceNode {
		return nil
	}
	var out []*yaml.Node
	for _, e := range next.Content {
		out = append(out, yamlAt(e, rest)...)
	}
	return out
}

// yamlCppReads reports whether yaml-cpp's conversion of kind accepts n,
// and why not.
func yamlCppReads(n *yaml.Node, kind string) string {
	scalar := n.Kind == yaml.ScalarNode && n.Tag != "!!null"
	switch kind {
	case "str":
		if !scalar {
			return "not a scalar (as<std::string> throws)"
		}
	case "int":
		if _, err := strconv.ParseInt(n.Value, 10, 64); !scalar || err != nil {
			return "not an integer"
		}
	case "uint":
		if _, err := strconv.ParseUint(n.Value, 10, 64); !scalar || err != nil {
			return "not an unsigned integer"
		}
	case "bool":
		if v := strings.ToLower(n.Value); !scalar || (v != "true" && v != "false") {
			return "not a boolean"
		}
	case "seq":
		if n.Kind != yaml.SequenceNode {
			return "not a sequence"
		}
	case "strmap":
		if n.Kind != yaml.MappingNode {
			return "not a map"
		}
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return "a value that is not a string"
			}
		}
	case "qos":
		if !scalar {
			return "not a string (as<std::string> throws)"
		}
		if n.Value == "" {
			return "" // read as no profiles
		}
		var profiles yaml.Node
		if err := yaml.Unmarshal([]byte(n.Value), &profiles); err != nil {
			return "its text is not YAML: " + err.Error()
		}
		list := yamlAt(&profiles, "")
		if len(list) != 1 || list[0].Kind != yaml.SequenceNode || len(list[0].Content) == 0 {
			return "its text is not a list of profiles"
		}
		for _, p := range list[0].Content {
			for _, r := range rosbag2QoSReads {
				got := yamlAt(p, r.path)
				if len(got) != 1 {
					return "a profile lacks " + r.path
				}
				if why := yamlCppReads(got[0], r.kind); why != "" {
					return "profile " + r.path + ": " + why
				}
			}
		}
	}
	return ""
}

// rosbag2Problems lists what of rosbag2Reads doc lacks or holds in
// another kind.
func rosbag2Problems(doc *yaml.Node) []string {
	var out []string
	for _, r := range rosbag2Reads {
		nodes := yamlAt(doc, r.path)
		if len(nodes) == 0 {
			out = append(out, r.path+" missing (rosbag2 reads it as "+r.kind+"; "+r.note+")")
			continue
		}
		for _, n := range nodes {
			if why := yamlCppReads(n, r.kind); why != "" {
				out = append(out, r.path+" = "+strconv.Quote(n.Value)+": "+why)
			}
		}
	}
	if v := yamlAt(doc, "version"); len(v) == 1 && v[0].Value != strconv.Itoa(MetadataVersion) {
		out = append(out, "version "+v[0].Value+", want "+strconv.Itoa(MetadataVersion))
	}
	return out
}

// checkRosbag2Reads fails t for each of rosbag2Problems.
func checkRosbag2Reads(t *testing.T, what string, doc *yaml.Node) {
	t.Helper()
	for _, p := range rosbag2Problems(doc) {
		t.Errorf("%s: %s", what, p)
	}
}

// metadata.yaml, and the "rosbag2" record in each .mcap file (which
// rosbag2's MCAP plugin decodes the same way, and from which ros2 bag
// reindex rebuilds metadata.yaml), hold every value rosbag2's decoders
// read, of the kind they read it as; each channel's offered_qos_profiles
// too. The checks fail on a bag that lacks one (the rows are tested on
// broken documents as well).
func TestMetadata_ReadableByRosbag2(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	writeBag(t, dir, WriterOptions{ROSDistro: "jazzy", MaxFileBytes: 1}, 6)
	b, err := os.ReadFile(filepath.Join(dir, MetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	info := yamlAt(&doc, "rosbag2_bagfile_information")
	if len(info) != 1 {
		t.Fatalf("no rosbag2_bagfile_information:\n%s", b)
	}
	checkRosbag2Reads(t, MetadataFile, info[0])
	if n := len(yamlAt(info[0], "files[]")); n < 2 {
		t.Fatalf("%d files: the split is not exercised", n)
	}
	for _, h := range yamlAt(info[0], "topics_with_message_count[].topic_metadata.type_description_hash") {
		if h.Value == "" && h.Tag != "!!str" {
			t.Errorf("an empty type_description_hash is not written as a string: tag %s", h.Tag)
		}
	}

	m, err := ReadMetadata(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, fi := range m.Files {
		err := withFile(filepath.Join(dir, fi.Path), func(r *mcap.Reader) error {
			mi, err := r.Info()
			if err != nil {
				return err
			}
			for _, ch := range mi.Channels {
				if why := yamlCppReads(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ch.Metadata["offered_qos_profiles"]}, "qos"); why != "" ||
					ch.Metadata["offered_qos_profiles"] == "" {
					t.Errorf("%s: channel %s offered_qos_profiles: %s", fi.Path, ch.Topic, why)
				}
				if _, ok := ch.Metadata["topic_type_hash"]; !ok {
					t.Errorf("%s: channel %s has no topic_type_hash", fi.Path, ch.Topic)
				}
			}
			if len(mi.MetadataIndexes) != 1 || mi.MetadataIndexes[0].Name != "rosbag2" {
				t.Fatalf("%s: metadata records %+v", fi.Path, mi.MetadataIndexes)
			}
			rec, err := r.GetMetadata(mi.MetadataIndexes[0].Offset)
			if err != nil {
				return err
			}
			var inner yaml.Node
			if err := yaml.Unmarshal([]byte(rec.Metadata["serialized_metadata"]), &inner); err != nil {
				return err
			}
			checkRosbag2Reads(t, fi.Path+" rosbag2 record", &inner)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	// The checks themselves: each row fails on a document without its
	// value, and kinds are told apart.
	for _, r := range rosbag2Reads {
		var broken yaml.Node
		if err := yaml.Unmarshal(b, &broken); err != nil {
			t.Fatal(err)
		}
		root := yamlAt(&broken, "rosbag2_bagfile_information")[0]
		dropKey(root, r.path)
		if p := rosbag2Problems(root); len(p) == 0 {
			t.Errorf("without %s: no problem found", r.path)
		}
	}
	for _, c := range []struct {
		value, kind string
		ok          bool
	}{
		{"12", "uint", true}, {"-1", "uint", false}, {"x", "int", false}, {"~", "str", false}, {`""`, "str", true},
		{"true", "bool", true}, {"1", "bool", false}, {"{a: b}", "strmap", true}, {"{a: [b]}", "strmap", false},
		{`"- history: 1\n"`, "qos", false}, {"[]", "seq", true}, {"a", "seq", false},
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(c.value), &n); err != nil {
			t.Fatal(err)
		}
		if why := yamlCppReads(yamlAt(&n, "")[0], c.kind); (why == "") != c.ok {
			t.Errorf("%s as %s: %q", c.value, c.kind, why)
		}
	}
}

// dropKey removes the last key of path (in every element a "[]" spans).
func dropKey(n *yaml.Node, path string) {
	parent, key := "", path
	if i := strings.LastIndex(path, "."); i >= 0 {
		parent, key = path[:i], path[i+1:]
	}
	key = strings.TrimSuffix(key, "[]")
	for _, p := range yamlAt(n, parent) {
		if p.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(p.Content); i += 2 {
			if p.Content[i].Value == key {
				p.Content = append(p.Content[:i], p.Content[i+2:]...)
				break
			}
		}
	}
}
