/* rawcdr.h: C glue of package dds (see rawcdr.c). */
#ifndef FSM_RAWCDR_H
#define FSM_RAWCDR_H

#include <stdint.h>
#include <stddef.h>
#include <dds/dds.h>

/* Flat QoS description exchanged with Go (durations in ns, 0 = not set). */
typedef struct fsm_qos {
  int32_t reliability;   /* 0 reliable, 1 best effort */
  int32_t durability;    /* 0 volatile, 1 transient local */
  int32_t history;       /* 0 keep last, 1 keep all */
  int32_t depth;
  int64_t deadline;
  int64_t lifespan;
  int64_t lease;
  int32_t liveliness;    /* 0 automatic, 1 manual by topic */
  int32_t ignore_local;
  const void *userdata;  /* in: borrowed for the call; out: points into the dds_qos_t */
  size_t userdata_len;
} fsm_qos;

/* Metadata of one sample copied by fsm_hub_next. */
typedef struct fsm_meta {
  uint32_t off;
  uint32_t len;
  uint32_t oversize;        /* non-zero: a sample of this size was dropped for its size */
  int64_t source_timestamp;
  uint64_t publication_handle;
} fsm_meta;

#define FSM_BATCH 64

/* QoS statuses of a reader or writer summed by its status listeners
   (hub.c): the totals and last values as Cyclone last reported them, the
   changes summed since the last fsm_rq_take_status. */
#define FSM_ST_INCOMPATIBLE_QOS 1u /* requested (reader) or offered (writer) */
#define FSM_ST_DEADLINE_MISSED 2u  /* requested (reader) or offered (writer) */
#define FSM_ST_LIVELINESS 4u       /* changed (reader) or lost (writer) */
typedef struct fsm_status {
  uint32_t changed;        /* FSM_ST_* bits of the statuses that changed */
  uint32_t incompatible_total, last_policy_id;
  int32_t incompatible_change;
  uint32_t deadline_total;
  int32_t deadline_change;
  uint32_t alive_count, not_alive_count; /* reader */
  int32_t alive_change, not_alive_change;
  uint32_t lost_total;     /* writer */
  int32_t lost_change;
} fsm_status;

/* Per-call state of the receive goroutine (see hub.c). */
typedef struct fsm_recv {
  struct ddsi_serdata *sd[FSM_BATCH]; /* scratch */
  fsm_meta meta[FSM_BATCH]; /* out: the samples copied by the last fsm_hub_next */
  uint64_t token;           /* out: the queue they came from */
  int32_t kind;             /* out: FSM_RQ_DATA or FSM_RQ_SIGNAL */
  uint32_t need;            /* out: size of a queued sample that did not fit */
  /* out: a sample of at least FSM_LEND_MIN bytes is lent, not copied: it
     is then the batch's only sample, its bytes are at lent_base, and the
     serdata stays referenced until fsm_recv_release. */
  struct ddsi_serdata *lent;
  void *lent_base;
  size_t lent_len;
} fsm_recv;
#define FSM_LEND_MIN (64u << 10)
void fsm_recv_release (fsm_recv *st);

/* One run of primitives of a fixed-size type's memory layout: count
   elements of size bytes (1, 2, 4 or 8) at byte offset off of the sample
   as C lays it out.  The runs are in declaration order; CDR aligns each
   run to its element size. */
typedef struct fsm_run {
  uint32_t off;
  uint32_t count;
  uint32_t size;
} fsm_run;
#define FSM_MAX_RUNS 4096

struct ddsi_sertype;
/* nruns == 0: a type without layout (not fixed-size). */
struct ddsi_sertype *fsm_sertype_new (const char *type_name, const fsm_run *runs, uint32_t nruns, uint32_t raw_size);
dds_entity_t fsm_create_topic (dds_entity_t pp, const char *name, const char *type_name, const fsm_run *runs, uint32_t nruns, uint32_t raw_size, struct ddsi_sertype **out);

dds_qos_t *fsm_qos_create (const fsm_qos *in, int for_reader);
void fsm_qos_extract (const dds_qos_t *q, fsm_qos *out);

dds_return_t fsm_register (dds_entity_t wr);
/* Frees the large sample blocks kept for reuse (rawcdr.c). */
void fsm_big_drain (void);
/* Shared memory state of a writer that has an iceoryx publisher. */
#include <dds/ddsc/dds_data_allocator.h>
typedef struct fsm_shm {
  dds_data_allocator_t alloc;
} fsm_shm;
fsm_shm *fsm_shm_new (dds_entity_t wr); /* NULL: no shared memory */
/* The largest sample put in a chunk (see fsm_write). */
#define FSM_SHM_MAX_CHUNK ((4u << 20) - 4096u)
void fsm_shm_free (fsm_shm *s);
/* Loans per writer Cyclone 0.10 keeps track of (MAX_PUB_LOANS, not in its
   installed headers): a further loan would not be registered, and
   writing it would leak its chunk. */
#define FSM_MAX_LOANS 8
void *fsm_loan (dds_entity_t wr);
dds_return_t fsm_loan_return (dds_entity_t wr, void *chunk);
dds_return_t fsm_write_loaned (dds_entity_t wr, void *chunk);
dds_return_t fsm_write (dds_entity_t wr, const struct ddsi_sertype *st, const void *buf, uint32_t len, fsm_shm *shm);
/* A serdata with room for cap bytes that Go serializes into (.data), then
   writes with fsm_write_buf (the first len bytes; consumes it) or frees. */
typedef struct fsm_buf {
  struct ddsi_serdata *sd; /* NULL: out of memory */
  void *data;
} fsm_buf;
fsm_buf fsm_buf_new (const struct ddsi_sertype *st, uint32_t cap);
void fsm_buf_free (struct ddsi_serdata *d);
dds_return_t fsm_write_buf (dds_entity_t wr, struct ddsi_serdata *d, uint32_t len, fsm_shm *shm);

/* Receive hub (hub.c): per-participant queues filled by C listeners on
   Cyclone's threads and drained by the receive goroutine. */
#define FSM_RQ_DATA 0   /* data reader: the listener takes and queues samples */
#define FSM_RQ_SIGNAL 1 /* built-in reader: the listener only signals */
typedef struct fsm_hub fsm_hub;
typedef struct fsm_rq fsm_rq;
fsm_hub *fsm_hub_new (void);
/* Waits at most FSM_HUB_SPIN_NS: returns FSM_HUB_WAIT if no queue got
   ready (the hub is then marked parked, and the next sample writes the
   eventfd fsm_hub_fd, which Go reads before it calls again) and -1 once
   the hub closes. For a data queue, copies up to FSM_BATCH samples into
   buf[0..cap) and returns their number (0 with st->need set if the first
   does not fit); for a signal queue returns 0 with st->kind
   FSM_RQ_SIGNAL. */
#define FSM_HUB_WAIT (-2)
#define FSM_HUB_SPIN_NS 1000000 /* 1 ms: see hub.c */
int32_t fsm_hub_next (fsm_hub *h, fsm_recv *st, unsigned char *buf, uint32_t cap);
/* Waits at most wait_ns on the calling thread for samples of the data
   queue q, and takes them as fsm_hub_next does (the receive goroutine is
   not woken for samples that arrive meanwhile); returns FSM_HUB_WAIT if
   none came or the hub closes. One caller per queue at a time; a caller
   that gets 0 with st->need set must call again with that much room. */
int32_t fsm_rq_take_wait (fsm_rq *q, fsm_recv *st, unsigned char *buf, uint32_t cap, int64_t wait_ns);
/* Ends the fsm_rq_take_wait of q in progress, or if none is, the next
   one (it returns FSM_HUB_WAIT at once if nothing is queued). */
void fsm_rq_wake_direct (fsm_rq *q);
/* The hub's eventfd (non-blocking); fsm_hub_free closes it. */
int32_t fsm_hub_fd (fsm_hub *h);

/* The receive watchdog (watch.c).  Go updates runs and running around
   every function it runs on the receive goroutine after a delivery
   (Participant.RunAfterDelivery), with atomic operations on this C
   memory; a C thread checks them every FSM_WATCH_TICK_NS and, when one
   run spans a whole tick, wakes the standby goroutine (fsm_watch_wait),
   which hands receiving over to a new goroutine. */
#define FSM_WATCH_TICK_NS 10000000 /* 10 ms */
#define FSM_WATCH_IDLE 10          /* idle ticks before the thread parks */
typedef struct fsm_watch {
  uint64_t runs;     /* Go: +1 when a run starts */
  int32_t running;   /* Go: 1 while a run goes on */
  int32_t parked;    /* C: 1 while the thread waits for a run (Go: fsm_watch_kick) */
  int32_t stalled;   /* C: 1 once a stall is seen, until Go handled it */
  int32_t closing;
  uint64_t stalls;   /* stalls seen */
} fsm_watch;
/* fsm_watch_new allocates; fsm_watch_start (not thread-safe: Go calls
   it under a lock) starts the thread the first time and returns -1 if it
   cannot; fsm_watch_stop stops it if it runs. */
fsm_watch *fsm_watch_new (void);
int32_t fsm_watch_start (fsm_watch *w);
void fsm_watch_kick (fsm_watch *w);
int32_t fsm_watch_wait (fsm_watch *w);
void fsm_watch_stop (fsm_watch *w);
void fsm_watch_free (fsm_watch *w);
void fsm_hub_close (fsm_hub *h);
/* Frees the hub and every queue; only once no listener can run and the
   receive goroutine is gone. */
void fsm_hub_free (fsm_hub *h);
/* keep: samples always kept; limit: at most this many queued (0 =
   unbounded); beyond keep, at most max_bytes of payload; max_sample: larger
   samples are released at once and queued as size-only markers (0: no
   limit). */
fsm_rq *fsm_rq_new (fsm_hub *h, uint64_t token, int32_t kind, uint32_t keep, uint32_t limit, uint64_t max_bytes, uint32_t max_sample);
/* Frees a queue: only after its reader was deleted (or never created). */
void fsm_rq_free (fsm_rq *q);
void fsm_rq_signal (fsm_rq *q);
uint64_t fsm_rq_dropped (fsm_rq *q);
uint64_t fsm_rq_oversized (fsm_rq *q);
/* Creates a reader whose data-available listener feeds q (and, for a data
   queue, whose subscription-matched listener signals the hub's match
   queue); sq (a signal queue, or NULL) gets its QoS statuses. */
dds_entity_t fsm_create_reader (dds_entity_t pp, dds_entity_t tp, const dds_qos_t *qos, fsm_rq *q, fsm_rq *sq);
/* Creates a writer whose publication-matched listener signals the hub's
   match queue; sq (a signal queue, or NULL) gets its QoS statuses. */
dds_entity_t fsm_create_writer (dds_entity_t pp, dds_entity_t tp, const dds_qos_t *qos, fsm_hub *h, fsm_rq *sq);
/* Has a status queue signalled from now on (and now, if a status changed
   before). */
void fsm_rq_watch_status (fsm_rq *q);
/* Copies a status queue's statuses to out and clears their changes. */
void fsm_rq_take_status (fsm_rq *q, fsm_status *out);
/* Makes q (a signal queue) the queue the match listeners signal; a freed
   queue stops being it. */
void fsm_hub_watch_matches (fsm_hub *h, fsm_rq *q);
/* Reader gate (hub.c): armed, the built-in reader q's listener waits for
   fsm_gate_end of what it signalled when it announces a reader on topic,
   at most 100 ms. */
void fsm_hub_gate (fsm_hub *h, fsm_rq *q, const char *topic, int32_t armed);
uint64_t fsm_gate_begin (fsm_hub *h);
void fsm_gate_end (fsm_hub *h, uint64_t seq);
uint64_t fsm_gate_timeouts (fsm_hub *h);

/* Built-in topic (discovery) samples, borrowed from a loan until
   fsm_disc_release. */
typedef struct fsm_disc {
  dds_guid_t key, pkey;
  int32_t alive;
  const char *topic, *type;
  const dds_qos_t *qos;
} fsm_disc;

typedef struct fsm_dstate {
  void *buf[FSM_BATCH];
  dds_sample_info_t si[FSM_BATCH];
  fsm_disc out[FSM_BATCH];
  int32_t n;
  dds_entity_t loaned_from;
} fsm_dstate;

/* kind: 0 participant, 1 endpoint (publication or subscription). */
int32_t fsm_disc_take (fsm_dstate *st, dds_entity_t rd, int32_t kind);
void fsm_disc_release (fsm_dstate *st);
#endif
