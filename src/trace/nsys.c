/*
 * nsys.c - Nsight Systems SQLite exports -> pt_store + pt_samples (see
 * nsys.h).  One pass per table through libsqlite3 (read-only); rows become
 * events named as the Kineto reader names them, so a kernel has the same
 * function key whichever profiler recorded it.  Columns are found by name
 * (PRAGMA table_info) because the schema moved between nsys versions (3.x
 * added greenContextId, enum tables, META_DATA_*; 2.x has EXPORT_META_DATA).
 */
#include "nsys.h"
#include "../model/commkind.h"
#include "../model/keys.h"
#include "../util/clock.h"
#include "../util/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DUR_MAX_NS ((int64_t)86400 * 1000000000)
#define TIME_MAX_NS ((int64_t)4000000000000000000LL)
/* open_table: the export has no such table (not an error: nothing to read). */
#define TABLE_ABSENT 1

typedef struct rd {
	sqlite3 *db;
	pt_store *st;
	pt_samples *hw;
	pt_error *err;
	int64_t base;        /* session start, absolute ns (0: unknown) */
	char *tmp;
	size_t tmpcap;
	char memkind[16][24];  /* memory-kind labels by id ("" unknown) */
	uint64_t nsteps_dup;
	int ncomm;
	double deadline;     /* CLOCK_MONOTONIC seconds: queries stop after it */
	int timed_out;
	pt_commkind_cache ck;  /* name string id -> communication role */
} rd;

/* The longest a read may take (seconds).  A real export of several GB is
 * read in minutes at most; a crafted one must not run forever. */
#define NSYS_MAX_SECONDS 600.0

/* Every table or view we query: a view there is refused (a recursive view
 * never ends; nsys writes tables). */
static const char *const read_tables[] = {
	"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
	"CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS", "GPU_METRICS", "TARGET_INFO_GPU_METRICS",
	"StringIds", "ThreadNames", "ENUM_CUDA_MEM_KIND", "META_DATA_CAPTURE", "TARGET_INFO_GPU",
	"TARGET_INFO_SESSION_START_TIME",
};

int pt_nsys_is_sqlite(const void *buf, size_t len)
{
	return buf && len >= PT_SQLITE_MAGIC_LEN && !memcmp(buf, PT_SQLITE_MAGIC, PT_SQLITE_MAGIC_LEN);
}

/* ---- small SQLite helpers -------------------------------------------------- */

static int db_fail(rd *r, int rc, const char *what)
{
	if (r->timed_out)
		return pt_error_set(r->err, PT_EFORMAT, -1,
				    "%s: stopped after %.0f s (a crafted or damaged export?)", what,
				    NSYS_MAX_SECONDS);
	int code = (rc == SQLITE_NOMEM) ? PT_ENOMEM
		 : (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB) ? PT_EPARSE
		 : (rc == SQLITE_IOERR || rc == SQLITE_CANTOPEN || rc == SQLITE_PERM) ? PT_EIO
		 : PT_EFORMAT;

	return pt_error_set(r->err, code, -1, "%s: %s", what, sqlite3_errmsg(r->db));
}

static int prepare(rd *r, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v2(r->db, sql, -1, st, NULL);

	if (rc != SQLITE_OK) {
		*st = NULL;
		return db_fail(r, rc, "cannot query the database");
	}
	return PT_OK;
}

static int table_exists(rd *r, const char *name)
{
	sqlite3_stmt *s = NULL;
	int yes = 0;

	if (sqlite3_prepare_v2(r->db,
			       "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name=?",
			       -1, &s, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	yes = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return yes;
}

/* The columns of a table, as one string " a b c " for strstr lookups. */
typedef struct cols {
	char buf[4096];
} cols;

static void load_cols(rd *r, const char *table, cols *c)
{
	char sql[160];
	sqlite3_stmt *s = NULL;
	size_t n = 1;

	c->buf[0] = ' ';
	c->buf[1] = 0;
	snprintf(sql, sizeof(sql), "PRAGMA table_info(\"%s\")", table);
	if (sqlite3_prepare_v2(r->db, sql, -1, &s, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 1);
		size_t l = name ? strlen(name) : 0;

		if (!l || n + l + 2 >= sizeof(c->buf))
			continue;
		memcpy(c->buf + n, name, l);
		n += l;
		c->buf[n++] = ' ';
		c->buf[n] = 0;
	}
	sqlite3_finalize(s);
}

static int has_col(const cols *c, const char *name)
{
	char pat[80];

	snprintf(pat, sizeof(pat), " %s ", name);
	return strstr(c->buf, pat) != NULL;
}

/* Check that every column in the NULL-terminated list exists. */
static int need_cols(rd *r, const char *table, const cols *c, const char *const *names)
{
	for (; *names; names++)
		if (!has_col(c, *names))
			return pt_error_set(r->err, PT_EFORMAT, -1,
					    "not a usable nsys export: table %s has no column '%s'",
					    table, *names);
	return PT_OK;
}

/* Table T's columns into c, the needed ones checked: PT_OK to read it,
 * TABLE_ABSENT when the export has no such table (nothing to read), or the
 * need_cols error. */
static int open_table(rd *r, const char *T, const char *const *need, cols *c)
{
	if (!table_exists(r, T))
		return TABLE_ABSENT;
	load_cols(r, T, c);
	return need_cols(r, T, c, need);
}

/* Integer column i of the current row; a wrong type is an error naming the
 * table, the row and the column.  null_ok: NULL gives *v = def and 0. */
static int get_i64(rd *r, sqlite3_stmt *s, int i, const char *table, const char *col,
		   int null_ok, int64_t def, int64_t *v)
{
	int t = sqlite3_column_type(s, i);

	if (t == SQLITE_INTEGER) {
		*v = sqlite3_column_int64(s, i);
		return PT_OK;
	}
	if (t == SQLITE_NULL && null_ok) {
		*v = def;
		return PT_OK;
	}
	return pt_error_set(r->err, PT_EFORMAT, -1, "%s row %lld: '%s' is %s, not an integer",
			    table, (long long)sqlite3_column_int64(s, 0), col,
			    t == SQLITE_NULL ? "null" : t == SQLITE_TEXT ? "text"
			    : t == SQLITE_FLOAT ? "a real" : "a blob");
}

/* Text column (NULL, or a number, gives ""); *n its length. */
static const char *get_text(sqlite3_stmt *s, int i, size_t *n)
{
	const char *t;

	if (sqlite3_column_type(s, i) != SQLITE_TEXT) {
		*n = 0;
		return "";
	}
	t = (const char *)sqlite3_column_text(s, i);
	*n = t ? (size_t)sqlite3_column_bytes(s, i) : 0;
	if (*n > PT_KEY_NAME_MAX)
		*n = PT_KEY_NAME_MAX;
	return t ? t : "";
}

static int step_row(rd *r, sqlite3_stmt *s, const char *table, int *row)
{
	int rc = sqlite3_step(s);

	if (rc == SQLITE_ROW) {
		*row = 1;
		return PT_OK;
	}
	*row = 0;
	if (rc == SQLITE_DONE)
		return PT_OK;
	{
		char what[96];

		snprintf(what, sizeof(what), "cannot read table %s", table);
		return db_fail(r, rc, what);
	}
}

/* ---- events -------------------------------------------------------------- */

static int grow_tmp(rd *r, size_t need)
{
	if (need <= r->tmpcap)
		return 0;
	return x_grow((void **)&r->tmp, &r->tmpcap, need, 1);
}

static int intern(rd *r, const char *s, size_t n, uint32_t *id)
{
	*id = pt_strtab_intern(r->st->strs, s, n);
	if (*id == UINT32_MAX)
		return pt_error_set(r->err, PT_ENOMEM, -1, "out of memory");
	return PT_OK;
}

/* Session-clock [start, end) -> event times; 1 when usable, else a warning. */
static int times(rd *r, const char *table, int64_t start, int64_t end, pt_event *e)
{
	if (start < -TIME_MAX_NS || start > TIME_MAX_NS || end < -TIME_MAX_NS ||
	    end > TIME_MAX_NS) {
		pt_store_warn(r->st, "%s: a row with an out-of-range time skipped", table);
		return 0;
	}
	if (end < start || end - start > DUR_MAX_NS) {
		pt_store_warn(r->st, "%s: a row with a %s duration skipped", table,
			      end < start ? "negative" : "absurd (over a day)");
		return 0;
	}
	e->ts = r->base + start;
	e->dur = end - start;
	return 1;
}

static int add_event(rd *r, pt_event *e, int64_t pid, int64_t tid, int gpu)
{
	e->flags = gpu ? PT_EV_GPU : 0;
	e->lane = pt_store_lane(r->st, pid, tid, gpu);
	if (e->lane == UINT32_MAX || pt_store_add(r->st, e))
		return pt_error_set(r->err, PT_ENOMEM, -1, "out of memory");
	return PT_OK;
}

/* nsys serialises thread ids as (vm << 48) | (pid << 24) | tid. */
static int64_t gpid(int64_t g) { return (g >> 24) & 0xffffff; }
static int64_t gtid(int64_t g) { return g & 0xffffff; }

static int starts(const char *s, size_t n, const char *pre)
{
	size_t l = strlen(pre);
	return n >= l && !memcmp(s, pre, l);
}

static int read_kernels(rd *r)
{
	static const char *const need[] = { "start", "end", "deviceId", "streamId", "gridX",
					     "gridY", "gridZ", "blockX", "blockY", "blockZ", NULL };
	const char *T = "CUPTI_ACTIVITY_KIND_KERNEL";
	char sql[512];
	sqlite3_stmt *s = NULL;
	cols c;
	int rc, row;

	if ((rc = open_table(r, T, need, &c)))
		return rc == TABLE_ABSENT ? PT_OK : rc;
	if (!has_col(&c, "demangledName") && !has_col(&c, "shortName"))
		return pt_error_set(r->err, PT_EFORMAT, -1,
				    "not a usable nsys export: table %s has no column "
				    "'demangledName'", T);
	snprintf(sql, sizeof(sql),
		 "SELECT k.rowid, k.start, k.end, k.deviceId, k.streamId, k.gridX, k.gridY, "
		 "k.gridZ, k.blockX, k.blockY, k.blockZ, s.value, s.id, %s FROM %s k "
		 "LEFT JOIN StringIds s ON s.id = k.%s",
		 has_col(&c, "correlationId") ? "k.correlationId" : "0", T,
		 has_col(&c, "demangledName") ? "demangledName" : "shortName");
	if ((rc = prepare(r, sql, &s)))
		return rc;
	for (;;) {
		int64_t v[10];
		const char *name;
		size_t n;
		pt_event e;
		int i, role;

		if ((rc = step_row(r, s, T, &row)) || !row)
			break;
		for (i = 0; i < 10; i++)
			if ((rc = get_i64(r, s, i + 1, T, need[i], 0, 0, &v[i])))
				goto out;
		memset(&e, 0, sizeof(e));
		if (!times(r, T, v[0], v[1], &e))
			continue;
		name = get_text(s, 11, &n);
		if (!n) {
			pt_store_warn(r->st, "%s row %lld: kernel without a name skipped", T,
				      (long long)sqlite3_column_int64(s, 0));
			continue;
		}
		/* Communication or compute, and the function key, as the Kineto
		 * reader decides them (keys.c); the memo goes by the export's
		 * string id of the name. */
		role = pt_key_kernel_role(&r->ck, sqlite3_column_type(s, 12) == SQLITE_NULL ? -1
					  : sqlite3_column_int64(s, 12), name, n);
		if (role < 0 || grow_tmp(r, n + PT_KEY_SHAPE_MAX)) {
			rc = pt_error_set(r->err, PT_ENOMEM, -1, "out of memory");
			goto out;
		}
		e.kind = role > 0 ? PT_K_COMM_KERNEL : PT_K_KERNEL;
		if (sqlite3_column_type(s, 13) == SQLITE_INTEGER && sqlite3_column_int64(s, 13) > 0)
			e.corr = (uint32_t)sqlite3_column_int64(s, 13);
		r->ncomm += role > 0;
		if ((rc = intern(r, r->tmp, pt_key_kernel(r->tmp, name, n, role, v + 4, v + 7),
				 &e.name)))
			goto out;
		if ((rc = add_event(r, &e, v[2], v[3], 1)))
			goto out;
	}
out:
	sqlite3_finalize(s);
	return rc;
}

/* Kineto's names for copy kinds (CUPTI_ActivityMemcpyKind; nsys keeps the ids). */
static const char *copy_kind(int64_t k)
{
	static const char *const names[] = {
		"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH",
		"PtoP", "HtoD", "DtoH", "DtoD", /* 11-13: unified-memory variants (3.x) */
	};
	return k >= 0 && k < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[k] : "Unknown";
}

static void load_mem_kinds(rd *r)
{
	/* nsys's CUDA_MEMOPR_MEMORY_KIND (not CUPTI's numbering): 3.x exports
	 * carry it as ENUM_CUDA_MEM_KIND; 2.x exports use the same ids without
	 * the table (pipit's 2.9.1 saxpy export: HtoD copies are 0 -> 2). */
	static const char *const ids[] = { "Pageable", "Pinned", "Device", "Array", "Managed",
					   "Device Static", "Managed Static", "Unknown" };
	sqlite3_stmt *s = NULL;
	int i;

	memset(r->memkind, 0, sizeof(r->memkind));
	for (i = 0; i < 8; i++)
		snprintf(r->memkind[i], sizeof(r->memkind[i]), "%s", ids[i]);
	if (table_exists(r, "ENUM_CUDA_MEM_KIND") &&
	    sqlite3_prepare_v2(r->db, "SELECT id, label FROM ENUM_CUDA_MEM_KIND", -1, &s,
			       NULL) == SQLITE_OK) {
		while (sqlite3_step(s) == SQLITE_ROW) {
			int64_t id = sqlite3_column_int64(s, 0);
			const char *l = (const char *)sqlite3_column_text(s, 1);

			if (id >= 0 && id < 16 && l && *l)
				snprintf(r->memkind[id], sizeof(r->memkind[id]), "%s", l);
		}
		sqlite3_finalize(s);
	}
}

static const char *mem_kind(const rd *r, int64_t k)
{
	return k >= 0 && k < 16 && r->memkind[k][0] ? r->memkind[k] : "Unknown";
}

static int read_memops(rd *r, int memset_table)
{
	static const char *const need[] = { "start", "end", "deviceId", "streamId", "bytes", NULL };
	const char *T = memset_table ? "CUPTI_ACTIVITY_KIND_MEMSET" : "CUPTI_ACTIVITY_KIND_MEMCPY";
	char sql[384];
	sqlite3_stmt *s = NULL;
	cols c;
	int rc, row, has_a, has_b, has_c;

	if ((rc = open_table(r, T, need, &c)))
		return rc == TABLE_ABSENT ? PT_OK : rc;
	if (memset_table) {
		has_a = has_col(&c, "memKind");
		has_b = has_c = 0;
		snprintf(sql, sizeof(sql), "SELECT rowid, start, end, deviceId, streamId, bytes, %s, "
			 "NULL, NULL, %s FROM %s", has_a ? "memKind" : "NULL",
			 has_col(&c, "correlationId") ? "correlationId" : "0", T);
	} else {
		has_a = has_col(&c, "copyKind");
		has_b = has_col(&c, "srcKind");
		has_c = has_col(&c, "dstKind");
		snprintf(sql, sizeof(sql), "SELECT rowid, start, end, deviceId, streamId, bytes, %s, "
			 "%s, %s, %s FROM %s", has_a ? "copyKind" : "NULL", has_b ? "srcKind" : "NULL",
			 has_c ? "dstKind" : "NULL",
			 has_col(&c, "correlationId") ? "correlationId" : "0", T);
	}
	if ((rc = prepare(r, sql, &s)))
		return rc;
	for (;;) {
		int64_t v[5], k[3] = { -1, -1, -1 };
		char name[96];
		pt_event e;
		int i, nk = memset_table ? 1 : 3;

		if ((rc = step_row(r, s, T, &row)) || !row)
			break;
		for (i = 0; i < 5; i++)
			if ((rc = get_i64(r, s, i + 1, T, need[i], 0, 0, &v[i])))
				goto out;
		for (i = 0; i < nk; i++)
			if ((rc = get_i64(r, s, 6 + i, T, memset_table ? "memKind" : i == 0 ?
					  "copyKind" : i == 1 ? "srcKind" : "dstKind", 1, -1, &k[i])))
				goto out;
		memset(&e, 0, sizeof(e));
		if (!times(r, T, v[0], v[1], &e))
			continue;
		/* Kineto: "Memcpy HtoD (Pageable -> Device)", "Memset (Device)". */
		if (memset_table) {
			e.kind = PT_K_MEMSET;
			snprintf(name, sizeof(name), "Memset (%s)", mem_kind(r, k[0]));
		} else {
			e.kind = PT_K_MEMCPY;
			snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)", copy_kind(k[0]),
				 mem_kind(r, k[1]), mem_kind(r, k[2]));
		}
		if (v[4] > 0)
			e.bytes = (uint64_t)v[4];
		if (sqlite3_column_type(s, 9) == SQLITE_INTEGER && sqlite3_column_int64(s, 9) > 0)
			e.corr = (uint32_t)sqlite3_column_int64(s, 9);
		if ((rc = intern(r, name, strlen(name), &e.name)) ||
		    (rc = add_event(r, &e, v[2], v[3], 1)))
			goto out;
	}
out:
	sqlite3_finalize(s);
	return rc;
}

/* "cudaLaunchKernel_v7000" -> length of "cudaLaunchKernel" (nsys appends the
 * API version; Kineto does not). */
static size_t strip_version(const char *s, size_t n)
{
	size_t i = n;

	while (i > 0 && isdigit((unsigned char)s[i - 1]))
		i--;
	if (i < n && i >= 3 && s[i - 1] == 'v' && s[i - 2] == '_')
		return i - 2;
	return n;
}

static int read_runtime(rd *r)
{
	static const char *const need[] = { "start", "end", "globalTid", "nameId", NULL };
	const char *T = "CUPTI_ACTIVITY_KIND_RUNTIME";
	char sql[384];
	sqlite3_stmt *s = NULL;
	int64_t last_tid = 0, last_corr = 0, last_start = 0, last_end = 0;
	int have_last = 0;
	cols c;
	int rc, row;

	if ((rc = open_table(r, T, need, &c)))
		return rc == TABLE_ABSENT ? PT_OK : rc;
	/* Ordered by thread and correlation id so that the nested duplicate some
	 * exports hold (cudaMalloc around cudaMalloc_v3020, same correlation id)
	 * follows its outer call and is dropped: Kineto records one per call. */
	snprintf(sql, sizeof(sql),
		 "SELECT r.rowid, r.start, r.end, r.globalTid, %s, s.value FROM %s r "
		 "LEFT JOIN StringIds s ON s.id = r.nameId "
		 "ORDER BY r.globalTid, %s, r.start, r.end DESC, r.rowid",
		 has_col(&c, "correlationId") ? "r.correlationId" : "NULL", T,
		 has_col(&c, "correlationId") ? "r.correlationId" : "r.rowid");
	if ((rc = prepare(r, sql, &s)))
		return rc;
	for (;;) {
		int64_t v[4];
		const char *name;
		size_t n;
		pt_event e;

		if ((rc = step_row(r, s, T, &row)) || !row)
			break;
		if ((rc = get_i64(r, s, 1, T, "start", 0, 0, &v[0])) ||
		    (rc = get_i64(r, s, 2, T, "end", 0, 0, &v[1])) ||
		    (rc = get_i64(r, s, 3, T, "globalTid", 1, 0, &v[2])) ||
		    (rc = get_i64(r, s, 4, T, "correlationId", 1, 0, &v[3])))
			goto out;
		if (v[3] && have_last && v[2] == last_tid && v[3] == last_corr &&
		    v[0] >= last_start && v[1] <= last_end)
			continue;
		if (v[3]) {
			have_last = 1;
			last_tid = v[2];
			last_corr = v[3];
			last_start = v[0];
			last_end = v[1];
		}
		memset(&e, 0, sizeof(e));
		if (!times(r, T, v[0], v[1], &e))
			continue;
		e.corr = (uint32_t)v[3]; /* the launch -> GPU event link (critpath.c) */
		name = get_text(s, 5, &n);
		if (!n) {
			pt_store_warn(r->st, "%s row %lld: call without a name skipped", T,
				      (long long)sqlite3_column_int64(s, 0));
			continue;
		}
		n = strip_version(name, n);
		/* Driver API calls (cuLaunchKernel ...) share the table. */
		e.kind = (starts(name, n, "cu") && !starts(name, n, "cuda")) ? PT_K_DRIVER
									     : PT_K_RUNTIME;
		if ((rc = intern(r, name, n, &e.name)) ||
		    (rc = add_event(r, &e, gpid(v[2]), gtid(v[2]), 0)))
			goto out;
	}
out:
	sqlite3_finalize(s);
	return rc;
}

static int read_nvtx(rd *r)
{
	static const char *const need[] = { "start", "end", "eventType", "globalTid", NULL };
	const char *T = "NVTX_EVENTS";
	char sql[384];
	sqlite3_stmt *s = NULL;
	cols c;
	int rc, row, has_text, has_id;

	if ((rc = open_table(r, T, need, &c)))
		return rc == TABLE_ABSENT ? PT_OK : rc;
	has_text = has_col(&c, "text");
	has_id = has_col(&c, "textId");
	/* Ranges only: 59 NvtxPushPopRange, 60 NvtxStartEndRange (marks, domain
	 * and category records have no duration). */
	snprintf(sql, sizeof(sql),
		 "SELECT n.rowid, n.start, n.end, n.globalTid, %s, %s FROM %s n %s "
		 "WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL",
		 has_text ? "n.text" : "NULL", has_id ? "s.value" : "NULL", T,
		 has_id ? "LEFT JOIN StringIds s ON s.id = n.textId" : "");
	if ((rc = prepare(r, sql, &s)))
		return rc;
	for (;;) {
		int64_t v[3], stepno;
		const char *name;
		size_t n;
		pt_event e;

		if ((rc = step_row(r, s, T, &row)) || !row)
			break;
		if ((rc = get_i64(r, s, 1, T, "start", 0, 0, &v[0])) ||
		    (rc = get_i64(r, s, 2, T, "end", 0, 0, &v[1])) ||
		    (rc = get_i64(r, s, 3, T, "globalTid", 1, 0, &v[2])))
			goto out;
		memset(&e, 0, sizeof(e));
		if (!times(r, T, v[0], v[1], &e))
			continue;
		name = get_text(s, 4, &n);
		if (!n)
			name = get_text(s, 5, &n);
		if (!n)
			continue; /* unnamed range: nothing to key it by */
		stepno = pt_key_step_number(name, n);
		if (stepno >= 0) {
			size_t k;

			e.kind = PT_K_STEP;
			for (k = 0; k < r->st->nsteps; k++)
				if (r->st->steps[k].number == stepno)
					break;
			if (k < r->st->nsteps) {
				r->nsteps_dup++;
				continue;
			}
			if (pt_store_add_step(r->st, stepno, e.ts, e.dur)) {
				rc = pt_error_set(r->err, PT_ENOMEM, -1, "out of memory");
				goto out;
			}
			rc = intern(r, name, n, &e.name);
		} else {
			/* A user annotation, as Kineto's user_annotation: a frame on
			 * its thread, named as the Kineto reader normalises names. */
			e.kind = PT_K_ANNOTATION;
			if (grow_tmp(r, n + 1)) {
				rc = pt_error_set(r->err, PT_ENOMEM, -1, "out of memory");
				goto out;
			}
			n = pt_key_normalize_name(name, n, r->tmp, n + 1);
			rc = intern(r, r->tmp, n, &e.name);
		}
		if (rc || (rc = add_event(r, &e, gpid(v[2]), gtid(v[2]), 0)))
			goto out;
	}
out:
	sqlite3_finalize(s);
	return rc;
}

static void read_thread_names(rd *r)
{
	sqlite3_stmt *s = NULL;
	size_t i;

	if (!table_exists(r, "ThreadNames") ||
	    sqlite3_prepare_v2(r->db, "SELECT t.globalTid, s.value FROM ThreadNames t "
			       "JOIN StringIds s ON s.id = t.nameId", -1, &s, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(s) == SQLITE_ROW) {
		int64_t g = sqlite3_column_int64(s, 0);
		size_t n;
		const char *name = get_text(s, 1, &n);
		uint32_t id;

		if (!n)
			continue;
		for (i = 0; i < r->st->nlanes; i++) {
			pt_lane *l = &r->st->lanes[i];

			if (!l->gpu && !l->name && l->pid == gpid(g) && l->tid == gtid(g)) {
				id = pt_strtab_intern(r->st->strs, name, n);
				if (id != UINT32_MAX)
					l->name = id;
			}
		}
	}
	sqlite3_finalize(s);
}

/* Session start (absolute ns) and the header metadata the Kineto reader
 * takes from distributedInfo / deviceProperties. */
static void read_meta(rd *r)
{
	sqlite3_stmt *s = NULL;

	r->base = 0;
	if (table_exists(r, "TARGET_INFO_SESSION_START_TIME") &&
	    sqlite3_prepare_v2(r->db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME",
			       -1, &s, NULL) == SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) == SQLITE_INTEGER) {
			int64_t b = sqlite3_column_int64(s, 0);

			if (b > 0 && b < TIME_MAX_NS)
				r->base = b;
		}
		sqlite3_finalize(s);
		s = NULL;
	}
	if (!r->base)
		pt_store_warn(r->st, "no session start time (TARGET_INFO_SESSION_START_TIME): "
			      "times stay relative to the capture start");
	r->st->base_ns = r->base;
	if (table_exists(r, "TARGET_INFO_GPU") &&
	    sqlite3_prepare_v2(r->db, "SELECT name FROM TARGET_INFO_GPU ORDER BY id", -1, &s,
			       NULL) == SQLITE_OK) {
		while (sqlite3_step(s) == SQLITE_ROW) {
			size_t n;
			const char *name = get_text(s, 0, &n);

			if (!r->st->ndevices && n) {
				uint32_t id = pt_strtab_intern(r->st->strs, name, n);

				if (id != UINT32_MAX)
					r->st->device_name = id;
			}
			r->st->ndevices++;
		}
		sqlite3_finalize(s);
		s = NULL;
	}
	/* torchrun's RANK / WORLD_SIZE in the launched process's environment (3.x). */
	if (table_exists(r, "META_DATA_CAPTURE") &&
	    sqlite3_prepare_v2(r->db, "SELECT value FROM META_DATA_CAPTURE WHERE name LIKE "
			       "'PROCESS_%:ENVIRONMENT_VARIABLE' AND (value LIKE 'RANK=%' OR "
			       "value LIKE 'WORLD_SIZE=%')", -1, &s, NULL) == SQLITE_OK) {
		while (sqlite3_step(s) == SQLITE_ROW) {
			size_t n;
			const char *v = get_text(s, 0, &n), *eq = memchr(v, '=', n);
			char num[24];
			size_t k = 0;

			if (!eq)
				continue;
			for (eq++; eq < v + n && k + 1 < sizeof(num); eq++)
				if (isdigit((unsigned char)*eq))
					num[k++] = *eq;
				else if (*eq != '"')
					break;
			num[k] = 0;
			if (!k || k > 9)
				continue;
			if (starts(v, n, "RANK="))
				r->st->rank = strtoll(num, NULL, 10);
			else
				r->st->world_size = strtoll(num, NULL, 10);
		}
		sqlite3_finalize(s);
	}
}

/* ---- GPU metrics ------------------------------------------------------------ */

static int has_word(const char *low, const char *w)
{
	return strstr(low, w) != NULL;
}

const char *pt_nsys_metric_name(const char *nsys_name, const char **unit)
{
	char low[160];
	size_t i;
	int pct, mhz;

	if (unit)
		*unit = "%";
	if (!nsys_name)
		return NULL;
	for (i = 0; nsys_name[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)tolower((unsigned char)nsys_name[i]);
	low[i] = 0;
	pct = has_word(low, "[throughput %]");
	mhz = has_word(low, "[mhz]");
	if (mhz && has_word(low, "gpc clock frequency")) {
		if (unit)
			*unit = "MHz";
		return "sm_clock";
	}
	if (!pct)
		return NULL;
	if (!strncmp(low, "sms active", 10))
		return "sm_active";
	if (!strncmp(low, "gr active", 9))
		return "gpu_util";
	if (!strncmp(low, "dram read bandwidth", 19) || !strncmp(low, "dram write bandwidth", 20))
		return "dram_bw";
	if (!strncmp(low, "pcie rx throughput", 18))
		return "pcie_rx";
	if (!strncmp(low, "pcie tx throughput", 18))
		return "pcie_tx";
	/* NVLink: "NVLink RX Requests User Data", "... Responses User Data"
	 * (Hopper), or one bandwidth metric per direction; protocol overhead
	 * is not payload. */
	if (!strncmp(low, "nvlink", 6) && !has_word(low, "protocol")) {
		if (has_word(low, " rx "))
			return "nvlink_rx";
		if (has_word(low, " tx "))
			return "nvlink_tx";
	}
	return NULL;
}

typedef struct mref {
	int64_t type, metric;  /* (typeId, metricId) */
	const char *ours;
	const char *unit;
	int device;
} mref;

/* Append or add (several nsys metrics add up to one of ours at a time). */
static int put_sample(pt_samples *h, const mref *m, int64_t t, double v)
{
	pt_series *s = pt_samples_series(h, m->ours, m->device, NULL, m->unit,
					 !strcmp(m->unit, "%") ? 100 : 0);

	if (!s)
		return PT_ENOMEM;
	if (s->n && s->t_ns[s->n - 1] == t) {
		s->v[s->n - 1] += v;
		return PT_OK;
	}
	return pt_samples_add(s, t, v);
}

static int read_metrics(rd *r)
{
	const char *T = "GPU_METRICS", *TI = "TARGET_INFO_GPU_METRICS";
	sqlite3_stmt *s = NULL;
	mref *refs = NULL;
	size_t nref = 0, refcap = 0, i;
	int64_t last_t = INT64_MIN, prev_t = INT64_MIN, dt_min = 0;
	cols c, ci;
	int rc = PT_OK, row, by_type;
	char sql[512];

	if (pt_samples_set_str(&r->hw->source, "nsys"))
		return pt_error_set(r->err, PT_ENOMEM, -1, "out of memory");
	if (!table_exists(r, T) || !table_exists(r, TI))
		return PT_OK;
	load_cols(r, T, &c);
	load_cols(r, TI, &ci);
	{
		static const char *const need[] = { "timestamp", "metricId", "value", NULL };
		static const char *const needi[] = { "metricId", "metricName", NULL };

		if ((rc = need_cols(r, T, &c, need)) || (rc = need_cols(r, TI, &ci, needi)))
			return rc;
	}
	by_type = has_col(&c, "typeId") && has_col(&ci, "typeId");
	snprintf(sql, sizeof(sql), "SELECT rowid, %s, metricId, metricName FROM %s",
		 by_type ? "typeId" : "0", TI);
	if ((rc = prepare(r, sql, &s)))
		return rc;
	for (;;) {
		const char *ours, *unit;
		int64_t ty, id;

		if ((rc = step_row(r, s, TI, &row)) || !row)
			break;
		if ((rc = get_i64(r, s, 1, TI, "typeId", 0, 0, &ty)) ||
		    (rc = get_i64(r, s, 2, TI, "metricId", 0, 0, &id)))
			goto out;
		ours = pt_nsys_metric_name((const char *)sqlite3_column_text(s, 3), &unit);
		if (!ours)
			continue;
		if (X_GROW(refs, refcap, nref + 1)) {
			rc = pt_error_set(r->err, PT_ENOMEM, -1, "out of memory");
			goto out;
		}
		refs[nref].type = ty;
		refs[nref].metric = id;
		refs[nref].ours = ours;
		refs[nref].unit = unit;
		/* The GPU is the low byte of typeId, as nsys's own recipes read it. */
		refs[nref].device = by_type ? (int)(ty & 0xff) : 0;
		nref++;
	}
	sqlite3_finalize(s);
	s = NULL;
	if (!nref)
		goto out;
	snprintf(sql, sizeof(sql), "SELECT rowid, timestamp, %s, metricId, value FROM %s "
		 "WHERE timestamp IS NOT NULL ORDER BY timestamp", by_type ? "typeId" : "0", T);
	if ((rc = prepare(r, sql, &s)))
		goto out;
	for (;;) {
		int64_t t, ty, id;
		double v;
		const mref *m = NULL;
		int vt;

		if ((rc = step_row(r, s, T, &row)) || !row)
			break;
		if ((rc = get_i64(r, s, 1, T, "timestamp", 0, 0, &t)) ||
		    (rc = get_i64(r, s, 2, T, "typeId", 0, 0, &ty)) ||
		    (rc = get_i64(r, s, 3, T, "metricId", 0, 0, &id)))
			goto out;
		/* Linear: a handful of metrics per GPU map to ours. */
		for (i = 0; i < nref && !m; i++)
			if (refs[i].metric == id && refs[i].type == ty)
				m = &refs[i];
		if (!m)
			continue;
		vt = sqlite3_column_type(s, 4);
		if (vt != SQLITE_INTEGER && vt != SQLITE_FLOAT) {
			rc = pt_error_set(r->err, PT_EFORMAT, -1,
					  "%s row %lld: 'value' is not a number", T,
					  (long long)sqlite3_column_int64(s, 0));
			goto out;
		}
		v = sqlite3_column_double(s, 4);
		if (t < -TIME_MAX_NS || t > TIME_MAX_NS)
			continue;
		if ((rc = put_sample(r->hw, m, r->base + t, v))) {
			rc = pt_error_set(r->err, PT_ENOMEM, -1, "out of memory");
			goto out;
		}
		/* Nominal interval: the smallest positive step between sample times. */
		if (t != last_t) {
			prev_t = last_t;
			last_t = t;
			if (prev_t != INT64_MIN && (dt_min == 0 || t - prev_t < dt_min))
				dt_min = t - prev_t;
		}
	}
	r->hw->interval_ns = dt_min;
out:
	sqlite3_finalize(s);
	x_free(refs);
	return rc;
}

/* ---- entry points ---------------------------------------------------------- */

/* SQLite's progress callback (every PROGRESS_OPS virtual machine steps,
 * about a millisecond): non-zero interrupts the query. */
#define PROGRESS_OPS 100000
static int on_progress(void *cls)
{
	rd *r = cls;

	if (pt_clock_mono() > r->deadline)
		r->timed_out = 1;
	return r->timed_out;
}

/* Refuse a view in place of a table we read, naming it. */
static int refuse_views(rd *r)
{
	sqlite3_stmt *s = NULL;
	int rc = PT_OK;

	if (sqlite3_prepare_v2(r->db, "SELECT 1 FROM sqlite_master WHERE type = 'view' AND name = ?",
			       -1, &s, NULL) != SQLITE_OK)
		return db_fail(r, sqlite3_errcode(r->db), "cannot read the schema");
	for (size_t i = 0; i < sizeof(read_tables) / sizeof(read_tables[0]) && !rc; i++) {
		sqlite3_reset(s);
		sqlite3_bind_text(s, 1, read_tables[i], -1, SQLITE_STATIC);
		if (sqlite3_step(s) == SQLITE_ROW)
			rc = pt_error_set(r->err, PT_EFORMAT, -1,
					  "not an nsys export: '%s' is a view, not a table (refused: "
					  "a view can run without end)", read_tables[i]);
	}
	sqlite3_finalize(s);
	return rc;
}

static int open_db(const char *path, rd *r)
{
	unsigned char head[PT_SQLITE_MAGIC_LEN];
	struct stat stt;
	ssize_t got;
	int fd, rc;

	memset(&stt, 0, sizeof(stt));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pt_error_set(r->err, PT_EIO, -1, "cannot open: %s", strerror(errno));
	if (fstat(fd, &stt) == 0 && S_ISDIR(stt.st_mode)) {
		close(fd);
		return pt_error_set(r->err, PT_EIO, -1, "is a directory");
	}
	got = read(fd, head, sizeof(head));
	close(fd);
	r->st->bytes_read = (uint64_t)stt.st_size; /* for `summarize --time` */
	if (got != (ssize_t)sizeof(head) || !pt_nsys_is_sqlite(head, sizeof(head)))
		return pt_error_set(r->err, PT_EFORMAT, -1,
				    "not an sqlite database (no \"SQLite format 3\" header)");
	rc = sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READONLY, NULL);
	if (rc != SQLITE_OK) {
		rc = db_fail(r, rc, "cannot open the database");
		sqlite3_close(r->db);
		r->db = NULL;
		return rc;
	}
	/* Do not wait on locks: an export being written is not ready. */
	sqlite3_busy_timeout(r->db, 0);
	r->deadline = pt_clock_mono() + NSYS_MAX_SECONDS;
	sqlite3_progress_handler(r->db, PROGRESS_OPS, on_progress, r);
	/* Force the header and schema to be read now, so a damaged file fails here. */
	if ((rc = sqlite3_exec(r->db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL))) {
		rc = db_fail(r, rc, "not a valid sqlite database");
		sqlite3_close(r->db);
		r->db = NULL;
		return rc;
	}
	if ((rc = refuse_views(r))) {
		sqlite3_close(r->db);
		r->db = NULL;
		return rc;
	}
	return PT_OK;
}

static int is_nsys(rd *r)
{
	static const char *const tables[] = {
		"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME",
		"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET", "NVTX_EVENTS",
		"GPU_METRICS",
	};
	size_t i;

	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (table_exists(r, tables[i]))
			return 1;
	return 0;
}

int pt_nsys_read_file(const char *path, pt_store *st, pt_samples *hw, pt_error *err)
{
	rd r;
	int rc;
	size_t n0;

	memset(&r, 0, sizeof(r));
	r.st = st;
	r.hw = hw;
	r.err = err;
	pt_error_subject(err, path);
	if ((rc = open_db(path, &r)))
		return rc;
	if (!is_nsys(&r)) {
		rc = pt_error_set(err, PT_EFORMAT, -1,
				  "not an nsys export: no CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS or "
				  "GPU_METRICS table");
		goto out;
	}
	if (!table_exists(&r, "StringIds") &&
	    (table_exists(&r, "CUPTI_ACTIVITY_KIND_KERNEL") ||
	     table_exists(&r, "CUPTI_ACTIVITY_KIND_RUNTIME"))) {
		rc = pt_error_set(err, PT_EFORMAT, -1,
				  "not a usable nsys export: no StringIds table for the names");
		goto out;
	}
	read_meta(&r);
	load_mem_kinds(&r);
	n0 = st->n;
	if ((rc = read_kernels(&r)) || (rc = read_memops(&r, 0)) || (rc = read_memops(&r, 1)) ||
	    (rc = read_runtime(&r)) || (rc = read_nvtx(&r)))
		goto out;
	if (hw && (rc = read_metrics(&r)))
		goto out;
	read_thread_names(&r);
	if (r.ncomm && !st->backend) {
		uint32_t id = pt_strtab_intern(st->strs, "nccl", 4);

		if (id != UINT32_MAX)
			st->backend = id;
	}
	if (st->n == n0 && !(hw && hw->n)) {
		rc = pt_error_set(err, PT_EFORMAT, -1,
				  "no kernels, memory operations, runtime calls, NVTX ranges or GPU "
				  "metrics in the export");
		goto out;
	}
out:
	x_free(r.tmp);
	pt_commkind_cache_free(&r.ck);
	sqlite3_close(r.db);
	return rc;
}

int pt_nsys_read_samples(const char *path, pt_samples *hw, pt_error *err)
{
	rd r;
	pt_store dummy;
	int rc;

	memset(&r, 0, sizeof(r));
	if (pt_store_init(&dummy))
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	r.st = &dummy;
	r.hw = hw;
	r.err = err;
	pt_error_subject(err, path);
	if ((rc = open_db(path, &r)))
		goto out;
	if (!table_exists(&r, "GPU_METRICS")) {
		rc = pt_error_set(err, PT_EFORMAT, -1, "no GPU_METRICS table (capture with "
				  "--gpu-metrics-devices)");
		goto out;
	}
	read_meta(&r);
	rc = read_metrics(&r);
out:
	sqlite3_close(r.db);
	pt_store_free(&dummy);
	return rc;
}
