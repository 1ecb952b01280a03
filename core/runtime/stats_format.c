// SPDX-License-Identifier: MIT
/* A statistics snapshot as a table, JSON, Prometheus text, or the log
 * lines at stop; see stats_snap.h. */
#include "stats_snap.h"

#include <inttypes.h>

#include "../base/log.h"

#define U(x) ((unsigned long long)(x))

static const char *op_name(unsigned op)
{
	return op == FUSE_OPCODE_MAX ? "UNKNOWN" : fring_opcode_name(op);
}

/* A quantile for people: 12.3 us, 4.56 ms; the last bucket is open. */
static void dur(FILE *out, uint64_t ns)
{
	if (ns == UINT64_MAX)
		fputs("   >69 s", out);
	else if (ns < 1000000)
		fprintf(out, "%6.1f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		fprintf(out, "%6.2f ms", (double)ns / 1e6);
	else
		fprintf(out, "%6.2f  s", (double)ns / 1e9);
}

static double us(uint64_t ns)
{
	return ns == UINT64_MAX ? -1 : (double)ns / 1e3;
}

void fring_snap_text(FILE *out, const struct fring_snapshot *sn)
{
	const struct fring_stats *t = &sn->total;
	const struct fring_tq_stats *tq = &sn->tq_total;

	fprintf(out,
		"%s (%s): %llu requests, %llu errors, %llu malformed, "
		"%llu interrupts; read %llu bytes, written %llu bytes\n",
		sn->mountpoint, sn->transport, U(fring_stats_requests(t)),
		U(t->errors), U(t->malformed), U(t->interrupts),
		U(t->bytes_read), U(t->bytes_written));
	fprintf(out, "  in flight %ld", sn->in_flight);
	if (sn->oldest_ns)
		fprintf(out, " (oldest %.3f ms)", (double)sn->oldest_ns / 1e6);
	fprintf(out,
		"; pool buffers %llu of %llu in use, %llu waits; "
		"zero-copy %llu reads, %llu writes, %llu fallbacks; busy-poll "
		"%.3f s; placement changes %llu\n",
		U(tq->pool_in_use), U(tq->pool_bufs), U(tq->pool_waits),
		U(tq->zc_reads), U(tq->zc_writes), U(tq->zc_fallbacks),
		(double)tq->poll_ns / 1e9, U(sn->placement_changes));
	fprintf(out, "  %-16s %10s %8s %11s %11s %11s\n", "opcode", "requests",
		"errors", "p50", "p99", "p99.9");
	for (unsigned op = 0; op < FRING_LAT_OPS; op++) {
		const struct fring_lat_sum *l = &sn->lat[op];

		if (!t->requests[op])
			continue;
		fprintf(out, "  %-16s %10llu %8llu", op_name(op),
			U(t->requests[op]), U(t->op_errors[op]));
		if (sn->latency && l->count) {
			fputs("   ", out);
			dur(out, fring_lat_quantile(l, 5000));
			fputs("   ", out);
			dur(out, fring_lat_quantile(l, 9900));
			fputs("   ", out);
			dur(out, fring_lat_quantile(l, 9990));
		}
		fputc('\n', out);
	}
	fprintf(out, "  %-6s %10s %8s %12s %12s %9s %6s %6s %8s %8s %8s %9s\n",
		"queue", "requests", "errors", "read", "written", "in flight",
		"pool", "waits", "zc reads", "zc write", "zc fall", "poll s");
	for (unsigned i = 0; i < sn->nq; i++) {
		const struct fring_snap_queue *q = &sn->q[i];
		const struct fring_tq_stats *x = &q->tq;

		fprintf(out, "  %-6u %10llu %8llu %12llu %12llu %9ld", q->queue,
			U(fring_stats_requests(&q->req)), U(q->req.errors),
			U(q->req.bytes_read), U(q->req.bytes_written),
			(long)q->req.outstanding);
		if (q->has_tq)
			fprintf(out, " %6llu %6llu %8llu %8llu %8llu %9.3f",
				U(x->pool_in_use), U(x->pool_waits),
				U(x->zc_reads), U(x->zc_writes),
				U(x->zc_fallbacks), (double)x->poll_ns / 1e9);
		fputc('\n', out);
	}
}

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void json_tq(FILE *out, const struct fring_tq_stats *x)
{
	fprintf(out,
		"\"pool\": {\"buffers\": %llu, \"in_use\": %llu, "
		"\"waits\": %llu}, \"zero_copy\": {\"reads\": %llu, \"writes\": "
		"%llu, \"fallbacks\": %llu}, \"busy_poll\": {\"polls\": %llu, "
		"\"seconds\": %.6f}",
		U(x->pool_bufs), U(x->pool_in_use), U(x->pool_waits),
		U(x->zc_reads), U(x->zc_writes), U(x->zc_fallbacks),
		U(x->polls), (double)x->poll_ns / 1e9);
}

void fring_snap_json(FILE *out, const struct fring_snapshot *sn)
{
	const struct fring_stats *t = &sn->total;
	int first = 1;

	fputs("{\"mountpoint\": ", out);
	json_str(out, sn->mountpoint);
	fprintf(out,
		", \"transport\": \"%s\", \"latency\": %s, \"requests\": "
		"%llu, \"replies\": %llu, \"errors\": %llu, \"malformed\": %llu, "
		"\"interrupts\": %llu, \"bytes_read\": %llu, \"bytes_written\": "
		"%llu, \"in_flight\": %ld, \"oldest_in_flight_ms\": %.3f, "
		"\"placement_changes\": %llu, ",
		sn->transport, sn->latency ? "true" : "false",
		U(fring_stats_requests(t)), U(t->replies), U(t->errors),
		U(t->malformed), U(t->interrupts), U(t->bytes_read),
		U(t->bytes_written), sn->in_flight, (double)sn->oldest_ns / 1e6,
		U(sn->placement_changes));
	json_tq(out, &sn->tq_total);
	fputs(", \"ops\": {", out);
	for (unsigned op = 0; op < FRING_LAT_OPS; op++) {
		const struct fring_lat_sum *l = &sn->lat[op];

		if (!t->requests[op])
			continue;
		fprintf(out, "%s\"%s\": {\"requests\": %llu, \"errors\": %llu",
			first ? "" : ", ", op_name(op), U(t->requests[op]),
			U(t->op_errors[op]));
		first = 0;
		if (sn->latency)
			fprintf(out,
				", \"timed\": %llu, \"mean_us\": %.3f, "
				"\"p50_us\": %.3f, \"p99_us\": %.3f, "
				"\"p999_us\": %.3f",
				U(l->count),
				l->count ? (double)l->sum_ns / 1e3 /
						   (double)l->count
					 : 0.0,
				us(fring_lat_quantile(l, 5000)),
				us(fring_lat_quantile(l, 9900)),
				us(fring_lat_quantile(l, 9990)));
		fputc('}', out);
	}
	fputs("}, \"queues\": [", out);
	for (unsigned i = 0; i < sn->nq; i++) {
		const struct fring_snap_queue *q = &sn->q[i];

		fprintf(out,
			"%s{\"queue\": %u, \"requests\": %llu, \"errors\": "
			"%llu, \"bytes_read\": %llu, \"bytes_written\": %llu, "
			"\"in_flight\": %ld",
			i ? ", " : "", q->queue,
			U(fring_stats_requests(&q->req)), U(q->req.errors),
			U(q->req.bytes_read), U(q->req.bytes_written),
			(long)q->req.outstanding);
		if (q->has_tq) {
			fprintf(out, ", \"transport_requests\": %llu, ",
				U(q->tq.requests));
			json_tq(out, &q->tq);
		}
		fputc('}', out);
	}
	fputs("]}\n", out);
}

/* A label value: backslash, quote and newline escaped. */
static void prom_str(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

static void prom_head(FILE *out, const char *name, const char *type,
		      const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{mount="M"[,extra]} */
static void prom_name(FILE *out, const struct fring_snapshot *sn,
		      const char *name, const char *extra)
{
	fprintf(out, "%s{mount=\"", name);
	prom_str(out, sn->mountpoint);
	fprintf(out, "\"%s%s} ", extra ? "," : "", extra ? extra : "");
}

static void prom_ops(FILE *out, const struct fring_snapshot *sn,
		     const char *name, const atomic_ulong *v)
{
	char lbl[48];

	for (unsigned op = 0; op < FRING_LAT_OPS; op++) {
		if (!sn->total.requests[op])
			continue;
		snprintf(lbl, sizeof(lbl), "op=\"%s\"", op_name(op));
		prom_name(out, sn, name, lbl);
		fprintf(out, "%llu\n", U(v[op]));
	}
}

static void prom_hist(FILE *out, const struct fring_snapshot *sn)
{
	const char *name = "fring_request_duration_seconds";
	char lbl[96];

	prom_head(out, name, "histogram",
		  "Time from a request's arrival to its reply, by opcode.");
	for (unsigned op = 0; op < FRING_LAT_OPS; op++) {
		const struct fring_lat_sum *l = &sn->lat[op];
		uint64_t cum = 0;

		if (!l->count)
			continue;
		/* Only where the count grows: fewer lines, same histogram. */
		for (unsigned b = 0; b < FRING_LAT_BUCKETS - 1; b++) {
			if (!l->n[b])
				continue;
			cum += l->n[b];
			snprintf(lbl, sizeof(lbl), "op=\"%s\",le=\"%.9g\"",
				 op_name(op),
				 (double)(fring_lat_upper(b) + 1) / 1e9);
			prom_name(out, sn,
				  "fring_request_duration_seconds_bucket", lbl);
			fprintf(out, "%llu\n", U(cum));
		}
		snprintf(lbl, sizeof(lbl), "op=\"%s\",le=\"+Inf\"",
			 op_name(op));
		prom_name(out, sn, "fring_request_duration_seconds_bucket",
			  lbl);
		fprintf(out, "%llu\n", U(l->count));
		snprintf(lbl, sizeof(lbl), "op=\"%s\"", op_name(op));
		prom_name(out, sn, "fring_request_duration_seconds_sum", lbl);
		fprintf(out, "%.9f\n", (double)l->sum_ns / 1e9);
		prom_name(out, sn, "fring_request_duration_seconds_count", lbl);
		fprintf(out, "%llu\n", U(l->count));
	}
}

/* One sample per transport queue. */
#define PROM_QUEUES(out, sn, name, type, help, expr)                      \
	do {                                                              \
		prom_head(out, name, type, help);                         \
		for (unsigned i_ = 0; i_ < (sn)->nq; i_++) {              \
			const struct fring_tq_stats *x = &(sn)->q[i_].tq; \
			char l_[24];                                      \
			if (!(sn)->q[i_].has_tq)                          \
				continue;                                 \
			snprintf(l_, sizeof(l_), "queue=\"%u\"",          \
				 (sn)->q[i_].queue);                      \
			prom_name(out, sn, name, l_);                     \
			fprintf(out, "%.9g\n", (double)(expr));           \
		}                                                         \
	} while (0)

void fring_snap_prom(FILE *out, const struct fring_snapshot *sn)
{
	const struct fring_stats *t = &sn->total;

	prom_head(out, "fring_requests_total", "counter",
		  "Requests received, by opcode.");
	prom_ops(out, sn, "fring_requests_total", t->requests);
	prom_head(out, "fring_request_errors_total", "counter",
		  "Replies with an error, by opcode.");
	prom_ops(out, sn, "fring_request_errors_total", t->op_errors);
	if (sn->latency)
		prom_hist(out, sn);
	prom_head(out, "fring_read_bytes_total", "counter",
		  "Bytes READ replies carried.");
	prom_name(out, sn, "fring_read_bytes_total", NULL);
	fprintf(out, "%llu\n", U(t->bytes_read));
	prom_head(out, "fring_written_bytes_total", "counter",
		  "Bytes WRITE replies acknowledged.");
	prom_name(out, sn, "fring_written_bytes_total", NULL);
	fprintf(out, "%llu\n", U(t->bytes_written));
	prom_head(out, "fring_requests_in_flight", "gauge",
		  "Requests the plugin has not answered yet.");
	prom_name(out, sn, "fring_requests_in_flight", NULL);
	fprintf(out, "%ld\n", sn->in_flight);
	prom_head(out, "fring_oldest_request_age_seconds", "gauge",
		  "Age of the oldest request in flight (0: none).");
	prom_name(out, sn, "fring_oldest_request_age_seconds", NULL);
	fprintf(out, "%.9f\n", (double)sn->oldest_ns / 1e9);
	prom_head(out, "fring_placement_changes_total", "counter",
		  "Times the io_uring queue threads were moved.");
	prom_name(out, sn, "fring_placement_changes_total", NULL);
	fprintf(out, "%llu\n", U(sn->placement_changes));
	PROM_QUEUES(out, sn, "fring_queue_requests_total", "counter",
		    "Requests a transport queue received.", x->requests);
	PROM_QUEUES(out, sn, "fring_pool_buffers", "gauge",
		    "Buffers in the queue's pool.", x->pool_bufs);
	PROM_QUEUES(out, sn, "fring_pool_buffers_in_use", "gauge",
		    "Pool buffers held now.", x->pool_in_use);
	PROM_QUEUES(out, sn, "fring_pool_waits_total", "counter",
		    "Times the pool's last buffer was taken.", x->pool_waits);
	PROM_QUEUES(out, sn, "fring_zero_copy_reads_total", "counter",
		    "Zero-copied READs.", x->zc_reads);
	PROM_QUEUES(out, sn, "fring_zero_copy_writes_total", "counter",
		    "Zero-copied WRITEs.", x->zc_writes);
	PROM_QUEUES(out, sn, "fring_zero_copy_fallbacks_total", "counter",
		    "READ/WRITE copied on a zero-copy queue, or refused.",
		    x->zc_fallbacks);
	PROM_QUEUES(out, sn, "fring_busy_poll_seconds_total", "counter",
		    "Time the queue's thread busy-polled.",
		    (double)x->poll_ns / 1e9);
}

void fring_snap_log(const struct fring_snapshot *sn)
{
	const struct fring_stats *st = &sn->total;
	char line[1024];
	size_t n = 0;

	fring_dbg(
		"%s: %llu requests, %llu replies (%llu errors), %llu "
		"malformed, %llu interrupts, %llu plugin misuses, %llu failed "
		"writes",
		sn->mountpoint, U(fring_stats_requests(st)), U(st->replies),
		U(st->errors), U(st->malformed), U(st->interrupts),
		U(st->misuse), U(st->send_failures));
	for (unsigned i = 0; i <= FUSE_OPCODE_MAX && n < sizeof(line); i++)
		if (st->requests[i])
			n += (size_t)snprintf(line + n, sizeof(line) - n,
					      "%s%s %llu", n ? ", " : "",
					      i == FUSE_OPCODE_MAX
						      ? "unknown"
						      : fring_opcode_name(i),
					      U(st->requests[i]));
	fring_dbg("%s: requests by opcode: %s", sn->mountpoint,
		  n ? line : "none");
}
