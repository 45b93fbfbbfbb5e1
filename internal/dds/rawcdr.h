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

/* Metadata of one sample copied by fsm_take. */
typedef struct fsm_meta {
  uint32_t off;
  uint32_t len;
  int64_t source_timestamp;
  uint64_t publication_handle;
} fsm_meta;

#define FSM_BATCH 64

/* Receive state of one participant: the serdatas of the last take that
   have not been copied out yet. Owned by the receive goroutine. */
typedef struct fsm_recv {
  struct ddsi_serdata *sd[FSM_BATCH];
  dds_sample_info_t si[FSM_BATCH];
  int32_t n, pos;
  fsm_meta meta[FSM_BATCH]; /* out: the samples copied by the last fsm_take */
  int32_t more;             /* out: samples of the last take are still pending */
  int32_t full;             /* out: the last take returned a full batch */
  uint32_t need;            /* out: size of a pending sample that did not fit */
} fsm_recv;

struct ddsi_sertype;
struct ddsi_sertype *fsm_sertype_new (const char *type_name);
dds_entity_t fsm_create_topic (dds_entity_t pp, const char *name, const char *type_name, struct ddsi_sertype **out);

dds_qos_t *fsm_qos_create (const fsm_qos *in, int for_reader);
void fsm_qos_extract (const dds_qos_t *q, fsm_qos *out);

dds_return_t fsm_register (dds_entity_t wr);
dds_return_t fsm_write (dds_entity_t wr, const struct ddsi_sertype *st, const void *buf, uint32_t len);

/* Takes from reader_or_cond (when nothing is pending) and copies as many
   valid samples as fit into buf[0..cap), each at a multiple of 4. Returns
   the number of samples described in st->meta (>= 0) or a negative
   dds_return_t. st->more is set when samples are still pending in st (the
   next call continues with them, whatever reader it names; if the first
   pending one does not fit, the call returns 0 and st->need is its size).
   st->full is set when the take returned a full batch (more may be
   waiting in the reader). */
int32_t fsm_take (fsm_recv *st, dds_entity_t reader_or_cond, unsigned char *buf, uint32_t cap);
void fsm_recv_drop (fsm_recv *st);



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
