/* logsink.h: Cyclone's log, buffered in C for Go (see logsink.c). */
#ifndef FSM_LOGSINK_H
#define FSM_LOGSINK_H

#include <stddef.h>
#include <stdint.h>

/* Longest message kept, bytes (longer ones are cut). */
#define FSM_LOG_MSG 480
/* Messages held until Go takes them; more are counted as dropped. */
#define FSM_LOG_RING 64

void fsm_log_install(void);
/* fsm_log_take copies the oldest held message into buf (NUL-terminated,
 * at most FSM_LOG_MSG bytes) and its category into *prio; it returns 1, or
 * 0 when none is held. */
int fsm_log_take(uint32_t *prio, char *buf, size_t cap);
/* fsm_log_stats returns how many messages Cyclone logged and how many of
 * them were dropped because the ring was full. */
void fsm_log_stats(uint64_t *total, uint64_t *dropped);

#endif
