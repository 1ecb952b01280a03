// SPDX-License-Identifier: MIT
/*
 * The host function table handed to plugins (struct fring_host_api); its
 * functions take the plugin's request handles (fring_req *) and reach the
 * request through fring_req_enter (request.h).
 */
#ifndef FRING_HOST_H
#define FRING_HOST_H

#include <fring/plugin.h>

/* The process-wide host table (static, never freed). */
const struct fring_host_api *fring_host_table(void);

#endif /* FRING_HOST_H */
