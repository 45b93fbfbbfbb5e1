/* logsink.c: Cyclone's own log (errors, warnings, info), taken from
 * Cyclone's threads into a bounded ring for Go.
 *
 * dds_set_log_sink replaces Cyclone's default sink, which writes every
 * message to stderr at once (a peer sending garbage packets made it write
 * one "malformed packet" line per packet).  The sink runs on whatever
 * Cyclone thread logs; it never calls Go: it counts the message, copies
 * its text into a ring of FSM_LOG_RING entries (a full ring counts the
 * message as dropped and keeps the older ones) and returns.  Go takes the
 * messages with fsm_log_take, throttles and counts them (internal/ros).
 *
 * A fatal message is also written to stderr here, because Cyclone aborts
 * the process as soon as the sink returns.  Tracing (Cyclone's Tracing
 * configuration) keeps its own sink and file.
 *
 * The sink is process-wide, as Cyclone's is; it is installed once.
 */
#include <stdio.h>
#include <string.h>
#include <pthread.h>

#include "dds/dds.h"
#include "dds/ddsrt/log.h"

#include "logsink.h"

struct fsm_log_ent {
  uint32_t prio;
  char msg[FSM_LOG_MSG];
};

static struct {
  pthread_mutex_t mu;
  struct fsm_log_ent ring[FSM_LOG_RING];
  uint32_t first, n;
  uint64_t total, dropped;
} fsm_log = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void fsm_log_sink (void *arg, const dds_log_data_t *d)
{
  (void) arg;
  if (d->priority & DDS_LC_FATAL)
  {
    fprintf (stderr, "cyclonedds fatal: %.*s\n", (int) d->size, d->message);
    fflush (stderr);
  }
  pthread_mutex_lock (&fsm_log.mu);
  fsm_log.total++;
  if (fsm_log.n == FSM_LOG_RING)
    fsm_log.dropped++;
  else
  {
    struct fsm_log_ent *e = &fsm_log.ring[(fsm_log.first + fsm_log.n) % FSM_LOG_RING];
    size_t len = d->size;
    /* the message ends in a newline (Cyclone logs lines); drop it */
    while (len > 0 && (d->message[len - 1] == '\n' || d->message[len - 1] == '\0'))
      len--;
    if (len > FSM_LOG_MSG - 1)
      len = FSM_LOG_MSG - 1;
    memcpy (e->msg, d->message, len);
    e->msg[len] = '\0';
    e->prio = d->priority;
    fsm_log.n++;
  }
  pthread_mutex_unlock (&fsm_log.mu);
}

void fsm_log_install (void)
{
  dds_set_log_sink (fsm_log_sink, NULL);
}

int fsm_log_take (uint32_t *prio, char *buf, size_t cap)
{
  int got = 0;
  pthread_mutex_lock (&fsm_log.mu);
  if (fsm_log.n > 0)
  {
    struct fsm_log_ent *e = &fsm_log.ring[fsm_log.first];
    size_t len = strlen (e->msg);
    if (cap > 0)
    {
      if (len > cap - 1)
        len = cap - 1;
      memcpy (buf, e->msg, len);
      buf[len] = '\0';
    }
    *prio = e->prio;
    fsm_log.first = (fsm_log.first + 1) % FSM_LOG_RING;
    fsm_log.n--;
    got = 1;
  }
  pthread_mutex_unlock (&fsm_log.mu);
  return got;
}

void fsm_log_stats (uint64_t *total, uint64_t *dropped)
{
  pthread_mutex_lock (&fsm_log.mu);
  *total = fsm_log.total;
  *dropped = fsm_log.dropped;
  pthread_mutex_unlock (&fsm_log.mu);
}
