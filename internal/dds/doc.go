// Package dds is fsmnodes' only cgo package: a thin Go layer over Eclipse
// Cyclone DDS 0.10 (Debian libddsc) that moves opaque serialized samples.
//
// Samples are exchanged as raw CDR: the caller hands Write the complete
// serialized sample (4-byte encapsulation header followed by the XCDR1 body)
// and readers deliver the same bytes. The topic type is a keyless custom
// Cyclone sertype implemented entirely in C (rawcdr.c), the way
// rmw_cyclonedds_cpp does it, so Cyclone's own threads never call into Go.
// Matching with peers is by topic name and type name only; endpoints
// advertise XCDR1 as their only data representation.
//
// # Threading
//
// Every Participant runs one receive goroutine. Each reader has a
// data-available listener written in C that runs on Cyclone's receive
// thread, takes the samples at once and queues them in the participant's
// C receive hub; the goroutine waits on the hub, woken only when the hub
// goes from empty to non-empty (while samples come within a millisecond of
// each other it waits in C on a futex, otherwise it parks in Go's network
// poller on an eventfd, leaving its P free), copies up to 64 samples of one
// reader per cgo call into its reusable buffer and invokes reader handlers,
// the discovery handler and the match handler (WatchMatches; readers and
// writers have C matched-status listeners) one at a time. When a handler
// has called Participant.Yield (it woke a goroutine, such as a node's
// callback goroutine), the receive goroutine yields to the Go scheduler
// before it waits again, so that goroutine runs on this thread at
// once. Handlers therefore never run
// concurrently with each other for one participant and must not block for
// long. Sample.Data points into a buffer owned by the receive goroutine
// that is reused for the next batch, or, for a sample of 64 KiB or more,
// at Cyclone's own copy of it, released after the handler: copy or decode
// it before the handler returns.
//
// A handler may ask for one function to run on the receive goroutine after
// its delivery (Participant.RunAfterDelivery; internal/ros runs an idle
// node's callback that way). Such a function may block: a C watchdog
// thread (watch.c) sees one that runs through a whole 10 ms tick and hands
// receiving over to a new goroutine, and the old one ends when the
// function returns. The watchdog starts with a participant's first
// RunAfterDelivery call.
//
// A keep-last reader's queue holds at least Depth samples and at most 1024
// times Depth (beyond Depth also at most 8 MiB of payload); when it
// overflows, the oldest sample is dropped and counted (Reader.Dropped), so
// a slow handler still gets the newest samples. A keep-all reader's queue
// is unbounded, like Cyclone's keep-all history.
//
// All other methods are safe for concurrent use.
//
// # Lifetime
//
// Close on a Writer, Reader or Participant is idempotent. Participant.Close
// stops the receive goroutine (waiting for it unless called from a handler)
// and deletes every entity created through the participant. Reader.Close
// called from a goroutine other than the receive goroutine returns only
// when that reader's handler is no longer running; from inside a handler
// it only guarantees that no further batch is delivered.
//
// # Domains and configuration
//
// NewParticipant's config string (Cyclone XML fragments or file URIs,
// comma separated, as in CYCLONEDDS_URI) creates the domain explicitly with
// dds_create_domain. Cyclone keeps one domain per id per process, so a
// second participant on the same id must pass the same config (or an empty
// one, which joins whatever domain exists). The package keeps a small
// process-wide reference count of the domains it created so that the last
// participant's Close deletes the domain; this is the package's only
// shared state and mirrors Cyclone's own process-wide domain table.
//
// Errors from Cyclone are returned as *Error carrying the dds_return_t code
// and its dds_strretcode text; ErrClosed is returned for use after Close.
//
// # Differences from the first sketch of the API
//
//   - The zero QoS is what rmw_cyclonedds makes of a "system default"
//     profile: Reliable, Volatile, KeepLast, depth 1. Hence Reliable is
//     the zero Reliability (the sketch listed BestEffort first).
//   - Additions: Participant.Handle and DomainID, Topic.Name and TypeName,
//     Writer.Topic, Reader.Topic, Reader.MatchedWriter (look-up by a
//     sample's publication handle, for services), GUID.String and Prefix,
//     EntityKind.String, ErrTimeout, and the *Error type.
//   - WatchDiscovery may be called once per participant; so may
//     WatchMatches (an addition).
//   - Endpoint.UserData and Endpoint.QoS.UserData are the same bytes (so
//     are DiscoveryEvent's). Remote durabilities TRANSIENT and PERSISTENT
//     are reported as TransientLocal.
//
// See docs/dds.md for the design, buffer ownership and benchmark figures.
package dds
