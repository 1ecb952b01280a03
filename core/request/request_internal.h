// SPDX-License-Identifier: MIT
/* What request.c and request_claim.c share: the state word's parts and
 * the stale-handle check. */
#ifndef FRING_REQUEST_INTERNAL_H
#define FRING_REQUEST_INTERNAL_H

#include <stdint.h>

#include "req.h"

/* The generation (24 bits) of a state word, and the word with another
 * reply state (req.h, FRING_REQ_*). */
#define GEN_OF(s) ((unsigned)(s) >> 8)
#define WITH_ST(s, st) (((unsigned)(s) & ~0xffu) | (st))

/* 1 (counted and logged) if handle generation hgen is not r's (state word
 * s): the plugin used a handle of a request it had answered. hgen 0, a
 * plain pointer from the runtime itself, is never stale. */
int fring_req_stale(struct fring_request *r, uint32_t hgen, unsigned s);

#endif /* FRING_REQUEST_INTERNAL_H */
