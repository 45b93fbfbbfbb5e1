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

// tcpConn returns the TCP connection under c (under TLS too), or nil.
func tcpConn(c net.Conn) *net.TCPConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	tcp, _ := c.(*net.TCPConn)
	return tcp
}

// ackProbe returns a function reporting how many bytes the peer of c has
// acknowledged so far (TCP_INFO's tcpi_bytes_acked), or nil when c is not
// a TCP connection. A client whose count grows is reading what the bridge
// sends, however late its answers to pings come behind that data.
func ackProbe(c net.Conn) func() (uint64, bool) {
	tcp := tcpConn(c)
	if tcp == nil {
		return nil
	}
	rc, err := tcp.SyscallConn()
	if err != nil {
		return nil
	}
	return func() (uint64, bool) {
		var info *unix.TCPInfo
		var serr error
		if err := rc.Control(func(fd uintptr) {
			info, serr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		}); err != nil || serr != nil {
			return 0, false
		}
		return info.Bytes_acked, true
	}
}

// limitUnsent sets TCP_NOTSENT_LOWAT on c's TCP socket (under TLS too).
// It reports whether it did.
func limitUnsent(c net.Conn) bool {
	tcp := tcpConn(c)
	if tcp == nil {
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
