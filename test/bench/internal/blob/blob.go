// Package blob holds the benchmarks' fixed-size message type
// fsmnodes_bench/msg/Blob (uint64 seq, uint8[1048568] data: 1 MiB), the
// Go side of test/bench/rclcpp/peer/msg/Blob.msg. A fixed-size type can
// be lent in shared memory (ros.Publisher.BorrowLoanedMessage), which the
// standard interfaces have no 1 MiB type for.
package blob

import (
	"errors"
	"fmt"

	"github.com/fsmnodes/fsmnodes/internal/cdr"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

// DataLen makes Blob exactly 1 MiB.
const DataLen = 1<<20 - 8

// Blob is fsmnodes_bench/msg/Blob.
type Blob struct {
	Seq  uint64
	Data [DataLen]uint8
}

var desc = &rosidl.TypeDescription{
	Name: "fsmnodes_bench/msg/Blob",
	Fields: []rosidl.FieldDescription{
		{Name: "seq", TypeID: 9},
		{Name: "data", TypeID: 3 + 48, Capacity: DataLen},
	},
	Encoding: rosidl.EncodingMsg,
	Source:   fmt.Sprintf("uint64 seq\nuint8[%d] data\n", DataLen),
}

// TypeInfo describes Blob.
var TypeInfo = &rosidl.TypeInfo{
	Name:       desc.Name,
	DDSName:    "fsmnodes_bench::msg::dds_::Blob_",
	Hash:       desc.TypeHash(),
	Definition: desc.Source,
	New:        func() rosidl.Message { return new(Blob) },
	Desc:       desc,
}

// ROSType returns TypeInfo.
func (m *Blob) ROSType() *rosidl.TypeInfo { return TypeInfo }

// MarshalCDR appends the CDR body.
func (m *Blob) MarshalCDR(e *cdr.Encoder) {
	e.Uint64(m.Seq)
	e.RawBytes(m.Data[:])
}

// UnmarshalCDR reads the CDR body.
func (m *Blob) UnmarshalCDR(d *cdr.Decoder) error {
	m.Seq = d.Uint64()
	d.ReadRawBytes(m.Data[:])
	return d.Err()
}

// NewSender creates a publisher of Blob on topic and returns it with a
// send function: send(src, seq) publishes src (nil: a message of its own)
// with Seq set to seq. With loan set, every message is lent in shared
// memory (an error if the publisher cannot loan messages) and src, if any,
// copied into the loan.
func NewSender(n *ros.Node, topic string, loan bool) (*ros.Publisher[Blob], func(src *Blob, seq uint64) error, error) {
	pub, err := ros.NewPublisher[Blob](n, topic, ros.QoSDefault)
	if err != nil {
		return nil, nil, err
	}
	if loan && !pub.CanLoanMessages() {
		return nil, nil, errors.New("the publisher cannot loan messages (shared memory off?)")
	}
	msg := new(Blob)
	return pub, func(src *Blob, seq uint64) error {
		if !loan {
			if src == nil {
				src = msg
			}
			src.Seq = seq
			return pub.Publish(src)
		}
		l, err := pub.BorrowLoanedMessage()
		if err != nil {
			return err
		}
		if src != nil {
			*l.Msg = *src // the pong's copy of what it got
		}
		l.Msg.Seq = seq
		return pub.PublishLoaned(l)
	}, nil
}
