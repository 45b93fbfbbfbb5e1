package bag

import (
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
)

// FlightRecorder records the selected topics into a Snapshotter's ring
// and writes the window to disk on every event its Detector finds.
type FlightRecorder struct {
	*Recorder
	Snap *Snapshotter
	Det  *Detector
}

// NewFlightRecorder returns a FlightRecorder of node's graph. Call Run.
func NewFlightRecorder(node *ros.Node, ro RecordOptions, so SnapshotOptions) (*FlightRecorder, error) {
	snap, err := NewSnapshotter(so)
	if err != nil {
		return nil, err
	}
	f := &FlightRecorder{Snap: snap, Det: NewDetector()}
	f.Recorder, err = NewRecorder(node, snap, ro, func(topic, typ string, recv time.Time, data []byte) {
		for _, ev := range f.Det.Check(topic, typ, recv, data) {
			snap.Trigger(ev)
		}
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Snapshot writes the window now (a manual trigger, cause given); see
// Snapshotter.TriggerThen for done and the result.
func (f *FlightRecorder) Snapshot(at time.Time, cause string, done func(dir string, err error)) string {
	return f.Snap.TriggerThen(Event{Time: at, Kind: KindManual, Cause: cause}, done)
}
