/*
 * sampler_nvml.c - GPU metrics for the hardware sampler through NVML,
 * loaded at run time with dlopen (no build-time dependency, no nvml.h: the
 * few types and constants used are declared below from the NVML API
 * reference).  A missing library, a missing symbol or a failing call skips
 * that part and says so in the sampler's note.
 *
 * Slow group: utilisation (gpu, memory), SM clock, power, temperature,
 * throttle reasons, PCIe TX/RX.  Fast group: NVLink TX/RX data counters
 * (field values 138/139, aggregate over links), turned into B/s.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../util/xalloc.h"
#include "sampler_internal.h"

/* ---- NVML declarations (NVML API reference; ABI stable since R450) ------ */

typedef int nvml_ret;                     /* nvmlReturn_t */
typedef struct nvml_dev_st *nvml_dev;     /* nvmlDevice_t */

#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_ERROR_FUNCTION_NOT_FOUND 13

#define NVML_CLOCK_SM 1                   /* nvmlClockType_t */
#define NVML_TEMPERATURE_GPU 0            /* nvmlTemperatureSensors_t */
#define NVML_PCIE_UTIL_TX_BYTES 0         /* nvmlPcieUtilCounter_t, value in KB/s */
#define NVML_PCIE_UTIL_RX_BYTES 1
#define NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON 90   /* per link and direction, active links */
#define NVML_FI_DEV_NVLINK_LINK_COUNT 91          /* links on the device */
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX 138  /* KiB, scopeId = link or UINT_MAX (all) */
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX 139

typedef struct nvml_util {                /* nvmlUtilization_t */
	unsigned int gpu, memory;             /* % of the last sample period */
} nvml_util;

typedef union nvml_value {                /* nvmlValue_t */
	double d;
	unsigned int ui;
	unsigned long ul;
	unsigned long long ull;
	signed long long sll;
	int si;
	unsigned short us;
} nvml_value;

enum { VT_DOUBLE, VT_UINT, VT_ULONG, VT_ULLONG, VT_SLLONG, VT_SINT, VT_USHORT };  /* nvmlValueType_t */

typedef struct nvml_field {               /* nvmlFieldValue_t */
	unsigned int field_id;
	unsigned int scope_id;
	long long timestamp;
	long long latency_us;
	int value_type;
	nvml_ret ret;
	nvml_value value;
} nvml_field;

_Static_assert(sizeof(nvml_field) == 40, "nvmlFieldValue_t is 40 bytes on LP64");

typedef nvml_ret (*fn_void)(void);
typedef const char *(*fn_errstr)(nvml_ret);
typedef nvml_ret (*fn_count)(unsigned int *);
typedef nvml_ret (*fn_handle)(unsigned int, nvml_dev *);
typedef nvml_ret (*fn_util)(nvml_dev, nvml_util *);
typedef nvml_ret (*fn_uint_arg)(nvml_dev, int, unsigned int *);
typedef nvml_ret (*fn_uint)(nvml_dev, unsigned int *);
typedef nvml_ret (*fn_ull)(nvml_dev, unsigned long long *);
typedef nvml_ret (*fn_fields)(nvml_dev, int, nvml_field *);

/* Per GPU metric, in the order of the slow group. */
enum { M_UTIL, M_CLOCK, M_POWER, M_TEMP, M_THROTTLE, M_PCIE, M_NVLINK, M_COUNT };
static const char *const metric_fn[M_COUNT] = {
	"nvmlDeviceGetUtilizationRates", "nvmlDeviceGetClockInfo", "nvmlDeviceGetPowerUsage",
	"nvmlDeviceGetTemperature", "nvmlDeviceGetCurrentClocksThrottleReasons",
	"nvmlDeviceGetPcieThroughput", "nvmlDeviceGetFieldValues",
};

/* Transient failures tolerated in a row before a metric is given up. */
#define MAX_FAILS 10

typedef struct gpu {
	nvml_dev dev;
	int index;             /* NVML's device index */
	int on[M_COUNT];       /* still sampled */
	int fails[M_COUNT];
	long s_gpu, s_mem, s_clock, s_power, s_temp, s_throttle, s_pcie_tx, s_pcie_rx;
	long s_nvl_tx, s_nvl_rx;
	hw_counter nvl_tx, nvl_rx;
} gpu;

struct hw_nvml {
	void *lib;
	fn_void shutdown;
	fn_errstr errstr;
	fn_util util;
	fn_uint_arg clock, temp, pcie;
	fn_uint power;
	fn_ull throttle;
	fn_fields fields;
	gpu *g;
	int ngpu;
};

static const char *why(const struct hw_nvml *n, nvml_ret r)
{
	const char *s = n->errstr ? n->errstr(r) : NULL;

	return s && *s ? s : "error";
}

/* Permanent failures: the GPU or this driver lacks the query. */
static int permanent(nvml_ret r)
{
	return r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_NO_PERMISSION ||
	       r == NVML_ERROR_FUNCTION_NOT_FOUND;
}

/* Count a failed call of metric m on GPU i; give the metric up (with a
 * note) when it is permanent or has failed MAX_FAILS times in a row. */
static void failed(pt_sampler *s, struct hw_nvml *n, int i, int m, nvml_ret r)
{
	gpu *g = &n->g[i];

	if (!permanent(r) && ++g->fails[m] < MAX_FAILS)
		return;
	g->on[m] = 0;
	hw_note(s, "nvml: gpu %d: %s: %s (code %d)%s", g->index, metric_fn[m], why(n, r), r,
		permanent(r) ? "" : ", given up after repeated failures");
}

static void ok(gpu *g, int m)
{
	g->fails[m] = 0;
}

static void *sym(struct hw_nvml *n, const char *name)
{
	return dlsym(n->lib, name);
}

static double field_value(const nvml_field *f);

/* PCIe capacity per direction (B/s) from the link's generation and width
 * (the most the device and the slot allow): lanes x the per-lane data
 * rate after line coding (8b/10b to gen 2, 128b/130b to gen 5, 242/256
 * FLIT for gen 6).  0 when unknown. */
static double pcie_capacity(nvml_dev d, fn_uint gen_fn, fn_uint width_fn)
{
	static const double lane[7] = { 0, 2.5e9 * 8 / 10 / 8, 5e9 * 8 / 10 / 8,
					8e9 * 128 / 130 / 8, 16e9 * 128 / 130 / 8,
					32e9 * 128 / 130 / 8, 64e9 * 242 / 256 / 8 };
	unsigned int gen = 0, width = 0;

	if (!gen_fn || !width_fn || gen_fn(d, &gen) != NVML_SUCCESS ||
	    width_fn(d, &width) != NVML_SUCCESS || gen >= 7 || width > 64)
		return 0;
	return lane[gen] * width;
}

/* NVLink capacity per direction (B/s): links x the common link speed
 * (MB/s); 0 when unknown or without NVLink. */
static double nvlink_capacity(struct hw_nvml *n, nvml_dev d)
{
	nvml_field f[2];

	if (!n->fields)
		return 0;
	memset(f, 0, sizeof(f));
	f[0].field_id = NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON;
	f[1].field_id = NVML_FI_DEV_NVLINK_LINK_COUNT;
	if (n->fields(d, 2, f) != NVML_SUCCESS || f[0].ret != NVML_SUCCESS ||
	    f[1].ret != NVML_SUCCESS)
		return 0;
	return field_value(&f[0]) > 0 && field_value(&f[1]) > 0
		       ? field_value(&f[0]) * 1e6 * field_value(&f[1])
		       : 0;
}

struct hw_nvml *hw_nvml_open(pt_sampler *s, const char *path)
{
	struct hw_nvml *n = x_calloc(1, sizeof(*n));
	fn_void init;
	fn_count count;
	fn_handle handle;
	unsigned int ngpu = 0;
	fn_uint max_gen, max_width;
	nvml_ret r;
	int i, m;

	if (!n) {
		hw_note(s, "nvml: out of memory");
		return NULL;
	}
	dlerror();
	n->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		const char *e = dlerror();

		hw_note(s, "nvml: cannot load '%s': %s", path, e ? e : "not found");
		goto fail;
	}
	init = (fn_void)sym(n, "nvmlInit_v2");
	n->shutdown = (fn_void)sym(n, "nvmlShutdown");
	count = (fn_count)sym(n, "nvmlDeviceGetCount_v2");
	handle = (fn_handle)sym(n, "nvmlDeviceGetHandleByIndex_v2");
	n->errstr = (fn_errstr)sym(n, "nvmlErrorString");
	if (!init || !n->shutdown || !count || !handle) {
		hw_note(s, "nvml: '%s' lacks %s: gpu metrics not sampled", path,
			!init ? "nvmlInit_v2" : !n->shutdown ? "nvmlShutdown"
			: !count ? "nvmlDeviceGetCount_v2" : "nvmlDeviceGetHandleByIndex_v2");
		goto fail;
	}
	r = init();
	if (r != NVML_SUCCESS) {
		hw_note(s, "nvml: nvmlInit_v2 failed: %s (code %d): gpu metrics not sampled",
			why(n, r), r);
		n->shutdown = NULL;  /* nothing to shut down */
		goto fail;
	}
	r = count(&ngpu);
	if (r != NVML_SUCCESS || ngpu == 0) {
		if (r != NVML_SUCCESS)
			hw_note(s, "nvml: nvmlDeviceGetCount_v2 failed: %s (code %d)", why(n, r), r);
		else
			hw_note(s, "nvml: no gpu");
		goto fail;
	}
	if (ngpu > 1024)
		ngpu = 1024;
	n->util = (fn_util)sym(n, "nvmlDeviceGetUtilizationRates");
	n->clock = (fn_uint_arg)sym(n, "nvmlDeviceGetClockInfo");
	n->power = (fn_uint)sym(n, "nvmlDeviceGetPowerUsage");
	n->temp = (fn_uint_arg)sym(n, "nvmlDeviceGetTemperature");
	/* Renamed "ClocksEventReasons" in R535; the old name stays exported. */
	n->throttle = (fn_ull)sym(n, "nvmlDeviceGetCurrentClocksThrottleReasons");
	if (!n->throttle)
		n->throttle = (fn_ull)sym(n, "nvmlDeviceGetCurrentClocksEventReasons");
	n->pcie = (fn_uint_arg)sym(n, "nvmlDeviceGetPcieThroughput");
	n->fields = (fn_fields)sym(n, "nvmlDeviceGetFieldValues");
	max_gen = (fn_uint)sym(n, "nvmlDeviceGetMaxPcieLinkGeneration");
	max_width = (fn_uint)sym(n, "nvmlDeviceGetMaxPcieLinkWidth");
	{
		double pcie_max, nvl_max;
		void *have[M_COUNT] = { (void *)n->util, (void *)n->clock, (void *)n->power,
					(void *)n->temp, (void *)n->throttle, (void *)n->pcie,
					(void *)n->fields };

		for (m = 0; m < M_COUNT; m++)
			if (!have[m])
				hw_note(s, "nvml: '%s' lacks %s: not sampled", path, metric_fn[m]);
		n->g = x_calloc(ngpu, sizeof(*n->g));
		if (!n->g) {
			hw_note(s, "nvml: out of memory");
			goto fail;
		}
		for (i = 0; i < (int)ngpu; i++) {
			gpu *g = &n->g[n->ngpu];

			r = handle((unsigned int)i, &g->dev);
			if (r != NVML_SUCCESS) {
				hw_note(s, "nvml: gpu %d: nvmlDeviceGetHandleByIndex_v2: %s (code %d)", i,
					why(n, r), r);
				continue;
			}
			g->index = i;
			for (m = 0; m < M_COUNT; m++)
				g->on[m] = have[m] != NULL;
			pcie_max = pcie_capacity(g->dev, max_gen, max_width);
			nvl_max = nvlink_capacity(n, g->dev);
			/* The device index is NVML's (= CUDA's when CUDA_DEVICE_ORDER=PCI_BUS_ID). */
			g->s_gpu = hw_series(&s->slow, "gpu_util", i, NULL, "%", 100);
			g->s_mem = hw_series(&s->slow, "mem_util", i, NULL, "%", 100);
			g->s_clock = hw_series(&s->slow, "sm_clock", i, NULL, "MHz", 0);
			g->s_power = hw_series(&s->slow, "power", i, NULL, "W", 0);
			g->s_temp = hw_series(&s->slow, "temperature", i, NULL, "C", 0);
			g->s_throttle = hw_series(&s->slow, "throttle", i, NULL, "", 0);
			g->s_pcie_tx = hw_series(&s->slow, "pcie_tx", i, NULL, "B/s", pcie_max);
			g->s_pcie_rx = hw_series(&s->slow, "pcie_rx", i, NULL, "B/s", pcie_max);
			g->s_nvl_tx = hw_series(&s->fast, "nvlink_tx", i, NULL, "B/s", nvl_max);
			g->s_nvl_rx = hw_series(&s->fast, "nvlink_rx", i, NULL, "B/s", nvl_max);
			n->ngpu++;
		}
	}
	if (!n->ngpu)
		goto fail;
	return n;
fail:
	hw_nvml_close(n);
	return NULL;
}

int hw_nvml_gpus(const struct hw_nvml *n)
{
	return n ? n->ngpu : -1;
}

void hw_nvml_close(struct hw_nvml *n)
{
	if (!n)
		return;
	if (n->shutdown)
		n->shutdown();
	if (n->lib)
		dlclose(n->lib);
	x_free(n->g);
	x_free(n);
}

static double field_value(const nvml_field *f)
{
	switch (f->value_type) {
	case VT_DOUBLE: return f->value.d;
	case VT_UINT: return (double)f->value.ui;
	case VT_ULONG: return (double)f->value.ul;
	case VT_ULLONG: return (double)f->value.ull;
	case VT_SLLONG: return (double)f->value.sll;
	case VT_SINT: return (double)f->value.si;
	case VT_USHORT: return (double)f->value.us;
	default: return -1;
	}
}

static uint64_t field_u64(const nvml_field *f)
{
	switch (f->value_type) {
	case VT_UINT: return f->value.ui;
	case VT_ULONG: return f->value.ul;
	case VT_ULLONG: return f->value.ull;
	default: {
		double v = field_value(f);

		return v > 0 ? (uint64_t)v : 0;
	}
	}
}

void hw_nvml_fast(pt_sampler *s, struct hw_nvml *n, int64_t t)
{
	for (int i = 0; i < n->ngpu; i++) {
		gpu *g = &n->g[i];
		nvml_field f[2];
		nvml_ret r;
		double v;

		if (!g->on[M_NVLINK])
			continue;
		memset(f, 0, sizeof(f));
		f[0].field_id = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
		f[1].field_id = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
		f[0].scope_id = f[1].scope_id = UINT_MAX;  /* summed over the links */
		r = n->fields(g->dev, 2, f);
		if (r == NVML_SUCCESS && f[0].ret != NVML_SUCCESS)
			r = f[0].ret;
		if (r == NVML_SUCCESS && f[1].ret != NVML_SUCCESS)
			r = f[1].ret;
		if (r != NVML_SUCCESS) {
			failed(s, n, i, M_NVLINK, r);
			continue;
		}
		ok(g, M_NVLINK);
		/* Counters in KiB. */
		if (hw_rate(&g->nvl_tx, field_u64(&f[0]), t, 1024, &v))
			hw_put(&s->fast, g->s_nvl_tx, v);
		if (hw_rate(&g->nvl_rx, field_u64(&f[1]), t, 1024, &v))
			hw_put(&s->fast, g->s_nvl_rx, v);
	}
}

void hw_nvml_slow(pt_sampler *s, struct hw_nvml *n, int64_t t)
{
	(void)t;
	for (int i = 0; i < n->ngpu; i++) {
		gpu *g = &n->g[i];
		nvml_ret r;

		if (g->on[M_UTIL]) {
			nvml_util u = { 0, 0 };

			if ((r = n->util(g->dev, &u)) == NVML_SUCCESS) {
				ok(g, M_UTIL);
				hw_put(&s->slow, g->s_gpu, u.gpu);
				hw_put(&s->slow, g->s_mem, u.memory);
			} else {
				failed(s, n, i, M_UTIL, r);
			}
		}
		if (g->on[M_CLOCK]) {
			unsigned int mhz = 0;

			if ((r = n->clock(g->dev, NVML_CLOCK_SM, &mhz)) == NVML_SUCCESS) {
				ok(g, M_CLOCK);
				hw_put(&s->slow, g->s_clock, mhz);
			} else {
				failed(s, n, i, M_CLOCK, r);
			}
		}
		if (g->on[M_POWER]) {
			unsigned int mw = 0;

			if ((r = n->power(g->dev, &mw)) == NVML_SUCCESS) {
				ok(g, M_POWER);
				hw_put(&s->slow, g->s_power, mw / 1000.0);
			} else {
				failed(s, n, i, M_POWER, r);
			}
		}
		if (g->on[M_TEMP]) {
			unsigned int c = 0;

			if ((r = n->temp(g->dev, NVML_TEMPERATURE_GPU, &c)) == NVML_SUCCESS) {
				ok(g, M_TEMP);
				hw_put(&s->slow, g->s_temp, c);
			} else {
				failed(s, n, i, M_TEMP, r);
			}
		}
		if (g->on[M_THROTTLE]) {
			unsigned long long mask = 0;

			if ((r = n->throttle(g->dev, &mask)) == NVML_SUCCESS) {
				ok(g, M_THROTTLE);
				hw_put(&s->slow, g->s_throttle, (double)mask);
			} else {
				failed(s, n, i, M_THROTTLE, r);
			}
		}
		if (g->on[M_PCIE]) {
			unsigned int tx = 0, rx = 0;

			/* KB/s over NVML's own 20 ms window. */
			if ((r = n->pcie(g->dev, NVML_PCIE_UTIL_TX_BYTES, &tx)) == NVML_SUCCESS &&
			    (r = n->pcie(g->dev, NVML_PCIE_UTIL_RX_BYTES, &rx)) == NVML_SUCCESS) {
				ok(g, M_PCIE);
				hw_put(&s->slow, g->s_pcie_tx, tx * 1024.0);
				hw_put(&s->slow, g->s_pcie_rx, rx * 1024.0);
			} else {
				failed(s, n, i, M_PCIE, r);
			}
		}
	}
}
