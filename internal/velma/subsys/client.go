package subsys

import (
	"errors"
	"fmt"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/iobuf"
	"github.com/fsmnodes/fsmnodes/internal/velma"
)

// heartbeat is the longest gap between two task records of the client.
const heartbeat = 10 * time.Millisecond

// Client is the ROS interface agent's side of the buffers: it sends task
// commands to cs (and a heartbeat at least every 10 ms) and receives cs's
// status, which carries ve_body's. While cs is silent it can read ve_body's
// own status buffer (Body), the one ve_body writes for cs.
type Client struct {
	bufs    Buffers
	taskW   *iobuf.Writer[Task]
	stR     *iobuf.Reader[CSStatus]
	bodyR   *iobuf.Reader[BodyStatus]
	last    uint64
	lastB   uint64
	body    BodyStatus
	lastOut time.Time
	task    Task
	rec     CSStatus
	rep     velma.Report
	cs      velma.CSStatus
	loop    velma.LoopStats
}

// NewClient creates the task buffer; cs's status buffer is opened once cs
// has created it.
func NewClient(bufs Buffers) (*Client, error) {
	w, err := iobuf.Create[Task](bufs.Path(TaskFile), taskSlots)
	if err != nil {
		return nil, fmt.Errorf("velma interface: %w", err)
	}
	return &Client{bufs: bufs, taskW: w}, nil
}

// State describes the status buffer for a log line: the last record taken,
// the buffer's head and whether its writer (cs) is alive. Call it from the
// goroutine that calls Exchange.
func (c *Client) State() string {
	if c.stR == nil {
		return "cs status buffer not created yet"
	}
	return fmt.Sprintf("last cs status record %d, buffer head %d, torn reads %d, velma_core_cs alive: %v",
		c.last, c.stR.Head(), c.stR.Torn(), c.stR.WriterAlive())
}

// Close closes the buffers.
func (c *Client) Close() {
	c.taskW.Close()
	if c.stR != nil {
		c.stR.Close()
	}
	if c.bodyR != nil {
		c.bodyR.Close()
	}
}

// Send writes a task command for cs (nil: a heartbeat).
func (c *Client) Send(t *velma.TaskCommand, now time.Time) {
	c.task.Set(t)
	c.taskW.Write(&c.task)
	c.lastOut = now
}

// Exchange sends task (if not nil, else a heartbeat when one is due) and
// waits up to timeout for cs's next status. It returns the report of the
// ve_body iteration cs last saw (Report.CS points into the client and is
// valid until the next call), cs's loop figures as ve_body reports them,
// and false when no new status arrived.
func (c *Client) Exchange(task *velma.TaskCommand, timeout time.Duration) (*velma.Report, velma.LoopStats, bool) {
	now := time.Now()
	if task != nil || now.Sub(c.lastOut) >= heartbeat {
		c.Send(task, now)
	}
	if c.stR == nil {
		r, err := iobuf.Open[CSStatus](c.bufs.Path(CSStatusFile))
		if err != nil {
			time.Sleep(min(timeout, heartbeat))
			return nil, c.loop, false
		}
		c.stR, c.last = r, r.Head()
	}
	if !c.stR.Wait(c.last, min(timeout, heartbeat)) {
		return nil, c.loop, false
	}
	s := c.stR.Latest(&c.rec)
	if s <= c.last {
		c.last = max(c.last, c.stR.Head()) // a damaged record: skip it, do not spin on it
		return nil, c.loop, false
	}
	c.last = s
	r := &c.rec
	c.loop = bodyReport(&r.Body, &c.rep)
	c.cs = velma.CSStatus{State: r.State, Step: r.Step, InSelfCollision: r.Collision, MinDistance: r.MinDist,
		MotorsReady: r.Motors, Jnt: r.Jnt, Head: r.Head, Cart: r.Cart, QDesired: r.QDesired, HeadDesired: r.HeadDes,
		Wrist: r.Wrist, WristCmd: r.WristCmd, Torque: r.Torque}
	if r.ErrLen > 0 {
		c.cs.BehaviourErr = errors.New(string(r.Err[:min(int(r.ErrLen), len(r.Err))]))
	}
	c.rep.CS = &c.cs
	return &c.rep, c.loop, true
}

// Body returns ve_body's newest record read from its own status buffer
// (the one it writes for cs every iteration), for when cs is silent: the
// state of the safety layer and the effectors' status as ve_body last
// read them, without cs. Report.CS is nil. It does not wait; false means
// ve_body wrote nothing since the last call (not running, or not yet), or
// the record was damaged. Call it from the goroutine that calls Exchange.
func (c *Client) Body() (*velma.Report, velma.LoopStats, bool) {
	if c.bodyR == nil {
		r, err := iobuf.Open[BodyStatus](c.bufs.Path(BodyStatusFile))
		if err != nil {
			return nil, velma.LoopStats{}, false
		}
		// only records written from now on count: a dead ve_body's last
		// record says nothing about now (and probing its lock could race a
		// restarted ve_body taking it)
		c.bodyR, c.lastB = r, r.Head()
		return nil, velma.LoopStats{}, false
	}
	s := c.bodyR.Latest(&c.body)
	if s <= c.lastB {
		c.lastB = max(c.lastB, c.bodyR.Head())
		return nil, velma.LoopStats{}, false
	}
	c.lastB = s
	loop := bodyReport(&c.body, &c.rep)
	return &c.rep, loop, true
}

// bodyReport fills rep (all but CS) from ve_body's record and returns
// ve_body's loop figures.
func bodyReport(b *BodyStatus, rep *velma.Report) velma.LoopStats {
	*rep = velma.Report{Iteration: b.Iteration, StatusState: b.Diag.StatusState, BodyState: b.Diag.State,
		SC: b.SC, StatusValid: b.Status.Valid, Status: b.Effector, Sent: b.Diag.Sent, Command: b.Diag.Command}
	l := &b.Diag.Loop
	return velma.LoopStats{Iterations: l.Iterations, Overruns: l.Overruns, P50: time.Duration(l.P50),
		P99: time.Duration(l.P99), P999: time.Duration(l.P999), Max: time.Duration(l.Max), MaxStep: time.Duration(l.Step)}
}
