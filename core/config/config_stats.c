// SPDX-License-Identifier: MIT
/* The `stats:` section of a mount: its map and the Prometheus address. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_internal.h"

int fring_cfg_listen_addr(const char *text, struct sockaddr_storage *out,
			  socklen_t *len)
{
	char host[64];
	const char *colon = strrchr(text, ':'), *p;
	unsigned long port;
	char *end;
	size_t n;

	if (!colon || colon == text)
		return -EINVAL;
	p = colon + 1;
	if (*p < '1' || *p > '9')
		return -EINVAL;
	port = strtoul(p, &end, 10);
	if (*end || port > 65535)
		return -EINVAL;
	n = (size_t)(colon - text);
	memset(out, 0, sizeof(*out));
	if (text[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)out;

		if (n < 3 || text[n - 1] != ']' || n - 2 >= sizeof(host))
			return -EINVAL;
		memcpy(host, text + 1, n - 2);
		host[n - 2] = '\0';
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return -EINVAL;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		*len = sizeof(*a);
		return 0;
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)out;

		if (n >= sizeof(host))
			return -EINVAL;
		memcpy(host, text, n);
		host[n] = '\0';
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -EINVAL;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		*len = sizeof(*a);
		return 0;
	}
}

int cfg_key_listen(struct cfg_ctx *c, const struct cfg_key *k, yaml_node_t *v,
		   void *base)
{
	struct fring_cfg_at *at = (void *)((char *)base + k->at);
	struct sockaddr_storage ss;
	socklen_t len;

	if (v->type != YAML_SCALAR_NODE ||
	    fring_cfg_listen_addr(cfg_scalar(v), &ss, &len))
		return cfg_key_bad(c, k, v);
	at->line = (unsigned)v->start_mark.line + 1;
	at->column = (unsigned)v->start_mark.column + 1;
	return cfg_strdup(c, v, k->name, (char **)((char *)base + k->off));
}

int cfg_key_stats(struct cfg_ctx *c, const struct cfg_key *k, yaml_node_t *n,
		  void *base)
{
	struct fring_cfg_stats *s = (void *)((char *)base + k->off);

	if (cfg_is_null(n))
		return 0;
	if (cfg_expect_map(c, n, "stats"))
		return c->rc;
	return cfg_parse_section(c, n, CFG_STATS, s, NULL);
}
