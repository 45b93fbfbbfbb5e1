package bag

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// FlightRecorderNodeName is the default name of the flight_recorder node.
const FlightRecorderNodeName = "flight_recorder"

// flightDir is where snapshots go unless output_dir says otherwise:
// $ROS_HOME/fsmnodes/flight_recorder (ROS_HOME defaults to ~/.ros).
// A leading "~/" is the user's home directory (the demo's launch file
// passes $(env ROS_HOME ~/.ros)/...).
func flightDir(dir string) (string, error) {
	if rest, ok := strings.CutPrefix(dir, "~/"); ok || dir == "~" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("flight recorder: output_dir %q: %w", dir, err)
		}
		return filepath.Join(h, rest), nil
	}
	if dir != "" {
		return dir, nil
	}
	home := os.Getenv("ROS_HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("flight recorder: no output_dir and no home directory: %w", err)
		}
		home = filepath.Join(h, ".ros")
	}
	return filepath.Join(home, "fsmnodes", "flight_recorder"), nil
}

// FlightRecorderSetup is the setup (for ros.Run) of the flight_recorder
// node: the flight recorder of `fsmnodes bag record --snapshot-duration`
// as a node with parameters, which the demo launches. It also serves
// ~/snapshot (std_srvs/Trigger): write the window now.
func FlightRecorderSetup(reg *rosidl.Registry) func(ctx context.Context, n *ros.Node) error {
	return func(ctx context.Context, n *ros.Node) error {
		d := ros.NewDeclarer(n)
		const why = "the recorder and its bounds are set up at start-up"
		ro := func(desc string) param.Descriptor { return param.ReadOnly(desc, why) }
		positive := func(v int64) error {
			if v <= 0 {
				return errors.New("is not positive")
			}
			return nil
		}
		window := param.DeclareDuration(d, "snapshot_duration", 30*time.Second, ro("seconds of every topic kept in memory and written on an event"), func(v time.Duration) error {
			if v <= 0 {
				return errors.New("is not positive")
			}
			return nil
		})
		out := param.Declare(d, "output_dir", "", ro("directory of the snapshot bags (\"\": $ROS_HOME/fsmnodes/flight_recorder; a leading ~/ is the home directory)"), nil)
		maxMem := param.Declare(d, "max_memory_bytes", int64(DefaultSnapshotMaxBytes), ro("bytes the window may hold (message bytes + 96 per message); the oldest go first"), positive)
		keep := param.Declare(d, "keep_bags", int64(DefaultKeepBags), ro("snapshot bags kept; the oldest are removed"), positive)
		maxDisk := param.Declare(d, "max_disk_bytes", int64(DefaultMaxDiskBytes), ro("bytes the snapshot bags may take together; the oldest are removed"), positive)
		holdoff := param.DeclareDuration(d, "holdoff", DefaultHoldoff, ro("least time between two snapshots"), nil)
		topics := param.Declare(d, "topics_regex", ".*", ro("record the topics matching this regular expression"), nil)
		exclude := param.Declare(d, "exclude_regex", "", ro("leave out the topics matching this regular expression"), nil)
		hidden := param.Declare(d, "include_hidden", false, ro("also record hidden topics"), nil)
		if err := d.Err(); err != nil {
			return err
		}
		ropts := RecordOptions{Registry: reg, IncludeHidden: hidden}
		var err error
		if ropts.Regex, err = regexp.Compile(topics); err != nil {
			return fmt.Errorf("topics_regex: %w", err)
		}
		if exclude != "" {
			if ropts.Exclude, err = regexp.Compile(exclude); err != nil {
				return fmt.Errorf("exclude_regex: %w", err)
			}
		}
		dir, err := flightDir(out)
		if err != nil {
			return err
		}
		log := n.Logger()
		writeErrors := n.Counter("snapshot_write_errors")
		so := SnapshotOptions{Dir: dir, Window: window, MaxBytes: maxMem, KeepBags: int(keep), MaxDiskBytes: maxDisk, Holdoff: holdoff,
			Writer: WriterOptions{ROSDistro: n.Context().Distro().String()},
			Logf:   log.Infof,
			Errorf: func(f string, args ...any) {
				writeErrors.Inc()
				log.Errorf(f, args...)
			}}
		fr, err := NewFlightRecorder(n, ropts, so)
		if err != nil {
			return err
		}
		// ~/snapshot answers once the bag is complete (metadata.yaml
		// written), so a caller may open it at once; the node records on
		// meanwhile (a deferred response).
		_, err = ros.NewDeferredService(n, "~/snapshot", std_srvs_srv.Trigger, func(_ context.Context, _ *std_srvs_srv.Trigger_Request, reply func(*std_srvs_srv.Trigger_Response)) {
			at := n.Clock().Now()
			p := fr.Snapshot(at, "~/snapshot called", func(dir string, err error) {
				if err != nil {
					reply(&std_srvs_srv.Trigger_Response{Success: false, Message: fmt.Sprintf("writing %s failed: %v", dir, err)})
					return
				}
				reply(&std_srvs_srv.Trigger_Response{Success: true, Message: dir})
			})
			if p == "" {
				reply(&std_srvs_srv.Trigger_Response{Success: false, Message: fmt.Sprintf("within %v of the last snapshot: not written", holdoff)})
			}
		})
		if err != nil {
			return err
		}
		log.Infof("flight recorder: keeping the last %v (at most %d MiB) of %s; snapshots go to %s (at most %d bags, %d MiB)",
			window, maxMem>>20, topics, dir, keep, maxDisk>>20)
		n.Context().Go(func(ctx context.Context) error { return fr.Run(ctx) })
		n.Context().OnShutdown(func() error { fr.Snap.Wait(); return nil })
		return nil
	}
}
