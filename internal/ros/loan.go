package ros

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

// Shared memory and loaned messages.
//
// When Cyclone's configuration enables shared memory (iceoryx) and RouDi
// runs, a publisher reaches subscriptions on the same host through shared
// memory instead of the loopback network, as rmw_cyclonedds_cpp does.
// For fixed-size types (only primitives and fixed arrays: no strings, no
// sequences) a publisher can also lend the message itself in shared
// memory, as rclcpp's borrow_loaned_message does: the application fills
// it in place and PublishLoaned hands the memory to the subscribers on
// this host without copying it; it is serialized only when a subscription
// without shared memory (another host, say) needs CDR.

// fixedLayout returns the memory layout of ti's type, or nil when it is
// not fixed-size.
func fixedLayout(ti *rosidl.TypeInfo) *rosidl.MemoryLayout {
	ml, _ := ti.Desc.FixedLayout()
	return ml
}

// ddsLayout returns ml in internal/dds's terms (nil for nil).
func ddsLayout(ml *rosidl.MemoryLayout) *dds.Layout {
	if ml == nil {
		return nil
	}
	l := &dds.Layout{Size: ml.Size, Runs: make([]dds.Run, len(ml.Runs))}
	for i, r := range ml.Runs {
		l.Runs[i] = dds.Run{Offset: r.Offset, Count: r.Count, Size: r.Size}
	}
	return l
}

// goLayout returns the memory layout of the Go type t in the terms of
// rosidl.MemoryLayout, or false when t holds anything but fixed-size
// primitives, arrays and structs.
func goLayout(t reflect.Type) (*rosidl.MemoryLayout, bool) {
	var runs []rosidl.MemoryRun
	var walk func(t reflect.Type, base uint32) bool
	walk = func(t reflect.Type, base uint32) bool {
		switch t.Kind() {
		case reflect.Bool, reflect.Int8, reflect.Uint8, reflect.Int16, reflect.Uint16,
			reflect.Int32, reflect.Uint32, reflect.Float32, reflect.Int64, reflect.Uint64, reflect.Float64:
			var ok bool
			runs, ok = rosidl.AppendRun(runs, rosidl.MemoryRun{Offset: base, Count: 1, Size: uint32(t.Size())})
			return ok
		case reflect.Array:
			for i := 0; i < t.Len(); i++ {
				if !walk(t.Elem(), base+uint32(i)*uint32(t.Elem().Size())) {
					return false
				}
			}
			return true
		case reflect.Struct:
			if t.NumField() == 0 {
				return false
			}
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				if !walk(f.Type, base+uint32(f.Offset)) {
					return false
				}
			}
			return true
		default:
			return false
		}
	}
	if t.Size() == 0 || t.Size() > 1<<30 || !walk(t, 0) {
		return nil, false
	}
	return &rosidl.MemoryLayout{Size: uint32(t.Size()), Runs: runs}, true
}

// loanInfo is what a Publisher[T] needs to lend messages: T's default
// value, which a loan starts from, as rclcpp constructs a borrowed
// message.
type loanInfo[T any] struct {
	def T
}

// newLoanInfo returns the loan information of T, or nil when T's Go
// memory layout differs from want, the C layout of its type description
// (then a chunk in shared memory cannot be a *T), or want is nil.
func newLoanInfo[T any, P rosidl.Ptr[T]](ti *rosidl.TypeInfo, want *rosidl.MemoryLayout) *loanInfo[T] {
	if want == nil {
		return nil
	}
	got, ok := goLayout(reflect.TypeFor[T]())
	if !ok || !want.Equal(got) {
		return nil
	}
	li := &loanInfo[T]{}
	if ti.New != nil {
		if m, ok := ti.New().(P); ok {
			li.def = *m
		}
	}
	return li
}

// LoanedMessage is a message a Publisher lent: in shared memory when the
// publisher can loan messages, else on the Go heap. Fill in Msg, then
// PublishLoaned it or Release it; after either, Msg must not be used.
type LoanedMessage[T any] struct {
	// Msg is the message, set to its default values.
	Msg *T

	pub   *Publisher[T]
	chunk unsafe.Pointer // nil: on the Go heap
	mu    sync.Mutex
	done  bool
}

// ErrLoanDone is returned for a loaned message already published or
// released.
var ErrLoanDone = errors.New("ros: loaned message already published or released")

// CanLoanMessages reports whether BorrowLoanedMessage lends messages in
// shared memory: shared memory is on for this publisher (Cyclone's
// configuration and RouDi), and T is a fixed-size type whose Go layout is
// its C layout, as rclcpp's can_loan_messages.
func (p *Publisher[T]) CanLoanMessages() bool { return p.loan != nil && p.p.w.CanLoan() }

// BorrowLoanedMessage lends a message set to its default values. When the
// publisher cannot loan messages (CanLoanMessages), the message is on the
// Go heap and PublishLoaned publishes it as Publish does, as rclcpp falls
// back to allocating. A loan in shared memory holds one of RouDi's chunks
// until it is published or released; a publisher has at most dds.MaxLoans
// of them out at once (Cyclone's limit per writer), and a further borrow
// fails with an error.
func (p *Publisher[T]) BorrowLoanedMessage() (*LoanedMessage[T], error) {
	if !p.CanLoanMessages() {
		return &LoanedMessage[T]{Msg: p.newMsg(), pub: p}, nil
	}
	chunk, err := p.p.w.Loan()
	if err != nil {
		if errors.Is(err, dds.ErrClosed) {
			return nil, ErrClosed
		}
		return nil, fmt.Errorf("ros: borrow loaned message on %s: %w", p.p.topic, err)
	}
	m := (*T)(chunk)
	*m = p.loan.def
	return &LoanedMessage[T]{Msg: m, pub: p, chunk: chunk}, nil
}

// PublishLoaned publishes a loaned message and ends the loan, also when
// it fails.
func (p *Publisher[T]) PublishLoaned(l *LoanedMessage[T]) error {
	if l == nil || l.pub != p {
		return fmt.Errorf("ros: publish loaned on %s: message not lent by this publisher", p.p.topic)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return ErrLoanDone
	}
	l.done = true
	m := l.Msg
	l.Msg = nil
	if l.chunk == nil {
		return p.Publish(m)
	}
	if err := p.p.w.WriteLoaned(l.chunk); err != nil {
		if errors.Is(err, dds.ErrClosed) {
			return ErrClosed
		}
		return fmt.Errorf("ros: publish loaned on %s: %w", p.p.topic, err)
	}
	return nil
}

// Release ends a loan without publishing it. Releasing a loan already
// published or released does nothing.
func (l *LoanedMessage[T]) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return nil
	}
	l.done = true
	l.Msg = nil
	if l.chunk == nil {
		return nil
	}
	if err := l.pub.p.w.ReturnLoan(l.chunk); err != nil && !errors.Is(err, dds.ErrClosed) {
		return fmt.Errorf("ros: release loaned message on %s: %w", l.pub.p.topic, err)
	}
	return nil
}
