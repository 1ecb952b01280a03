// SPDX-License-Identifier: MIT
/*
 * Compiled by req_handle_type.sh, never linked: MIX=0 converts between the
 * handle a plugin holds (fring_req *, tagged with a generation) and the
 * runtime's request (struct fring_request *) the one right way and must
 * build; each MIX=N > 0 forgets one conversion and must not.
 */
#include <stddef.h>

#include "request/request.h"

void mix(struct fring_request *r, fring_req *h);

void mix(struct fring_request *r, fring_req *h)
{
#if MIX == 0
	fring_req *plugin_h = fring_req_handle(r);
	struct fring_request *back = fring_req_ptr(plugin_h);

	fring_req_claim(fring_req_untagged(back));
	fring_req_send(fring_req_ptr(h), 0, NULL, 0);
#elif MIX == 1
	fring_req *plugin_h = r; /* a request handed out as a handle */

	(void)plugin_h;
#elif MIX == 2
	struct fring_request *back = h; /* a handle used without untagging */

	(void)back;
#elif MIX == 3
	fring_req_claim(r); /* the runtime's pointer where a handle goes */
#elif MIX == 4
	fring_req_send(h, 0, NULL, 0); /* a handle where a request goes */
#else
#error "MIX: 0 to 4"
#endif
}
