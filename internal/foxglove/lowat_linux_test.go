package foxglove

import (
	"crypto/tls"
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// A client's socket gets TCP_NOTSENT_LOWAT, plain and under TLS; other
// connections are left alone.
func TestLimitUnsent(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, wrap := range []string{"tcp", "tls"} {
		t.Run(wrap, func(t *testing.T) {
			d, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			a, err := l.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			c := a
			if wrap == "tls" {
				c = tls.Server(a, &tls.Config{})
			}
			if !limitUnsent(c) {
				t.Fatal("limitUnsent did not set the option")
			}
			rc, err := a.(*net.TCPConn).SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			var v int
			var gerr error
			if err := rc.Control(func(fd uintptr) { v, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT) }); err != nil || gerr != nil {
				t.Fatal(err, gerr)
			}
			if v != notSentLowat {
				t.Errorf("TCP_NOTSENT_LOWAT %d, want %d", v, notSentLowat)
			}
		})
	}
	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	if limitUnsent(p1) {
		t.Error("limitUnsent on a pipe reported success")
	}
}
