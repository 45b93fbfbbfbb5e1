package rsm

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"go.yaml.in/yaml/v3"
)

// waypointsFileVersion is written to and required from waypoints files.
const waypointsFileVersion = 1

// CorruptFileError says that a waypoints file could not be used and where
// it was moved.
type CorruptFileError struct {
	Path    string // the configured file
	MovedTo string // where it is now ("" if the move failed)
	Err     error  // why it is corrupt
}

// Error describes the file, the reason and the new place.
func (e *CorruptFileError) Error() string {
	if e.MovedTo == "" {
		return fmt.Sprintf("waypoints file %s is corrupt (%v) and could not be moved aside", e.Path, e.Err)
	}
	return fmt.Sprintf("waypoints file %s is corrupt (%v); moved to %s", e.Path, e.Err, e.MovedTo)
}

// Unwrap returns the reason.
func (e *CorruptFileError) Unwrap() error { return e.Err }

type fileVec struct {
	X float64 `yaml:"x"`
	Y float64 `yaml:"y"`
	Z float64 `yaml:"z"`
}

type fileQuat struct {
	X float64 `yaml:"x"`
	Y float64 `yaml:"y"`
	Z float64 `yaml:"z"`
	W float64 `yaml:"w"`
}

type fileWaypoint struct {
	Position    fileVec  `yaml:"position"`
	Orientation fileQuat `yaml:"orientation"`
	Visited     bool     `yaml:"visited"`
	Unreachable bool     `yaml:"unreachable"`
	Routine     string   `yaml:"routine"`
}

type waypointsFile struct {
	Version   int            `yaml:"version"`
	Mode      uint8          `yaml:"mode"`
	Reverse   bool           `yaml:"reverse"`
	Waypoints []fileWaypoint `yaml:"waypoints"`
}

// SaveWaypoints writes arr to path atomically and durably: a temporary file
// in the same directory is written and fsynced, renamed over path, and the
// directory is fsynced so the rename survives a power cut. Readers see the
// old or the new file, never a partial one. Missing directories are
// created.
func SaveWaypoints(path string, arr WaypointArray) error {
	data, err := encodeWaypoints(arr)
	if err != nil {
		return fmt.Errorf("save waypoints %s: %w", path, err)
	}
	return writeWaypoints(path, data)
}

// encodeWaypoints returns the content of a waypoints file holding arr.
func encodeWaypoints(arr WaypointArray) ([]byte, error) {
	f := waypointsFile{Version: waypointsFileVersion, Mode: uint8(arr.Mode), Reverse: arr.Reverse,
		Waypoints: make([]fileWaypoint, 0, len(arr.Waypoints))}
	for _, w := range arr.Waypoints {
		p, o := w.Pose.Position, w.Pose.Orientation
		f.Waypoints = append(f.Waypoints, fileWaypoint{
			Position: fileVec(p), Orientation: fileQuat(o),
			Visited: w.Visited, Unreachable: w.Unreachable, Routine: w.Routine,
		})
	}
	data, err := yaml.Marshal(&f)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return append([]byte("# RSM waypoints (fsmnodes service_provider); rewritten on every change\n"), data...), nil
}

// writeWaypoints writes data to path as SaveWaypoints describes.
func writeWaypoints(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save waypoints %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("save waypoints %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("save waypoints %s: write: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("save waypoints %s: sync: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save waypoints %s: close: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		done = true
		return fmt.Errorf("save waypoints %s: rename: %w", path, err)
	}
	done = true
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("save waypoints %s: open directory to sync the rename: %w", path, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("save waypoints %s: sync directory: %w", path, err)
	}
	return nil
}

// LoadWaypoints reads a waypoints file. A missing file gives an empty
// array and no error. A file that cannot be parsed or holds bad values
// (wrong version, unknown mode, NaN/Inf) is renamed to
// "<path>.corrupt-<UTC time>" and a *CorruptFileError is returned.
func LoadWaypoints(path string) (WaypointArray, error) {
	return loadWaypoints(path, DefaultBounds())
}

// loadWaypoints is LoadWaypoints within bounds: a file larger than the
// bounds allow is not read, and one holding more waypoints or longer
// routines than they allow is refused; both are moved aside as corrupt.
func loadWaypoints(path string, b Bounds) (WaypointArray, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return WaypointArray{}, nil
	}
	if err != nil {
		return WaypointArray{}, fmt.Errorf("load waypoints %s: %w", path, err)
	}
	limit := b.maxFileSize()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	_ = f.Close()
	if err != nil {
		return WaypointArray{}, fmt.Errorf("load waypoints %s: %w", path, err)
	}
	var perr error
	var arr WaypointArray
	if int64(len(data)) > limit {
		perr = fmt.Errorf("larger than %d bytes, the most max_waypoints %d and max_routine_length %d allow",
			limit, b.MaxWaypoints, b.MaxRoutineLength)
	} else if arr, perr = parseWaypoints(data); perr == nil {
		perr = b.check(arr)
	}
	if perr == nil {
		return arr, nil
	}
	ce := &CorruptFileError{Path: path, Err: perr}
	dst := fmt.Sprintf("%s.corrupt-%s", path, time.Now().UTC().Format("20060102T150405.000000000Z"))
	if err := os.Rename(path, dst); err == nil {
		ce.MovedTo = dst
	}
	return WaypointArray{}, ce
}

func parseWaypoints(data []byte) (WaypointArray, error) {
	var f waypointsFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return WaypointArray{}, fmt.Errorf("parse: %w", err)
	}
	if f.Version != waypointsFileVersion {
		return WaypointArray{}, fmt.Errorf("version %d, want %d", f.Version, waypointsFileVersion)
	}
	arr := WaypointArray{Mode: WaypointMode(f.Mode), Reverse: f.Reverse}
	if !arr.Mode.Valid() {
		return WaypointArray{}, fmt.Errorf("unknown waypoint following mode %d", f.Mode)
	}
	for i, w := range f.Waypoints {
		wp := Waypoint{
			Pose: Pose{
				Position:    geom.Vec3{X: w.Position.X, Y: w.Position.Y, Z: w.Position.Z},
				Orientation: geom.Quat{X: w.Orientation.X, Y: w.Orientation.Y, Z: w.Orientation.Z, W: w.Orientation.W},
			},
			Visited: w.Visited, Unreachable: w.Unreachable, Routine: w.Routine,
		}
		if err := wp.Pose.Validate(); err != nil {
			return WaypointArray{}, fmt.Errorf("waypoint %d: %w", i, err)
		}
		arr.Waypoints = append(arr.Waypoints, wp)
	}
	return arr, nil
}
