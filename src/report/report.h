/*
 * report.h - the report model and its writers: report.json, the
 * PerfDisplay folder and the text report.
 *
 * Flow: src/diagnose fills a pt_report (an ordered JSON tree: the five
 * sections of the seed report, "workers", "findings", "display" and
 * "timeline") --> the writers here turn it into DIR/PerfDisplay/report.json
 * (Python json.dumps(indent=4) layout; a PT_RV_RAW value, the timeline's
 * flat arrays, stays on one line), with the PerfDisplay page made from it by
 * src/report/page.h (index.html, app.py), and the text report printed by
 * the CLI.
 *
 * Building: every pt_rv_* adder takes the parent (an object or an array) and,
 * for objects, the member key; strings are copied into the report's arena.
 * On allocation failure the report remembers it (pt_report_oom) and the
 * adders return NULL and ignore NULL parents, so builders check once at the
 * end.  Keys are written in insertion order: callers insert them sorted.
 * Not thread-safe: one report per thread.
 */
#ifndef PT_REPORT_H
#define PT_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"
#include "../util/strbuf.h"
#include "../util/api.h"
#include "unit.h"

PT_API_BEGIN

typedef enum { PT_RV_NULL, PT_RV_NUM, PT_RV_INT, PT_RV_STR, PT_RV_ARR, PT_RV_OBJ,
	       PT_RV_BOOL /* i is 0 or 1 */,
	       PT_RV_RAW  /* str is JSON text written as it is (one line) */ } pt_rv_type;

typedef struct pt_rv pt_rv;
struct pt_rv {
	pt_rv_type type;
	const char *key;    /* member key inside an object, else NULL */
	double num;         /* PT_RV_NUM */
	int64_t i;          /* PT_RV_INT */
	const char *str;    /* PT_RV_STR (NUL-terminated, arena-owned) */
	size_t n;           /* number of children (ARR/OBJ) */
	pt_rv *child, *last, *next;
};

typedef struct pt_report pt_report;

/* New report whose root is an empty object; NULL on allocation failure. */
pt_report *pt_report_new(void);
void pt_report_free(pt_report *r); /* NULL is a no-op */
pt_rv *pt_report_root(pt_report *r);
const pt_rv *pt_report_root_c(const pt_report *r);
int pt_report_oom(const pt_report *r);
/* Copy s into the report's arena (NULL on failure, oom set). */
const char *pt_report_strdup(pt_report *r, const char *s);

/* Adders: parent is an object (key required) or an array (key ignored). */
pt_rv *pt_rv_obj(pt_report *r, pt_rv *parent, const char *key);
pt_rv *pt_rv_arr(pt_report *r, pt_rv *parent, const char *key);
pt_rv *pt_rv_num(pt_report *r, pt_rv *parent, const char *key, double v);
pt_rv *pt_rv_int(pt_report *r, pt_rv *parent, const char *key, int64_t v);
pt_rv *pt_rv_str(pt_report *r, pt_rv *parent, const char *key, const char *s);
pt_rv *pt_rv_null(pt_report *r, pt_rv *parent, const char *key);
/* v as a number, or null when it is not finite (NAN: unknown). */
pt_rv *pt_rv_num_or_null(pt_report *r, pt_rv *parent, const char *key, double v);
/* JSON true/false (stored in ->i as 1/0). */
pt_rv *pt_rv_bool(pt_report *r, pt_rv *parent, const char *key, int v);
/* json[0..len), valid JSON the caller formatted (a flat array of numbers:
 * at indent 4 each number would take a line), copied and written as it
 * is.  Readers of the tree see PT_RV_RAW with the text in ->str. */
pt_rv *pt_rv_raw(pt_report *r, pt_rv *parent, const char *key, const char *json, size_t len);

/* Member of an object by key (first match); NULL when absent or o is NULL. */
const pt_rv *pt_rv_get(const pt_rv *o, const char *key);

/* "short" under display (short.c): every function key the page shows (the
 * sections' keys, display's heatmap, the findings, the critical path)
 * mapped to its short name (names.c's pt_name_short_set).  Call after those
 * are written.  0, or -1 out of memory. */
int pt_report_short_names(pt_report *r, pt_rv *display);

/* ---- the finding model (finding.c) ------------------------------------
 *
 * A report's findings, ranked, as the diagnosis (src/diagnose/findings.c)
 * and the hang check (src/hang/hang.c) made them.  report.json's
 * "findings" array is written from it (pt_report_add_finding), and the text
 * reports render it (pt_report_findings): neither reads a finding back out
 * of the other's output.  Strings are copied into the report's arena; a
 * double that is not finite is written as null. */

/* How a merged finding relates to one piece of its evidence. */
typedef enum {
	PT_EV_SAME,      /* "same cause": another section saw the same function */
	PT_EV_INSIDE,    /* "inside it": a frame folded into its ancestor */
	PT_EV_OWN_COMM,  /* "its own collectives": a straggler's own, longer */
	PT_EV_OWN_WAIT,  /* "its own waiting for it" */
	PT_EV_SYMPTOM,   /* "symptom on a worker that waited for it" */
	PT_EV_WORKER,    /* "same cause on another worker": a grouped
	                    finding's other workers, each one's own numbers */
	PT_EV_WATCH,     /* "the always-on watch": its straggler, before the
	                    profile (docs/watch.md); explanation says it all */
	PT_EV_COUNT
} pt_ev_kind;

/* The report.json spelling of each kind. */
extern const char *const pt_ev_kind_names[PT_EV_COUNT];

typedef struct pt_finding_ev {
	pt_ev_kind kind;
	const char *category, *worker, *function, *metric;  /* NULL: "" */
	double value, others, impact_ms;
	const char *explanation;
} pt_finding_ev;

/* What a finding says is wrong: one kind per sentence of the phrase table
 * (phrase.c); report.json's "cause" is its name (pt_cause_name). */
#define PT_CAUSES(X) \
	X(NONE, "") \
	X(UNREADABLE, "unreadable traces") \
	X(OTHER_STEPS, "other steps") \
	X(SHARE, "share of time") \
	X(SLOW_CALLS, "slow calls") \
	X(LOW_BANDWIDTH, "low bandwidth") \
	X(SLOW_LINK, "slow link") \
	X(SLOW_P2P, "slow p2p") \
	X(WAITS_FOR_PEER, "waits for a peer") \
	X(GPU_WAITS, "GPU waits") \
	X(GPU_BUSIER, "GPU busier") \
	X(SLOW_KERNELS, "slow kernels") \
	X(LOW_OCCUPANCY, "low occupancy") \
	X(CPU_ONLY, "CPU only") \
	X(GPU_BOUND, "GPU bound") \
	X(COMM_BOUND, "communication bound") \
	X(GPU_IDLE, "GPU idle") \
	X(SLOW_STEPS, "slow steps") \
	X(SLOWEST_STEP, "slowest step") \
	X(JOB_SLOW_STEPS, "slow steps everywhere") \
	X(STRAGGLER, "straggler") \
	X(MISMATCH, "mismatched collectives") \
	X(GOT_SLOWER, "got slower") \
	X(GOT_FASTER, "got faster") \
	X(APPEARED, "is new") \
	X(GONE, "is gone") \
	X(DEAD, "dead") \
	X(LOST, "lost") \
	X(HUNG, "hung")

typedef enum {
#define PT_CAUSE_ENUM(id, name) PT_CAUSE_##id,
	PT_CAUSES(PT_CAUSE_ENUM)
#undef PT_CAUSE_ENUM
	PT_CAUSE_N
} pt_cause;

/* A number a finding stands on: the headline first (its name is the
 * finding's metric, its value the finding's value). */
typedef struct pt_metric {
	const char *name;
	double value;                  /* NAN: unknown (null) */
	pt_unit unit;
} pt_metric;

typedef struct pt_finding {
	const char *category;          /* "Lockstep", "Hang", ... */
	const char *const *workers;    /* ids as written ("w0.json", "rank0") */
	size_t nworkers;
	const char *function, *metric; /* NULL: "" */
	double value, others, impact_ms;
	const char *explanation;       /* the sentence */
	const char *caused_by;         /* a symptom's straggler; NULL: none */
	struct pt_finding_conf {       /* level NULL: not graded, no "confidence" */
		const char *level;     /* "strong", "moderate", "weak" */
		double lost;           /* time lost, share of the window */
		double apart;          /* how far from the others (x); NAN: unknown */
		size_t same;           /* other workers flagged on it */
		const char *calls;     /* NULL: "unknown" */
		double noise_ms;       /* per step; NAN: not measured (no member) */
		const char *noise;     /* which noise */
		const char *evidence;  /* why this grade, a sentence */
	} conf;
	const pt_finding_ev *ev;       /* merged evidence, nev of them */
	size_t nev;
	/* The typed content the sentence is rendered from (phrase.h).  With
	 * cause PT_CAUSE_NONE the explanation is taken as given; otherwise an
	 * explanation left NULL is rendered by pt_report_add_finding. */
	pt_cause cause;
	const char *view;              /* NULL: the category's view (or none) */
	const char *const *labels;     /* set by pt_report_add_finding: "rank N"
	                                  when the report's "workers" know the
	                                  worker's rank, else its id */
	const pt_metric *metrics;      /* the headline first; nmetrics of them */
	size_t nmetrics;
	const char *const *args;       /* the phrase's words: names, reasons and
	                                  clauses, worker tokens inside (phrase.h) */
	size_t nargs;
	const int64_t *steps;          /* the step numbers it concerns */
	size_t nsteps;
	int has_what_if;               /* a step would take what_if_ms instead of */
	double what_if_ms, instead_ms; /* instead_ms */
	size_t ninside;                /* frames folded into it (its "inside it" */
	double inside_ms;              /* evidence) and their ms per step */
	int grouped;                   /* 1: the same cause on all its workers,
	                                  worst first; the phrase is about the
	                                  first, the renderer names the group */
	double group_ms;               /* grouped: their ms per step in all */
} pt_finding;

/* Open the report's "findings" array under the root at this point of the
 * key order (an empty array stays when no finding follows).  Called once;
 * pt_report_add_finding opens it when needed.  NULL on allocation failure. */
pt_rv *pt_report_findings_open(pt_report *r);

/* Append a deep copy of f as the next finding: to the model and, with
 * "rank" its position from 1, to report.json's "findings".  0, or -1 out
 * of memory (the report remembers it: pt_report_oom). */
int pt_report_add_finding(pt_report *r, const pt_finding *f);

/* Append a deep copy of f to the model as pt_report_add_finding does, but
 * write it into o, an object its section already filled with its own keys
 * (compare's "Compare"."findings" entries): "category", "confidence" when
 * graded, then the typed keys ("view", "labels", "cause", "metrics",
 * "steps", "what if").  f->labels, when set, are copied as they are (the
 * section knows its workers' ranks); else resolved as above.  0, or -1 out
 * of memory. */
int pt_report_add_finding_in(pt_report *r, pt_rv *o, const pt_finding *f);

/* The findings in rank order; *n (not NULL) their number.  Owned by the
 * report; valid until it is freed.  NULL with *n = 0 when there are none. */
const pt_finding *pt_report_findings(const pt_report *r, size_t *n);

/* The five seed sections, in report order. */
extern const char *const pt_report_sections[5];

/* JSON text of v as Python's json.dumps(v, indent=4) writes it (ensure_ascii
 * escapes, floats as repr, ", " / ": " separators), starting at nesting
 * level `level` (0 for a whole document); no trailing newline. */
void pt_report_json(const pt_rv *v, int level, pt_sb *out);
/* The text report for people (text_people.c): a job summary (workers,
 * steps, step time, where the time goes, GPU utilization), the findings as
 * wrapped sentences (workers by rank when ranks are known and unique), then
 * every other top-level member (the five sections, "Hang", "trigger", any
 * new one) as lines and aligned tables of its top rows.  Every line is
 * shorter than width columns.  "workers" and "display" are left to
 * report.json.  o NULL: the defaults. */
typedef struct pt_text_opts {
	size_t max_findings;  /* findings printed (0: all); default 10 */
	size_t top;           /* rows per table; default 8 */
	size_t width;         /* line width limit; default 120 */
	int page_line;        /* 1: a "Page" line in the summary (default 0) */
	const char *outdir;   /* with page_line: where the page went (NULL: none
	                         written, the line says how to get one) */
} pt_text_opts;
void pt_text_opts_default(pt_text_opts *o);
void pt_report_text_people(const pt_report *r, const pt_text_opts *o, pt_sb *out);
/* pt_report_text_people with the defaults and max_findings. */
void pt_report_text(const pt_report *r, size_t max_findings, pt_sb *out);
/* The seed's text report (`--format json`): each seed section as "<name>:"
 * and its JSON (indent 4), blank lines between, then "Findings:" and
 * numbered sentences.  At most max_findings findings are printed (0: all);
 * the rest are counted.  "workers" and "display" are left to report.json. */
void pt_report_text_json(const pt_report *r, size_t max_findings, pt_sb *out);

/* Write DIR/PerfDisplay/report.json and DIR/PerfDisplay/index.html (the
 * self-contained PerfDisplay page with that report embedded,
 * pt_page_render), then DIR/PerfDisplay/app.py
 * (pt_page_write_app), creating directories as needed.  Both the report
 * and the page are written to temporary names in the same folder before
 * either is renamed, so a failed write leaves the old pair in place.  PT_OK or PT_EIO/PT_ENOMEM/PT_EINVAL with
 * err filled (subject: the path). */
int pt_report_write_dir(const pt_report *r, const char *dir, pt_error *err);

/* Write buf[0..len) to path atomically and durably (pt_file_write_atomic,
 * mode 0644, PT_FILE_DURABLE: a result, src/util/file.h). */
int pt_report_write_file(const char *path, const char *buf, size_t len, pt_error *err);

PT_API_END

#endif
