/*
 * lockstep.h - what the two halves of the lockstep analysis share (private
 * to src/diagnose): lockstep_match.c matches the workers' collective
 * instances and puts them on one clock (who arrived when, who waited for
 * whom); lockstep_blame.c finds what made the stragglers late, links the
 * victims' symptoms to them and writes the "Lockstep" section.
 * Rules and thresholds: docs/diagnose.md "Lockstep".
 */
#ifndef PT_LOCKSTEP_H
#define PT_LOCKSTEP_H

#include "internal.h"

#define NONE UINT32_MAX

typedef struct lkw {
	uint32_t w;            /* index into c->w */
	const char *mismatch;  /* why it is left out (report arena), NULL: takes part */
	uint32_t *cs, *cn;     /* per job channel: first instance, count (NONE: absent) */
	uint64_t *sig;         /* per job channel: signature of its op sequence */
	int *sh;               /* per job channel: reference index - own index */
	int *tok;              /* per name of its summary: the op (commkind role) */
	double shift_us;       /* window_start_us - the reference's */
	double offset_us, resid_us;
	double waited_us, blamed_us, saved_us;
	uint32_t last;
	int straggler;
} lkw;

typedef struct lk {
	dctx *c;
	lkw *w;                /* participants (version >= 2 with collectives) */
	size_t nw;
	uint32_t *m;           /* matched participants (indices into w) */
	size_t nm;
	char **chans;          /* job channel names (borrowed from summaries) */
	size_t nchan;
	size_t ninst;          /* instances per matched worker, all channels */
	uint32_t *ich, *ipos;  /* instance -> channel, reference index */
	uint32_t *lo, *hi;     /* per channel: reference indices every matched worker has */
	uint32_t *ref;         /* per channel: the reference participant */
	double *arr, *end;     /* [inst * nm + k]: aligned µs (reference clock) */
	uint32_t *ilast;       /* instance -> last arriver (index into m) */
	double *isaved;        /* instance -> how much later the last arriver came
	                          than the median member or the second last (µs) */
	double *tmp;
	size_t main_ch;
	size_t nbad;           /* instances whose ends disagree: left out */
	int byseq;             /* matched by (process group, sequence number), else position */
} lk;

/* Matching (lockstep_match.c), in this order; each returns -1 when out of
 * memory.  lk_index_channels: each participant's channels and op
 * signatures; lk_match: the matched workers (L->m) and the reference
 * participant per channel, mismatches described; lk_align: the instances on
 * the reference clock (L->arr, L->end), their last arrivers and what-ifs,
 * each worker's offset, wait and blame; lk_export_waits: each matched
 * worker's own instances' waits into c->lkw for the critical path. */
int lk_index_channels(lk *L);
int lk_match(lk *L);
int lk_align(lk *L);
int lk_export_waits(lk *L);
/* Frees what the functions above allocated (L itself is the caller's). */
void lk_free(lk *L);

/* What diag_lockstep_match leaves for diag_lockstep. */
struct dlk {
	lk L;
	dpair *lost;
	double *medl;
	double job_ms, nsteps, job_step_ms, total_blame, min_lost;
	size_t nvers1;
	int matched;           /* lk_match ran: the section is written */
};

/* Frees d (NULL: no-op) and what it holds. */
void lk_run_free(struct dlk *d);

/* Median of v[0..n) (reordered); 0 for none. */
double lk_median(double *v, size_t n);
/* "rank N (id)" or the id, into buf. */
const char *lk_wname(const dctx *c, uint32_t w, char *buf, size_t cap);

/* Worker W's own instance index for reference index j of channel ch. */
static inline uint32_t lk_own(const lkw *W, size_t ch, uint32_t j)
{
	return W->cs[ch] + (uint32_t)((int64_t)j - W->sh[ch]);
}

#endif
