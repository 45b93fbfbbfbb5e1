package ros

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseDomainID(t *testing.T) {
	tests := []struct {
		in      string
		want    uint32
		wantErr string
	}{
		{"", 0, ""},
		{"0", 0, ""},
		{"42", 42, ""},
		{" 7 ", 7, ""},
		{"0x10", 16, ""},
		{"0X1f", 31, ""},
		{"010", 8, ""},
		{"232", 232, ""},
		{"233", 0, "above the maximum"},
		{"abc", 0, "not a number"},
		{"12abc", 0, "not a number"},
		{"-1", 0, "not a number"},
		{"+5", 5, ""},
		{"+", 0, "not a number"},
		{"09", 0, "not a number"}, // octal
	}
	for _, tt := range tests {
		got, err := parseDomainID(tt.in)
		checkErr(t, "parseDomainID("+tt.in+")", err, tt.wantErr)
		if err == nil && got != tt.want {
			t.Errorf("parseDomainID(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func envFunc(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestCycloneConfig(t *testing.T) {
	const localhostFrag = `<CycloneDDS><Domain><General><AllowMulticast>false</AllowMulticast></General>` +
		`<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex>` +
		`<Peers><Peer address="localhost"/></Peers></Discovery></Domain></CycloneDDS>,`
	const subnetFrag = `<CycloneDDS><Domain><Discovery><ParticipantIndex>auto</ParticipantIndex>` +
		`<MaxAutoParticipantIndex>32</MaxAutoParticipantIndex></Discovery></Domain></CycloneDDS>,`
	tests := []struct {
		name     string
		env      map[string]string
		want     string
		warnings int
	}{
		// SUBNET writes the fragment even without peers (rmw_cyclonedds_cpp's
		// add_static_peers): ParticipantIndex auto.
		{"jazzy default", map[string]string{}, subnetFrag, 0},
		{"jazzy default keeps uri", map[string]string{"CYCLONEDDS_URI": "file:///x.xml"}, subnetFrag + "file:///x.xml", 0},
		{"jazzy subnet", map[string]string{"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"}, subnetFrag, 0},
		{"jazzy subnet with peers", map[string]string{"ROS_STATIC_PEERS": "10.0.0.1; host.example"},
			`<CycloneDDS><Domain><Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex>` +
				`<Peers><Peer address="10.0.0.1"/><Peer address="host.example"/></Peers></Discovery></Domain></CycloneDDS>,`, 0},
		{"jazzy localhost", map[string]string{"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "CYCLONEDDS_URI": "<x/>"}, localhostFrag + "<x/>", 0},
		{"jazzy localhost with peers", map[string]string{"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "ROS_STATIC_PEERS": "a"},
			strings.Replace(localhostFrag, `<Peer address="localhost"/>`, `<Peer address="localhost"/><Peer address="a"/>`, 1), 0},
		{"jazzy off", map[string]string{"ROS_AUTOMATIC_DISCOVERY_RANGE": "OFF", "ROS_STATIC_PEERS": "a"},
			`<CycloneDDS><Domain><General><AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>none</ParticipantIndex>` +
				`<Tag>ros_discovery_off_1234</Tag></Discovery></Domain></CycloneDDS>,`, 1},
		{"jazzy system default", map[string]string{"ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT", "ROS_STATIC_PEERS": "a"}, "", 1},
		{"jazzy invalid range is localhost", map[string]string{"ROS_AUTOMATIC_DISCOVERY_RANGE": "bogus"}, localhostFrag, 1},
		{"jazzy localhost only (deprecated)", map[string]string{"ROS_LOCALHOST_ONLY": "1", "ROS_STATIC_PEERS": "a"}, localhostFrag, 1},
		{"humble default", map[string]string{"ROS_DISTRO": "humble", "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}, "", 0},
		{"humble localhost", map[string]string{"ROS_DISTRO": "humble", "ROS_LOCALHOST_ONLY": "1", "CYCLONEDDS_URI": "u"},
			`<CycloneDDS><Domain><General><Interfaces><NetworkInterface address="127.0.0.1"/></Interfaces></General></Domain></CycloneDDS>,u`, 0},
		{"humble localhost other value", map[string]string{"ROS_DISTRO": "humble", "ROS_LOCALHOST_ONLY": "true"}, "", 0},
	}
	for _, tt := range tests {
		getenv := envFunc(tt.env)
		d := distroFromEnv(getenv("ROS_DISTRO"))
		s, err := readDiscoverySettings(getenv, d)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got := cycloneConfig(s, d, getenv("CYCLONEDDS_URI"), 1234); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
		if len(s.Warnings) != tt.warnings {
			t.Errorf("%s: warnings %q, want %d", tt.name, s.Warnings, tt.warnings)
		}
	}
}

func TestReadEnv(t *testing.T) {
	c, err := readEnv(envFunc(map[string]string{"ROS_DOMAIN_ID": "0x0b", "ROS_DISTRO": "Humble"}), "")
	if err != nil || c.DomainID != 11 || c.Distro != Humble || c.Distro.gidSize() != 24 {
		t.Errorf("readEnv = %+v, %v", c, err)
	}
	c, err = readEnv(envFunc(map[string]string{}), "")
	if err != nil || c.DomainID != 0 || c.Distro != Jazzy || c.Distro.gidSize() != 16 {
		t.Errorf("readEnv default = %+v, %v", c, err)
	}
	c, err = readEnv(envFunc(map[string]string{"ROS_DISTRO": "jazzy", "ROS_LOCALHOST_ONLY": "1"}), "humble")
	if err != nil || c.Distro != Humble || !strings.Contains(c.Config, "127.0.0.1") {
		t.Errorf("distro override = %+v, %v; want Humble localhost config", c, err)
	}
	// Without ROS_DISTRO, ROS_LOCALHOST_ONLY=1 alone is Humble's localhost
	// (what a Humble peer with it can discover); with a Jazzy variable
	// beside it, or with ROS_DISTRO=jazzy, Jazzy's.
	for _, tc := range []struct {
		env    map[string]string
		humble bool
	}{
		{map[string]string{"ROS_LOCALHOST_ONLY": "1"}, true},
		{map[string]string{"ROS_LOCALHOST_ONLY": "1", "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}, false},
		{map[string]string{"ROS_LOCALHOST_ONLY": "1", "ROS_STATIC_PEERS": "a"}, false},
		{map[string]string{"ROS_LOCALHOST_ONLY": "1", "ROS_DISTRO": "jazzy"}, false},
		{map[string]string{"ROS_LOCALHOST_ONLY": "0"}, false},
	} {
		c, err := readEnv(envFunc(tc.env), "")
		if err != nil || c.Distro != Jazzy || strings.Contains(c.Config, "127.0.0.1") != tc.humble ||
			strings.Contains(c.Config, "localhost") == tc.humble && tc.env["ROS_LOCALHOST_ONLY"] == "1" {
			t.Errorf("readEnv(%v) = %+v, %v; want Humble's localhost config: %v", tc.env, c, err, tc.humble)
		}
	}
	if _, err := readEnv(envFunc(map[string]string{"ROS_DOMAIN_ID": "x"}), ""); err == nil {
		t.Error("bad ROS_DOMAIN_ID accepted")
	}
	if _, err := readEnv(envFunc(map[string]string{"ROS_STATIC_PEERS": strings.Repeat("a", 300)}), ""); err == nil {
		t.Error("overlong static peer accepted")
	}
}

func TestURISetsLease(t *testing.T) {
	dir := t.TempDir()
	withLease := filepath.Join(dir, "lease.xml")
	without := filepath.Join(dir, "plain.xml")
	if err := os.WriteFile(withLease, []byte("<CycloneDDS><Domain><Discovery><LeaseDuration>1s</LeaseDuration></Discovery></Domain></CycloneDDS>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(without, []byte("<CycloneDDS/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		uri  string
		want bool
	}{
		{"", false},
		{"<CycloneDDS><Domain><Discovery><LeaseDuration>1s</LeaseDuration></Discovery></Domain></CycloneDDS>", true},
		{"<CycloneDDS/>", false},
		{"file://" + withLease, true},
		{withLease, true},
		{"file://" + without + ",<x/>", false},
		{"<x/>, file://" + withLease, true},
		{"file:///no/such/file.xml", false},
	} {
		if got := uriSetsLease(tt.uri); got != tt.want {
			t.Errorf("uriSetsLease(%q) = %v, want %v", tt.uri, got, tt.want)
		}
	}
}
