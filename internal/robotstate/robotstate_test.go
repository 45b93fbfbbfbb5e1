package robotstate

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/urdf"
)

const robot = `<robot name="t">
  <link name="base"/><link name="a"/><link name="b"/><link name="c"/><link name="d"/><link name="e"/><link name="f"/>
  <joint name="fix" type="fixed"><parent link="base"/><child link="a"/><origin xyz="1 0 0"/></joint>
  <joint name="rev" type="revolute"><parent link="base"/><child link="b"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="pri" type="prismatic"><parent link="b"/><child link="c"/><axis xyz="1 0 0"/><limit lower="0" upper="1" effort="1" velocity="1"/></joint>
  <joint name="mim" type="continuous"><parent link="b"/><child link="d"/><mimic joint="rev" multiplier="-2" offset="0.5"/></joint>
  <joint name="flo" type="floating"><parent link="base"/><child link="e"/></joint>
  <joint name="pla" type="planar"><parent link="base"/><child link="f"/><origin xyz="0 0 3"/></joint>
</robot>`

func newPub(t *testing.T, cfg Config) *Publisher {
	t.Helper()
	m, err := urdf.Parse([]byte(robot))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func frames(ts []Stamped) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.Parent+">"+t.Child)
	}
	return strings.Join(s, " ")
}

const ms = int64(time.Millisecond)

func TestStatic(t *testing.T) {
	p := newPub(t, Config{PublishFrequency: 20, FramePrefix: "r1/"})
	st := p.Static(42)
	// fixed and planar joints; the floating one is skipped
	if got := frames(st); got != "r1/base>r1/a r1/base>r1/f" {
		t.Fatalf("static %q", got)
	}
	if st[0].Stamp != 42 || st[0].Transform.Translation != (geom.Vec3{X: 1, Y: 0, Z: 0}) || st[1].Transform.Translation != (geom.Vec3{X: 0, Y: 0, Z: 3}) {
		t.Fatalf("static %+v", st)
	}
	// a new description: same child replaced, new ones added, old kept
	m2, err := urdf.Parse([]byte(`<robot name="t2"><link name="base"/><link name="a"/><link name="z"/>
	  <joint name="fix" type="fixed"><parent link="base"/><child link="a"/><origin xyz="2 0 0"/></joint>
	  <joint name="fz" type="fixed"><parent link="a"/><child link="z"/></joint></robot>`))
	if err != nil {
		t.Fatal(err)
	}
	p.SetModel(m2)
	st = p.Static(43)
	if got := frames(st); got != "r1/base>r1/a r1/base>r1/f r1/a>r1/z" {
		t.Fatalf("merged static %q", got)
	}
	if st[0].Transform.Translation.X != 2 || st[2].Stamp != 43 {
		t.Fatalf("merged static %+v", st)
	}
}

func TestJointStates_Table(t *testing.T) {
	type msg struct {
		names []string
		pos   []float64
		stamp int64
		now   int64
	}
	type want struct {
		frames    string
		throttled bool
		nonFinite string
		unknown   string
		err       string
	}
	at := func(stampMs, nowMs int64, names []string, pos ...float64) msg {
		return msg{names, pos, stampMs * ms, nowMs * ms}
	}
	rev := []string{"rev"}
	both := []string{"rev", "pri"}
	cases := []struct {
		name string
		cfg  Config
		msgs []msg
		want []want // one per message
	}{
		{"first message publishes, mimic follows",
			DefaultConfig(), []msg{at(1000, 1000, rev, 0.1)},
			[]want{{frames: "base>b b>d"}}},
		{"prismatic and revolute",
			DefaultConfig(), []msg{at(1000, 1000, both, 0.1, 0.2)},
			[]want{{frames: "base>b b>c b>d"}}},
		{"throttled within one period (20 Hz = 50 ms)",
			DefaultConfig(), []msg{at(1000, 1000, rev, 0), at(1049, 1049, rev, 0), at(1050, 1050, rev, 0)},
			[]want{{frames: "base>b b>d"}, {throttled: true}, {frames: "base>b b>d"}}},
		{"period truncated to whole ms (30 Hz = 33 ms)",
			Config{PublishFrequency: 30}, []msg{at(1000, 1000, rev, 0), at(1033, 1033, rev, 0)},
			[]want{{frames: "base>b b>d"}, {frames: "base>b b>d"}}},
		{"the least recently published joint decides",
			DefaultConfig(), []msg{at(1000, 1000, rev, 0), at(1010, 1010, []string{"pri"}, 0), at(1020, 1020, both, 0, 0)},
			[]want{{frames: "base>b b>d"}, {frames: "b>c"}, {throttled: true}}},
		{"ignore_timestamp publishes everything",
			Config{PublishFrequency: 20, IgnoreTimestamp: true}, []msg{at(1000, 1000, rev, 0), at(1000, 1000, rev, 0)},
			[]want{{frames: "base>b b>d"}, {frames: "base>b b>d"}}},
		{"zero stamp is throttled as in ROS 2 (it is older than one period)",
			DefaultConfig(), []msg{at(0, 1000, rev, 0)},
			[]want{{throttled: true}}},
		{"clock going backwards forgets the last stamps",
			DefaultConfig(), []msg{at(5000, 5000, rev, 0), at(1000, 1000, rev, 0)},
			[]want{{frames: "base>b b>d"}, {frames: "base>b b>d"}}},
		{"old stamp without a clock jump is throttled",
			DefaultConfig(), []msg{at(5000, 5000, rev, 0), at(1000, 5100, rev, 0)},
			[]want{{frames: "base>b b>d"}, {throttled: true}}},
		{"NaN joint left out, others published",
			DefaultConfig(), []msg{at(1000, 1000, both, math.NaN(), 0.3)},
			[]want{{frames: "b>c", nonFinite: "rev"}}},
		{"Inf joint left out",
			DefaultConfig(), []msg{at(1000, 1000, []string{"pri"}, math.Inf(1))},
			[]want{{nonFinite: "pri"}}},
		{"unknown and non-moving names reported",
			DefaultConfig(), []msg{at(1000, 1000, []string{"zz", "rev", "fix"}, 1, 0, 0)},
			[]want{{frames: "base>b b>d", unknown: "fix zz"}}},
		{"a mimic joint given directly is published as given",
			DefaultConfig(), []msg{at(1000, 1000, []string{"mim"}, 0.7)},
			[]want{{frames: "b>d"}}},
		{"length mismatch",
			DefaultConfig(), []msg{at(1000, 1000, both, 1)},
			[]want{{err: "2 names but 1 positions"}}},
		{"no positions",
			DefaultConfig(), []msg{at(1000, 1000, both)},
			[]want{{err: `joint "rev" (and 1 more) has no positions`}}},
		{"empty message: nothing newer than now, so throttled as in ROS 2",
			DefaultConfig(), []msg{at(1000, 1000, nil)},
			[]want{{throttled: true}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPub(t, c.cfg)
			for i, m := range c.msgs {
				r, err := p.JointStates(m.names, m.pos, m.stamp, m.now)
				w := c.want[i]
				if w.err != "" {
					if err == nil || !strings.Contains(err.Error(), w.err) {
						t.Fatalf("message %d: error %v, want %q", i, err, w.err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("message %d: %v", i, err)
				}
				if got := frames(r.Transforms); got != w.frames || r.Throttled != w.throttled ||
					strings.Join(r.NonFinite, " ") != w.nonFinite || strings.Join(r.Unknown, " ") != w.unknown {
					t.Fatalf("message %d: frames %q throttled %v nonfinite %v unknown %v; want %+v",
						i, got, r.Throttled, r.NonFinite, r.Unknown, w)
				}
				for _, tf := range r.Transforms {
					if tf.Stamp != m.stamp {
						t.Fatalf("stamp %d, want the message's %d", tf.Stamp, m.stamp)
					}
				}
			}
		})
	}
}

func TestJointStates_Values(t *testing.T) {
	p := newPub(t, Config{PublishFrequency: 20, FramePrefix: "x_"})
	r, err := p.JointStates([]string{"rev", "pri"}, []float64{math.Pi / 2, 0.25}, 2*int64(time.Second), 2*int64(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Stamped{}
	for _, s := range r.Transforms {
		got[s.Child] = s
	}
	b := got["x_b"].Transform
	if b.Translation != (geom.Vec3{}) || math.Abs(b.Rotation.Z-math.Sqrt(0.5)) > 1e-15 || got["x_b"].Parent != "x_base" {
		t.Fatalf("rev %+v", got["x_b"])
	}
	if c := got["x_c"].Transform; c.Translation != (geom.Vec3{X: 0.25, Y: 0, Z: 0}) || c.Rotation != geom.Identity {
		t.Fatalf("pri %+v", c)
	}
	// mimic: −2·π/2 + 0.5 about x (the default axis)
	d := got["x_d"].Transform.Rotation
	want := geom.QuatFromAxisAngle(geom.Vec3{X: 1, Y: 0, Z: 0}, -math.Pi+0.5)
	if math.Abs(d.X-want.X) > 1e-15 || math.Abs(d.W-want.W) > 1e-15 {
		t.Fatalf("mimic %+v, want %+v", d, want)
	}
}

func TestConfig(t *testing.T) {
	m, _ := urdf.Parse([]byte(robot))
	for _, hz := range []float64{0, -1, 1000.5, math.NaN(), math.Inf(1)} {
		if _, err := New(m, Config{PublishFrequency: hz}); err == nil {
			t.Fatalf("frequency %v accepted", hz)
		}
	}
	if _, err := New(nil, DefaultConfig()); err == nil {
		t.Fatal("nil model accepted")
	}
	p, err := New(m, Config{PublishFrequency: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetConfig(Config{PublishFrequency: 0}); err == nil || p.Config().PublishFrequency != 1000 {
		t.Fatal("invalid SetConfig changed the config")
	}
	if err := p.SetConfig(Config{PublishFrequency: 10, FramePrefix: "p/"}); err != nil || p.Config().FramePrefix != "p/" {
		t.Fatal("SetConfig")
	}
}
