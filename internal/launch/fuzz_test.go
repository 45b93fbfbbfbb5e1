package launch

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad asks only that loading an arbitrary launch file never panics,
// and that every process of a file that loads has a command line.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		`<launch><arg name="a" default="x"/><let name="b" value="$(var a)-$(env HOME)"/></launch>`,
		`<launch><group><push_ros_namespace namespace="n"/><node pkg="fsmnodes" exec="sh" name="x"><param name="p" value="[1, 2]"/><remap from="a" to="b"/></node></group></launch>`,
		`<launch><executable cmd="sh -c 'echo $(var x'"/></launch>`,
		`<launch><include file="$(dirname)/self.launch.xml"/></launch>`,
		`<launch><let name="a" value="$(not $(equals 1 $(or true false)))"/></launch>`,
		`<launch><node pkg="fsmnodes" exec="sh"><param name="g"><param name="h" value="1.5"/></param></node></launch>`,
	} {
		f.Add(s)
	}
	bin := f.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, xml string) {
		dir := t.TempDir()
		file := filepath.Join(dir, "self.launch.xml")
		if err := os.WriteFile(file, []byte(xml), 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := Load(file, Options{BinDir: bin, ShareDir: dir, LookupEnv: env("PATH", "/bin:/usr/bin", "HOME", "/root")})
		if err != nil {
			return
		}
		for _, p := range d.Processes {
			if _, err := p.Command(dir); err != nil {
				t.Fatalf("Command of %s: %v", p.Label, err)
			}
		}
	})
}
