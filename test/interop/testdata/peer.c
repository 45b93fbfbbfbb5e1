/*
 * peer: an independent ROS-like DDS peer written against the plain Cyclone
 * DDS C API and the idlc-generated descriptors of ros_types.idl. It shares
 * no code with internal/ros or internal/dds.
 *
 *   peer sub DOMAIN NSTRING NTWIST NJOINT
 *       Subscribes to rt/interop/chatter (std_msgs/String),
 *       rt/interop/cmd_vel (geometry_msgs/Twist) and
 *       rt/interop/joint_states (sensor_msgs/JointState), prints "matched"
 *       once every reader has matched a writer, then one line per sample
 *       and exits 0 after the given number of samples of each type.
 *       After "matched" it prints one "endpoint" line per topic describing
 *       the matched remote writer as discovered (see print_matched). A
 *       second reader per topic takes the serialized samples: for each it
 *       prints "cdr KIND RECEIVED RESERIALIZED", the hex of the bytes as
 *       received (encapsulation header included) and of Cyclone's own
 *       serialization of the decoded value.
 *   peer pub DOMAIN
 *       Creates writers on the same topics, prints "matched" once every
 *       writer has matched a reader, the "endpoint" lines of the matched
 *       readers, then reads sample lines from stdin,
 *       publishes each one (waiting for its acknowledgement) and prints
 *       "sent N" at end of input.
 *
 * Sample lines (tokens separated by one space):
 *   string S
 *   twist LX LY LZ AX AY AZ
 *   joint SEC NANOSEC FRAME NNAME NAME... NPOS POS... NVEL VEL... NEFF EFF...
 * where strings are "x" followed by the lowercase hex of their bytes and
 * doubles are the 16 lowercase hex digits of their IEEE-754 bits, so every
 * value (NaN payloads, -0, subnormals, any UTF-8) is compared exactly.
 *
 * Every wait is bounded; on timeout or error it prints a diagnostic on
 * stderr and exits non-zero.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dds/dds.h"
#include "dds/ddsi/ddsi_serdata.h"
#include "ros_types.h"

#define TIMEOUT DDS_SECS (25)

enum { T_STRING, T_TWIST, T_JOINT, NTOPICS };

static const char *topic_names[NTOPICS] = {
  "rt/interop/chatter", "rt/interop/cmd_vel", "rt/interop/joint_states"
};

static const dds_topic_descriptor_t *descs[NTOPICS] = {
  &std_msgs_msg_dds__String__desc,
  &geometry_msgs_msg_dds__Twist__desc,
  &sensor_msgs_msg_dds__JointState__desc
};

static void die (const char *what, dds_return_t rc)
{
  fprintf (stderr, "peer: %s: %s\n", what, rc < 0 ? dds_strretcode (rc) : "failed");
  exit (2);
}

/* ---- printing ---- */

static void put_str (const char *s)
{
  fputs (" x", stdout);
  for (const unsigned char *p = (const unsigned char *) s; *p; p++)
    printf ("%02x", *p);
}

static void put_double (double d)
{
  uint64_t u;
  memcpy (&u, &d, sizeof u);
  printf (" %016" PRIx64, u);
}

static void put_doubles (const dds_sequence_double *s)
{
  printf (" %" PRIu32, s->_length);
  for (uint32_t i = 0; i < s->_length; i++)
    put_double (s->_buffer[i]);
}

static void print_sample (int kind, const void *sample)
{
  switch (kind)
  {
    case T_STRING: {
      const std_msgs_msg_dds__String_ *m = sample;
      fputs ("string", stdout);
      put_str (m->data);
      break;
    }
    case T_TWIST: {
      const geometry_msgs_msg_dds__Twist_ *m = sample;
      fputs ("twist", stdout);
      put_double (m->linear.x); put_double (m->linear.y); put_double (m->linear.z);
      put_double (m->angular.x); put_double (m->angular.y); put_double (m->angular.z);
      break;
    }
    case T_JOINT: {
      const sensor_msgs_msg_dds__JointState_ *m = sample;
      printf ("joint %" PRId32 " %" PRIu32, m->header.stamp.sec, m->header.stamp.nanosec);
      put_str (m->header.frame_id);
      printf (" %" PRIu32, m->name._length);
      for (uint32_t i = 0; i < m->name._length; i++)
        put_str (m->name._buffer[i]);
      put_doubles (&m->position);
      put_doubles (&m->velocity);
      put_doubles (&m->effort);
      break;
    }
  }
  putchar ('\n');
  fflush (stdout);
}

/* ---- parsing ---- */

static char *next_tok (char **cur)
{
  char *t = strsep (cur, " ");
  if (t == NULL)
  {
    fprintf (stderr, "peer: short sample line\n");
    exit (2);
  }
  return t;
}

static int hexval (char c)
{
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

static char *get_str (char **cur)
{
  const char *t = next_tok (cur);
  size_t n = strlen (t);
  if (t[0] != 'x' || (n - 1) % 2 != 0)
  {
    fprintf (stderr, "peer: bad string token %.40s\n", t);
    exit (2);
  }
  char *s = dds_alloc ((n - 1) / 2 + 1);
  size_t j = 0;
  for (size_t i = 1; i < n; i += 2)
  {
    int hi = hexval (t[i]), lo = hexval (t[i + 1]);
    if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
    {
      fprintf (stderr, "peer: bad string token %.40s\n", t);
      exit (2);
    }
    s[j++] = (char) (hi * 16 + lo);
  }
  s[j] = 0;
  return s;
}

static uint64_t get_uint (char **cur, int base)
{
  const char *t = next_tok (cur);
  char *end;
  unsigned long long v = strtoull (t, &end, base);
  if (*t == 0 || *end != 0)
  {
    fprintf (stderr, "peer: bad number %.40s\n", t);
    exit (2);
  }
  return (uint64_t) v;
}

static double get_double (char **cur)
{
  uint64_t u = get_uint (cur, 16);
  double d;
  memcpy (&d, &u, sizeof d);
  return d;
}

static void get_doubles (char **cur, dds_sequence_double *s)
{
  uint32_t n = (uint32_t) get_uint (cur, 10);
  s->_length = s->_maximum = n;
  s->_release = true;
  s->_buffer = n ? dds_alloc (n * sizeof (double)) : NULL;
  for (uint32_t i = 0; i < n; i++)
    s->_buffer[i] = get_double (cur);
}

/* parse_sample fills the zeroed sample of the kind named by the line. */
static int parse_sample (char *line, void **sample)
{
  char *cur = line;
  const char *kind = next_tok (&cur);
  if (strcmp (kind, "string") == 0)
  {
    std_msgs_msg_dds__String_ *m = dds_alloc (sizeof *m);
    m->data = get_str (&cur);
    *sample = m;
    return cur == NULL ? T_STRING : -1;
  }
  if (strcmp (kind, "twist") == 0)
  {
    geometry_msgs_msg_dds__Twist_ *m = dds_alloc (sizeof *m);
    m->linear.x = get_double (&cur); m->linear.y = get_double (&cur); m->linear.z = get_double (&cur);
    m->angular.x = get_double (&cur); m->angular.y = get_double (&cur); m->angular.z = get_double (&cur);
    *sample = m;
    return cur == NULL ? T_TWIST : -1;
  }
  if (strcmp (kind, "joint") == 0)
  {
    sensor_msgs_msg_dds__JointState_ *m = dds_alloc (sizeof *m);
    const char *sec = next_tok (&cur);
    m->header.stamp.sec = (int32_t) strtol (sec, NULL, 10);
    m->header.stamp.nanosec = (uint32_t) get_uint (&cur, 10);
    m->header.frame_id = get_str (&cur);
    uint32_t n = (uint32_t) get_uint (&cur, 10);
    m->name._length = m->name._maximum = n;
    m->name._release = true;
    m->name._buffer = n ? dds_alloc (n * sizeof (char *)) : NULL;
    for (uint32_t i = 0; i < n; i++)
      m->name._buffer[i] = get_str (&cur);
    get_doubles (&cur, &m->position);
    get_doubles (&cur, &m->velocity);
    get_doubles (&cur, &m->effort);
    *sample = m;
    return cur == NULL ? T_JOINT : -1;
  }
  return -1;
}

/* ---- entities ---- */

static dds_qos_t *ros_qos (void)
{
  /* rmw_qos_profile_default as rmw_cyclonedds_cpp maps it, XCDR1 only. */
  dds_qos_t *qos = dds_create_qos ();
  dds_qset_reliability (qos, DDS_RELIABILITY_RELIABLE, DDS_SECS (1));
  dds_qset_durability (qos, DDS_DURABILITY_VOLATILE);
  dds_qset_history (qos, DDS_HISTORY_KEEP_LAST, 10);
  dds_qset_data_representation (qos, 1, (dds_data_representation_id_t[]){ DDS_DATA_REPRESENTATION_XCDR1 });
  return qos;
}

static void print_endpoint (const char *topic, const dds_builtintopic_endpoint_t *ep)
{
  printf ("endpoint %s %s", topic, ep->type_name);
  void *ud = NULL;
  size_t udsz = 0;
  fputs (" x", stdout);
  if (dds_qget_userdata (ep->qos, &ud, &udsz))
    for (size_t i = 0; i < udsz; i++)
      printf ("%02x", ((const unsigned char *) ud)[i]);
  dds_free (ud);
  dds_reliability_kind_t rel;
  dds_duration_t blocking;
  if (dds_qget_reliability (ep->qos, &rel, &blocking))
    fputs (rel == DDS_RELIABILITY_RELIABLE ? " reliable" : " best_effort", stdout);
  else
    fputs (" -", stdout);
  dds_durability_kind_t dur;
  if (dds_qget_durability (ep->qos, &dur))
    fputs (dur == DDS_DURABILITY_VOLATILE ? " volatile" : dur == DDS_DURABILITY_TRANSIENT_LOCAL ? " transient_local" : " other", stdout);
  else
    fputs (" -", stdout);
  uint32_t nrep = 0;
  dds_data_representation_id_t *reps = NULL;
  if (dds_qget_data_representation (ep->qos, &nrep, &reps) && nrep > 0)
  {
    for (uint32_t i = 0; i < nrep; i++)
      printf ("%s%s", i ? "," : " ", reps[i] == DDS_DATA_REPRESENTATION_XCDR1 ? "xcdr1" : reps[i] == DDS_DATA_REPRESENTATION_XCDR2 ? "xcdr2" : "other");
  }
  else
    fputs (" -", stdout);
  dds_free (reps);
  putchar ('\n');
}

/* print_matched prints one "endpoint" line for the remote endpoint matched
   by each of ents (exactly one is expected): topic, type name, USER_DATA,
   reliability, durability and data representations as discovered. */
static void print_matched (dds_entity_t *ents, int writers)
{
  for (int k = 0; k < NTOPICS; k++)
  {
    dds_instance_handle_t ih[4];
    dds_return_t n = writers ? dds_get_matched_subscriptions (ents[k], ih, 4) : dds_get_matched_publications (ents[k], ih, 4);
    if (n < 0)
      die ("matched endpoints", n);
    if (n != 1)
    {
      fprintf (stderr, "peer: %s: %d matched endpoints, want 1\n", topic_names[k], (int) n);
      exit (2);
    }
    dds_builtintopic_endpoint_t *ep = writers ? dds_get_matched_subscription_data (ents[k], ih[0]) : dds_get_matched_publication_data (ents[k], ih[0]);
    if (ep == NULL)
      die ("matched endpoint data", 0);
    print_endpoint (topic_names[k], ep);
    dds_builtintopic_free_endpoint (ep);
  }
  fflush (stdout);
}

/* wait_matched waits until each of the n entities has matched a remote
   endpoint, prints "matched" and the endpoint lines of the first NTOPICS. */
static void wait_matched (dds_entity_t *ents, int n, int writers)
{
  dds_time_t end = dds_time () + TIMEOUT;
  for (;;)
  {
    int ok = 1;
    for (int k = 0; k < n; k++)
    {
      dds_return_t rc;
      uint32_t count;
      if (writers)
      {
        dds_publication_matched_status_t st;
        rc = dds_get_publication_matched_status (ents[k], &st);
        count = st.current_count;
      }
      else
      {
        dds_subscription_matched_status_t st;
        rc = dds_get_subscription_matched_status (ents[k], &st);
        count = st.current_count;
      }
      if (rc < 0)
        die ("matched status", rc);
      if (count == 0)
        ok = 0;
    }
    if (ok)
      break;
    if (dds_time () > end)
    {
      fprintf (stderr, "peer: timeout waiting for matches\n");
      exit (3);
    }
    dds_sleepfor (DDS_MSECS (10));
  }
  puts ("matched");
  print_matched (ents, writers);
}

static void put_serdata (const struct ddsi_serdata *sd)
{
  uint32_t sz = ddsi_serdata_size (sd);
  unsigned char *buf = malloc (sz ? sz : 1);
  if (buf == NULL)
    die ("out of memory", 0);
  ddsi_serdata_to_ser (sd, 0, sz, buf);
  putchar (' ');
  for (uint32_t i = 0; i < sz; i++)
    printf ("%02x", buf[i]);
  free (buf);
}

/* print_cdr prints a "cdr" line for a serialized sample of kind k. */
static void print_cdr (int k, struct ddsi_serdata *sd)
{
  void *sample = dds_alloc (descs[k]->m_size);
  if (!ddsi_serdata_to_sample (sd, sample, NULL, NULL))
  {
    fprintf (stderr, "peer: %s: a sample does not deserialize\n", topic_names[k]);
    exit (2);
  }
  struct ddsi_serdata *again = ddsi_serdata_from_sample (sd->type, SDK_DATA, sample);
  if (again == NULL)
    die ("serialize", 0);
  printf ("cdr %s", k == T_STRING ? "string" : k == T_TWIST ? "twist" : "joint");
  put_serdata (sd);
  put_serdata (again);
  putchar ('\n');
  fflush (stdout);
  ddsi_serdata_unref (again);
  dds_sample_free (sample, descs[k], DDS_FREE_ALL);
}

static int run_sub (dds_entity_t pp, dds_entity_t *topics, const long *want)
{
  dds_qos_t *qos = ros_qos ();
  dds_entity_t rd[2 * NTOPICS], *raw = rd + NTOPICS;
  dds_entity_t ws = dds_create_waitset (pp);
  for (int k = 0; k < NTOPICS; k++)
  {
    if ((rd[k] = dds_create_reader (pp, topics[k], qos, NULL)) < 0)
      die ("create reader", rd[k]);
    if ((raw[k] = dds_create_reader (pp, topics[k], qos, NULL)) < 0)
      die ("create reader", raw[k]);
    dds_return_t ret;
    dds_entity_t rawc = dds_create_readcondition (raw[k], DDS_ANY_STATE);
    if (rawc < 0)
      die ("create readcondition", rawc);
    if ((ret = dds_waitset_attach (ws, rawc, k)) < 0)
      die ("waitset attach", ret);
    dds_entity_t rc = dds_create_readcondition (rd[k], DDS_ANY_STATE);
    if (rc < 0)
      die ("create readcondition", rc);
    if ((ret = dds_waitset_attach (ws, rc, k)) < 0)
      die ("waitset attach", ret);
  }
  dds_delete_qos (qos);
  wait_matched (rd, 2 * NTOPICS, 0);

  long got[NTOPICS] = { 0 }, gotraw[NTOPICS] = { 0 };
  dds_time_t end = dds_time () + TIMEOUT;
  while (got[T_STRING] < want[T_STRING] || got[T_TWIST] < want[T_TWIST] || got[T_JOINT] < want[T_JOINT] ||
         gotraw[T_STRING] < want[T_STRING] || gotraw[T_TWIST] < want[T_TWIST] || gotraw[T_JOINT] < want[T_JOINT])
  {
    if (dds_time () > end)
    {
      fprintf (stderr, "peer: timeout: got %ld/%ld strings, %ld/%ld twists, %ld/%ld joint states\n",
               got[0], want[0], got[1], want[1], got[2], want[2]);
      return 3;
    }
    dds_return_t n = dds_waitset_wait_until (ws, NULL, 0, end);
    if (n < 0)
      die ("waitset wait", n);
    for (int k = 0; k < NTOPICS; k++)
    {
      void *samples[1] = { NULL };
      dds_sample_info_t info;
      dds_return_t m;
      while ((m = dds_take (rd[k], samples, &info, 1, 1)) > 0)
      {
        if (info.valid_data)
        {
          print_sample (k, samples[0]);
          got[k]++;
        }
        dds_return_loan (rd[k], samples, m);
        samples[0] = NULL;
      }
      if (m < 0)
        die ("take", m);
      struct ddsi_serdata *sd = NULL;
      while ((m = dds_takecdr (raw[k], &sd, 1, &info, DDS_ANY_STATE)) > 0)
      {
        if (info.valid_data)
        {
          print_cdr (k, sd);
          gotraw[k]++;
        }
        ddsi_serdata_unref (sd);
        sd = NULL;
      }
      if (m < 0)
        die ("takecdr", m);
    }
  }
  return 0;
}

static int run_pub (dds_entity_t pp, dds_entity_t *topics)
{
  dds_qos_t *qos = ros_qos ();
  dds_entity_t wr[NTOPICS];
  for (int k = 0; k < NTOPICS; k++)
    if ((wr[k] = dds_create_writer (pp, topics[k], qos, NULL)) < 0)
      die ("create writer", wr[k]);
  dds_delete_qos (qos);
  wait_matched (wr, NTOPICS, 1);

  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  long sent = 0;
  while ((len = getline (&line, &cap, stdin)) > 0)
  {
    if (line[len - 1] == '\n')
      line[--len] = 0;
    if (len == 0)
      continue;
    void *sample = NULL;
    int k = parse_sample (line, &sample);
    if (k < 0)
    {
      fprintf (stderr, "peer: bad sample line (trailing or unknown tokens)\n");
      return 2;
    }
    dds_return_t rc = dds_write (wr[k], sample);
    if (rc < 0)
      die ("write", rc);
    if ((rc = dds_wait_for_acks (wr[k], TIMEOUT)) < 0)
      die ("wait for acks", rc);
    dds_sample_free (sample, descs[k], DDS_FREE_ALL);
    sent++;
  }
  free (line);
  printf ("sent %ld\n", sent);
  fflush (stdout);
  return 0;
}

int main (int argc, char **argv)
{
  if (argc < 3 || (strcmp (argv[1], "sub") == 0 && argc != 6) || (strcmp (argv[1], "pub") == 0 && argc != 3))
  {
    fprintf (stderr, "usage: peer sub DOMAIN NSTRING NTWIST NJOINT | peer pub DOMAIN\n");
    return 2;
  }
  dds_domainid_t domain = (dds_domainid_t) strtoul (argv[2], NULL, 10);
  dds_entity_t pp = dds_create_participant (domain, NULL, NULL);
  if (pp < 0)
    die ("create participant", pp);
  dds_entity_t topics[NTOPICS];
  for (int k = 0; k < NTOPICS; k++)
    if ((topics[k] = dds_create_topic (pp, descs[k], topic_names[k], NULL, NULL)) < 0)
      die ("create topic", topics[k]);

  int ret;
  if (strcmp (argv[1], "sub") == 0)
  {
    long want[NTOPICS];
    for (int k = 0; k < NTOPICS; k++)
      want[k] = strtol (argv[3 + k], NULL, 10);
    ret = run_sub (pp, topics, want);
  }
  else if (strcmp (argv[1], "pub") == 0)
    ret = run_pub (pp, topics);
  else
  {
    fprintf (stderr, "peer: unknown mode %s\n", argv[1]);
    ret = 2;
  }
  dds_delete (pp);
  return ret;
}
