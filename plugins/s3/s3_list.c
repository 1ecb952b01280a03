// SPDX-License-Identifier: MIT
/*
 * ListObjectsV2 with delimiter "/": a directory's keys are its files, its
 * common prefixes its subdirectories. Every page is fetched (continuation
 * token), so a listing is complete however long. libxml2 parses pages.
 */
#include "s3.h"

#include <stdlib.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

struct page {
	bool truncated;
	char *token;
	size_t count; /* keys and prefixes on this page */
};

void s3_listing_free(struct s3_listing *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->e[i].name);
	free(l->e);
	memset(l, 0, sizeof(*l));
}

static int listing_add(struct s3_listing *l, const char *name, bool dir,
		       uint64_t size, int64_t mtime)
{
	struct s3_entry *e;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;

		e = realloc(l->e, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		l->e = e;
		l->cap = cap;
	}
	e = &l->e[l->n];
	e->name = strdup(name);
	if (!e->name)
		return -ENOMEM;
	e->dir = dir;
	e->size = size;
	e->mtime = mtime;
	l->n++;
	return 0;
}

static const char *child_text(xmlNode *n, const char *name, xmlChar **hold)
{
	xmlNode *c;

	for (c = n->children; c; c = c->next)
		if (c->type == XML_ELEMENT_NODE &&
		    !strcmp((const char *)c->name, name)) {
			*hold = xmlNodeGetContent(c);
			return (const char *)*hold;
		}
	*hold = NULL;
	return NULL;
}

/* The name below the listed prefix: "" (the marker itself) or one
 * with a '/' in it (an odd "a//b" key) are not entries. */
static const char *below(const char *key, const char *pre, size_t prelen,
			 bool dir, char *out, size_t cap)
{
	size_t n = strlen(key);

	if (n <= prelen || strncmp(key, pre, prelen))
		return NULL;
	key += prelen;
	n -= prelen;
	if (dir && key[n - 1] == '/')
		n--;
	if (!n || n >= cap || memchr(key, '/', n))
		return NULL;
	memcpy(out, key, n);
	out[n] = '\0';
	return out;
}

static int parse_page(const struct s3_buf *body, const char *pre,
		      struct s3_listing *out, struct page *pg)
{
	xmlDoc *doc = xmlReadMemory(body->p, (int)body->len, "list.xml", NULL,
				    XML_PARSE_NONET | XML_PARSE_NOBLANKS);
	size_t prelen = strlen(pre);
	xmlNode *root, *n;
	char name[1024];
	int err = 0;

	if (!doc)
		return -EIO;
	root = xmlDocGetRootElement(doc);
	for (n = root ? root->children : NULL; n && !err; n = n->next) {
		const char *nm = (const char *)n->name;
		xmlChar *a = NULL, *b = NULL, *c = NULL;
		const char *key;

		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (!strcmp(nm, "Contents")) {
			const char *k = child_text(n, "Key", &a);
			const char *sz = child_text(n, "Size", &b);
			const char *lm = child_text(n, "LastModified", &c);

			pg->count++;
			key = k ? below(k, pre, prelen, false, name,
					sizeof(name))
				: NULL;
			if (key)
				err = listing_add(out, key, false,
						  sz ? strtoull(sz, NULL, 10)
						     : 0,
						  lm ? s3_parse_iso_date(lm)
						     : 0);
		} else if (!strcmp(nm, "CommonPrefixes")) {
			const char *p = child_text(n, "Prefix", &a);

			pg->count++;
			key = p ? below(p, pre, prelen, true, name,
					sizeof(name))
				: NULL;
			if (key)
				err = listing_add(out, key, true, 0, 0);
		} else if (!strcmp(nm, "IsTruncated")) {
			xmlChar *t = xmlNodeGetContent(n);

			pg->truncated = t && !strcmp((const char *)t, "true");
			xmlFree(t);
		} else if (!strcmp(nm, "NextContinuationToken")) {
			xmlChar *t = xmlNodeGetContent(n);

			free(pg->token);
			pg->token = t ? strdup((const char *)t) : NULL;
			xmlFree(t);
		}
		xmlFree(a);
		xmlFree(b);
		xmlFree(c);
	}
	xmlFreeDoc(doc);
	return err;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct s3_entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (int)y->dir - (int)x->dir; /* directory first */
}

/* Sorted, one entry per name: a directory shadows a file "x" when keys
 * "x" and "x/..." both exist (the file cannot be reached by name). */
static void sort_unique(struct s3_listing *l)
{
	size_t i, j = 0;

	qsort(l->e, l->n, sizeof(l->e[0]), entry_cmp);
	for (i = 0; i < l->n; i++) {
		if (j && !strcmp(l->e[j - 1].name, l->e[i].name)) {
			free(l->e[i].name);
			continue;
		}
		l->e[j++] = l->e[i];
	}
	l->n = j;
}

static int list_pages(struct s3_fs *fs, CURL *c, const char *path, size_t max,
		      struct s3_listing *out, size_t *seen)
{
	struct s3_buf pre = { 0 };
	struct page pg = { 0 };
	char maxs[24];
	int err = 0;

	*seen = 0;
	if (s3_buf_add(&pre, fs->cfg.prefix, strlen(fs->cfg.prefix)) ||
	    (*path && (s3_buf_add(&pre, path, strlen(path)) ||
		       s3_buf_add(&pre, "/", 1))))
		return -ENOMEM;
	snprintf(maxs, sizeof(maxs), "%zu", max ? max : 1000);
	do {
		const char *kv[] = { "list-type",
				     "2",
				     "delimiter",
				     "/",
				     "prefix",
				     pre.p,
				     "max-keys",
				     maxs,
				     pg.token ? "continuation-token" : NULL,
				     pg.token,
				     NULL };
		struct s3_call call = { .method = "GET", .query = NULL };
		struct s3_resp resp;
		char *q = s3_query(kv);

		if (!q) {
			err = -ENOMEM;
			break;
		}
		call.query = q;
		err = s3_http(fs, c, &call, &resp);
		free(q);
		if (!err) {
			pg.truncated = false;
			err = parse_page(&resp.body, pre.p, out, &pg);
		}
		s3_resp_free(&resp);
		*seen = pg.count;
		if (pg.truncated && !pg.token)
			err = -EIO; /* would loop on the first page */
	} while (!err && pg.truncated && !(max && pg.count >= max));
	free(pg.token);
	free(pre.p);
	return err;
}

int s3_list_dir(struct s3_fs *fs, CURL *c, const char *path, size_t max,
		struct s3_listing *out)
{
	size_t seen;
	int err = list_pages(fs, c, path, max, out, &seen);

	if (err)
		s3_listing_free(out);
	else
		sort_unique(out);
	return err;
}

int s3_dir_exists(struct s3_fs *fs, CURL *c, const char *path)
{
	struct s3_listing l = { 0 };
	size_t seen;
	int err = list_pages(fs, c, path, 1, &l, &seen);

	s3_listing_free(&l);
	return err ? err : seen > 0;
}
