package sim

import (
	"encoding/xml"
	"flag"
	"io"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite worlds/fsmnodes_flat.sdf from WorldSDF")

const worldFile = "../../worlds/fsmnodes_flat.sdf"

// TestWorldSDFMatchesCommittedFile keeps the Gazebo world in step with the
// built-in world: the committed SDF must be exactly what WorldSDF renders.
func TestWorldSDFMatchesCommittedFile(t *testing.T) {
	want := WorldSDF()
	if *update {
		if err := os.WriteFile(worldFile, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(worldFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is stale: run go test ./internal/sim -update", worldFile)
	}
}

func TestWorldSDFWellFormed(t *testing.T) {
	d := xml.NewDecoder(strings.NewReader(WorldSDF()))
	walls, boxes := len(DefaultWalls()), 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SDF is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "box" {
			boxes++
		}
	}
	if boxes != 2*walls { // a collision and a visual per wall
		t.Fatalf("%d boxes for %d walls", boxes, walls)
	}
}
