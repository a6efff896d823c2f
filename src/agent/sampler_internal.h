/*
 * sampler_internal.h - what the sampler's three files share: the sampler
 * object, its two groups (fast, slow) and the readers' entry points.
 *
 * sampler.c owns the threads, the groups and the output; sampler_nvml.c
 * reads NVML (dlopen'ed, declarations of our own, no nvml.h);
 * sampler_linux.c reads /proc and /sys under a root folder.  Readers stage
 * (series, value) pairs while reading, without the group's lock; the group
 * commits them under the lock so that a snapshot never waits on a slow
 * driver call.
 */
#ifndef PT_SAMPLER_INTERNAL_H
#define PT_SAMPLER_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/strbuf.h"
#include "sampler.h"

typedef struct hw_stage {
	size_t idx;
	double v;
} hw_stage;

typedef struct hw_group {
	pt_samples h;            /* this group's series (guarded by mu) */
	pthread_mutex_t mu;
	int64_t interval_ns;     /* current interval (doubles when thinned) */
	int64_t last_t;          /* time of the last sample, 0 none */
	hw_stage *stage;         /* values read for the sample being taken */
	size_t nstage, capstage;
	int oom;
	uint64_t nsamples;       /* samples taken, and their cost */
	int64_t cost_ns;
	pthread_t th;
	int started;
} hw_group;

/* A monotonically increasing hardware counter turned into a rate. */
typedef struct hw_counter {
	uint64_t prev;
	int64_t prev_t;
	int valid;
} hw_counter;

struct hw_nvml;
struct hw_linux;

struct pt_sampler {
	pt_sampler_options opt;
	char *root;
	char *host;
	hw_group fast, slow;
	pthread_mutex_t note_mu;
	pt_sb note;
	char *note_copy;
	struct hw_nvml *nvml;
	struct hw_linux *lnx;
	pthread_mutex_t run_mu;
	pthread_cond_t run_cv;
	int stop;
	int running;
};

/* Series index in g->h for (name, device, label), created if absent; -1 on
 * allocation failure.  Only before sampling starts. */
long hw_series(hw_group *g, const char *name, int device, const char *label, const char *unit,
	       double max);
/* Stage value v for series idx in the sample being taken. */
void hw_put(hw_group *g, long idx, double v);
/* Rate of counter c (in counter units) at time t, times scale: 1 and *rate
 * set when a previous value exists and the counter did not go backwards
 * (reset or wrap: the new value becomes the base). */
int hw_rate(hw_counter *c, uint64_t value, int64_t t, double scale, double *rate);
/* Append "; "-separated text to the note (thread-safe). */
void hw_note(pt_sampler *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* NVML: open (NULL when unusable; the note says why), read each group. */
struct hw_nvml *hw_nvml_open(pt_sampler *s, const char *path);
void hw_nvml_fast(pt_sampler *s, struct hw_nvml *n, int64_t t);
void hw_nvml_slow(pt_sampler *s, struct hw_nvml *n, int64_t t);
int hw_nvml_gpus(const struct hw_nvml *n);
void hw_nvml_close(struct hw_nvml *n);

/* /proc and /sys under s->root. */
struct hw_linux *hw_linux_open(pt_sampler *s);
void hw_linux_fast(pt_sampler *s, struct hw_linux *l, int64_t t);
void hw_linux_slow(pt_sampler *s, struct hw_linux *l, int64_t t);
void hw_linux_inventory(const struct hw_linux *l, int *nics, int *ib_ports, int *cpus);
void hw_linux_close(struct hw_linux *l);

#endif
