//go:build !linux

package foxglove

import "net"

// limitUnsent does nothing outside Linux (see lowat_linux.go).
func limitUnsent(net.Conn) bool { return false }

// ackProbe has no TCP_INFO outside Linux: clients are judged by their
// frames alone.
func ackProbe(net.Conn) func() (uint64, bool) { return nil }
