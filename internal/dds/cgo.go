package dds

// Link flags live here, in one place. Debian installs dds/features.h in the
// multiarch include directory, which gcc searches by default.

/*
#cgo CFLAGS: -O2 -Wall
#cgo LDFLAGS: -lddsc
*/
import "C"
