package subsys

import (
	"fmt"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/iobuf"
	"github.com/fsmnodes/fsmnodes/internal/velma/sim"
)

// SimReport is the simulator process's state for introspection.
type SimReport struct {
	Steps     uint64
	Answer    uint64 // ve_body iteration of the last command applied
	Connected bool   // ve_body's command buffer is open
}

// Sim is the velma_sim process loop: the simulated effectors in lock-step
// with ve_body's command records (each record steps the simulation once,
// as each command steps Gazebo in the original).
type Sim struct {
	sim  *sim.Sim
	bufs Buffers
	cmdR *iobuf.Reader[EffCommand]
	stW  *iobuf.Writer[EffStatus]
	last uint64
	rec  EffCommand
	out  EffStatus
	idle int

	mu  sync.Mutex
	rep SimReport
}

// NewSim creates the simulator and its status buffer and publishes the
// initial status.
func NewSim(cfg sim.Config, bufs Buffers) (*Sim, error) {
	s, err := sim.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("velma_sim: %w", err)
	}
	p := &Sim{sim: s, bufs: bufs}
	if p.stW, err = iobuf.Create[EffStatus](bufs.Path(EffStatusFile), loopSlots); err != nil {
		return nil, fmt.Errorf("velma_sim: %w", err)
	}
	p.publish(0)
	return p, nil
}

// Sim returns the simulator (for fault injection in tests; loop goroutine
// only).
func (p *Sim) Sim() *sim.Sim { return p.sim }

// Close closes the buffers.
func (p *Sim) Close() {
	p.stW.Close()
	if p.cmdR != nil {
		p.cmdR.Close()
	}
}

// Report returns the simulator's state (any goroutine).
func (p *Sim) Report() SimReport {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rep
}

func (p *Sim) publish(answer uint64) {
	p.out.Answer, p.out.Steps = answer, p.sim.Steps()
	p.out.Status, p.out.Valid = p.sim.ReadStatus()
	p.stW.Write(&p.out)
	p.mu.Lock()
	p.rep.Steps, p.rep.Answer, p.rep.Connected = p.out.Steps, answer, p.cmdR != nil
	p.mu.Unlock()
}

// Step waits up to timeout for ve_body's next command record, applies it,
// steps the simulation and publishes the status; it reports whether a
// record arrived.
func (p *Sim) Step(timeout time.Duration) bool {
	if p.cmdR == nil {
		r, err := iobuf.Open[EffCommand](p.bufs.Path(EffCommandFile))
		if err != nil {
			time.Sleep(timeout)
			return false
		}
		p.cmdR, p.last = r, r.Head()
	}
	if !p.cmdR.Wait(p.last, timeout) {
		// while ve_body is away, repeat the status now and then so a
		// restarted ve_body finds a fresh one
		if p.idle++; p.idle%10 == 0 {
			p.publish(p.out.Answer)
		}
		return false
	}
	s := p.cmdR.Latest(&p.rec)
	if s <= p.last {
		p.last = max(p.last, p.cmdR.Head()) // a damaged record: skip it, do not spin on it
		return false
	}
	p.last, p.idle = s, 0
	if p.rec.Send {
		p.sim.WriteCommand(p.rec.Command)
	}
	p.sim.Step()
	p.publish(p.rec.Iteration)
	return true
}
