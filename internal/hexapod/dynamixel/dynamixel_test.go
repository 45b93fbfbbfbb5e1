package dynamixel

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/hexapod"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestInstruction_ByteExact(t *testing.T) {
	cases := []struct {
		name string
		got  func() ([]byte, error)
		want string
	}{
		// examples of the Robotis protocol 1.0 e-manual
		{"PingID1", func() ([]byte, error) { return Instruction(1, InstPing) }, "FF FF 01 02 01 FB"},
		{"ReadTemperatureID1", func() ([]byte, error) { return Instruction(1, InstRead, 0x2B, 1) }, "FF FF 01 04 02 2B 01 CC"},
		{"SyncWriteManualExample", func() ([]byte, error) {
			return SyncWrite(0x1E, []byte{0, 1, 2, 3}, [][]byte{
				{0x10, 0x00, 0x50, 0x01}, {0x20, 0x02, 0x60, 0x03}, {0x30, 0x00, 0x70, 0x01}, {0x20, 0x02, 0x80, 0x03}})
		}, "FF FF FE 18 83 1E 04 00 10 00 50 01 01 20 02 60 03 02 30 00 70 01 03 20 02 80 03 12"},
		// packets of this driver
		{"TorqueOnID8", func() ([]byte, error) { return Instruction(8, InstWrite, AddrTorqueEnable, 1) }, "FF FF 08 04 03 18 01 D7"},
		{"ReadPresentID8", func() ([]byte, error) { return Instruction(8, InstRead, AddrPresentPosition, 2) }, "FF FF 08 04 02 24 02 CB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.got()
			if err != nil {
				t.Fatal(err)
			}
			if want := unhex(t, c.want); !bytes.Equal(got, want) {
				t.Fatalf("packet % X\nwant      % X", got, want)
			}
		})
	}
}

func TestSyncWrite_RejectsMismatchedData(t *testing.T) {
	if _, err := SyncWrite(30, []byte{1, 2}, [][]byte{{1, 2}, {3}}); err == nil {
		t.Fatal("ragged data accepted")
	}
	if _, err := SyncWrite(30, nil, nil); err == nil {
		t.Fatal("empty sync write accepted")
	}
	if _, err := Instruction(1, InstWrite, make([]byte, 254)...); err == nil {
		t.Fatal("oversized packet accepted")
	}
}

func TestParseStatus(t *testing.T) {
	st, err := parseStatus(unhex(t, "FF FF 08 04 00 23 01 CF"))
	if err != nil || st.ID != 8 || st.Error != 0 || !bytes.Equal(st.Params, []byte{0x23, 0x01}) {
		t.Fatalf("parseStatus = %+v, %v", st, err)
	}
	if _, err := parseStatus(unhex(t, "FF FF 08 04 00 23 01 CE")); !errors.Is(err, ErrChecksum) {
		t.Fatalf("bad checksum: %v", err)
	}
	if _, err := parseStatus(unhex(t, "FF FF 08 05 00 23 01 CF")); err == nil {
		t.Fatal("wrong length accepted")
	}
}

func TestServo_TickAndAngle(t *testing.T) {
	s := Servo{Name: "COXA_RR", ID: 8, Ticks: 1024, Center: 512, MaxDegree: 300, Sign: -1, Min: 227, Max: 796}
	perRad := 1024 / (300 * math.Pi / 180)
	cases := []struct {
		angle float64
		tick  int
		ok    bool
	}{
		{0, 512, true},
		{0.5, 512 - int(math.Round(0.5*perRad)), true}, // 414
		{-0.5, 512 + int(math.Round(0.5*perRad)), true},
		{1.45, 512 - int(math.Round(1.45*perRad)), true}, // 228, just inside
		{1.46, 512 - int(math.Round(1.46*perRad)), false},
		{-1.5, 512 + int(math.Round(1.5*perRad)), false}, // 805 > 796
		{math.NaN(), 0, false},
	}
	for _, c := range cases {
		got, ok := s.Tick(c.angle)
		if ok != c.ok || (c.ok && got != c.tick) {
			t.Errorf("Tick(%v) = %d, %v; want %d, %v", c.angle, got, ok, c.tick, c.ok)
		}
	}
	if tk, _ := s.Tick(0.5); tk != 414 {
		t.Errorf("Tick(0.5) = %d, want 414", tk)
	}
	s.Offset = 0.1
	if tk, _ := s.Tick(0.1); tk != 512 {
		t.Errorf("offset: Tick(0.1) = %d, want 512", tk)
	}
	if a := s.Angle(414); math.Abs(a-(0.1+98/perRad)) > 1e-12 {
		t.Errorf("Angle(414) = %v", a)
	}
	for tk := 230; tk < 790; tk += 7 {
		if back, _ := s.Tick(s.Angle(tk)); back != tk {
			t.Fatalf("Tick(Angle(%d)) = %d", tk, back)
		}
	}
}

func TestConfig_Validate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	c := DefaultConfig()
	c.Servos[3].ID = c.Servos[0].ID
	c.Servos[5].Sign = 0
	c.Servos[7].Min, c.Servos[7].Max = 900, 100
	err := c.Validate()
	for _, want := range []string{"already used", "sign 0", "limits"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %q", err, want)
		}
	}
}

// rig is a driver on the slave side of a pseudo-terminal with a simulated
// AX-12A bus on the master side.
type rig struct {
	bus  *SimBus
	drv  *Driver
	done chan error
}

func newRig(t *testing.T) *rig {
	t.Helper()
	master, slave, err := OpenPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	port, err := OpenSerial(slave, 1000000)
	if err != nil {
		master.Close()
		t.Fatalf("open %s: %v", slave, err)
	}
	cfg := DefaultConfig()
	// generous: a loaded test machine can delay the pty round trip; the
	// timeout tests shorten it themselves
	cfg.Timeout = time.Second
	var ids []byte
	for _, s := range cfg.Servos {
		ids = append(ids, s.ID)
	}
	r := &rig{bus: NewSimBus(ids...), done: make(chan error, 1)}
	go func() { r.done <- r.bus.Serve(master) }()
	r.drv, err = New(port, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		port.Close()
		master.Close()
		<-r.done
	})
	return r
}

func TestDriver_SetSpeed_SyncWriteByteExact(t *testing.T) {
	r := newRig(t)
	if err := r.drv.SetSpeed(0.2); err != nil {
		t.Fatal(err)
	}
	// broadcast: no status comes back, so ping to know the bus has read it
	if err := r.drv.Ping(8); err != nil {
		t.Fatal(err)
	}
	got := r.bus.Received()
	want := unhex(t, "FF FF FE 3A 83 20 02 08 6A 00 0A 6A 00 0C 6A 00 0E 6A 00 10 6A 00 12 6A 00 02 6A 00 04 6A 00"+
		" 06 6A 00 09 6A 00 0B 6A 00 0D 6A 00 0F 6A 00 11 6A 00 13 6A 00 03 6A 00 05 6A 00 07 6A 00 F1")
	if len(got) != 2 || !bytes.Equal(got[0], want) || !bytes.Equal(got[1], unhex(t, "FF FF 08 02 01 F4")) {
		t.Fatalf("packets %X\nwant %X", got, want)
	}
	if v := r.bus.Word(19, AddrMovingSpeed); v != 106 {
		t.Fatalf("moving speed of servo 19 = %d, want 106", v)
	}
	if err := r.drv.SetSpeed(math.NaN()); err == nil {
		t.Fatal("NaN speed accepted")
	}
}

func TestDriver_TorqueReadAndGoals_OnSimulatedBus(t *testing.T) {
	r := newRig(t)
	r.bus.SetPresent(12, 600) // TIBIA_RR, sign -1
	var j hexapod.Joints
	if err := r.drv.ReadPositions(&j); err != nil {
		t.Fatal(err)
	}
	perRad := 1024 / (300 * math.Pi / 180)
	if want := -(600.0 - 512) / perRad; math.Abs(j[2]-want) > 1e-12 || j[0] != 0 {
		t.Fatalf("positions %v, want tibia RR %v", j[:3], want)
	}
	pk := r.bus.Received()
	if len(pk) != 18 || !bytes.Equal(pk[0], unhex(t, "FF FF 08 04 02 24 02 CB")) {
		t.Fatalf("read packets: % X", pk)
	}

	if err := r.drv.SetTorque(true); err != nil {
		t.Fatal(err)
	}
	pk = r.bus.Received()
	if len(pk) != 36 || !bytes.Equal(pk[18], unhex(t, "FF FF 08 04 03 18 01 D7")) {
		t.Fatalf("torque packets: %d, first write % X", len(pk), pk[18])
	}
	for _, s := range r.drv.cfg.Servos {
		if r.bus.Byte(s.ID, AddrTorqueEnable) != 1 {
			t.Fatalf("servo %d torque off", s.ID)
		}
	}

	goals := hexapod.Joints{}
	goals[0] = 0.5  // COXA_RR sign -1 -> 414
	goals[1] = 0.5  // FEMUR_RR sign +1 -> 610
	goals[2] = 3.0  // TIBIA_RR: far outside the limits, keeps 600
	goals[9] = -0.2 // COXA_LR sign +1 -> 473
	err := r.drv.WriteGoals(&goals)
	var le *LimitError
	if !errors.As(err, &le) || len(le.Joints) != 1 || !strings.HasPrefix(le.Joints[0], "TIBIA_RR") {
		t.Fatalf("WriteGoals error %v, want a LimitError for TIBIA_RR", err)
	}
	if err := r.drv.Ping(8); err != nil {
		t.Fatal(err)
	}
	pk = r.bus.Received()
	want := []byte{0xFF, 0xFF, 0xFE, 0x3A, 0x83, 0x1E, 0x02}
	ticks := []int{414, 610, 600, 512, 512, 512, 512, 512, 512, 473, 512, 512, 512, 512, 512, 512, 512, 512}
	for i, s := range r.drv.cfg.Servos {
		want = append(want, s.ID, byte(ticks[i]), byte(ticks[i]>>8))
	}
	want = append(want, Checksum(want[2:]))
	if !bytes.Equal(pk[0], want) {
		t.Fatalf("goal packet % X\nwant        % X", pk[0], want)
	}
	if r.bus.Word(8, AddrPresentPosition) != 414 || r.bus.Word(12, AddrGoalPosition) != 600 || r.bus.Word(9, AddrPresentPosition) != 473 {
		t.Fatalf("bus state: servo 8 at %d, 12 goal %d, 9 at %d", r.bus.Word(8, AddrPresentPosition),
			r.bus.Word(12, AddrGoalPosition), r.bus.Word(9, AddrPresentPosition))
	}

	if err := r.drv.SetTorque(false); err != nil {
		t.Fatal(err)
	}
	if r.bus.Byte(7, AddrTorqueEnable) != 0 || r.drv.Torque() {
		t.Fatal("torque still on")
	}
}

func TestDriver_BadChecksum_Reported(t *testing.T) {
	r := newRig(t)
	r.bus.SetFault(16, FaultBadChecksum) // FEMUR_RM
	var j hexapod.Joints
	err := r.drv.ReadPositions(&j)
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "FEMUR_RM") {
		t.Fatalf("ReadPositions error %v, want a checksum error naming FEMUR_RM", err)
	}
	// the other servos were still read
	if got := len(r.bus.Received()); got != 18 {
		t.Fatalf("%d read packets, want 18", got)
	}
}

func TestDriver_SilentServo_TimesOutAndTorqueOnFreesAll(t *testing.T) {
	r := newRig(t)
	r.drv.cfg.Timeout = 50 * time.Millisecond
	r.bus.SetFault(5, FaultSilent) // FEMUR_LF
	start := time.Now()
	err := r.drv.Ping(5)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("Ping of a silent servo: %v", err)
	}
	t.Logf("timeout after %v", time.Since(start))
	err = r.drv.SetTorque(true)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "FEMUR_LF") {
		t.Fatalf("SetTorque error %v", err)
	}
	if r.drv.Torque() {
		t.Fatal("driver thinks torque is on")
	}
	for _, s := range r.drv.cfg.Servos {
		if r.bus.Byte(s.ID, AddrTorqueEnable) != 0 {
			t.Fatalf("servo %d left with torque on", s.ID)
		}
	}
}

func TestDriver_StatusErrorBits(t *testing.T) {
	r := newRig(t)
	r.bus.SetFault(8, FaultOverload)
	err := r.drv.Ping(8)
	var se *StatusError
	if !errors.As(err, &se) || se.ID != 8 || se.Bits != 0x20 || !strings.Contains(err.Error(), "overload") {
		t.Fatalf("Ping error %v, want overload StatusError", err)
	}
}

func TestSimBus_CorruptInstruction_ChecksumErrorStatus(t *testing.T) {
	bus := NewSimBus(1)
	reply := bus.handle(unhex(t, "FF FF 01 02 01 FA"))
	if !bytes.Equal(reply, unhex(t, "FF FF 01 02 10 EC")) {
		t.Fatalf("reply % X", reply)
	}
	if reply := bus.handle(unhex(t, "FF FF 01 02 07 F5")); reply[4] != 0x40 {
		t.Fatalf("unknown instruction reply % X", reply)
	}
}

// streamPort is an in-memory port without deadlines: Write is recorded,
// Read returns canned bytes in small pieces.
type streamPort struct {
	in      []byte
	written bytes.Buffer
}

func (p *streamPort) Read(b []byte) (int, error) {
	if len(p.in) == 0 {
		return 0, os.ErrDeadlineExceeded
	}
	n := copy(b[:min(len(b), 3)], p.in)
	p.in = p.in[n:]
	return n, nil
}

func (p *streamPort) Write(b []byte) (int, error) { return p.written.Write(b) }

func TestDriver_SkipsGarbageAndOtherIDs(t *testing.T) {
	// noise, a status of servo 9, a bad-length header, then the answer of 8
	in := unhex(t, "00 13 FF 7E FF FF 09 02 00 F4 FF FF 08 01 FF FF 08 04 00 23 01 CF")
	p := &streamPort{in: in}
	d, err := New(p, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	st, err := d.transact(8, InstRead, AddrPresentPosition, 2)
	if err != nil || !bytes.Equal(st.Params, []byte{0x23, 0x01}) {
		t.Fatalf("transact = %+v, %v", st, err)
	}
	if !bytes.Equal(p.written.Bytes(), unhex(t, "FF FF 08 04 02 24 02 CB")) {
		t.Fatalf("written % X", p.written.Bytes())
	}
	if _, err := d.transact(8, InstPing); !errors.Is(err, ErrTimeout) {
		t.Fatalf("empty port: %v", err)
	}
}
