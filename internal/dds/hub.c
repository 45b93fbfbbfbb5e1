/* hub.c: the receive hub of package dds.
 *
 * Every reader of a participant gets a data-available listener written in
 * C.  It runs on whatever Cyclone thread delivered the data (normally the
 * receive thread, or a local writer's thread), takes the samples at once
 * with dds_takecdr and appends the serdata references (plus source
 * timestamp and publication handle) to the reader's queue in the
 * participant's hub.  The participant's receive goroutine calls
 * fsm_hub_next, which blocks for at most FSM_HUB_SPIN_NS: with nothing
 * ready it waits that long on a futex while traffic is hot, then marks
 * the hub parked and returns FSM_HUB_WAIT, and the goroutine parks in
 * Go's network poller on the hub's eventfd (fsm_hub_fd); see "How the
 * receive goroutine waits" below.  A listener wakes it only when it
 * waits, i.e. when the hub goes from empty to non-empty.  Each
 * fsm_hub_next call hands the goroutine one batch of one reader, copied
 * into the Go buffer; a sample of FSM_LEND_MIN bytes or more is a batch of its own, lent to Go
 * in place (its serdata's bytes) until fsm_recv_release, so that large
 * samples are not copied once more before Go decodes them.
 *
 * Queue bound: a keep-last reader's queue keeps at least `keep` (the QoS
 * depth) samples and at most `limit` samples; beyond `keep` it also stays
 * under `max_bytes` of payload.  When a bound is exceeded the oldest
 * queued sample is dropped and counted.  Keep-all readers' queues grow
 * without bound, as Cyclone's own keep-all reader history does.
 *
 * Size limit: a sample larger than the queue's `max_sample` (0: no limit)
 * is released at once, in the listener, and replaced by a marker entry
 * that carries only its size and origin: its bytes never reach Go, and
 * the handler learns of it (to count and log it) without paying for it.
 *
 * Matching: every data reader and writer also has a matched-status
 * listener that signals the hub's match queue (see match_signal).
 *
 * Statuses: every data reader and writer also has a signal queue of its
 * own for its QoS statuses (incompatible QoS, deadline missed, liveliness
 * changed or lost).  Their listeners run on Cyclone's threads, add the
 * status to the queue's fsm_status (Cyclone resets a status's change
 * counts after calling its listener, so the changes are summed here until
 * Go takes them) and, once Go watches the queue (fsm_rq_watch_status),
 * signal it; the receive goroutine takes the sum with fsm_rq_take_status.
 * Unwatched queues (readers and writers nobody asked about, such as those
 * of services) only sum, costing no wake-up.
 *
 * Reader gate: while armed, the listener of the built-in DCPSSubscription
 * reader, when a new sample announces a reader on the gate's topic, waits
 * (at most FSM_GATE_WAIT_NS) until the receive goroutine has handled the
 * discovery samples it signalled (fsm_gate_begin/_end).  Cyclone
 * publishes a new remote reader on the built-in topic before it matches
 * that reader with the local writers, so the handler can replace what a
 * transient-local writer holds before the new reader is sent its history.
 * The wait is the only place a Cyclone thread waits for Go, and it is
 * bounded (timeouts are counted).
 *
 * Locking: one mutex per hub protects every queue, the ready list and the
 * flags.  It is never held while calling into Cyclone, and bytes are copied
 * out of the serdata after it is released.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <sched.h>
#include <unistd.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <linux/futex.h>

#include "dds/dds.h"
#include "dds/ddsi/ddsi_serdata.h"

#include "rawcdr.h"

struct fsm_qent {
  struct ddsi_serdata *sd; /* NULL for an oversize marker */
  uint32_t oversize;       /* size of the dropped sample of a marker */
  int64_t source_timestamp;
  uint64_t publication_handle;
};

struct fsm_rq {
  struct fsm_hub *hub;
  uint64_t token;
  int32_t kind;            /* FSM_RQ_DATA or FSM_RQ_SIGNAL */
  uint32_t keep, limit;    /* limit 0: unbounded */
  uint64_t max_bytes;
  uint32_t max_sample;     /* 0: no limit */
  struct fsm_qent *ring;
  uint32_t cap, head, count;
  uint64_t bytes;
  uint64_t dropped;
  uint64_t oversized;
  fsm_status st;           /* a status queue's statuses (see status_update) */
  int32_t watched;         /* a status queue whose statuses Go wants */
  int32_t ready;           /* on the hub's ready list */
  int32_t direct;          /* a goroutine waits for this queue in fsm_rq_take_wait */
  int32_t kicked;          /* fsm_rq_wake_direct: end the wait in progress, or the next */
  atomic_int dword;        /* the futex it waits on (1: woken) */
  struct fsm_rq *next_ready;
  struct fsm_rq *prev, *next; /* all queues of the hub */
};

struct fsm_hub {
  pthread_mutex_t lock;
  atomic_int wakeword;     /* futex the receive thread waits on in C (HUB_FUTEX) */
  int efd;                 /* eventfd the receive goroutine waits on in Go (HUB_PARKED) */
  int32_t waiting;         /* HUB_RUNNING, HUB_FUTEX or HUB_PARKED */
  int32_t hot;             /* the last wait ended within FSM_HUB_SPIN_NS: wait in C first */
  int64_t parked_at;       /* CLOCK_MONOTONIC ns of the last FSM_HUB_WAIT; 0: not parked */
  int32_t closing;
  struct fsm_rq *ready_head, *ready_tail;
  struct fsm_rq *all;
  struct fsm_rq *match_q;  /* signalled by the match listeners; NULL: none */
  /* reader gate (see above); gate_q NULL: none */
  struct fsm_rq *gate_q;
  char gate_topic[128];    /* only a new reader of this topic is waited for */
  int32_t gate_armed;
  uint64_t gate_signaled, gate_done, gate_timeouts;
  pthread_cond_t gate_cond; /* CLOCK_MONOTONIC */
};

#define FSM_GATE_WAIT_NS 100000000 /* 100 ms */

static uint32_t align4 (uint32_t x) { return (x + 3u) & ~3u; }

fsm_hub *fsm_hub_new (void)
{
  fsm_hub *h = calloc (1, sizeof (*h));
  if (h == NULL)
    return NULL;
  if (pthread_mutex_init (&h->lock, NULL) != 0)
  {
    free (h);
    return NULL;
  }
  pthread_condattr_t ca;
  if (pthread_condattr_init (&ca) != 0)
  {
    pthread_mutex_destroy (&h->lock);
    free (h);
    return NULL;
  }
  pthread_condattr_setclock (&ca, CLOCK_MONOTONIC);
  int rc = pthread_cond_init (&h->gate_cond, &ca);
  pthread_condattr_destroy (&ca);
  if (rc != 0)
  {
    pthread_mutex_destroy (&h->lock);
    free (h);
    return NULL;
  }
  if ((h->efd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
  {
    pthread_cond_destroy (&h->gate_cond);
    pthread_mutex_destroy (&h->lock);
    free (h);
    return NULL;
  }
  return h;
}

/* Queue and ready-list helpers; hub lock held. */

static void ready_push (fsm_hub *h, fsm_rq *q)
{
  if (q->ready)
    return;
  q->ready = 1;
  q->next_ready = NULL;
  if (h->ready_tail)
    h->ready_tail->next_ready = q;
  else
    h->ready_head = q;
  h->ready_tail = q;
}

static fsm_rq *ready_pop (fsm_hub *h)
{
  fsm_rq *q = h->ready_head;
  if (q == NULL)
    return NULL;
  h->ready_head = q->next_ready;
  if (h->ready_head == NULL)
    h->ready_tail = NULL;
  q->next_ready = NULL;
  q->ready = 0;
  return q;
}

static void ready_remove (fsm_hub *h, fsm_rq *q)
{
  if (!q->ready)
    return;
  fsm_rq *prev = NULL;
  for (fsm_rq *x = h->ready_head; x != NULL; prev = x, x = x->next_ready)
  {
    if (x != q)
      continue;
    if (prev)
      prev->next_ready = q->next_ready;
    else
      h->ready_head = q->next_ready;
    if (h->ready_tail == q)
      h->ready_tail = prev;
    break;
  }
  q->ready = 0;
  q->next_ready = NULL;
}

/* How the receive goroutine waits (fsm_hub.waiting).  While traffic is
   hot (the last wait ended within FSM_HUB_SPIN_NS: a round trip, a
   service call, a stream of 1 kHz or more) it first waits up to that
   long in C on a bare futex (HUB_FUTEX): a futex wake is the cheapest
   there is (a thread ping-pong of two wakes took 5.8 us on the 2-core
   VM, against 7.4 us with an eventfd, 7.7 us with a pipe and 10-13 us
   with a condition variable), and the thread keeps its P.  Otherwise,
   or when nothing came, fsm_hub_next returns FSM_HUB_WAIT and the
   goroutine parks in Go's network poller on the eventfd (HUB_PARKED),
   leaving its P free.  Why not always wait in C: a goroutine in a C call
   keeps its P in a system call; after 10 ms sysmon takes it back, and
   each time sysmon wakes from its deep sleep for a system call or takes
   a P back it polls every 20 us for a millisecond.  With the goroutine
   blocked in C between samples, that polling cost an idle node more CPU
   than all its work.  Why not always park: Go's poller wakes a parked
   goroutine through more threads, +20 % on a 1 KiB round trip.  The
   waker signals after releasing the hub lock, so the woken side never
   blocks on it. */
enum { HUB_RUNNING = 0, HUB_FUTEX = 1, HUB_PARKED = 2 };

static int64_t now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void hub_wake (fsm_hub *h, int how)
{
  if (how == HUB_FUTEX)
  {
    atomic_store (&h->wakeword, 1);
    syscall (SYS_futex, &h->wakeword, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    return;
  }
  uint64_t one = 1;
  /* Fails only if the counter would overflow, i.e. never: each write
     answers one FSM_HUB_WAIT, and Go reads the counter before it calls
     fsm_hub_next again. */
  ssize_t rc = write (h->efd, &one, sizeof (one));
  (void) rc;
}

/* Marks the goroutine for waking (hub lock held); the caller calls
   hub_wake (h, how) after unlocking if this returns how (non-zero). */
static int wake_needed (fsm_hub *h)
{
  int how = h->waiting;
  h->waiting = HUB_RUNNING;
  return how;
}

static void discard_oldest (fsm_rq *q)
{
  struct fsm_qent *e = &q->ring[q->head];
  if (e->sd)
  {
    q->bytes -= ddsi_serdata_size (e->sd);
    ddsi_serdata_unref (e->sd);
  }
  e->sd = NULL;
  q->head = (q->head + 1) & (q->cap - 1);
  q->count--;
}

static void drop_oldest (fsm_rq *q)
{
  discard_oldest (q);
  q->dropped++;
}

/* Makes room for one more entry: grows the ring (a power of two) or, at
   the limit, drops the oldest entry. Returns 0 if out of memory with
   nothing to drop. */
static int make_room (fsm_rq *q)
{
  if (q->limit > 0 && q->count >= q->limit)
  {
    drop_oldest (q);
    return 1;
  }
  if (q->count < q->cap)
    return 1;
  uint32_t ncap = q->cap ? 2 * q->cap : 16;
  if (ncap < q->cap)
    return q->count > 0 ? (drop_oldest (q), 1) : 0;
  struct fsm_qent *nr = malloc ((size_t) ncap * sizeof (*nr));
  if (nr == NULL)
  {
    if (q->count == 0)
      return 0;
    drop_oldest (q);
    return 1;
  }
  for (uint32_t i = 0; i < q->count; i++)
    nr[i] = q->ring[(q->head + i) & (q->cap - 1)];
  free (q->ring);
  q->ring = nr;
  q->cap = ncap;
  q->head = 0;
  return 1;
}

static void push (fsm_rq *q, struct ddsi_serdata *sd, const dds_sample_info_t *si)
{
  uint32_t oversize = 0;
  if (q->max_sample > 0 && ddsi_serdata_size (sd) > q->max_sample)
  {
    /* Too large: release the bytes now, queue only a marker. */
    oversize = ddsi_serdata_size (sd);
    ddsi_serdata_unref (sd);
    sd = NULL;
    q->oversized++;
  }
  if (!make_room (q))
  {
    if (sd)
      ddsi_serdata_unref (sd);
    q->dropped++;
    return;
  }
  struct fsm_qent *e = &q->ring[(q->head + q->count) & (q->cap - 1)];
  e->sd = sd;
  e->oversize = oversize;
  e->source_timestamp = si->source_timestamp;
  e->publication_handle = si->publication_handle;
  q->count++;
  if (sd)
    q->bytes += ddsi_serdata_size (sd);
  while (q->limit > 0 && q->count > q->keep && q->bytes > q->max_bytes)
    drop_oldest (q);
}

/* Discards what is queued (on close: not counted as dropped). */
static void discard_all (fsm_rq *q)
{
  while (q->count > 0)
    discard_oldest (q);
}

/* Wakes the goroutine waiting for q in fsm_rq_take_wait (after the hub
   lock is released, as hub_wake). */
static void direct_wake (fsm_rq *q)
{
  atomic_store (&q->dword, 1);
  syscall (SYS_futex, &q->dword, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Listener of data readers: take everything now, queue it, wake Go. */
static void on_data_available (dds_entity_t rd, void *arg)
{
  fsm_rq *q = arg;
  fsm_hub *h = q->hub;
  struct ddsi_serdata *sd[FSM_BATCH];
  dds_sample_info_t si[FSM_BATCH];
  for (;;)
  {
    dds_return_t n = dds_takecdr (rd, sd, FSM_BATCH, si, DDS_ANY_STATE);
    if (n <= 0)
      return;
    pthread_mutex_lock (&h->lock);
    int32_t queued = 0, w = 0;
    for (int32_t i = 0; i < n; i++)
    {
      if (si[i].valid_data && !h->closing)
      {
        push (q, sd[i], &si[i]);
        queued = 1;
      }
      else
        ddsi_serdata_unref (sd[i]);
    }
    int32_t dw = 0;
    if (queued && q->count > 0)
    {
      if (q->direct)
      {
        /* A goroutine waits for this queue (fsm_rq_take_wait): wake it,
           not the receive goroutine. */
        q->direct = 0;
        dw = 1;
      }
      else
      {
        ready_push (h, q);
        w = wake_needed (h);
      }
    }
    pthread_mutex_unlock (&h->lock);
    if (dw)
      direct_wake (q);
    if (w)
      hub_wake (h, w);
    if (n < FSM_BATCH)
      return;
  }
}

/* Listener of built-in (discovery) readers: signal; Go takes.  The gated
   reader's listener then waits for Go to have handled what it signalled. */
/* gate_relevant peeks at the gated reader's new samples (marking them
   read; Go takes samples in any state): does one announce a live reader on
   the gate's topic?  Called without the hub lock. */
static int gate_relevant (dds_entity_t rd, const char *topic)
{
  void *buf[FSM_BATCH];
  dds_sample_info_t si[FSM_BATCH];
  int relevant = 0;
  buf[0] = NULL;
  dds_return_t n = dds_read_mask (rd, buf, si, FSM_BATCH, FSM_BATCH, DDS_NOT_READ_SAMPLE_STATE);
  if (n <= 0)
    return 0;
  for (int32_t i = 0; i < n && !relevant; i++)
  {
    const dds_builtintopic_endpoint_t *e = buf[i];
    relevant = si[i].valid_data && si[i].instance_state == DDS_IST_ALIVE &&
               e->topic_name != NULL && strcmp (e->topic_name, topic) == 0;
  }
  dds_return_loan (rd, buf, n);
  return relevant;
}

static void on_signal (dds_entity_t rd, void *arg)
{
  fsm_rq *q = arg;
  fsm_hub *h = q->hub;
  uint64_t seq = 0;
  int w = 0, gated = 0;
  char topic[sizeof (h->gate_topic)];
  pthread_mutex_lock (&h->lock);
  if (!h->closing && q == h->gate_q && h->gate_armed)
  {
    gated = 1;
    memcpy (topic, h->gate_topic, sizeof (topic));
  }
  pthread_mutex_unlock (&h->lock);
  /* Peek before Go can take: only a reader on the gate's topic waits. */
  if (gated)
    gated = gate_relevant (rd, topic);
  pthread_mutex_lock (&h->lock);
  if (!h->closing)
  {
    ready_push (h, q);
    w = wake_needed (h);
    if (gated && q == h->gate_q && h->gate_armed)
      seq = ++h->gate_signaled;
  }
  pthread_mutex_unlock (&h->lock);
  if (w)
    hub_wake (h, w);
  if (seq == 0)
    return;
  struct timespec until;
  clock_gettime (CLOCK_MONOTONIC, &until);
  until.tv_nsec += FSM_GATE_WAIT_NS;
  until.tv_sec += until.tv_nsec / 1000000000;
  until.tv_nsec %= 1000000000;
  pthread_mutex_lock (&h->lock);
  while (h->gate_armed && !h->closing && h->gate_done < seq)
  {
    if (pthread_cond_timedwait (&h->gate_cond, &h->lock, &until) != 0 && h->gate_done < seq)
    {
      h->gate_timeouts++;
      break;
    }
  }
  pthread_mutex_unlock (&h->lock);
}

void fsm_hub_gate (fsm_hub *h, fsm_rq *q, const char *topic, int32_t armed)
{
  pthread_mutex_lock (&h->lock);
  h->gate_q = q;
  snprintf (h->gate_topic, sizeof (h->gate_topic), "%s", topic);
  h->gate_armed = armed;
  pthread_cond_broadcast (&h->gate_cond);
  pthread_mutex_unlock (&h->lock);
}

uint64_t fsm_gate_begin (fsm_hub *h)
{
  pthread_mutex_lock (&h->lock);
  uint64_t seq = h->gate_signaled;
  pthread_mutex_unlock (&h->lock);
  return seq;
}

void fsm_gate_end (fsm_hub *h, uint64_t seq)
{
  pthread_mutex_lock (&h->lock);
  if (seq > h->gate_done)
  {
    h->gate_done = seq;
    pthread_cond_broadcast (&h->gate_cond);
  }
  pthread_mutex_unlock (&h->lock);
}

uint64_t fsm_gate_timeouts (fsm_hub *h)
{
  pthread_mutex_lock (&h->lock);
  uint64_t n = h->gate_timeouts;
  pthread_mutex_unlock (&h->lock);
  return n;
}

void fsm_rq_signal (fsm_rq *q)
{
  fsm_hub *h = q->hub;
  int w = 0;
  pthread_mutex_lock (&h->lock);
  if (!h->closing)
  {
    ready_push (h, q);
    w = wake_needed (h);
  }
  pthread_mutex_unlock (&h->lock);
  if (w)
    hub_wake (h, w);
}

fsm_rq *fsm_rq_new (fsm_hub *h, uint64_t token, int32_t kind, uint32_t keep, uint32_t limit, uint64_t max_bytes, uint32_t max_sample)
{
  fsm_rq *q = calloc (1, sizeof (*q));
  if (q == NULL)
    return NULL;
  q->hub = h;
  q->token = token;
  q->kind = kind;
  q->keep = keep;
  q->limit = (limit > 0 && limit < keep) ? keep : limit;
  q->max_bytes = max_bytes;
  q->max_sample = max_sample;
  pthread_mutex_lock (&h->lock);
  q->next = h->all;
  if (h->all)
    h->all->prev = q;
  h->all = q;
  pthread_mutex_unlock (&h->lock);
  return q;
}

static void rq_destroy_locked (fsm_hub *h, fsm_rq *q)
{
  if (h->match_q == q)
    h->match_q = NULL;
  if (h->gate_q == q)
  {
    h->gate_q = NULL;
    h->gate_armed = 0;
    pthread_cond_broadcast (&h->gate_cond);
  }
  ready_remove (h, q);
  discard_all (q);
  if (q->prev)
    q->prev->next = q->next;
  else
    h->all = q->next;
  if (q->next)
    q->next->prev = q->prev;
  free (q->ring);
  free (q);
}

void fsm_rq_free (fsm_rq *q)
{
  fsm_hub *h = q->hub;
  pthread_mutex_lock (&h->lock);
  rq_destroy_locked (h, q);
  pthread_mutex_unlock (&h->lock);
}

uint64_t fsm_rq_dropped (fsm_rq *q)
{
  pthread_mutex_lock (&q->hub->lock);
  uint64_t d = q->dropped;
  pthread_mutex_unlock (&q->hub->lock);
  return d;
}

uint64_t fsm_rq_oversized (fsm_rq *q)
{
  pthread_mutex_lock (&q->hub->lock);
  uint64_t d = q->oversized;
  pthread_mutex_unlock (&q->hub->lock);
  return d;
}

/* Match listeners.  Cyclone publishes a new peer endpoint on the built-in
   topics (waking the discovery handler) before it matches the endpoint
   with the local readers and writers, and calls these listeners only once
   a match is in place (or gone): they signal the hub's match queue, so
   that whatever waits on matched counts looks again after the change. */
static void match_signal (fsm_hub *h)
{
  int w = 0;
  pthread_mutex_lock (&h->lock);
  if (h->match_q != NULL && !h->closing)
  {
    ready_push (h, h->match_q);
    w = wake_needed (h);
  }
  pthread_mutex_unlock (&h->lock);
  if (w)
    hub_wake (h, w);
}

static void on_subscription_matched (dds_entity_t rd, const dds_subscription_matched_status_t st, void *arg)
{
  (void) rd;
  (void) st;
  match_signal (((fsm_rq *) arg)->hub);
}

static void on_publication_matched (dds_entity_t wr, const dds_publication_matched_status_t st, void *arg)
{
  (void) wr;
  (void) st;
  match_signal (arg);
}

void fsm_hub_watch_matches (fsm_hub *h, fsm_rq *q)
{
  pthread_mutex_lock (&h->lock);
  h->match_q = q;
  pthread_mutex_unlock (&h->lock);
}

/* Status listeners: add to the status queue's sums and signal it. */
static void status_update (fsm_rq *q, uint32_t bit, void (*add) (fsm_status *st, const void *v), const void *v)
{
  fsm_hub *h = q->hub;
  int w = 0;
  pthread_mutex_lock (&h->lock);
  if (!h->closing)
  {
    add (&q->st, v);
    q->st.changed |= bit;
    if (q->watched)
    {
      ready_push (h, q);
      w = wake_needed (h);
    }
  }
  pthread_mutex_unlock (&h->lock);
  if (w)
    hub_wake (h, w);
}

static void add_requested_incompatible (fsm_status *st, const void *v)
{
  const dds_requested_incompatible_qos_status_t *x = v;
  st->incompatible_total = x->total_count;
  st->incompatible_change += x->total_count_change;
  st->last_policy_id = x->last_policy_id;
}

static void add_offered_incompatible (fsm_status *st, const void *v)
{
  const dds_offered_incompatible_qos_status_t *x = v;
  st->incompatible_total = x->total_count;
  st->incompatible_change += x->total_count_change;
  st->last_policy_id = x->last_policy_id;
}

static void add_requested_deadline (fsm_status *st, const void *v)
{
  const dds_requested_deadline_missed_status_t *x = v;
  st->deadline_total = x->total_count;
  st->deadline_change += x->total_count_change;
}

static void add_offered_deadline (fsm_status *st, const void *v)
{
  const dds_offered_deadline_missed_status_t *x = v;
  st->deadline_total = x->total_count;
  st->deadline_change += x->total_count_change;
}

static void add_liveliness_changed (fsm_status *st, const void *v)
{
  const dds_liveliness_changed_status_t *x = v;
  st->alive_count = x->alive_count;
  st->not_alive_count = x->not_alive_count;
  st->alive_change += x->alive_count_change;
  st->not_alive_change += x->not_alive_count_change;
}

static void add_liveliness_lost (fsm_status *st, const void *v)
{
  const dds_liveliness_lost_status_t *x = v;
  st->lost_total = x->total_count;
  st->lost_change += x->total_count_change;
}

static void on_requested_incompatible_qos (dds_entity_t rd, const dds_requested_incompatible_qos_status_t st, void *arg)
{
  (void) rd;
  status_update (arg, FSM_ST_INCOMPATIBLE_QOS, add_requested_incompatible, &st);
}

static void on_offered_incompatible_qos (dds_entity_t wr, const dds_offered_incompatible_qos_status_t st, void *arg)
{
  (void) wr;
  status_update (arg, FSM_ST_INCOMPATIBLE_QOS, add_offered_incompatible, &st);
}

static void on_requested_deadline_missed (dds_entity_t rd, const dds_requested_deadline_missed_status_t st, void *arg)
{
  (void) rd;
  status_update (arg, FSM_ST_DEADLINE_MISSED, add_requested_deadline, &st);
}

static void on_offered_deadline_missed (dds_entity_t wr, const dds_offered_deadline_missed_status_t st, void *arg)
{
  (void) wr;
  status_update (arg, FSM_ST_DEADLINE_MISSED, add_offered_deadline, &st);
}

static void on_liveliness_changed (dds_entity_t rd, const dds_liveliness_changed_status_t st, void *arg)
{
  (void) rd;
  status_update (arg, FSM_ST_LIVELINESS, add_liveliness_changed, &st);
}

static void on_liveliness_lost (dds_entity_t wr, const dds_liveliness_lost_status_t st, void *arg)
{
  (void) wr;
  status_update (arg, FSM_ST_LIVELINESS, add_liveliness_lost, &st);
}

void fsm_rq_watch_status (fsm_rq *q)
{
  fsm_hub *h = q->hub;
  int w = 0;
  pthread_mutex_lock (&h->lock);
  q->watched = 1;
  if (q->st.changed != 0 && !h->closing)
  {
    ready_push (h, q);
    w = wake_needed (h);
  }
  pthread_mutex_unlock (&h->lock);
  if (w)
    hub_wake (h, w);
}

void fsm_rq_take_status (fsm_rq *q, fsm_status *out)
{
  fsm_hub *h = q->hub;
  pthread_mutex_lock (&h->lock);
  *out = q->st;
  q->st.changed = 0;
  q->st.incompatible_change = 0;
  q->st.deadline_change = 0;
  q->st.alive_change = 0;
  q->st.not_alive_change = 0;
  q->st.lost_change = 0;
  pthread_mutex_unlock (&h->lock);
}

dds_entity_t fsm_create_reader (dds_entity_t pp, dds_entity_t tp, const dds_qos_t *qos, fsm_rq *q, fsm_rq *sq)
{
  dds_listener_t *l = dds_create_listener (q);
  if (l == NULL)
    return DDS_RETCODE_OUT_OF_RESOURCES;
  dds_lset_data_available (l, q->kind == FSM_RQ_DATA ? on_data_available : on_signal);
  if (q->kind == FSM_RQ_DATA)
    dds_lset_subscription_matched (l, on_subscription_matched);
  if (sq != NULL)
  {
    dds_lset_requested_incompatible_qos_arg (l, on_requested_incompatible_qos, sq, true);
    dds_lset_requested_deadline_missed_arg (l, on_requested_deadline_missed, sq, true);
    dds_lset_liveliness_changed_arg (l, on_liveliness_changed, sq, true);
  }
  dds_entity_t rd = dds_create_reader (pp, tp, qos, l);
  dds_delete_listener (l);
  return rd;
}

dds_entity_t fsm_create_writer (dds_entity_t pp, dds_entity_t tp, const dds_qos_t *qos, fsm_hub *h, fsm_rq *sq)
{
  dds_listener_t *l = dds_create_listener (h);
  if (l == NULL)
    return DDS_RETCODE_OUT_OF_RESOURCES;
  dds_lset_publication_matched (l, on_publication_matched);
  if (sq != NULL)
  {
    dds_lset_offered_incompatible_qos_arg (l, on_offered_incompatible_qos, sq, true);
    dds_lset_offered_deadline_missed_arg (l, on_offered_deadline_missed, sq, true);
    dds_lset_liveliness_lost_arg (l, on_liveliness_lost, sq, true);
  }
  dds_entity_t wr = dds_create_writer (pp, tp, qos, l);
  dds_delete_listener (l);
  return wr;
}

void fsm_hub_close (fsm_hub *h)
{
  pthread_mutex_lock (&h->lock);
  h->closing = 1;
  int w = wake_needed (h);
  pthread_cond_broadcast (&h->gate_cond);
  pthread_mutex_unlock (&h->lock);
  if (w)
    hub_wake (h, w);
}

void fsm_hub_free (fsm_hub *h)
{
  pthread_mutex_lock (&h->lock);
  while (h->all)
    rq_destroy_locked (h, h->all);
  pthread_mutex_unlock (&h->lock);
  pthread_cond_destroy (&h->gate_cond);
  pthread_mutex_destroy (&h->lock);
  close (h->efd);
  free (h);
}

int32_t fsm_hub_fd (fsm_hub *h)
{
  return h->efd;
}

/* take_batch pops as many samples of q as fit into buf (each at a
   multiple of 4), or one large sample to lend, with the hub lock held, and
   copies them out after releasing it; it returns their number (0 with
   st->need set if the first does not fit).  from_ready: q is the head of
   the ready list (fsm_hub_next), which then moves to its tail if samples
   remain; otherwise (fsm_rq_take_wait) q leaves the ready list once it is
   empty, and joins it, waking the receive goroutine, if not (unless the
   first sample did not fit: the caller then takes again). */
static int32_t take_batch (fsm_hub *h, fsm_rq *q, fsm_recv *st, unsigned char *buf, uint32_t cap, int from_ready)
{
  int32_t k = 0, w = 0;
  uint32_t off = 0;
  int lend = 0;
  while (k < FSM_BATCH && q->count > 0)
  {
    struct fsm_qent *e = &q->ring[q->head];
    uint32_t len = e->sd ? ddsi_serdata_size (e->sd) : 0;
    if (len >= FSM_LEND_MIN)
    {
      if (k > 0)
        break; /* first in the next batch */
      lend = 1;
    }
    else if (len > cap - off)
    {
      if (k == 0)
        st->need = len;
      break;
    }
    st->sd[k] = e->sd;
    fsm_meta *m = &st->meta[k];
    m->off = off;
    m->len = len;
    m->oversize = e->oversize;
    m->source_timestamp = e->source_timestamp;
    m->publication_handle = e->publication_handle;
    off += align4 (len);
    if (off > cap)
      off = cap;
    e->sd = NULL;
    q->head = (q->head + 1) & (q->cap - 1);
    q->count--;
    q->bytes -= len;
    k++;
    if (lend)
      break;
  }
  if (from_ready)
  {
    if (st->need == 0)
    {
      (void) ready_pop (h);
      if (q->count > 0)
        ready_push (h, q); /* round robin between readers */
    }
  }
  else if (q->count == 0)
    ready_remove (h, q);
  else if (st->need == 0)
  {
    /* What the caller leaves is the receive goroutine's (the listener
       woke the caller instead of queuing q on the ready list).  With
       st->need set the caller takes again at once, with a larger buffer. */
    ready_push (h, q);
    w = wake_needed (h);
  }
  pthread_mutex_unlock (&h->lock);
  if (w)
    hub_wake (h, w);
  for (int32_t i = 0; i < k; i++)
  {
    if (st->sd[i] == NULL)
      continue; /* oversize marker */
    if (lend)
    {
      /* to_ser_ref takes a reference of its own for the loan */
      ddsrt_iovec_t ref;
      st->lent = ddsi_serdata_to_ser_ref (st->sd[i], 0, st->meta[i].len, &ref);
      st->lent_base = ref.iov_base;
      st->lent_len = ref.iov_len;
    }
    else if (st->meta[i].len > 0)
      ddsi_serdata_to_ser (st->sd[i], 0, st->meta[i].len, buf + st->meta[i].off);
    ddsi_serdata_unref (st->sd[i]);
    st->sd[i] = NULL;
  }
  return k;
}

int32_t fsm_hub_next (fsm_hub *h, fsm_recv *st, unsigned char *buf, uint32_t cap)
{
  st->need = 0;
  st->token = 0;
  st->kind = 0;
  pthread_mutex_lock (&h->lock);
  if (h->ready_head == NULL && !h->closing)
  {
    /* Yield once before sleeping: if the thread feeding the hub shares
       this CPU it runs now and we pick up its samples without a sleep and
       wake-up (+15 % throughput, slightly lower round trips on the 2-core
       VM; a longer spin was erratic under load). */
    pthread_mutex_unlock (&h->lock);
    sched_yield ();
    pthread_mutex_lock (&h->lock);
  }
  if (h->parked_at != 0)
  {
    /* Back from the poller: a short park means the traffic is hot
       again (a round trip, a fast stream). */
    h->hot = now_ns () - h->parked_at < FSM_HUB_SPIN_NS;
    h->parked_at = 0;
  }
  if (h->ready_head == NULL && !h->closing && h->hot)
  {
    h->waiting = HUB_FUTEX;
    atomic_store (&h->wakeword, 0);
    pthread_mutex_unlock (&h->lock);
    int64_t until = now_ns () + FSM_HUB_SPIN_NS;
    while (atomic_load (&h->wakeword) == 0)
    {
      int64_t left = until - now_ns ();
      if (left <= 0)
        break;
      struct timespec ts = { .tv_sec = left / 1000000000, .tv_nsec = left % 1000000000 };
      syscall (SYS_futex, &h->wakeword, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
    }
    pthread_mutex_lock (&h->lock);
    if (h->ready_head == NULL && !h->closing)
      h->hot = 0; /* nothing came; a waker that saw HUB_FUTEX has not run (it queues first) */
  }
  if (h->ready_head == NULL && !h->closing)
  {
    h->waiting = HUB_PARKED;
    h->parked_at = now_ns ();
    pthread_mutex_unlock (&h->lock);
    return FSM_HUB_WAIT;
  }
  h->waiting = HUB_RUNNING;
  if (h->closing)
  {
    pthread_mutex_unlock (&h->lock);
    return -1;
  }
  fsm_rq *q = h->ready_head;
  st->token = q->token;
  st->kind = q->kind;
  if (q->kind != FSM_RQ_DATA)
  {
    (void) ready_pop (h);
    pthread_mutex_unlock (&h->lock);
    return 0;
  }
  return take_batch (h, q, st, buf, cap, 1);
}

int32_t fsm_rq_take_wait (fsm_rq *q, fsm_recv *st, unsigned char *buf, uint32_t cap, int64_t wait_ns)
{
  fsm_hub *h = q->hub;
  st->need = 0;
  st->token = q->token;
  st->kind = q->kind;
  pthread_mutex_lock (&h->lock);
  int64_t until = now_ns () + wait_ns;
  while (q->count == 0 && !h->closing && !q->kicked)
  {
    int64_t left = until - now_ns ();
    if (left <= 0)
      break;
    q->direct = 1;
    atomic_store (&q->dword, 0);
    pthread_mutex_unlock (&h->lock);
    struct timespec ts = { .tv_sec = left / 1000000000, .tv_nsec = left % 1000000000 };
    syscall (SYS_futex, &q->dword, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
    pthread_mutex_lock (&h->lock);
  }
  q->direct = 0;
  q->kicked = 0;
  if (q->count == 0 || h->closing)
  {
    pthread_mutex_unlock (&h->lock);
    return FSM_HUB_WAIT;
  }
  return take_batch (h, q, st, buf, cap, 0);
}

void fsm_rq_wake_direct (fsm_rq *q)
{
  fsm_hub *h = q->hub;
  int32_t dw = 0;
  pthread_mutex_lock (&h->lock);
  q->kicked = 1; /* also ends the next wait if none is in progress */
  if (q->direct)
  {
    q->direct = 0;
    dw = 1;
  }
  pthread_mutex_unlock (&h->lock);
  if (dw)
    direct_wake (q);
}

void fsm_recv_release (fsm_recv *st)
{
  if (st->lent == NULL)
    return;
  ddsrt_iovec_t ref = { .iov_base = st->lent_base, .iov_len = (ddsrt_iov_len_t) st->lent_len };
  ddsi_serdata_to_ser_unref (st->lent, &ref);
  st->lent = NULL;
  st->lent_base = NULL;
  st->lent_len = 0;
}
