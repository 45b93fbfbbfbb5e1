package rsm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestStore_Bounds: addWaypoint beyond max_waypoints and routines longer
// than max_routine_length are refused with the bound named, and nothing is
// stored (issue 25, finding 3: no bound existed).
func TestStore_Bounds(t *testing.T) {
	long := strings.Repeat("r", 9)
	cases := []struct {
		name string
		call func(s *Store) Reply
		want string // "" accepted
	}{
		{"add within", func(s *Store) Reply { return s.AddWaypoint(wp(1, 1, "12345678"), -1) }, ""},
		{"add beyond count", func(s *Store) Reply {
			s.AddWaypoint(wp(1, 1, ""), -1)
			s.AddWaypoint(wp(2, 2, ""), -1)
			return s.AddWaypoint(wp(3, 3, ""), 0)
		}, "Waypoint rejected: the store holds 3 waypoints, the most max_waypoints allows"},
		{"add long routine", func(s *Store) Reply { return s.AddWaypoint(wp(1, 1, long), -1) },
			"Waypoint rejected: routine of 9 bytes, longer than max_routine_length 8"},
		{"set long routine", func(s *Store) Reply { return s.SetWaypointRoutine(0, long) },
			"Routine rejected: routine of 9 bytes, longer than max_routine_length 8"},
		{"set routine within", func(s *Store) Reply { return s.SetWaypointRoutine(0, "Reversin") }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "waypoints.yaml")
			s := NewStore(StoreConfig{WaypointsFile: path, Bounds: Bounds{MaxWaypoints: 3, MaxRoutineLength: 8}})
			if r := s.AddWaypoint(wp(0, 0, ""), -1); !r.Success {
				t.Fatal(r)
			}
			before := s.Waypoints()
			r := c.call(s)
			if c.want == "" {
				if !r.Success {
					t.Fatalf("refused: %+v", r)
				}
				return
			}
			if r.Success || r.Message != c.want {
				t.Fatalf("reply %+v, want false %q", r, c.want)
			}
			if c.name != "add beyond count" && len(s.Waypoints().Waypoints) != len(before.Waypoints) {
				t.Errorf("a refused request changed the store: %+v", s.Waypoints())
			}
			if got := s.Waypoints(); len(got.Waypoints) > 3 || strings.Contains(got.Waypoints[0].Routine, long) {
				t.Errorf("store beyond its bounds: %+v", got)
			}
		})
	}
	if d := NewStore(StoreConfig{}).Bounds(); d != DefaultBounds() || d.MaxWaypoints <= 0 || d.MaxRoutineLength <= 0 {
		t.Errorf("bounds of a config without them = %+v, want %+v", d, DefaultBounds())
	}
}

// TestStore_NoChangeNoWrite: a request that changes nothing (a second
// reset, the same routine again, the same mode) neither rewrites the file
// (its inode stays: a save renames a new file over it) nor counts as a
// change for the publisher (Version); a real change does both.
func TestStore_NoChangeNoWrite(t *testing.T) {
	bg := context.Background()
	path := filepath.Join(t.TempDir(), "waypoints.yaml")
	s := NewStore(StoreConfig{WaypointsFile: path})
	s.AddWaypoint(wp(1, 1, "A"), -1)
	inode := func() uint64 {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	ino, ver := inode(), s.Version()
	for name, call := range map[string]func() Reply{
		"reset":   func() Reply { r, _ := s.ResetWaypoints(bg); return r },
		"routine": func() Reply { return s.SetWaypointRoutine(0, "A") },
		"mode":    func() Reply { r, _ := s.SetWaypointFollowingMode(bg, s.Waypoints().Mode, false); return r },
		"move":    func() Reply { return s.MoveWaypoint(0, at(1, 1)) },
	} {
		if r := call(); !r.Success {
			t.Fatalf("%s: %+v", name, r)
		}
		if got := inode(); got != ino {
			t.Errorf("%s that changed nothing rewrote the file", name)
			ino = got
		}
		if s.Version() != ver {
			t.Errorf("%s that changed nothing changed the version", name)
			ver = s.Version()
		}
	}
	if r, _ := s.WaypointVisited(bg, 0); !r.Success {
		t.Fatal(r)
	}
	if inode() == ino || s.Version() == ver {
		t.Error("a real change neither rewrote the file nor changed the version")
	}
	// A restarted store knows the file's content: a no-op writes nothing.
	s2 := NewStore(StoreConfig{WaypointsFile: path})
	ino = inode()
	if r := s2.SetWaypointRoutine(0, "A"); !r.Success || inode() != ino {
		t.Errorf("no-op after a restart: %+v, rewrote %v", r, inode() != ino)
	}
}

// TestStore_LoadBeyondBounds: a waypoints file beyond the bounds (more
// waypoints, a longer routine, more bytes than they allow) is not loaded:
// the store starts empty, the file is moved aside (nothing lost) and the
// error log names the bound.
func TestStore_LoadBeyondBounds(t *testing.T) {
	b := Bounds{MaxWaypoints: 3, MaxRoutineLength: 8}
	write := func(t *testing.T, arr WaypointArray, pad int) string {
		path := filepath.Join(t.TempDir(), "waypoints.yaml")
		if err := SaveWaypoints(path, arr); err != nil {
			t.Fatal(err)
		}
		if pad > 0 { // a YAML comment: parses, but makes the file large
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = f.WriteString("#" + strings.Repeat("x", pad) + "\n")
			_ = f.Close()
		}
		return path
	}
	four := WaypointArray{Waypoints: []Waypoint{wp(1, 0, ""), wp(2, 0, ""), wp(3, 0, ""), wp(4, 0, "")}}
	cases := []struct {
		name string
		arr  WaypointArray
		pad  int
		want string // "" loads
	}{
		{"within", WaypointArray{Waypoints: four.Waypoints[:3]}, 0, ""},
		{"too many", four, 0, "4 waypoints, more than max_waypoints 3"},
		{"long routine", WaypointArray{Waypoints: []Waypoint{wp(1, 0, "123456789")}}, 0, "routine of 9 bytes, longer than max_routine_length 8"},
		{"too large", WaypointArray{Waypoints: four.Waypoints[:1]}, int(b.maxFileSize()), "larger than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := write(t, c.arr, c.pad)
			log := &recLog{}
			s := NewStore(StoreConfig{WaypointsFile: path, Log: log, Bounds: b})
			if c.want == "" {
				if len(s.Waypoints().Waypoints) != len(c.arr.Waypoints) || len(log.errors) > 0 {
					t.Fatalf("loaded %d waypoints, errors %q", len(s.Waypoints().Waypoints), log.errors)
				}
				return
			}
			if n := len(s.Waypoints().Waypoints); n != 0 {
				t.Errorf("loaded %d waypoints from a file beyond the bounds", n)
			}
			if log.errorsContaining(c.want) != 1 || log.errorsContaining("moved to") != 1 {
				t.Errorf("errors %q, want one with %q and where the file went", log.errors, c.want)
			}
			if _, err := os.Stat(path); err == nil {
				t.Error("the file beyond the bounds is still in place (the next save would overwrite it)")
			}
			moved, _ := filepath.Glob(path + ".corrupt-*")
			if len(moved) != 1 {
				t.Errorf("moved aside: %v", moved)
			}
		})
	}
}

// TestStore_FullAtTheBounds: a store filled to the default bounds (1000
// waypoints, each with a 256-byte routine) is saved within the file size
// its own start-up accepts, and a new store loads all of it again. The
// file size is logged: the disk a client can make the robot keep.
func TestStore_FullAtTheBounds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "waypoints.yaml")
	b := DefaultBounds()
	routine := strings.Repeat("r", b.MaxRoutineLength)
	// All but one saved at once; the last through the store, which writes
	// the full file itself.
	var arr WaypointArray
	for i := range b.MaxWaypoints - 1 {
		arr.Waypoints = append(arr.Waypoints, wp(float64(i), float64(i), routine))
	}
	if err := SaveWaypoints(path, arr); err != nil {
		t.Fatal(err)
	}
	s := NewStore(StoreConfig{WaypointsFile: path})
	if r := s.AddWaypoint(wp(-1, -1, routine), -1); !r.Success {
		t.Fatalf("the last waypoint within the bounds: %+v", r)
	}
	if r := s.AddWaypoint(wp(0, 0, ""), -1); r.Success {
		t.Fatal("a waypoint beyond max_waypoints was stored")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FIGURE waypoints file at the bounds (%d waypoints, %d-byte routines): %d bytes (start-up accepts up to %d)",
		b.MaxWaypoints, b.MaxRoutineLength, fi.Size(), b.maxFileSize())
	if fi.Size() > b.maxFileSize() {
		t.Errorf("the full store's file is %d bytes, above the %d its start-up accepts", fi.Size(), b.maxFileSize())
	}
	again := NewStore(StoreConfig{WaypointsFile: path})
	if n := len(again.Waypoints().Waypoints); n != b.MaxWaypoints {
		t.Errorf("a new store loaded %d waypoints from the full file, want %d", n, b.MaxWaypoints)
	}
}
