/*
 * fake_nvml.c - a test stand-in for libnvidia-ml.so.1: exports the NVML
 * functions the hardware sampler (src/agent/sampler_nvml.c) resolves with
 * dlsym, returning scripted values, so tests/unit/test_sampler.c can check
 * the sampler's series exactly on a machine without a GPU.
 *
 * Built by mk/sampler.mk as build-test/libnvidia-ml.so.1 and, with
 * -DFAKE_NVML_NO_FIELDS (no nvmlDeviceGetFieldValues: a driver without
 * NVLink counters), as build-test/fakenvml-nofields/libnvidia-ml.so.1.
 *
 * Script (device d = 0, 1, ...; k = calls of that function on d so far):
 *   utilisation gpu 50 + 25d %, memory 20 + 10d %; SM clock 1410 - 100d MHz;
 *   power 250000 + 1500d mW; temperature 60 + 5d C; throttle reasons 0x4
 *   on device 0, 0 elsewhere; PCIe TX 1000(d+1) KB/s, RX 2000(d+1) KB/s;
 *   NVLink field 138 (TX) 1000000 + 1000(d+1)k KiB, 139 (RX) 500(d+1)k KiB,
 *   only for scopeId UINT_MAX; link speed (field 90) 25000 MB/s, 12 links
 *   (field 91); PCIe gen 4 x16.  Wrong enum arguments give
 *   NVML_ERROR_INVALID_ARGUMENT, so a sampler passing the wrong constant
 *   loses that metric (and the test sees it).
 * Environment: FAKE_NVML_GPUS (2), FAKE_NVML_INIT_FAIL (nvmlInit_v2
 * returns this code), FAKE_NVML_UNSUPPORTED / FAKE_NVML_UNKNOWN (comma-
 * separated function names that return NOT_SUPPORTED / UNKNOWN),
 * FAKE_NVML_LOG (file to which "init" and "shutdown" are appended).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_UNKNOWN 999

#define MAX_DEV 64

typedef struct fake_dev {
	int index;
} fake_dev;

typedef struct fake_util {
	unsigned int gpu, memory;
} fake_util;

typedef union fake_value {
	double d;
	unsigned int ui;
	unsigned long ul;
	unsigned long long ull;
	signed long long sll;
	int si;
	unsigned short us;
} fake_value;

typedef struct fake_field {
	unsigned int field_id;
	unsigned int scope_id;
	long long timestamp;
	long long latency_us;
	int value_type;
	int ret;
	fake_value value;
} fake_field;

_Static_assert(sizeof(fake_field) == 40, "nvmlFieldValue_t is 40 bytes");

static fake_dev devs[MAX_DEV];
static int ndev = -1;         /* -1: not initialised */
static unsigned long long field_calls[MAX_DEV];

static void log_line(const char *what)
{
	const char *p = getenv("FAKE_NVML_LOG");
	FILE *f;

	if (!p || !*p || !(f = fopen(p, "a")))
		return;
	fprintf(f, "%s\n", what);
	fclose(f);
}

/* Is fn named in the comma-separated list in environment variable var? */
static int listed(const char *var, const char *fn)
{
	const char *l = getenv(var), *p;
	size_t n = strlen(fn);

	if (!l)
		return 0;
	for (p = l; (p = strstr(p, fn)); p += n)
		if ((p == l || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
			return 1;
	return 0;
}

/* Common checks; returns NVML_SUCCESS or the code to return. */
static int enter(const char *fn, void *dev, int *d)
{
	if (ndev < 0)
		return NVML_ERROR_UNINITIALIZED;
	if (listed("FAKE_NVML_UNSUPPORTED", fn))
		return NVML_ERROR_NOT_SUPPORTED;
	if (listed("FAKE_NVML_UNKNOWN", fn))
		return NVML_ERROR_UNKNOWN;
	if (dev) {
		fake_dev *fd = dev;

		if (fd < devs || fd >= devs + ndev)
			return NVML_ERROR_INVALID_ARGUMENT;
		*d = fd->index;
	}
	return NVML_SUCCESS;
}

int nvmlInit_v2(void)
{
	const char *fail = getenv("FAKE_NVML_INIT_FAIL");
	const char *g = getenv("FAKE_NVML_GPUS");
	int i;

	if (fail && atoi(fail))
		return atoi(fail);
	ndev = g ? atoi(g) : 2;
	if (ndev < 0 || ndev > MAX_DEV)
		ndev = 2;
	for (i = 0; i < ndev; i++) {
		devs[i].index = i;
		field_calls[i] = 0;
	}
	log_line("init");
	return NVML_SUCCESS;
}

int nvmlShutdown(void)
{
	if (ndev < 0)
		return NVML_ERROR_UNINITIALIZED;
	ndev = -1;
	log_line("shutdown");
	return NVML_SUCCESS;
}

const char *nvmlErrorString(int r)
{
	switch (r) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case 9: return "Driver Not Loaded";
	default: return "Unknown Error";
	}
}

int nvmlDeviceGetCount_v2(unsigned int *n)
{
	if (ndev < 0)
		return NVML_ERROR_UNINITIALIZED;
	*n = (unsigned int)ndev;
	return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **dev)
{
	if (ndev < 0)
		return NVML_ERROR_UNINITIALIZED;
	if (i >= (unsigned int)ndev)
		return NVML_ERROR_INVALID_ARGUMENT;
	*dev = &devs[i];
	return NVML_SUCCESS;
}

int nvmlDeviceGetUtilizationRates(void *dev, fake_util *u)
{
	int d = 0, r = enter(__func__, dev, &d);

	if (r)
		return r;
	u->gpu = 50 + 25 * (unsigned int)d;
	u->memory = 20 + 10 * (unsigned int)d;
	return NVML_SUCCESS;
}

int nvmlDeviceGetClockInfo(void *dev, int type, unsigned int *mhz)
{
	int d = 0, r = enter(__func__, dev, &d);

	if (r)
		return r;
	if (type != 1)  /* NVML_CLOCK_SM */
		return NVML_ERROR_INVALID_ARGUMENT;
	*mhz = 1410 - 100 * (unsigned int)d;
	return NVML_SUCCESS;
}

int nvmlDeviceGetPowerUsage(void *dev, unsigned int *mw)
{
	int d = 0, r = enter(__func__, dev, &d);

	if (r)
		return r;
	*mw = 250000 + 1500 * (unsigned int)d;
	return NVML_SUCCESS;
}

int nvmlDeviceGetTemperature(void *dev, int sensor, unsigned int *c)
{
	int d = 0, r = enter(__func__, dev, &d);

	if (r)
		return r;
	if (sensor != 0)  /* NVML_TEMPERATURE_GPU */
		return NVML_ERROR_INVALID_ARGUMENT;
	*c = 60 + 5 * (unsigned int)d;
	return NVML_SUCCESS;
}

int nvmlDeviceGetCurrentClocksThrottleReasons(void *dev, unsigned long long *mask)
{
	int d = 0, r = enter(__func__, dev, &d);

	if (r)
		return r;
	*mask = d == 0 ? 0x4 : 0;  /* SW power cap on device 0 */
	return NVML_SUCCESS;
}

int nvmlDeviceGetPcieThroughput(void *dev, int counter, unsigned int *kbs)
{
	int d = 0, r = enter(__func__, dev, &d);

	if (r)
		return r;
	if (counter == 0)       /* NVML_PCIE_UTIL_TX_BYTES */
		*kbs = 1000 * (unsigned int)(d + 1);
	else if (counter == 1)  /* NVML_PCIE_UTIL_RX_BYTES */
		*kbs = 2000 * (unsigned int)(d + 1);
	else
		return NVML_ERROR_INVALID_ARGUMENT;
	return NVML_SUCCESS;
}

int nvmlDeviceGetMaxPcieLinkGeneration(void *dev, unsigned int *gen)
{
	int d = 0, r = enter(__func__, dev, &d);

	if (r)
		return r;
	*gen = 4;
	return NVML_SUCCESS;
}

int nvmlDeviceGetMaxPcieLinkWidth(void *dev, unsigned int *width)
{
	int d = 0, r = enter(__func__, dev, &d);

	if (r)
		return r;
	*width = 16;
	return NVML_SUCCESS;
}

#ifndef FAKE_NVML_NO_FIELDS
int nvmlDeviceGetFieldValues(void *dev, int n, fake_field *f)
{
	int d = 0, r = enter(__func__, dev, &d);
	unsigned long long k;

	if (r)
		return r;
	if (n < 0 || !f)
		return NVML_ERROR_INVALID_ARGUMENT;
	/* Only the throughput reads advance the counters. */
	k = n > 0 && f[0].field_id == 138 ? field_calls[d]++ : field_calls[d];
	for (int i = 0; i < n; i++) {
		f[i].timestamp = 0;
		f[i].latency_us = 0;
		f[i].value_type = 3;  /* NVML_VALUE_TYPE_UNSIGNED_LONG_LONG */
		f[i].ret = NVML_SUCCESS;
		if (f[i].field_id == 90) {         /* NVLINK_SPEED_MBPS_COMMON */
			f[i].value_type = 1;
			f[i].value.ui = 25000;
		} else if (f[i].field_id == 91) {  /* NVLINK_LINK_COUNT */
			f[i].value_type = 1;
			f[i].value.ui = 12;
		} else if (f[i].scope_id != UINT_MAX)
			f[i].ret = NVML_ERROR_INVALID_ARGUMENT;
		else if (f[i].field_id == 138)
			f[i].value.ull = 1000000 + 1000ull * (unsigned long long)(d + 1) * k;
		else if (f[i].field_id == 139)
			f[i].value.ull = 500ull * (unsigned long long)(d + 1) * k;
		else
			f[i].ret = NVML_ERROR_NOT_SUPPORTED;
	}
	return NVML_SUCCESS;
}
#endif
