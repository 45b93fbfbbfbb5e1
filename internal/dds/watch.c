/* watch.c: the receive watchdog of package dds (see rawcdr.h and
 * Participant.RunAfterDelivery).
 *
 * A participant's receive goroutine may run a node's callback itself,
 * after a delivery, instead of waking the node's goroutine for it.  A
 * callback that takes long (or blocks waiting for something that only the
 * receive goroutine would deliver) must not hold up receiving, so this
 * thread looks every FSM_WATCH_TICK_NS: a run that was already going on
 * at the previous look and still is counts as stalled, and the standby
 * goroutine, blocked in fsm_watch_wait, is woken to hand receiving over.
 *
 * The watchdog is a plain C thread, not a goroutine: a goroutine that
 * slept per tick in Go (a timer) or in C (a blocking cgo call) cost the
 * Go scheduler wake-ups of its own (timer thread, sysmon), measured as
 * a third more round-trip time.  After FSM_WATCH_IDLE ticks without a
 * run the thread parks on a futex until the next run kicks it.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <stdlib.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/futex.h>

#include "rawcdr.h"

struct fsm_watch_thread {
  fsm_watch w; /* first: the handle Go holds */
  pthread_t tid;
  int started; /* the thread runs (fsm_watch_start) */
};

static int32_t ld32 (int32_t *p) { return __atomic_load_n (p, __ATOMIC_SEQ_CST); }
static void st32 (int32_t *p, int32_t v) { __atomic_store_n (p, v, __ATOMIC_SEQ_CST); }

static void fwait (int32_t *p, int32_t v)
{
  syscall (SYS_futex, p, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void fwake (int32_t *p)
{
  syscall (SYS_futex, p, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *watch_main (void *arg)
{
  fsm_watch *w = arg;
  uint64_t seen = 0;
  int idle = 0;
  while (!ld32 (&w->closing))
  {
    if (idle >= FSM_WATCH_IDLE)
    {
      st32 (&w->parked, 1);
      /* A run that started before parked was set did not kick: look
         again before sleeping (both sides use sequentially consistent
         operations, so one of them sees the other). */
      if (__atomic_load_n (&w->runs, __ATOMIC_SEQ_CST) == seen)
      {
        while (ld32 (&w->parked) && !ld32 (&w->closing))
          fwait (&w->parked, 1);
      }
      st32 (&w->parked, 0);
      idle = 0;
      seen = __atomic_load_n (&w->runs, __ATOMIC_SEQ_CST);
      continue;
    }
    struct timespec ts = { .tv_sec = 0, .tv_nsec = FSM_WATCH_TICK_NS };
    while (nanosleep (&ts, &ts) != 0)
      ;
    uint64_t runs = __atomic_load_n (&w->runs, __ATOMIC_SEQ_CST);
    if (ld32 (&w->running) && runs == seen)
    {
      if (!ld32 (&w->stalled))
      {
        __atomic_add_fetch (&w->stalls, 1, __ATOMIC_SEQ_CST);
        st32 (&w->stalled, 1);
        fwake (&w->stalled);
      }
      idle = 0;
    }
    else if (runs == seen)
      idle++;
    else
      idle = 0;
    seen = runs;
  }
  return NULL;
}

fsm_watch *fsm_watch_new (void)
{
  struct fsm_watch_thread *t = calloc (1, sizeof (*t));
  if (t == NULL)
    return NULL;
  return &t->w;
}

int32_t fsm_watch_start (fsm_watch *w)
{
  struct fsm_watch_thread *t = (struct fsm_watch_thread *) w;
  if (t->started)
    return 0;
  if (pthread_create (&t->tid, NULL, watch_main, &t->w) != 0)
    return -1;
  /* Named here rather than by the thread, so that the name is there
     when this returns. */
  (void) pthread_setname_np (t->tid, "fsm_watch");
  t->started = 1;
  return 0;
}

void fsm_watch_kick (fsm_watch *w)
{
  st32 (&w->parked, 0);
  fwake (&w->parked);
}

int32_t fsm_watch_wait (fsm_watch *w)
{
  while (!ld32 (&w->stalled) && !ld32 (&w->closing))
    fwait (&w->stalled, 0);
  if (ld32 (&w->closing))
    return -1;
  st32 (&w->stalled, 0);
  return 0;
}

void fsm_watch_stop (fsm_watch *w)
{
  struct fsm_watch_thread *t = (struct fsm_watch_thread *) w;
  st32 (&w->closing, 1);
  /* Change the futex words too: a thread between its check of closing
     and its FUTEX_WAIT then finds the value changed and does not sleep. */
  st32 (&w->parked, 0);
  st32 (&w->stalled, 1);
  fwake (&w->parked);
  fwake (&w->stalled);
  if (t->started)
    pthread_join (t->tid, NULL);
  t->started = 0;
}

void fsm_watch_free (fsm_watch *w)
{
  free ((struct fsm_watch_thread *) w);
}
