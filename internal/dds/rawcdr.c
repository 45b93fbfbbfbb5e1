/* rawcdr.c: the C half of package dds.
 *
 * A keyless Cyclone sertype whose samples are opaque serialized CDR (the
 * 4-byte encapsulation header plus the body), in the manner of
 * rmw_cyclonedds_cpp, plus small helpers so that Go needs one cgo call per
 * write and per QoS (the receive path is in hub.c).  Every sertype and serdata
 * operation is implemented here, so Cyclone's threads never call into Go.
 *
 * from_ser walks the received fragment chain and therefore uses Cyclone's
 * internal struct nn_rdata (dds/ddsi/q_radmin.h); that layout is specific to
 * Cyclone 0.10.x and is the reason this package is pinned to it.
 *
 * Shared memory (iceoryx, when the Cyclone configuration enables it and
 * RouDi runs): a writer that has an iceoryx publisher puts every sample in
 * a chunk as serialized CDR, as rmw_cyclonedds_cpp does for serialized
 * messages; a sertype created with a layout (a fixed-size type, see
 * fsm_run) also takes loaned samples in the type's C memory layout and
 * turns chunks in that layout ("raw", what rclcpp publishes for such types)
 * into CDR, without Go.
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <pthread.h>

#include "dds/dds.h"
#include "dds/ddsi/ddsi_sertype.h"
#include "dds/ddsi/ddsi_serdata.h"
#include "dds/ddsi/q_radmin.h"
#include "dds/ddsc/dds_loan_api.h"
#include "dds/ddsc/dds_data_allocator.h"
#include "dds/ddsi/ddsi_shm_transport.h"

#include "rawcdr.h"

/* The application-level sample of this type (only used if someone calls
   dds_write/dds_take with it; the package itself uses the CDR calls). */
struct fsm_sample {
  void *data;
  uint32_t size;
};

struct fsm_serdata {
  struct ddsi_serdata c;
  uint32_t size;           /* serialized size incl. encapsulation header */
  uint32_t cap;            /* bytes allocated for data (>= size, multiple of 4) */
  unsigned char data[];    /* size bytes, zero-padded to a multiple of 4 */
};

/* The sertype: a plain keyless sertype, plus for fixed-size types the
   layout of the type in memory as C (and rclcpp) lay it out: runs of
   primitives in declaration order.  cdr_size is the size of the CDR body
   of every sample of the type (0 when there is no layout). */
struct fsm_sertype {
  struct ddsi_sertype c;
  uint32_t cdr_size;
  uint32_t nruns;
  fsm_run runs[];
};

static uint32_t align4 (uint32_t x) { return (x + 3u) & ~3u; }

/* layout_cdr_size returns the CDR body size of the layout, or 0 if the
   layout is invalid (a run outside raw_size, a primitive size other than
   1, 2, 4 or 8, or overflow). */
static uint32_t layout_cdr_size (const fsm_run *runs, uint32_t nruns, uint32_t raw_size)
{
  uint64_t o = 0;
  for (uint32_t i = 0; i < nruns; i++)
  {
    const uint32_t a = runs[i].size;
    if (a != 1 && a != 2 && a != 4 && a != 8)
      return 0;
    const uint64_t n = (uint64_t) a * runs[i].count;
    if (runs[i].count == 0 || (uint64_t) runs[i].off + n > raw_size)
      return 0;
    o = (o + a - 1) / a * a + n;
    if (o > UINT32_MAX - 16)
      return 0;
  }
  return (uint32_t) o;
}

/* raw_to_cdr writes the CDR body (little endian, XCDR1 alignment counted
   from the start of the body) of the sample at raw into out, which holds
   t->cdr_size bytes. */
static void raw_to_cdr (const struct fsm_sertype *t, const unsigned char *raw, unsigned char *out)
{
  uint32_t o = 0;
  for (uint32_t i = 0; i < t->nruns; i++)
  {
    const uint32_t a = t->runs[i].size;
    const uint32_t pad = (a - (o % a)) % a;
    if (pad > 0)
      memset (out + o, 0, pad);
    o += pad;
    const uint32_t n = a * t->runs[i].count;
    memcpy (out + o, raw + t->runs[i].off, n);
    o += n;
  }
}

/* Large blocks are kept for reuse.  The package fixes glibc's mmap
   threshold at 256 KiB (heap.go), so every block of a large sample would
   otherwise be mapped, faulted in page by page as it is written, and
   unmapped when freed: on every write and every received sample, which
   made a 1 MiB round trip 2.5-3 times slower than rmw_cyclonedds_cpp's.
   Freed blocks of BIG_MIN to BIG_MAX bytes go to a small cache (at most
   BIG_SLOTS blocks and BIG_BYTES in all; beyond that they are freed) and
   a new sample takes the smallest cached block that fits it without
   wasting more than half of it.  Large blocks are allocated in BIG_ROUND
   steps so that samples of nearly the same size share blocks.  The cache
   is process-wide, like the allocator it stands in front of, and
   fsm_big_drain empties it (with the heap trim after an oversized
   sample).  Larger blocks, such as hostile 48 MB samples, are never
   kept. */
#define BIG_MIN (128u << 10)
#define BIG_MAX (8u << 20)
#define BIG_ROUND (64u << 10)
#define BIG_SLOTS 8
#define BIG_BYTES (24u << 20)

static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fsm_serdata *big[BIG_SLOTS];
static uint32_t nbig;
static size_t big_bytes;

static struct fsm_serdata *big_take (uint32_t need)
{
  struct fsm_serdata *d = NULL;
  pthread_mutex_lock (&big_lock);
  uint32_t best = nbig;
  for (uint32_t i = 0; i < nbig; i++)
    if (big[i]->cap >= need && big[i]->cap / 2 <= need && (best == nbig || big[i]->cap < big[best]->cap))
      best = i;
  if (best < nbig)
  {
    d = big[best];
    big[best] = big[--nbig];
    big_bytes -= d->cap;
  }
  pthread_mutex_unlock (&big_lock);
  return d;
}

/* big_put keeps d for reuse; it returns 0 (and the caller frees d) if d
   is not kept. */
static int big_put (struct fsm_serdata *d)
{
  if (d->cap < BIG_MIN || d->cap > BIG_MAX)
    return 0;
  int kept = 0;
  pthread_mutex_lock (&big_lock);
  if (nbig < BIG_SLOTS && big_bytes + d->cap <= BIG_BYTES)
  {
    big[nbig++] = d;
    big_bytes += d->cap;
    kept = 1;
  }
  pthread_mutex_unlock (&big_lock);
  return kept;
}

void fsm_big_drain (void)
{
  pthread_mutex_lock (&big_lock);
  while (nbig > 0)
    free (big[--nbig]);
  big_bytes = 0;
  pthread_mutex_unlock (&big_lock);
}

static struct fsm_serdata *serdata_new (const struct ddsi_sertype *type, enum ddsi_serdata_kind kind, uint32_t size)
{
  uint32_t padded = align4 (size);
  if (padded < size)
    return NULL;
  struct fsm_serdata *d = NULL;
  uint32_t cap = padded;
  if (padded >= BIG_MIN && padded <= BIG_MAX)
  {
    d = big_take (padded);
    cap = (padded + BIG_ROUND - 1) / BIG_ROUND * BIG_ROUND;
  }
  if (d != NULL)
    cap = d->cap;
  else if ((d = malloc (sizeof (*d) + cap)) == NULL)
    return NULL;
  memset (&d->c, 0, sizeof (d->c));
  ddsi_serdata_init (&d->c, type, kind);
  d->size = size;
  d->cap = cap;
  if (padded > size)
    memset (d->data + size, 0, padded - size);
  return d;
}

/* ---- serdata operations ---- */

static bool sd_eqkey (const struct ddsi_serdata *a, const struct ddsi_serdata *b)
{
  (void) a; (void) b;
  return true; /* keyless: a single instance */
}

static uint32_t sd_get_size (const struct ddsi_serdata *dcmn)
{
  return ((const struct fsm_serdata *) dcmn)->size;
}

static void sd_free (struct ddsi_serdata *dcmn)
{
  struct fsm_serdata *d = (struct fsm_serdata *) dcmn;
  if (!big_put (d))
    free (d);
}

static struct ddsi_serdata *sd_from_ser (const struct ddsi_sertype *type, enum ddsi_serdata_kind kind, const struct nn_rdata *frag, size_t size)
{
  if (size > UINT32_MAX)
    return NULL;
  struct fsm_serdata *d = serdata_new (type, kind, (uint32_t) size);
  if (d == NULL)
    return NULL;
  uint32_t off = 0;
  for (; frag != NULL; frag = frag->nextfrag)
  {
    if (frag->min > off)
    {
      sd_free (&d->c); /* a hole: not a fragment chain we understand */
      return NULL;
    }
    const uint32_t end = (frag->maxp1 < size) ? frag->maxp1 : (uint32_t) size;
    if (end > off)
    {
      const unsigned char *payload = NN_RMSG_PAYLOADOFF (frag->rmsg, NN_RDATA_PAYLOAD_OFF (frag));
      memcpy (d->data + off, payload + (off - frag->min), end - off);
      off = end;
    }
  }
  if (off < size)
    memset (d->data + off, 0, size - off);
  return &d->c;
}

static struct ddsi_serdata *sd_from_ser_iov (const struct ddsi_sertype *type, enum ddsi_serdata_kind kind, ddsrt_msg_iovlen_t niov, const ddsrt_iovec_t *iov, size_t size)
{
  if (size > UINT32_MAX)
    return NULL;
  struct fsm_serdata *d = serdata_new (type, kind, (uint32_t) size);
  if (d == NULL)
    return NULL;
  size_t off = 0;
  for (ddsrt_msg_iovlen_t i = 0; i < niov && off < size; i++)
  {
    size_t n = iov[i].iov_len;
    if (n > size - off)
      n = size - off;
    memcpy (d->data + off, iov[i].iov_base, n);
    off += n;
  }
  if (off < size)
    memset (d->data + off, 0, size - off);
  return &d->c;
}

static struct ddsi_serdata *sd_from_keyhash (const struct ddsi_sertype *type, const struct ddsi_keyhash *keyhash)
{
  (void) keyhash;
  struct fsm_serdata *d = serdata_new (type, SDK_KEY, 0);
  return d ? &d->c : NULL;
}

/* serdata_from_raw makes a little-endian CDR sample (header included) of
   the sample at raw in the layout of t; NULL when out of memory. */
static struct fsm_serdata *serdata_from_raw (const struct fsm_sertype *t, enum ddsi_serdata_kind kind, const unsigned char *raw)
{
  struct fsm_serdata *d = serdata_new (&t->c, kind, 4 + t->cdr_size);
  if (d == NULL)
    return NULL;
  static const unsigned char cdr_le[4] = { 0, 1, 0, 0 };
  memcpy (d->data, cdr_le, 4);
  raw_to_cdr (t, raw, d->data + 4);
  return d;
}

/* pin, armed by fsm_write_loaned around its dds_write, holds a reference
   to the serdata dds_write makes for network readers: Cyclone 0.10 reads
   that serdata's chunk after its last reference went when the network
   write fails (dds_write_impl_iox), and the pin keeps it alive until
   dds_write has returned. */
static _Thread_local struct {
  bool armed;
  struct fsm_serdata *d;
} pin;

/* The application sample of a fixed-size type is its C struct (as for
   Cyclone's own fixed-size types: dds_write copies it into a chunk, or
   writes a loaned chunk holding it); of any other type an fsm_sample. */
static struct ddsi_serdata *sd_from_sample (const struct ddsi_sertype *type, enum ddsi_serdata_kind kind, const void *sample)
{
  const struct fsm_sertype *t = (const struct fsm_sertype *) type;
  struct fsm_serdata *d;
  if (kind == SDK_DATA && t->nruns > 0)
    d = serdata_from_raw (t, kind, sample);
  else
  {
    const struct fsm_sample *s = sample;
    uint32_t n = (kind == SDK_DATA && s != NULL) ? s->size : 0;
    if ((d = serdata_new (type, kind, n)) != NULL && n > 0)
      memcpy (d->data, s->data, n);
  }
  if (d != NULL && pin.armed && pin.d == NULL)
  {
    (void) ddsi_serdata_ref (&d->c);
    pin.d = d;
  }
  return d ? &d->c : NULL;
}

static void sd_to_ser (const struct ddsi_serdata *dcmn, size_t off, size_t sz, void *buf)
{
  const struct fsm_serdata *d = (const struct fsm_serdata *) dcmn;
  memcpy (buf, d->data + off, sz);
}

static struct ddsi_serdata *sd_to_ser_ref (const struct ddsi_serdata *dcmn, size_t off, size_t sz, ddsrt_iovec_t *ref)
{
  const struct fsm_serdata *d = (const struct fsm_serdata *) dcmn;
  ref->iov_base = (void *) (d->data + off);
  ref->iov_len = (ddsrt_iov_len_t) sz;
  return ddsi_serdata_ref (dcmn);
}

static void sd_to_ser_unref (struct ddsi_serdata *dcmn, const ddsrt_iovec_t *ref)
{
  (void) ref;
  ddsi_serdata_unref (dcmn);
}

static bool sd_to_sample (const struct ddsi_serdata *dcmn, void *sample, void **bufptr, void *buflim)
{
  (void) bufptr; (void) buflim;
  const struct fsm_serdata *d = (const struct fsm_serdata *) dcmn;
  struct fsm_sample *s = sample;
  void *p = NULL;
  if (d->c.kind == SDK_DATA && d->size > 0)
  {
    if ((p = malloc (d->size)) == NULL)
      return false;
    memcpy (p, d->data, d->size);
  }
  free (s->data);
  s->data = p;
  s->size = p ? d->size : 0;
  return true;
}

static struct ddsi_serdata *sd_to_untyped (const struct ddsi_serdata *dcmn)
{
  /* The key of a keyless topic is empty: keep nothing of the payload alive. */
  struct fsm_serdata *d = serdata_new (dcmn->type, SDK_KEY, 0);
  if (d == NULL)
    return NULL;
  d->c.type = NULL;
  return &d->c;
}

static bool sd_untyped_to_sample (const struct ddsi_sertype *type, const struct ddsi_serdata *d, void *sample, void **bufptr, void *buflim)
{
  (void) type; (void) d; (void) bufptr; (void) buflim;
  struct fsm_sample *s = sample;
  free (s->data);
  s->data = NULL;
  s->size = 0;
  return true;
}

static size_t sd_print (const struct ddsi_sertype *type, const struct ddsi_serdata *dcmn, char *buf, size_t size)
{
  (void) type;
  const struct fsm_serdata *d = (const struct fsm_serdata *) dcmn;
  int n = snprintf (buf, size, "rawcdr(%u bytes)", (unsigned) d->size);
  return n < 0 ? 0 : (size_t) n;
}

static void sd_get_keyhash (const struct ddsi_serdata *d, struct ddsi_keyhash *buf, bool force_md5)
{
  (void) d; (void) force_md5;
  memset (buf->value, 0, sizeof (buf->value));
}

/* chunk_payload_size is the room for the user payload in the chunk at
   buffer: the chunk's size (the first field of iceoryx's chunk header,
   which iceoryx keeps in place across versions) less the header and
   padding before the payload. 0 when the header makes no sense. */
static uint32_t chunk_payload_size (const void *buffer)
{
  const unsigned char *ch = (const unsigned char *) iox_chunk_header_from_user_payload_const (buffer);
  const unsigned char *p = buffer;
  uint32_t chunk_size;
  memcpy (&chunk_size, ch, sizeof (chunk_size));
  if (p <= ch || (size_t) (p - ch) >= chunk_size)
    return 0;
  return chunk_size - (uint32_t) (p - ch);
}

/* sd_from_iox has two callers.
   - iceoryx's listener thread, with a chunk received over shared memory
     (sub != NULL).  The caller does not check for NULL, so a chunk that
     cannot be read (a state or size that does not fit the type, or a
     data_size beyond the chunk) becomes an empty sample, which Go drops
     and counts as malformed.  The chunk is copied out and released at
     once: a queue of held chunks would hold RouDi's memory pool and the
     subscriber's small budget of held chunks.
   - dds_write of a loaned chunk when every reader gets it over shared
     memory (sub == NULL): the serdata only carries the chunk to
     iceoryx, so no CDR is made. */
static struct ddsi_serdata *sd_from_iox (const struct ddsi_sertype *type, enum ddsi_serdata_kind kind, void *sub, void *buffer)
{
  const struct fsm_sertype *t = (const struct fsm_sertype *) type;
  struct fsm_serdata *d = NULL;
  if (sub == NULL)
  {
    if ((d = serdata_new (type, kind, 0)) != NULL)
      d->c.iox_chunk = buffer;
    return d ? &d->c : NULL;
  }
  const iceoryx_header_t *h = iceoryx_header_from_chunk (buffer);
  const uint32_t room = chunk_payload_size (buffer);
  if (kind == SDK_DATA && h->data_size <= room && h->shm_data_state == IOX_CHUNK_CONTAINS_SERIALIZED_DATA)
  {
    if ((d = serdata_new (type, kind, h->data_size)) != NULL)
      memcpy (d->data, buffer, h->data_size);
  }
  else if (kind == SDK_DATA && h->data_size <= room && h->shm_data_state == IOX_CHUNK_CONTAINS_RAW_DATA &&
           t->nruns > 0 && h->data_size >= t->c.iox_size)
  {
    d = serdata_from_raw (t, kind, buffer);
  }
  if (d == NULL)
    d = serdata_new (type, kind, 0);
  free_iox_chunk ((iox_sub_t *) sub, &buffer);
  return d ? &d->c : NULL;
}

static uint32_t sd_get_sample_size (const struct ddsi_serdata *d)
{
  return d->type->iox_size;
}

static const struct ddsi_serdata_ops fsm_serdata_ops = {
  .eqkey = sd_eqkey,
  .get_size = sd_get_size,
  .from_ser = sd_from_ser,
  .from_ser_iov = sd_from_ser_iov,
  .from_keyhash = sd_from_keyhash,
  .from_sample = sd_from_sample,
  .to_ser = sd_to_ser,
  .to_ser_ref = sd_to_ser_ref,
  .to_ser_unref = sd_to_ser_unref,
  .to_sample = sd_to_sample,
  .to_untyped = sd_to_untyped,
  .untyped_to_sample = sd_untyped_to_sample,
  .free = sd_free,
  .print = sd_print,
  .get_keyhash = sd_get_keyhash,
#ifdef DDS_HAS_SHM
  .get_sample_size = sd_get_sample_size,
  .from_iox_buffer = sd_from_iox,
#endif
};

/* ---- sertype operations ---- */

static void st_free (struct ddsi_sertype *tp)
{
  ddsi_sertype_fini (tp);
  free (tp);
}

static void st_zero_samples (const struct ddsi_sertype *tp, void *samples, size_t count)
{
  (void) tp;
  memset (samples, 0, count * sizeof (struct fsm_sample));
}

static void st_realloc_samples (void **ptrs, const struct ddsi_sertype *tp, void *old, size_t oldcount, size_t count)
{
  (void) tp;
  const size_t sz = sizeof (struct fsm_sample);
  char *p = (oldcount == count) ? old : realloc (old, count * sz);
  if (p != NULL && count > oldcount)
    memset (p + oldcount * sz, 0, (count - oldcount) * sz);
  for (size_t i = 0; i < count; i++)
    ptrs[i] = p ? p + i * sz : NULL;
}

static void st_free_samples (const struct ddsi_sertype *tp, void **ptrs, size_t count, dds_free_op_t op)
{
  (void) tp;
  if (count == 0)
    return;
  if (op & DDS_FREE_CONTENTS_BIT)
  {
    for (size_t i = 0; i < count; i++)
    {
      struct fsm_sample *s = ptrs[i];
      free (s->data);
      s->data = NULL;
      s->size = 0;
    }
  }
  if (op & DDS_FREE_ALL_BIT)
    free (ptrs[0]);
}

static bool st_equal (const struct ddsi_sertype *a, const struct ddsi_sertype *b)
{
  /* Same type name and ops; a layout (fixed-size type) distinguishes them. */
  const struct fsm_sertype *x = (const struct fsm_sertype *) a, *y = (const struct fsm_sertype *) b;
  return x->nruns == y->nruns && x->c.iox_size == y->c.iox_size &&
         memcmp (x->runs, y->runs, x->nruns * sizeof (x->runs[0])) == 0;
}

static uint32_t st_hash (const struct ddsi_sertype *tp)
{
  const struct fsm_sertype *t = (const struct fsm_sertype *) tp;
  return t->nruns * 16777619u ^ t->c.iox_size;
}

static size_t st_get_serialized_size (const struct ddsi_sertype *tp, const void *sample)
{
  (void) tp;
  return ((const struct fsm_sample *) sample)->size;
}

static bool st_serialize_into (const struct ddsi_sertype *tp, const void *sample, void *dst, size_t dst_size)
{
  (void) tp;
  const struct fsm_sample *s = sample;
  if (dst_size < s->size)
    return false;
  if (s->size > 0)
    memcpy (dst, s->data, s->size);
  return true;
}

static const struct ddsi_sertype_ops fsm_sertype_ops = {
  .version = ddsi_sertype_v0,
  .arg = NULL,
  .free = st_free,
  .zero_samples = st_zero_samples,
  .realloc_samples = st_realloc_samples,
  .free_samples = st_free_samples,
  .equal = st_equal,
  .hash = st_hash,
  .type_id = NULL,
  .type_map = NULL,
  .type_info = NULL,
  .derive_sertype = NULL,
  .get_serialized_size = st_get_serialized_size,
  .serialize_into = st_serialize_into,
};

struct ddsi_sertype *fsm_sertype_new (const char *type_name, const fsm_run *runs, uint32_t nruns, uint32_t raw_size)
{
  uint32_t cdr_size = 0;
  if (nruns > 0 && (nruns > FSM_MAX_RUNS || (cdr_size = layout_cdr_size (runs, nruns, raw_size)) == 0))
    return NULL;
  struct fsm_sertype *st = calloc (1, sizeof (*st) + nruns * sizeof (runs[0]));
  if (st == NULL)
    return NULL;
  uint32_t flags = DDSI_SERTYPE_FLAG_TOPICKIND_NO_KEY;
  if (nruns > 0)
    flags |= DDSI_SERTYPE_FLAG_FIXED_SIZE;
  ddsi_sertype_init_flags (&st->c, type_name, &fsm_sertype_ops, &fsm_serdata_ops, flags);
  st->c.allowed_data_representation = DDS_DATA_REPRESENTATION_FLAG_XCDR1;
  st->c.iox_size = nruns > 0 ? raw_size : 0;
  st->cdr_size = cdr_size;
  st->nruns = nruns;
  if (nruns > 0)
    memcpy (st->runs, runs, nruns * sizeof (runs[0]));
  return &st->c;
}

dds_entity_t fsm_create_topic (dds_entity_t pp, const char *name, const char *type_name, const fsm_run *runs, uint32_t nruns, uint32_t raw_size, struct ddsi_sertype **out)
{
  struct ddsi_sertype *st = fsm_sertype_new (type_name, runs, nruns, raw_size);
  if (st == NULL)
    return nruns > 0 ? DDS_RETCODE_BAD_PARAMETER : DDS_RETCODE_OUT_OF_RESOURCES;
  struct ddsi_sertype *used = st;
  dds_entity_t tp = dds_create_topic_sertype (pp, name, &used, NULL, NULL, NULL);
  if (tp < 0)
  {
    ddsi_sertype_unref (st);
    return tp;
  }
  *out = used; /* may be an equal sertype registered earlier */
  return tp;
}

/* ---- QoS ---- */

dds_qos_t *fsm_qos_create (const fsm_qos *in, int for_reader)
{
  dds_qos_t *q = dds_create_qos ();
  if (q == NULL)
    return NULL;
  int32_t depth = in->depth > 0 ? in->depth : 1;
  dds_history_kind_t hkind = in->history == 1 ? DDS_HISTORY_KEEP_ALL : DDS_HISTORY_KEEP_LAST;
  int32_t hdepth = in->history == 1 ? DDS_LENGTH_UNLIMITED : depth;
  dds_qset_history (q, hkind, hdepth);
  if (in->reliability == 1)
    dds_qset_reliability (q, DDS_RELIABILITY_BEST_EFFORT, DDS_INFINITY);
  else
    dds_qset_reliability (q, DDS_RELIABILITY_RELIABLE, DDS_INFINITY);
  if (in->durability == 1)
  {
    dds_qset_durability (q, DDS_DURABILITY_TRANSIENT_LOCAL);
    dds_qset_durability_service (q, 0, hkind, hdepth, DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
  }
  else
    dds_qset_durability (q, DDS_DURABILITY_VOLATILE);
  if (in->lifespan > 0)
    dds_qset_lifespan (q, in->lifespan);
  if (in->deadline > 0)
    dds_qset_deadline (q, in->deadline);
  dds_qset_liveliness (q, in->liveliness == 1 ? DDS_LIVELINESS_MANUAL_BY_TOPIC : DDS_LIVELINESS_AUTOMATIC,
                       in->lease > 0 ? in->lease : DDS_INFINITY);
  if (for_reader && in->ignore_local)
    dds_qset_ignorelocal (q, DDS_IGNORELOCAL_PARTICIPANT);
  if (in->userdata != NULL && in->userdata_len > 0)
    dds_qset_userdata (q, in->userdata, in->userdata_len);
  dds_qset_writer_data_lifecycle (q, false);
  dds_data_representation_id_t rep[1] = { DDS_DATA_REPRESENTATION_XCDR1 };
  dds_qset_data_representation (q, 1, rep);
  return q;
}

/* Fills out from q; out->userdata is a dds_alloc'ed copy (or NULL) that the
   caller releases with dds_free. */
void fsm_qos_extract (const dds_qos_t *q, fsm_qos *out)
{
  memset (out, 0, sizeof (*out));
  out->depth = 1;
  if (q == NULL)
    return;
  dds_reliability_kind_t rk;
  dds_duration_t d;
  if (dds_qget_reliability (q, &rk, &d))
    out->reliability = (rk == DDS_RELIABILITY_BEST_EFFORT) ? 1 : 0;
  dds_durability_kind_t dk;
  if (dds_qget_durability (q, &dk))
    out->durability = (dk == DDS_DURABILITY_VOLATILE) ? 0 : 1;
  dds_history_kind_t hk;
  int32_t depth;
  if (dds_qget_history (q, &hk, &depth))
  {
    out->history = (hk == DDS_HISTORY_KEEP_ALL) ? 1 : 0;
    out->depth = (hk == DDS_HISTORY_KEEP_ALL) ? 0 : depth;
  }
  if (dds_qget_deadline (q, &d) && d != DDS_INFINITY)
    out->deadline = d;
  if (dds_qget_lifespan (q, &d) && d != DDS_INFINITY)
    out->lifespan = d;
  dds_liveliness_kind_t lk;
  if (dds_qget_liveliness (q, &lk, &d))
  {
    out->liveliness = (lk == DDS_LIVELINESS_MANUAL_BY_TOPIC) ? 1 : 0;
    if (d != DDS_INFINITY)
      out->lease = d;
  }
  dds_ignorelocal_kind_t ik;
  if (dds_qget_ignorelocal (q, &ik))
    out->ignore_local = (ik != DDS_IGNORELOCAL_NONE);
  void *ud = NULL;
  size_t udsz = 0;
  if (dds_qget_userdata (q, &ud, &udsz) && ud != NULL)
  {
    if (udsz > 0)
    {
      out->userdata = ud;
      out->userdata_len = udsz;
    }
    else
      dds_free (ud);
  }
}

/* ---- write and take ---- */

/* write_serdata writes d (consuming its reference) with the writer's
   timestamp; with shared memory it also puts the sample in a chunk. */
static dds_return_t write_serdata (dds_entity_t wr, struct fsm_serdata *d, fsm_shm *shm)
{
  d->c.statusinfo = 0;
  d->c.timestamp.v = dds_time ();
  void *chunk = NULL;
  if (shm != NULL)
  {
    /* The writer has an iceoryx publisher: readers on this host that have
       an iceoryx subscriber get the sample only from a chunk.  When RouDi
       has no free chunk, those readers miss it, but the write goes on for
       every other reader.  iceoryx aborts the process when asked for a
       chunk above its largest memory pool, which RouDi's configuration
       sets and no client can query: samples above FSM_SHM_MAX_CHUNK (the
       default configuration's largest pool, less the headers) never ask. */
    chunk = d->size <= FSM_SHM_MAX_CHUNK ? dds_data_allocator_alloc (&shm->alloc, d->size) : NULL;
    if (chunk != NULL)
    {
      memcpy (chunk, d->data, d->size);
      shm_set_data_state (chunk, IOX_CHUNK_CONTAINS_SERIALIZED_DATA);
      d->c.iox_chunk = chunk;
    }
  }
  if (chunk == NULL)
    return dds_writecdr (wr, &d->c); /* consumes the reference, also on error */
  /* Cyclone publishes the chunk (and clears iox_chunk) only after the
     network write succeeded; on failure the chunk is still the writer's,
     and goes back to the pool here. */
  (void) ddsi_serdata_ref (&d->c);
  dds_return_t rc = dds_writecdr (wr, &d->c);
  if (d->c.iox_chunk != NULL)
  {
    (void) dds_data_allocator_free (&shm->alloc, d->c.iox_chunk);
    d->c.iox_chunk = NULL;
  }
  ddsi_serdata_unref (&d->c);
  return rc;
}

dds_return_t fsm_write (dds_entity_t wr, const struct ddsi_sertype *st, const void *buf, uint32_t len, fsm_shm *shm)
{
  struct fsm_serdata *d = serdata_new (st, SDK_DATA, len);
  if (d == NULL)
    return DDS_RETCODE_OUT_OF_RESOURCES;
  memcpy (d->data, buf, len);
  return write_serdata (wr, d, shm);
}

fsm_buf fsm_buf_new (const struct ddsi_sertype *st, uint32_t cap)
{
  fsm_buf b = { NULL, NULL };
  struct fsm_serdata *d = serdata_new (st, SDK_DATA, cap);
  if (d != NULL)
  {
    b.sd = &d->c;
    b.data = d->data;
  }
  return b;
}

void fsm_buf_free (struct ddsi_serdata *d)
{
  ddsi_serdata_unref (d);
}

dds_return_t fsm_write_buf (dds_entity_t wr, struct ddsi_serdata *dc, uint32_t len, fsm_shm *shm)
{
  struct fsm_serdata *d = (struct fsm_serdata *) dc;
  if (len == 0 || len > d->size)
  {
    ddsi_serdata_unref (dc);
    return DDS_RETCODE_BAD_PARAMETER;
  }
  uint32_t padded = align4 (len); /* <= d->cap: the buffer was made for d->size >= len */
  memset (d->data + len, 0, padded - len);
  d->size = len;
  return write_serdata (wr, d, shm);
}

/* ---- shared memory ---- */

fsm_shm *fsm_shm_new (dds_entity_t wr)
{
  if (!dds_is_shared_memory_available (wr))
    return NULL;
  fsm_shm *s = calloc (1, sizeof (*s));
  if (s == NULL)
    return NULL;
  if (dds_data_allocator_init (wr, &s->alloc) != DDS_RETCODE_OK)
  {
    free (s);
    return NULL;
  }
  return s;
}

/* fsm_shm_free finalizes the allocator (while the writer still exists) and
   frees s. */
void fsm_shm_free (fsm_shm *s)
{
  if (s == NULL)
    return;
  (void) dds_data_allocator_fini (&s->alloc);
  free (s);
}

/* fsm_loan lends a chunk of the type's layout size, registered with the
   writer as a loan (Cyclone keeps FSM_MAX_LOANS of them per writer), as
   rmw_cyclonedds borrows loaned messages. NULL when there is none. */
void *fsm_loan (dds_entity_t wr)
{
  void *chunk = NULL;
  if (dds_loan_sample (wr, &chunk) != DDS_RETCODE_OK)
    return NULL;
  return chunk;
}

dds_return_t fsm_loan_return (dds_entity_t wr, void *chunk)
{
  return dds_return_loan (wr, &chunk, 1);
}

/* fsm_write_loaned publishes a loaned chunk holding a sample in the type's
   layout with dds_write, as rmw_cyclonedds publishes loaned messages:
   when every matched reader has shared memory, the chunk goes to them and
   nothing is serialized; otherwise the other readers get CDR made from
   the chunk (sd_from_sample).  The chunk is consumed in every case. */
dds_return_t fsm_write_loaned (dds_entity_t wr, void *chunk)
{
  pin.armed = true;
  pin.d = NULL;
  dds_return_t rc = dds_write (wr, chunk);
  pin.armed = false;
  if (pin.d != NULL)
  {
    ddsi_serdata_unref (&pin.d->c);
    pin.d = NULL;
  }
  return rc;
}

/* ---- built-in topics ---- */

int32_t fsm_disc_take (fsm_dstate *st, dds_entity_t rd, int32_t kind)
{
  st->n = 0;
  st->buf[0] = NULL;
  dds_return_t rc = dds_take (rd, st->buf, st->si, FSM_BATCH, FSM_BATCH);
  if (rc <= 0)
    return rc;
  st->n = rc;
  st->loaned_from = rd;
  for (int32_t i = 0; i < rc; i++)
  {
    fsm_disc *o = &st->out[i];
    memset (o, 0, sizeof (*o));
    o->alive = (st->si[i].instance_state == DDS_IST_ALIVE);
    if (kind == 0)
    {
      const dds_builtintopic_participant_t *s = st->buf[i];
      o->key = s->key;
      o->pkey = s->key;
      o->qos = s->qos;
    }
    else
    {
      const dds_builtintopic_endpoint_t *s = st->buf[i];
      o->key = s->key;
      o->pkey = s->participant_key;
      o->topic = s->topic_name;
      o->type = s->type_name;
      o->qos = s->qos;
    }
  }
  return rc;
}

void fsm_disc_release (fsm_dstate *st)
{
  if (st->n > 0)
    dds_return_loan (st->loaned_from, st->buf, st->n);
  st->n = 0;
}

/* Registers the (single) instance of a keyless writer so that it stays
   alive for the writer's lifetime: otherwise every write of a writer whose
   history keeps nothing creates and garbage-collects a new instance. */
dds_return_t fsm_register (dds_entity_t wr)
{
  struct fsm_sample empty = { NULL, 0 };
  dds_instance_handle_t ih;
  return dds_register_instance (wr, &ih, &empty);
}
