//go:build !linux

package foxglove

import "net"

// limitUnsent does nothing outside Linux (see lowat_linux.go).
func limitUnsent(net.Conn) bool { return false }
