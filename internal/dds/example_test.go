package dds_test

import (
	"fmt"
	"log"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// A participant with a reliable, transient-local ("latched") writer and a
// reader of the same topic. Handlers run on the participant's receive
// goroutine and must copy what they keep.
func Example() {
	domain, release, err := testenv.ReserveDomain() // a real program takes ROS_DOMAIN_ID
	if err != nil {
		log.Fatal(err)
	}
	defer release()
	p, err := dds.NewParticipant(domain, "", []byte("enclave=/;"))
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	t, err := p.Topic("rt/chatter", "std_msgs::msg::dds_::String_")
	if err != nil {
		log.Fatal(err)
	}
	q := dds.QoS{Reliability: dds.Reliable, Durability: dds.TransientLocal, History: dds.KeepLast, Depth: 1}
	got := make(chan []byte, 1)
	if _, err := p.NewReader(t, q, func(batch []dds.Sample) {
		for _, s := range batch {
			select {
			case got <- append([]byte(nil), s.Data...): // copy: Data is reused
			default:
			}
		}
	}); err != nil {
		log.Fatal(err)
	}
	w, err := p.NewWriter(t, q)
	if err != nil {
		log.Fatal(err)
	}
	// CDR little-endian header, then std_msgs/String{data: "hi"}.
	if err := w.Write([]byte{0, 1, 0, 0, 3, 0, 0, 0, 'h', 'i', 0}); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("% x\n", (<-got)[:11])
	// Output: 00 01 00 00 03 00 00 00 68 69 00
}
