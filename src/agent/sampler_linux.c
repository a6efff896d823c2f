/*
 * sampler_linux.c - the hardware sampler's Linux readers: /proc/stat (CPU
 * per core), /proc/meminfo (MemAvailable), /proc/pressure (some avg10),
 * /sys/class/net/<if>/statistics and /sys/class/infiniband/<dev>/ports/<p>/
 * counters.  Every path is read under the sampler's root folder, so tests
 * point it at a fixture tree.
 *
 * Fast group (own thread): NIC and InfiniBand byte counters, turned into
 * B/s.  Slow group (own thread): CPU, memory, pressure.  The two touch
 * disjoint state, so they need no lock between them.
 *
 * Files stay open and are re-read with pread at offset 0, which makes
 * sysfs and procfs generate fresh content far more cheaply than
 * open+read+close, which is most of a fast sample's cost (docs/bench.md,
 * "Code shaped for speed").
 * A file that fails is closed and opened again on the next sample.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/xalloc.h"
#include "sampler_internal.h"

#define MAX_NICS 64
#define MAX_IB_PORTS 64
#define MAX_CPUS 8192
#define STAT_MAX ((size_t)64 << 20)  /* /proc/stat larger than this is not read */

typedef struct cpu_line {
	int device;              /* core number, -1 for the "cpu" total line */
	long series;
	uint64_t busy, total;    /* ticks at the previous read */
	int valid;
} cpu_line;

typedef struct kfile {
	char *path;
	int fd;                  /* -1: not open */
} kfile;

typedef struct ctr_file {
	kfile f;
	hw_counter c;
	long series;
} ctr_file;

typedef struct hw_link {
	char *label;             /* interface, or "<device>:<port>" */
	ctr_file tx, rx;
} hw_link;

struct hw_linux {
	kfile stat, meminfo, psi[3];
	cpu_line *cpu;
	size_t ncpu;
	int stat_on, meminfo_on, psi_on[3];
	long s_memavail, s_psi[3];
	hw_link *nic;
	size_t nnic;
	hw_link *ib;
	size_t nib;
	char *buf;               /* slow thread's read buffer */
	size_t cap;
};

static const char *const psi_name[3] = { "cpu", "memory", "io" };
static const char *const psi_metric[3] = { "psi_cpu", "psi_memory", "psi_io" };

static char *path_of(const char *root, const char *a, const char *b, const char *c,
		     const char *d)
{
	pt_sb sb = { 0 };

	pt_sb_adds(&sb, root);
	pt_sb_adds(&sb, a);
	if (b) {
		pt_sb_addc(&sb, '/');
		pt_sb_adds(&sb, b);
	}
	if (c) {
		pt_sb_addc(&sb, '/');
		pt_sb_adds(&sb, c);
	}
	if (d) {
		pt_sb_addc(&sb, '/');
		pt_sb_adds(&sb, d);
	}
	if (sb.oom) {
		pt_sb_free(&sb);
		return NULL;
	}
	return pt_sb_detach(&sb, NULL);
}

static void kfile_init(kfile *f, char *path)
{
	f->path = path;
	f->fd = -1;
}

static void kfile_close(kfile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	x_free(f->path);
	f->path = NULL;
}

/* Up to cap bytes from offset 0 of f (opened when needed); -1 on failure
 * (the file is closed, to be opened again next time: an interface that
 * went away and came back). */
static ssize_t kpread(kfile *f, char *buf, size_t cap)
{
	ssize_t r;

	if (f->fd < 0 && f->path)
		f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return -1;
	do
		r = pread(f->fd, buf, cap, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		int e = errno;

		close(f->fd);
		f->fd = -1;
		errno = e;
	}
	return r;
}

/* Whole file into l->buf, NUL-terminated; length or -1.  The buffer grows
 * until one read holds the file: later reads are a single pread. */
static ssize_t read_all(struct hw_linux *l, kfile *f)
{
	for (;;) {
		ssize_t r;

		if (l->cap < 16384) {
			char *nb = x_reallocarray(l->buf, 16384, 1);

			if (!nb)
				return -1;
			l->buf = nb;
			l->cap = 16384;
		}
		r = kpread(f, l->buf, l->cap - 1);
		if (r < 0)
			return -1;
		if ((size_t)r < l->cap - 1) {
			l->buf[r] = 0;
			return r;
		}
		if (l->cap * 2 > STAT_MAX)
			return -1;
		{
			char *nb = x_reallocarray(l->buf, l->cap * 2, 1);

			if (!nb)
				return -1;
			l->buf = nb;
			l->cap *= 2;
		}
	}
}

static int read_u64(kfile *f, uint64_t *v)
{
	char buf[64], *end;
	ssize_t r = kpread(f, buf, sizeof(buf) - 1);

	if (r <= 0)
		return -1;
	buf[r] = 0;
	errno = 0;
	*v = strtoull(buf, &end, 10);
	if (end == buf || errno)
		return -1;
	return 0;
}

/* ---- /proc/stat --------------------------------------------------------------- */

/* Parse one "cpu..." line at p: device (-1 for the total) and ticks.
 * Returns the start of the next line, or NULL at the end of the "cpu" lines. */
static const char *parse_cpu(const char *p, int *device, uint64_t *busy, uint64_t *total)
{
	uint64_t f[8] = { 0 };
	char *end;
	int i;

	if (strncmp(p, "cpu", 3) != 0)
		return NULL;
	p += 3;
	if (*p == ' ') {
		*device = -1;
	} else {
		long d = strtol(p, &end, 10);

		if (end == p || d < 0 || d >= MAX_CPUS)
			return NULL;
		*device = (int)d;
		p = end;
	}
	/* user nice system idle iowait irq softirq steal [guest guest_nice]:
	 * guest time is already counted in user and nice. */
	for (i = 0; i < 8; i++) {
		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			break;
		f[i] = strtoull(p, &end, 10);
		p = end;
	}
	if (i < 4)
		return NULL;
	*busy = f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
	*total = *busy + f[3] + f[4];
	{
		const char *nl = strchr(p, '\n');

		return nl ? nl + 1 : p + strlen(p);
	}
}

static cpu_line *find_cpu(struct hw_linux *l, int device, size_t hint)
{
	if (hint < l->ncpu && l->cpu[hint].device == device)
		return &l->cpu[hint];
	for (size_t i = 0; i < l->ncpu; i++)
		if (l->cpu[i].device == device)
			return &l->cpu[i];
	return NULL;
}

static int open_stat(pt_sampler *s, struct hw_linux *l)
{
	const char *p;
	size_t cap = 0;

	if (read_all(l, &l->stat) < 0) {
		hw_note(s, "cpu: cannot read '%s': %s", l->stat.path, strerror(errno));
		return 0;
	}
	for (p = l->buf; p && *p;) {
		int dev;
		uint64_t busy, total;
		const char *next = parse_cpu(p, &dev, &busy, &total);

		if (!next)
			break;
		if (X_GROW(l->cpu, cap, l->ncpu + 1))
			return 0;
		l->cpu[l->ncpu].device = dev;
		l->cpu[l->ncpu].series = hw_series(&s->slow, "cpu_util", dev, NULL, "%", 100);
		l->cpu[l->ncpu].valid = 0;
		l->ncpu++;
		p = next;
	}
	if (!l->ncpu)
		hw_note(s, "cpu: no cpu line in '%s'", l->stat.path);
	return l->ncpu > 0;
}

static void sample_stat(pt_sampler *s, struct hw_linux *l)
{
	const char *p;
	size_t k = 0;

	if (read_all(l, &l->stat) < 0)
		return;
	for (p = l->buf; p && *p; k++) {
		int dev;
		uint64_t busy, total;
		const char *next = parse_cpu(p, &dev, &busy, &total);
		cpu_line *c;

		if (!next)
			break;
		p = next;
		c = find_cpu(l, dev, k);
		if (!c)
			continue;  /* a core that came online since: not followed */
		if (c->valid && total > c->total && busy >= c->busy)
			hw_put(&s->slow, c->series,
			       100.0 * (double)(busy - c->busy) / (double)(total - c->total));
		else if (c->valid && total == c->total)
			continue;  /* no tick yet (USER_HZ): keep the base */
		c->busy = busy;
		c->total = total;
		c->valid = 1;
	}
}

/* ---- /proc/meminfo, /proc/pressure ---------------------------------------------- */

static int meminfo_available(struct hw_linux *l, double *bytes)
{
	const char *p;

	if (read_all(l, &l->meminfo) < 0)
		return -1;
	for (p = l->buf; p && *p;) {
		if (!strncmp(p, "MemAvailable:", 13)) {
			char *end;
			unsigned long long kb = strtoull(p + 13, &end, 10);

			if (end == p + 13)
				return -1;
			*bytes = (double)kb * 1024.0;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

static int psi_some_avg10(struct hw_linux *l, kfile *f, double *v)
{
	const char *p;

	if (read_all(l, f) < 0)
		return -1;
	for (p = l->buf; p && *p;) {
		if (!strncmp(p, "some ", 5)) {
			const char *a = strstr(p, "avg10=");
			char *end;

			if (!a)
				return -1;
			*v = strtod(a + 6, &end);
			return end == a + 6 ? -1 : 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* ---- network, InfiniBand ---------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the entries of dir (not starting with '.'); at most max.
 * *missing set when dir cannot be opened. */
static char **list_dir(const char *dir, size_t max, size_t *n, int *missing)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	*missing = !d;
	if (!d)
		return NULL;
	while ((de = readdir(d)) && *n < max) {
		char *name;

		if (de->d_name[0] == '.')
			continue;
		name = x_strndup(de->d_name, strlen(de->d_name));
		if (!name || X_GROW(v, cap, *n + 1)) {
			x_free(name);
			break;
		}
		v[(*n)++] = name;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		x_free(v[i]);
	x_free(v);
}

static int readable(kfile *f)
{
	uint64_t v;

	return f->path && read_u64(f, &v) == 0;
}

static void link_free(hw_link *k)
{
	x_free(k->label);
	kfile_close(&k->tx.f);
	kfile_close(&k->rx.f);
}

static void open_nics(pt_sampler *s, struct hw_linux *l)
{
	char *dir = path_of(s->root, "/sys/class/net", NULL, NULL, NULL);
	size_t n = 0;
	int missing = 1;
	char **names = dir ? list_dir(dir, 4096, &n, &missing) : NULL;

	if (missing)
		hw_note(s, "net: cannot list '%s'", dir ? dir : "/sys/class/net");
	l->nic = n ? x_calloc(n < MAX_NICS ? n : MAX_NICS, sizeof(*l->nic)) : NULL;
	for (size_t i = 0; i < n && l->nic; i++) {
		hw_link *k = &l->nic[l->nnic];

		/* Loopback is not a NIC (intra-node traffic of e.g. gloo shows
		 * up there, but it is not what this series is for). */
		if (!strcmp(names[i], "lo"))
			continue;
		if (l->nnic == MAX_NICS) {
			hw_note(s, "net: more than %d interfaces: the rest not sampled", MAX_NICS);
			break;
		}
		kfile_init(&k->tx.f, path_of(dir, "", names[i], "statistics", "tx_bytes"));
		kfile_init(&k->rx.f, path_of(dir, "", names[i], "statistics", "rx_bytes"));
		k->label = x_strndup(names[i], strlen(names[i]));
		if (!k->label || !readable(&k->tx.f) || !readable(&k->rx.f)) {
			link_free(k);
			memset(k, 0, sizeof(*k));
			continue;
		}
		k->tx.series = hw_series(&s->fast, "nic_tx", -1, k->label, "B/s", 0);
		k->rx.series = hw_series(&s->fast, "nic_rx", -1, k->label, "B/s", 0);
		l->nnic++;
	}
	free_list(names, n);
	x_free(dir);
}

static void open_ib(pt_sampler *s, struct hw_linux *l)
{
	char *dir = path_of(s->root, "/sys/class/infiniband", NULL, NULL, NULL);
	size_t ndev = 0, cap = 0;
	int missing = 1;
	char **devs = dir ? list_dir(dir, 256, &ndev, &missing) : NULL;

	if (!ndev)
		hw_note(s, "infiniband: no device in '%s'", dir ? dir : "/sys/class/infiniband");
	for (size_t i = 0; i < ndev; i++) {
		char *pdir = path_of(dir, "", devs[i], "ports", NULL);
		size_t np = 0;
		char **ports = pdir ? list_dir(pdir, 256, &np, &missing) : NULL;

		for (size_t j = 0; j < np; j++) {
			hw_link k = { 0 };
			pt_sb lb = { 0 };

			if (l->nib == MAX_IB_PORTS) {
				hw_note(s, "infiniband: more than %d ports: the rest not sampled",
					MAX_IB_PORTS);
				break;
			}
			kfile_init(&k.tx.f, path_of(pdir, "", ports[j], "counters", "port_xmit_data"));
			kfile_init(&k.rx.f, path_of(pdir, "", ports[j], "counters", "port_rcv_data"));
			pt_sb_addf(&lb, "%s:%s", devs[i], ports[j]);
			k.label = lb.oom ? NULL : pt_sb_detach(&lb, NULL);
			pt_sb_free(&lb);
			if (!k.label || !readable(&k.tx.f) || !readable(&k.rx.f) ||
			    X_GROW(l->ib, cap, l->nib + 1)) {
				link_free(&k);
				continue;
			}
			k.tx.series = hw_series(&s->fast, "ib_tx", -1, k.label, "B/s", 0);
			k.rx.series = hw_series(&s->fast, "ib_rx", -1, k.label, "B/s", 0);
			l->ib[l->nib++] = k;
		}
		free_list(ports, np);
		x_free(pdir);
	}
	free_list(devs, ndev);
	x_free(dir);
}

static void sample_counter(pt_sampler *s, ctr_file *f, int64_t t, double scale)
{
	uint64_t v;
	double rate;

	if (read_u64(&f->f, &v) != 0)
		return;  /* interface gone for now: keep the base */
	if (hw_rate(&f->c, v, t, scale, &rate))
		hw_put(&s->fast, f->series, rate);
}

/* ---- entry points ---------------------------------------------------------------- */

struct hw_linux *hw_linux_open(pt_sampler *s)
{
	struct hw_linux *l = x_calloc(1, sizeof(*l));
	int i;

	if (!l)
		return NULL;
	kfile_init(&l->stat, path_of(s->root, "/proc/stat", NULL, NULL, NULL));
	kfile_init(&l->meminfo, path_of(s->root, "/proc/meminfo", NULL, NULL, NULL));
	for (i = 0; i < 3; i++)
		kfile_init(&l->psi[i], path_of(s->root, "/proc/pressure", psi_name[i], NULL, NULL));
	if (!l->stat.path || !l->meminfo.path || !l->psi[0].path || !l->psi[1].path ||
	    !l->psi[2].path) {
		hw_linux_close(l);
		return NULL;
	}
	l->stat_on = open_stat(s, l);
	{
		double v;

		l->meminfo_on = meminfo_available(l, &v) == 0;
		if (l->meminfo_on)
			l->s_memavail = hw_series(&s->slow, "mem_available", -1, NULL, "B", 0);
		else
			hw_note(s, "memory: no MemAvailable in '%s'", l->meminfo.path);
		for (i = 0; i < 3; i++) {
			l->psi_on[i] = psi_some_avg10(l, &l->psi[i], &v) == 0;
			if (l->psi_on[i])
				l->s_psi[i] = hw_series(&s->slow, psi_metric[i], -1, NULL, "%", 100);
		}
		if (!l->psi_on[0] && !l->psi_on[1] && !l->psi_on[2])
			hw_note(s, "pressure: cannot read '%s' (kernel without PSI?)", l->psi[0].path);
	}
	open_nics(s, l);
	open_ib(s, l);
	return l;
}

void hw_linux_fast(pt_sampler *s, struct hw_linux *l, int64_t t)
{
	size_t i;

	for (i = 0; i < l->nnic; i++) {
		sample_counter(s, &l->nic[i].tx, t, 1);
		sample_counter(s, &l->nic[i].rx, t, 1);
	}
	/* port_xmit_data / port_rcv_data count units of 4 bytes. */
	for (i = 0; i < l->nib; i++) {
		sample_counter(s, &l->ib[i].tx, t, 4);
		sample_counter(s, &l->ib[i].rx, t, 4);
	}
}

void hw_linux_slow(pt_sampler *s, struct hw_linux *l, int64_t t)
{
	double v;

	(void)t;
	if (l->stat_on)
		sample_stat(s, l);
	if (l->meminfo_on && meminfo_available(l, &v) == 0)
		hw_put(&s->slow, l->s_memavail, v);
	for (int i = 0; i < 3; i++)
		if (l->psi_on[i] && psi_some_avg10(l, &l->psi[i], &v) == 0)
			hw_put(&s->slow, l->s_psi[i], v);
}

void hw_linux_inventory(const struct hw_linux *l, int *nics, int *ib_ports, int *cpus)
{
	if (nics)
		*nics = l ? (int)l->nnic : 0;
	if (ib_ports)
		*ib_ports = l ? (int)l->nib : 0;
	if (cpus)
		*cpus = l ? (int)l->ncpu : 0;
}

void hw_linux_close(struct hw_linux *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->nnic; i++)
		link_free(&l->nic[i]);
	for (i = 0; i < l->nib; i++)
		link_free(&l->ib[i]);
	x_free(l->nic);
	x_free(l->ib);
	x_free(l->cpu);
	x_free(l->buf);
	kfile_close(&l->stat);
	kfile_close(&l->meminfo);
	for (i = 0; i < 3; i++)
		kfile_close(&l->psi[i]);
	x_free(l);
}
