package foxglove

import (
	"crypto/tls"
	"net"

	"golang.org/x/sys/unix"
)

// notSentLowat is how many bytes a client's socket may hold that TCP has
// not sent yet (TCP_NOTSENT_LOWAT). Without a bound, Linux grows a socket's
// send buffer to megabytes for a slow client, and everything in it is as
// good as sent: the bridge can no longer drop it for newer messages, and a
// client on a 1 Mbit/s link sees the robot many seconds late. With it the
// backlog stays in the client's send queue, where the newest message of
// every subscription is kept and older ones are dropped (sendQueue). Data
// in flight (sent, not yet acknowledged) does not count, so a fast link
// keeps its throughput.
const notSentLowat = 32 * 1024

// limitUnsent sets TCP_NOTSENT_LOWAT on c's TCP socket (under TLS too).
// It reports whether it did.
func limitUnsent(c net.Conn) bool {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	tcp, ok := c.(*net.TCPConn)
	if !ok {
		return false
	}
	rc, err := tcp.SyscallConn()
	if err != nil {
		return false
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, notSentLowat)
	}); err != nil {
		return false
	}
	return serr == nil
}
