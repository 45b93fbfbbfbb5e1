package dds

// Link flags live here, in one place. Debian installs dds/features.h in the
// multiarch include directory, which gcc searches by default. Cyclone's
// shared-memory header includes iceoryx's C binding, which Debian 12's
// libiceoryx-binding-c-dev (a dependency of cyclonedds-dev) installs under
// a versioned directory; the C glue calls one function of that binding
// (the chunk header of a received chunk), so it links it too.

/*
#cgo CFLAGS: -O2 -Wall -I/usr/include/iceoryx/v2.0.3
#cgo LDFLAGS: -lddsc -liceoryx_binding_c
*/
import "C"
