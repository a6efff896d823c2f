/*
 * test_sampler.c - the node agent's hardware sampler (src/agent/sampler*.c):
 * NVML through a fake libnvidia-ml.so.1 built by the tests (mk/sampler.mk,
 * scripted values: tests/fakenvml/fake_nvml.c), /proc and /sys through
 * fixture trees written here in a temporary root, with exact expected
 * series; NVML absent, failing, lacking a symbol or a query; thinning at
 * the point limit; the compact copy for charts; the sampling threads (and
 * their measured cost per sample, printed); the agent writing
 * hw_<host>.json beside the raw traces of a trigger.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <libgen.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#include "agent/agent.h"
#include "agent/sampler.h"
#include "analysis/summary.h"
#include "control/control.h"
#include "report/display_hw.h"
#include "model/samples.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define T0 1700000000123456789LL /* absolute ns, beyond 2^53 */
#define MS 1000000LL

static char root[256];       /* temporary fixture root */
static char fake[PATH_MAX];  /* build-test/libnvidia-ml.so.1 */
static char fake_nofields[PATH_MAX];

/* The fake libraries are built next to the test binaries' folder. */
static void find_fakes(void)
{
	char exe[PATH_MAX], *dir;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = 0;
	dir = dirname(dirname(exe));  /* build-test/tests/test_sampler -> build-test */
	snprintf(fake, sizeof(fake), "%s/libnvidia-ml.so.1", dir);
	snprintf(fake_nofields, sizeof(fake_nofields), "%s/fakenvml-nofields/libnvidia-ml.so.1", dir);
	assert_int_equal(access(fake, R_OK), 0);
	assert_int_equal(access(fake_nofields, R_OK), 0);
}

static int setup(void **state)
{
	(void)state;
	find_fakes();
	tu_tmpdir(root, sizeof(root), "pt_test_sampler");
	unsetenv("FAKE_NVML_GPUS");
	unsetenv("FAKE_NVML_INIT_FAIL");
	unsetenv("FAKE_NVML_UNSUPPORTED");
	unsetenv("FAKE_NVML_UNKNOWN");
	unsetenv("FAKE_NVML_LOG");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_rm_rf(root);
	return 0;
}

/* Write text to root/rel, creating the folders. */
static void put(const char *rel, const char *text)
{
	char p[1024], cmd[1200];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", p);
	assert_int_equal(system(cmd), 0);
	tu_write_text(p, text);
}

static void opts(pt_sampler_options *o, const char *nvml, int linux_stats)
{
	pt_sampler_options_default(o);
	o->nvml = nvml;
	o->linux_stats = linux_stats;
	o->root = root;
	o->host = "node7";
}

static const pt_series *find(const pt_samples *h, const char *name, int dev, const char *label)
{
	return pt_samples_find(h, name, dev, label);
}

/* Series name/dev/label has exactly n samples, times t[] and values v[]. */
static void expect(const pt_samples *h, const char *name, int dev, const char *label, size_t n,
		   const int64_t *t, const double *v)
{
	const pt_series *s = find(h, name, dev, label);

	if (!s)
		fail_msg("no series %s/%d/%s", name, dev, label ? label : "");
	if (s->n != n)
		fail_msg("series %s/%d: %zu samples, expected %zu", name, dev, s->n, n);
	for (size_t i = 0; i < n; i++) {
		if (s->t_ns[i] != t[i])
			fail_msg("series %s/%d sample %zu: time %lld, expected %lld", name, dev, i,
				 (long long)s->t_ns[i], (long long)t[i]);
		if (fabs(s->v[i] - v[i]) > 1e-9 * fabs(v[i]) + 1e-12)
			fail_msg("series %s/%d sample %zu: %.17g, expected %.17g", name, dev, i, s->v[i],
				 v[i]);
	}
}

static void expect1(const pt_samples *h, const char *name, int dev, int64_t t, double v)
{
	expect(h, name, dev, NULL, 1, &t, &v);
}

/* ---- NVML ------------------------------------------------------------------------ */

static void test_nvml_values(void **state)
{
	pt_sampler_options o;
	pt_sampler *s;
	pt_samples h;
	pt_error e;
	int gpus, nics, ib, cpus;
	char logp[512], *log = NULL;
	size_t len;
	int64_t tf[2] = { T0 + 1 * MS, T0 + 2 * MS };
	double tx0[2] = { 1000 * 1024 / 1e-3, 1000 * 1024 / 1e-3 };
	double tx1[2] = { 2 * tx0[0], 2 * tx0[0] };
	double rx0[2] = { tx0[0] / 2, tx0[0] / 2 };

	(void)state;
	snprintf(logp, sizeof(logp), "%s/nvml.log", root);
	setenv("FAKE_NVML_LOG", logp, 1);
	opts(&o, fake, 0);
	s = pt_sampler_new(&o, &e);
	assert_non_null(s);
	pt_sampler_inventory(s, &gpus, &nics, &ib, &cpus);
	assert_int_equal(gpus, 2);
	assert_int_equal(nics, 0);
	assert_string_equal(pt_sampler_note(s), "");
	assert_int_equal(pt_sampler_sample(s, T0, PT_SAMPLER_ALL), PT_OK);
	assert_int_equal(pt_sampler_sample(s, T0 + 1 * MS, PT_SAMPLER_FAST), PT_OK);
	assert_int_equal(pt_sampler_sample(s, T0 + 2 * MS, PT_SAMPLER_FAST), PT_OK);
	assert_int_equal(pt_sampler_sample(s, T0 + 1 * MS, PT_SAMPLER_FAST), PT_EINVAL);
	assert_int_equal(pt_sampler_snapshot(s, &h), PT_OK);
	assert_string_equal(h.host, "node7");
	assert_string_equal(h.source, "nvml+proc");
	assert_string_equal(h.note, "");
	assert_int_equal(h.interval_ns, 1 * MS);
	/* Slow group: one sample at T0, the scripted values. */
	expect1(&h, "gpu_util", 0, T0, 50);
	expect1(&h, "gpu_util", 1, T0, 75);
	expect1(&h, "mem_util", 0, T0, 20);
	expect1(&h, "mem_util", 1, T0, 30);
	expect1(&h, "sm_clock", 0, T0, 1410);
	expect1(&h, "sm_clock", 1, T0, 1310);
	expect1(&h, "power", 0, T0, 250);
	expect1(&h, "power", 1, T0, 251.5);
	expect1(&h, "temperature", 0, T0, 60);
	expect1(&h, "temperature", 1, T0, 65);
	expect1(&h, "throttle", 0, T0, 4);
	expect1(&h, "throttle", 1, T0, 0);
	expect1(&h, "pcie_tx", 0, T0, 1000 * 1024.0);
	expect1(&h, "pcie_tx", 1, T0, 2000 * 1024.0);
	expect1(&h, "pcie_rx", 0, T0, 2000 * 1024.0);
	expect1(&h, "pcie_rx", 1, T0, 4000 * 1024.0);
	assert_string_equal(find(&h, "gpu_util", 0, NULL)->unit, "%");
	assert_true(find(&h, "gpu_util", 0, NULL)->max == 100);
	assert_string_equal(find(&h, "power", 0, NULL)->unit, "W");
	assert_string_equal(find(&h, "throttle", 0, NULL)->unit, "");
	/* Capacities: PCIe gen 4 x16 (128b/130b), 12 NVLinks of 25,000 MB/s. */
	assert_true(find(&h, "pcie_tx", 1, NULL)->max == 16e9 * 128 / 130 / 8 * 16);
	assert_true(find(&h, "nvlink_rx", 0, NULL)->max == 12 * 25000e6);
	/* Fast group: NVLink counters (KiB) -> B/s; the first read is the base. */
	expect(&h, "nvlink_tx", 0, NULL, 2, tf, tx0);
	expect(&h, "nvlink_tx", 1, NULL, 2, tf, tx1);
	expect(&h, "nvlink_rx", 0, NULL, 2, tf, rx0);
	assert_string_equal(find(&h, "nvlink_rx", 1, NULL)->unit, "B/s");
	assert_null(find(&h, "cpu_util", -1, NULL));
	assert_int_equal(h.n, 20);
	pt_samples_free(&h);
	pt_sampler_free(s);
	/* nvmlShutdown was called exactly once, after nvmlInit_v2. */
	assert_int_equal(pt_control_read_file(logp, 4096, &log, &len, NULL), PT_OK);
	assert_string_equal(log, "init\nshutdown\n");
	x_free(log);
}

static void test_nvml_absent(void **state)
{
	pt_sampler_options o;
	pt_sampler *s;
	pt_samples h;
	int gpus;

	(void)state;
	opts(&o, "/nonexistent/libnvidia-ml.so.1", 0);
	s = pt_sampler_new(&o, NULL);
	assert_non_null(s);
	pt_sampler_inventory(s, &gpus, NULL, NULL, NULL);
	assert_int_equal(gpus, -1);
	assert_int_equal(pt_sampler_sample(s, T0, PT_SAMPLER_ALL), PT_OK);
	assert_int_equal(pt_sampler_snapshot(s, &h), PT_OK);
	assert_int_equal(h.n, 0);
	assert_string_equal(h.source, "proc");
	assert_non_null(strstr(h.note, "nvml: cannot load '/nonexistent/libnvidia-ml.so.1': "));
	pt_samples_free(&h);
	pt_sampler_free(s);

	/* "" turns NVML off. */
	opts(&o, "", 0);
	s = pt_sampler_new(&o, NULL);
	assert_non_null(s);
	assert_string_equal(pt_sampler_note(s), "nvml: disabled");
	pt_sampler_free(s);

	/* The default name comes from $PERFTRACKER_NVML. */
	setenv(PT_SAMPLER_NVML_ENV, fake, 1);
	opts(&o, NULL, 0);
	s = pt_sampler_new(&o, NULL);
	unsetenv(PT_SAMPLER_NVML_ENV);
	assert_non_null(s);
	pt_sampler_inventory(s, &gpus, NULL, NULL, NULL);
	assert_int_equal(gpus, 2);
	pt_sampler_free(s);
}

static void test_nvml_init_fails(void **state)
{
	pt_sampler_options o;
	pt_sampler *s;
	int gpus;

	(void)state;
	setenv("FAKE_NVML_INIT_FAIL", "9", 1);
	opts(&o, fake, 0);
	s = pt_sampler_new(&o, NULL);
	assert_non_null(s);
	pt_sampler_inventory(s, &gpus, NULL, NULL, NULL);
	assert_int_equal(gpus, -1);
	assert_string_equal(pt_sampler_note(s), "nvml: nvmlInit_v2 failed: Driver Not Loaded "
						"(code 9): gpu metrics not sampled");
	pt_sampler_free(s);
	unsetenv("FAKE_NVML_INIT_FAIL");

	setenv("FAKE_NVML_GPUS", "0", 1);
	s = pt_sampler_new(&o, NULL);
	assert_non_null(s);
	assert_string_equal(pt_sampler_note(s), "nvml: no gpu");
	pt_sampler_free(s);
}

static void test_nvml_missing_symbol(void **state)
{
	pt_sampler_options o;
	pt_sampler *s;
	pt_samples h;

	(void)state;
	opts(&o, fake_nofields, 0);
	s = pt_sampler_new(&o, NULL);
	assert_non_null(s);
	assert_int_equal(pt_sampler_sample(s, T0, PT_SAMPLER_ALL), PT_OK);
	assert_int_equal(pt_sampler_sample(s, T0 + MS, PT_SAMPLER_ALL), PT_OK);
	assert_int_equal(pt_sampler_snapshot(s, &h), PT_OK);
	assert_non_null(strstr(h.note, "lacks nvmlDeviceGetFieldValues: not sampled"));
	assert_null(find(&h, "nvlink_tx", 0, NULL));
	assert_null(find(&h, "nvlink_rx", 1, NULL));
	assert_int_equal(find(&h, "gpu_util", 1, NULL)->n, 2);
	pt_samples_free(&h);
	pt_sampler_free(s);
}

static void test_nvml_failing_calls(void **state)
{
	pt_sampler_options o;
	pt_sampler *s;
	pt_samples h;
	int i;

	(void)state;
	/* Not supported: given up at once, with a note per GPU. */
	setenv("FAKE_NVML_UNSUPPORTED", "nvmlDeviceGetPowerUsage,nvmlDeviceGetFieldValues", 1);
	/* Unknown error: tolerated 9 times in a row, given up at the 10th. */
	setenv("FAKE_NVML_UNKNOWN", "nvmlDeviceGetTemperature", 1);
	opts(&o, fake, 0);
	s = pt_sampler_new(&o, NULL);
	assert_non_null(s);
	for (i = 0; i < 9; i++)
		assert_int_equal(pt_sampler_sample(s, T0 + i * MS, PT_SAMPLER_ALL), PT_OK);
	assert_null(strstr(pt_sampler_note(s), "Temperature"));
	assert_int_equal(pt_sampler_sample(s, T0 + 9 * MS, PT_SAMPLER_ALL), PT_OK);
	assert_int_equal(pt_sampler_snapshot(s, &h), PT_OK);
	assert_string_equal(h.note,
			    "nvml: gpu 0: nvmlDeviceGetFieldValues: Not Supported (code 3); "
			    "nvml: gpu 1: nvmlDeviceGetFieldValues: Not Supported (code 3); "
			    "nvml: gpu 0: nvmlDeviceGetPowerUsage: Not Supported (code 3); "
			    "nvml: gpu 1: nvmlDeviceGetPowerUsage: Not Supported (code 3); "
			    "nvml: gpu 0: nvmlDeviceGetTemperature: Unknown Error (code 999), "
			    "given up after repeated failures; "
			    "nvml: gpu 1: nvmlDeviceGetTemperature: Unknown Error (code 999), "
			    "given up after repeated failures");
	assert_null(find(&h, "power", 0, NULL));
	assert_null(find(&h, "temperature", 1, NULL));
	assert_null(find(&h, "nvlink_tx", 0, NULL));
	assert_int_equal(find(&h, "sm_clock", 1, NULL)->n, 10);
	pt_samples_free(&h);
	pt_sampler_free(s);
}

/* ---- /proc and /sys --------------------------------------------------------------- */

/* Snapshot k of a small machine: 2 cores, one NIC (plus lo and an interface
 * without counters), one InfiniBand port, PSI for cpu and memory only. */
static void machine(int k)
{
	/* cpu0: +10 busy of +20 (50%); cpu1: +20 system, +5 irq, +5 softirq,
	 * +20 iowait (busy 30 of 50: 60%); guest columns change and are not
	 * counted (they are inside user already). */
	static const char *const stat[3] = {
		"cpu  100 0 100 800 0 0 0 0 7 0\n"
		"cpu0 50 0 50 400 0 0 0 0 3 0\n"
		"cpu1 50 0 50 400 0 0 0 0 4 0\n"
		"intr 12345 0 0 0\nctxt 999\nbtime 1700000000\n",
		"cpu  110 0 120 810 20 5 5 0 99 0\n"
		"cpu0 60 0 50 410 0 0 0 0 50 0\n"
		"cpu1 50 0 70 400 20 5 5 0 49 0\n"
		"intr 12399 0 0 0\nctxt 1999\nbtime 1700000000\n",
		/* No tick since: no sample, the base is kept. */
		"cpu  110 0 120 810 20 5 5 0 99 0\n"
		"cpu0 60 0 50 410 0 0 0 0 50 0\n"
		"cpu1 50 0 70 400 20 5 5 0 49 0\n",
	};
	static const char *const avail[3] = { "1000", "2000", "3000" };
	static const char *const psi[3] = { "1.50", "2.25", "0.00" };
	/* eth0 tx: +12345678 B in 100 ms; then a reset (smaller): no rate. */
	static const char *const tx[3] = { "1000", "12346678", "10" };
	static const char *const rx[3] = { "0", "500", "1000" };
	static const char *const ibx[3] = { "100", "25100", "50100" };
	static const char *const ibr[3] = { "0", "2500", "2500" };
	char buf[512];

	put("proc/stat", stat[k]);
	snprintf(buf, sizeof(buf),
		 "MemTotal:       16000000 kB\nMemFree:         100 kB\nMemAvailable:   %s kB\n"
		 "Buffers:           0 kB\n", avail[k]);
	put("proc/meminfo", buf);
	snprintf(buf, sizeof(buf), "some avg10=%s avg60=0.10 avg300=0.05 total=123\n"
		 "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", psi[k]);
	put("proc/pressure/cpu", buf);
	put("proc/pressure/memory", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
				    "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
	put("sys/class/net/lo/statistics/tx_bytes", "777\n");
	put("sys/class/net/lo/statistics/rx_bytes", "777\n");
	put("sys/class/net/bond0/flags", "0x1003\n");
	snprintf(buf, sizeof(buf), "%s\n", tx[k]);
	put("sys/class/net/eth0/statistics/tx_bytes", buf);
	snprintf(buf, sizeof(buf), "%s\n", rx[k]);
	put("sys/class/net/eth0/statistics/rx_bytes", buf);
	snprintf(buf, sizeof(buf), "%s\n", ibx[k]);
	put("sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data", buf);
	snprintf(buf, sizeof(buf), "%s\n", ibr[k]);
	put("sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data", buf);
}

static void test_linux_fixture(void **state)
{
	pt_sampler_options o;
	pt_sampler *s;
	pt_samples h;
	int gpus, nics, ib, cpus;
	int64_t t1 = T0 + 100 * MS, t2 = T0 + 200 * MS, t3 = T0 + 300 * MS;
	int64_t tm[3] = { T0, t1, t2 };
	double mem[3] = { 1024000, 2048000, 3072000 };
	double pc[3] = { 1.5, 2.25, 0 };
	double zero[3] = { 0, 0, 0 };

	(void)state;
	machine(0);
	opts(&o, "/nonexistent/libnvidia-ml.so.1", 1);
	s = pt_sampler_new(&o, NULL);
	assert_non_null(s);
	pt_sampler_inventory(s, &gpus, &nics, &ib, &cpus);
	assert_int_equal(gpus, -1);
	assert_int_equal(nics, 1);   /* eth0: not lo, not bond0 (no counters) */
	assert_int_equal(ib, 1);
	assert_int_equal(cpus, 3);   /* "cpu", cpu0, cpu1 */
	assert_int_equal(pt_sampler_sample(s, T0, PT_SAMPLER_ALL), PT_OK);
	machine(1);
	assert_int_equal(pt_sampler_sample(s, t1, PT_SAMPLER_ALL), PT_OK);
	machine(2);
	assert_int_equal(pt_sampler_sample(s, t2, PT_SAMPLER_ALL), PT_OK);
	put("sys/class/net/eth0/statistics/tx_bytes", "1000010\n");
	assert_int_equal(pt_sampler_sample(s, t3, PT_SAMPLER_FAST), PT_OK);
	assert_int_equal(pt_sampler_snapshot(s, &h), PT_OK);
	/* no NVML: skipped, and said so */
	assert_string_equal(h.source, "proc");
	assert_string_equal(h.note, "nvml: cannot load '/nonexistent/libnvidia-ml.so.1': "
				    "/nonexistent/libnvidia-ml.so.1: cannot open shared object file: "
				    "No such file or directory");
	expect1(&h, "cpu_util", 0, t1, 50);
	expect1(&h, "cpu_util", 1, t1, 60);
	expect1(&h, "cpu_util", -1, t1, 100.0 * 40 / 70);
	assert_string_equal(find(&h, "cpu_util", -1, NULL)->unit, "%");
	expect(&h, "mem_available", -1, NULL, 3, tm, mem);
	expect(&h, "psi_cpu", -1, NULL, 3, tm, pc);
	expect(&h, "psi_memory", -1, NULL, 3, tm, zero);
	assert_null(find(&h, "psi_io", -1, NULL));
	{
		int64_t tt[2] = { t1, t3 };
		double vt[2] = { 12345678 / 0.1, 1000000 / 0.1 };
		double vr[3] = { 500 / 0.1, 500 / 0.1, 0 };
		int64_t tr[3] = { t1, t2, t3 };

		expect(&h, "nic_tx", -1, "eth0", 2, tt, vt);
		expect(&h, "nic_rx", -1, "eth0", 3, tr, vr);
	}
	assert_null(find(&h, "nic_tx", -1, "lo"));
	{
		int64_t ti[3] = { t1, t2, t3 };
		double vx[3] = { 25000 * 4 / 0.1, 25000 * 4 / 0.1, 0 };
		double vr[3] = { 2500 * 4 / 0.1, 0, 0 };

		expect(&h, "ib_tx", -1, "mlx5_0:1", 3, ti, vx);
		expect(&h, "ib_rx", -1, "mlx5_0:1", 3, ti, vr);
		assert_string_equal(find(&h, "ib_rx", -1, "mlx5_0:1")->unit, "B/s");
	}
	pt_samples_free(&h);
	pt_sampler_free(s);
}

static void test_linux_missing(void **state)
{
	pt_sampler_options o;
	pt_sampler *s;
	pt_samples h;
	int nics, ib, cpus;

	(void)state;
	/* An empty root: everything skipped, each with its reason. */
	opts(&o, "", 1);
	s = pt_sampler_new(&o, NULL);
	assert_non_null(s);
	pt_sampler_inventory(s, NULL, &nics, &ib, &cpus);
	assert_int_equal(nics + ib + cpus, 0);
	assert_int_equal(pt_sampler_sample(s, T0, PT_SAMPLER_ALL), PT_OK);
	assert_int_equal(pt_sampler_snapshot(s, &h), PT_OK);
	assert_int_equal(h.n, 0);
	assert_non_null(strstr(h.note, "nvml: disabled; cpu: cannot read '"));
	assert_non_null(strstr(h.note, "/proc/stat': No such file or directory; memory: no "
				       "MemAvailable in '"));
	assert_non_null(strstr(h.note, "; pressure: cannot read '"));
	assert_non_null(strstr(h.note, "; net: cannot list '"));
	assert_non_null(strstr(h.note, "; infiniband: no device in '"));
	pt_samples_free(&h);
	pt_sampler_free(s);

	/* A last line without its newline, and a short one, are parsed. */
	put("proc/stat", "cpu  1 0 1 8 0 0 0 0\ncpu0 1 0 1");
	s = pt_sampler_new(&o, NULL);
	assert_non_null(s);
	pt_sampler_inventory(s, NULL, NULL, NULL, &cpus);
	assert_int_equal(cpus, 1);
	pt_sampler_free(s);
	put("proc/stat", "cpu  1 0 1 8");
	s = pt_sampler_new(&o, NULL);
	pt_sampler_inventory(s, NULL, NULL, NULL, &cpus);
	assert_int_equal(cpus, 1);
	pt_sampler_free(s);

	/* Bad options. */
	{
		pt_error e;

		o.interval_ns = 0;
		assert_null(pt_sampler_new(&o, &e));
		assert_int_equal(e.code, PT_EINVAL);
	}
}

/* ---- limits, compact copy --------------------------------------------------------- */

static void test_thinning(void **state)
{
	pt_sampler_options o;
	pt_sampler *s;
	pt_samples h;
	int64_t t[3] = { T0 + 2 * MS, T0 + 4 * MS, T0 + 5 * MS };
	double v[3];

	(void)state;
	opts(&o, fake, 0);
	o.max_points = 4;
	s = pt_sampler_new(&o, NULL);
	assert_non_null(s);
	for (int i = 0; i <= 5; i++)
		assert_int_equal(pt_sampler_sample(s, T0 + i * MS, PT_SAMPLER_FAST), PT_OK);
	assert_int_equal(pt_sampler_snapshot(s, &h), PT_OK);
	/* Rates at 1..4 ms, merged in pairs when the fifth came; the interval doubled. */
	v[0] = v[1] = v[2] = 1000 * 1024 / 1e-3;
	expect(&h, "nvlink_tx", 0, NULL, 3, t, v);
	assert_int_equal(h.interval_ns, 2 * MS);
	pt_samples_free(&h);
	pt_sampler_free(s);
}

static void test_compact(void **state)
{
	pt_samples h, c;
	pt_series *a, *thr, *core, *all;
	const pt_series *x;

	(void)state;
	assert_int_equal(pt_samples_init(&h), PT_OK);
	a = pt_samples_series(&h, "nvlink_tx", 0, NULL, "B/s", 0);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(pt_samples_add(a, T0 + i * MS, i), PT_OK);
	thr = pt_samples_series(&h, "throttle", 0, NULL, "mask", 0);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(pt_samples_add(thr, T0 + i * MS, i == 10 ? 4 : i == 20 ? 1 : 0),
				 PT_OK);
	core = pt_samples_series(&h, "cpu_util", 3, NULL, "%", 100);
	assert_int_equal(pt_samples_add(core, T0, 5), PT_OK);
	all = pt_samples_series(&h, "cpu_util", -1, NULL, "%", 100);
	assert_int_equal(pt_samples_add(all, T0, 7), PT_OK);
	assert_int_equal(pt_samples_add(all, T0 + 2000 * MS, 9), PT_OK);

	/* Everything, 10 points: buckets of 100 samples. */
	assert_int_equal(pt_sampler_compact(&h, 0, 0, 10, 0, &c), PT_OK);
	x = pt_samples_find(&c, "nvlink_tx", 0, NULL);
	assert_non_null(x);
	assert_int_equal(x->n, 10);
	for (int k = 0; k < 10; k++) {
		assert_true(x->v[k] == 49.5 + 100 * k);
		assert_int_equal(x->t_ns[k], T0 + 49500000 + 100000000LL * k);
	}
	x = pt_samples_find(&c, "throttle", 0, NULL);
	assert_true(x->v[0] == 5);  /* 4 | 1: the bits of the bucket */
	assert_true(x->v[1] == 0);
	assert_null(pt_samples_find(&c, "cpu_util", 3, NULL));  /* cores left out */
	assert_int_equal(pt_samples_find(&c, "cpu_util", -1, NULL)->n, 2);
	pt_samples_free(&c);

	/* A window: [100 ms, 300 ms) holds 200 samples, under the limit. */
	assert_int_equal(pt_sampler_compact(&h, T0 + 100 * MS, T0 + 300 * MS, 500, 1, &c), PT_OK);
	x = pt_samples_find(&c, "nvlink_tx", 0, NULL);
	assert_int_equal(x->n, 200);
	assert_int_equal(x->t_ns[0], T0 + 100 * MS);
	assert_true(x->v[199] == 299);
	assert_null(pt_samples_find(&c, "cpu_util", -1, NULL)); /* no sample inside */
	pt_samples_free(&c);
	assert_int_equal(pt_sampler_compact(&h, 0, 0, 500, 1, &c), PT_OK);
	assert_non_null(pt_samples_find(&c, "cpu_util", 3, NULL));  /* keep_cores */
	pt_samples_free(&c);

	/* A worker's timelines: its GPU (1) and host-wide series, window
	 * [400, 500) ms plus a margin of 250 ms on each side. */
	assert_int_equal(pt_samples_add(pt_samples_series(&h, "nvlink_tx", 1, NULL, "B/s", 0),
					T0 + 500 * MS, 3), PT_OK);
	assert_int_equal(pt_sampler_worker_series(&h, T0 + 400 * MS, T0 + 500 * MS, 1, 1000, &c),
			 PT_OK);
	assert_int_equal(c.n, 1);
	assert_int_equal(pt_samples_find(&c, "nvlink_tx", 1, NULL)->n, 1);
	pt_samples_free(&c);
	assert_int_equal(pt_sampler_worker_series(&h, T0 + 400 * MS, T0 + 500 * MS, -1, 1000, &c),
			 PT_OK);
	assert_int_equal(c.n, 3);
	x = pt_samples_find(&c, "nvlink_tx", 0, NULL);
	assert_int_equal(x->n, 600);
	assert_int_equal(x->t_ns[0], T0 + 150 * MS);
	assert_int_equal(pt_samples_find(&c, "throttle", 0, NULL)->n, 600);
	pt_samples_free(&c);
	pt_samples_free(&h);
}

/* ---- threads ------------------------------------------------------------------------ */

/* Enough samples for a test's checks?  (A snapshot taken while running.) */
typedef int (*enough_fn)(const pt_samples *h);

/* Start the threads and poll snapshots (taken while they run) every 10 ms
 * until enough() holds, then stop them and take the final snapshot into h.
 * Nothing depends on how fast samples arrive; the 60 s only stop a sampler
 * that never delivers (the caller's checks then fail). */
static void run_until(pt_sampler *s, enough_fn enough, pt_samples *h)
{
	pt_samples mid;
	int done = 0;

	assert_int_equal(pt_sampler_start(s, NULL), PT_OK);
	assert_int_equal(pt_sampler_start(s, NULL), PT_EINVAL);
	for (int i = 0; i < 6000 && !done; i++) {
		tu_sleep_ms(10);
		assert_int_equal(pt_sampler_snapshot(s, &mid), PT_OK);
		done = enough(&mid);
		pt_samples_free(&mid);
	}
	pt_sampler_stop(s);
	assert_false(pt_sampler_running(s));
	assert_int_equal(pt_sampler_snapshot(s, h), PT_OK);
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Three rates of GPU 1's NVLink (four reads) and two of GPU 0's utilisation. */
static int fake_enough(const pt_samples *h)
{
	const pt_series *x = find(h, "nvlink_tx", 1, NULL), *y = find(h, "gpu_util", 0, NULL);

	return x && x->n >= 3 && y && y->n >= 2;
}

static int machine_enough(const pt_samples *h)
{
	return find(h, "cpu_util", -1, NULL) && find(h, "mem_available", -1, NULL);
}

/* The fast and the slow group, each on its own thread at its own interval,
 * against the fake NVML (2 GPUs) and the fixture's /proc and /sys; then
 * this machine's own /proc and /sys. */
static void test_threads(void **state)
{
	pt_sampler_options o;
	pt_sampler *s;
	pt_samples h;
	int64_t ta, tb, ma, mb;
	double fast, slow;
	const pt_series *x;

	(void)state;
	machine(0);
	opts(&o, fake, 1);
	o.slow_interval_ns = 20 * MS;
	s = pt_sampler_new(&o, NULL);
	assert_non_null(s);
	ta = tu_realtime_ns();
	ma = mono_ns();
	run_until(s, fake_enough, &h);
	mb = mono_ns();
	tb = tu_realtime_ns();
	x = find(&h, "nvlink_tx", 1, NULL);
	assert_non_null(x);
	assert_true(x->n >= 3);
	/* Ticks are absolute, one interval apart, a missed one skipped: never
	 * more samples than ticks in the time measured around the run.  A
	 * count that follows from what the run took, not a bound on it. */
	assert_true((int64_t)x->n <= (mb - ma) / (1 * MS) + 1);
	for (size_t i = 0; i < x->n; i++) {
		assert_true(x->t_ns[i] >= ta && x->t_ns[i] <= tb);
		if (i)
			assert_true(x->t_ns[i] > x->t_ns[i - 1]);
		/* The fake adds 2000 KiB per read on GPU 1: rate = 2000 KiB / dt. */
		if (i)
			assert_true(fabs(x->v[i] - 2000 * 1024 * 1e9 /
					 (double)(x->t_ns[i] - x->t_ns[i - 1])) < 1e-6 * x->v[i]);
	}
	/* The slow group: its own interval (20 ms), the fake's 50%. */
	x = find(&h, "gpu_util", 0, NULL);
	assert_non_null(x);
	assert_true(x->n >= 2);
	assert_true((int64_t)x->n <= (mb - ma) / (20 * MS) + 1);
	for (size_t i = 0; i < x->n; i++) {
		assert_true(x->t_ns[i] >= ta && x->t_ns[i] <= tb);
		assert_true(x->v[i] == 50);
	}
	pt_sampler_cost(s, &fast, &slow);
	print_message("sampling cost (fake NVML 2 GPUs + fixture /proc,/sys, ASan build): "
		      "fast %.1f us/sample, slow %.1f us/sample\n", fast / 1e3, slow / 1e3);
	pt_samples_free(&h);
	pt_sampler_free(s);

	/* This machine's own /proc and /sys (no NVML). */
	opts(&o, "", 1);
	o.root = "/";
	s = pt_sampler_new(&o, NULL);
	assert_non_null(s);
	run_until(s, machine_enough, &h);
	assert_non_null(find(&h, "cpu_util", -1, NULL));
	assert_non_null(find(&h, "mem_available", -1, NULL));
	pt_sampler_cost(s, &fast, &slow);
	print_message("sampling cost (this machine's /proc and /sys, ASan build): fast %.1f "
		      "us/sample, slow %.1f us/sample\n", fast / 1e3, slow / 1e3);
	pt_samples_free(&h);
	pt_sampler_free(s);
}

static int raised(const pt_samples *h)
{
	return strstr(h->note, "sampler: fast interval raised to ") != NULL;
}

/* A 1 us interval cannot be kept: the group doubles its interval until a
 * sample costs at most 20% of it, and says so. */
static void test_cpu_budget(void **state)
{
	pt_sampler_options o;
	pt_sampler *s;
	pt_samples h;

	(void)state;
	opts(&o, fake, 0);
	o.interval_ns = 1000;
	s = pt_sampler_new(&o, NULL);
	assert_non_null(s);
	run_until(s, raised, &h);
	assert_non_null(strstr(h.note, "sampler: fast interval raised to "));
	assert_non_null(strstr(h.note, "over 20% of one core)"));
	assert_true(h.interval_ns >= 2000);
	pt_samples_free(&h);
	pt_sampler_free(s);
}

/* ---- display.hw ------------------------------------------------------------------------ */

static void test_display_hw(void **state)
{
	pt_display_hw_worker w[20];
	pt_samples hs[20];
	char ids[20][32], hosts[3][16];
	pt_report *r = pt_report_new();
	const pt_rv *hw, *ws, *x, *ser, *a;
	int i, n = 0;

	(void)state;
	assert_non_null(r);
	for (i = 0; i < 3; i++)
		snprintf(hosts[i], sizeof(hosts[i]), "h%d", i);
	for (i = 0; i < 20; i++) {
		pt_series *se;
		int64_t st = (int64_t)(1.7e15 + i) * 1000;

		memset(&w[i], 0, sizeof(w[i]));
		snprintf(ids[i], sizeof(ids[i]), "h%d_%d_100", i % 3, i);
		w[i].id = ids[i];
		w[i].host = hosts[i % 3];
		w[i].rank = i;
		w[i].window_start_us = 1.7e15 + i;
		w[i].window_ms = 100;
		assert_int_equal(pt_samples_init(&hs[i]), PT_OK);
		se = pt_samples_series(&hs[i], "gpu_util", i % 8, NULL, "%", 100);
		assert_int_equal(pt_samples_add(se, st - 250 * MS, 12.34567), PT_OK);
		assert_int_equal(pt_samples_add(se, st, 50), PT_OK);
		assert_int_equal(pt_samples_add(se, st + 50000400, NAN), PT_OK);
		w[i].hw = i == 5 ? NULL : &hs[i];
	}
	w[18].named = 1;
	w[19].named = 2;
	pt_display_hw_write(r, pt_report_root(r), w, 20);
	assert_false(pt_report_oom(r));
	hw = pt_rv_get(pt_report_root_c(r), "hw");
	assert_non_null(hw);
	assert_int_equal(pt_rv_get(hw, "version")->i, 1);
	assert_int_equal(pt_rv_get(hw, "workers_with_samples")->i, 19);
	ws = pt_rv_get(hw, "workers");
	/* Named ones, one per host not shown yet (h2: rank 2), then by rank. */
	assert_int_equal(ws->n, PT_DISPLAY_HW_MAX_WORKERS);
	assert_non_null(pt_rv_get(ws, "h0_18_100"));
	assert_non_null(pt_rv_get(ws, "h1_19_100"));
	assert_non_null(pt_rv_get(ws, "h2_2_100"));
	assert_non_null(pt_rv_get(ws, "h2_14_100"));
	assert_null(pt_rv_get(ws, "h0_15_100"));
	assert_null(pt_rv_get(ws, "h2_5_100"));
	/* In rank order. */
	assert_string_equal(ws->child->key, "h0_0_100");
	assert_string_equal(ws->last->key, "h1_19_100");
	x = pt_rv_get(ws, "h1_4_100");
	assert_string_equal(pt_rv_get(x, "host")->str, "h1");
	assert_int_equal(pt_rv_get(x, "rank")->i, 4);
	assert_true(pt_rv_get(x, "t0_us")->num == 1.7e15 + 4);
	assert_true(pt_rv_get(x, "window_ms")->num == 100);
	ser = pt_rv_get(x, "series")->child;
	assert_string_equal(pt_rv_get(ser, "name")->str, "gpu_util");
	assert_int_equal(pt_rv_get(ser, "device")->i, 4);
	assert_true(pt_rv_get(ser, "max")->num == 100);
	a = pt_rv_get(ser, "t_ms");
	assert_int_equal(a->n, 3);
	assert_true(a->child->num == -250);
	assert_true(a->child->next->num == 0);
	assert_true(a->last->num == 50);  /* 50.0004 ms: to the us */
	a = pt_rv_get(ser, "v");
	assert_true(a->child->num == 12.35);  /* four significant digits */
	assert_true(a->child->next->num == 50);
	assert_int_equal(a->last->type, PT_RV_NULL);
	for (x = ws->child; x; x = x->next)
		n++;
	assert_int_equal(n, 16);
	pt_report_free(r);

	/* Nobody has timelines: no "hw" at all. */
	r = pt_report_new();
	for (i = 0; i < 20; i++)
		w[i].hw = NULL;
	pt_display_hw_write(r, pt_report_root(r), w, 20);
	assert_null(pt_rv_get(pt_report_root_c(r), "hw"));
	pt_report_free(r);
	for (i = 0; i < 20; i++)
		pt_samples_free(&hs[i]);
}

/* ---- the agent ------------------------------------------------------------------------ */

static void log_collect(void *ctx, const char *msg)
{
	pt_sb *sb = ctx;

	pt_sb_adds(sb, msg);
	pt_sb_addc(sb, '\n');
}

/* A trigger on host node7 with one expected worker: the agent samples from
 * the first poll until that worker's trace is summarised, joins the
 * samples to the trace's NCCL kernel, writes hw_node7.json in raw_trace/
 * (policy all) and leaves nothing in the spool. */
static void test_agent(void **state)
{
	pt_agent a;
	pt_trigger t;
	pt_error e;
	pt_sb log = { 0 };
	char p[PT_CONTROL_PATH_MAX + 64], trace[8192], *buf = NULL;
	pt_samples h;
	pt_summary *s;
	const pt_series *x;
	int64_t k0, k1, k2;
	int joined = 0;

	(void)state;
	machine(0);
	pt_agent_init(&a, root, NULL, "node7");
	snprintf(a.spool, sizeof(a.spool), "%s/spool", root);
	a.hw_opt.nvml = fake;
	a.hw_opt.root = root;
	a.hw_opt.slow_interval_ns = 10 * MS;
	a.log = log_collect;
	a.log_ctx = &log;
	memset(&t, 0, sizeof(t));
	snprintf(t.id, sizeof(t.id), "T9");
	snprintf(t.state, sizeof(t.state), "%s", PT_TRIGGER_ACTIVE);
	t.steps = 1;
	t.save_raw = PT_RAW_ALL;
	snprintf(t.raw_dir, sizeof(t.raw_dir), "%s/out/raw_trace", root);
	t.deadline = pt_control_now() + 600;
	assert_int_equal(pt_control_trigger_add_worker(&t, "node7_0_123"), PT_OK);
	assert_int_equal(pt_control_trigger_add_worker(&t, "other_1_124"), PT_OK);
	pt_error_clear(&e);
	assert_int_equal(pt_control_trigger_write(root, &t, &e), PT_OK);
	/* First poll: sampling starts (no trace yet).  The NCCL kernel runs
	 * from then until the trace is written: every sample taken falls in
	 * it, however many the threads took meanwhile. */
	k0 = tu_realtime_ns() / 1000;  /* in us */
	assert_int_equal(pt_agent_poll(&a, &e), 0);
	assert_non_null(strstr(log.buf, "T9: hardware sampling every 1 ms (10 ms for utilisation, "
					"clocks, cpu): 2 gpus, 1 nic, 1 infiniband port, 3 cpu lines"));
	tu_sleep_ms(150);
	k1 = tu_realtime_ns() / 1000;
	snprintf(p, sizeof(p), "%s/spool/T9", root);
	assert_int_equal(pt_control_mkdirs(p, NULL), PT_OK);
	snprintf(trace, sizeof(trace),
		 "{\"schemaVersion\":1,\"traceEvents\":["
		 "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#5\",\"pid\":100,"
		 "\"tid\":100,\"ts\":%lld,\"dur\":%lld},"
		 "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_f32_RING_LL"
		 "(ncclDevComm*, unsigned long, ncclWork*)\",\"pid\":0,\"tid\":7,\"ts\":%lld,"
		 "\"dur\":%lld,\"args\":{\"device\":0,\"stream\":7,\"grid\":[2,1,1],"
		 "\"block\":[512,1,1]}}]}",
		 (long long)(k0 - 10000), (long long)(k1 - k0 + 20000), (long long)k0,
		 (long long)(k1 - k0));
	snprintf(p, sizeof(p), "%s/spool/T9/node7_0_123.json", root);
	put(p + strlen(root) + 1, trace);
	/* Second poll: the trace is summarised with the samples; its worker was
	 * the only one expected here, so sampling ends. */
	assert_int_equal(pt_agent_poll(&a, &e), 1);
	k2 = tu_realtime_ns();
	assert_non_null(strstr(log.buf, "T9: hardware sampling done: "));
	snprintf(p, sizeof(p), "%s/out/raw_trace/hw_node7.json", root);
	assert_int_equal(pt_samples_read_file(p, &h, &e), PT_OK);
	assert_string_equal(h.host, "node7");
	assert_string_equal(h.source, "nvml+proc");
	/* GPU 0's NVLink rates, all from the sampling time (first poll to
	 * second). */
	x = find(&h, "nvlink_tx", 0, NULL);
	assert_non_null(x);
	assert_true(x->n >= 1);
	for (size_t i = 0; i < x->n; i++)
		assert_true(x->t_ns[i] >= k0 * 1000 && x->t_ns[i] <= k2);
	/* The fixture's counters stand still: no CPU tick, rates of 0. */
	assert_null(find(&h, "cpu_util", -1, NULL));
	assert_true(find(&h, "mem_available", -1, NULL)->v[0] == 1024000);
	assert_true(find(&h, "nic_tx", -1, "eth0")->v[0] == 0);
	pt_samples_free(&h);
	snprintf(p, sizeof(p), "%s/spool/T9/hw_node7.json", root);
	assert_int_equal(access(p, F_OK), -1);  /* the spool holds raw traces only */
	/* The summary carries the join (its JSON: docs/hardware.md, "The join"). */
	snprintf(p, sizeof(p), "%s/summaries/T9/node7_0_123.json", root);
	s = pt_summary_read_file(p, &e);
	assert_non_null(s);
	assert_null(s->error);
	pt_summary_free(s);
	assert_int_equal(pt_control_read_file(p, 1 << 20, &buf, NULL, NULL), PT_OK);
	assert_non_null(strstr(buf, "\"hw_source\":\"nvml+proc\""));
	assert_non_null(strstr(buf, "\"hw\":[{\"group\":\"nvlink ring send\""));
	joined = strstr(buf, "\"group\":\"nvlink ring send\"") != NULL &&
		 !strstr(buf, "\"group\":\"nvlink ring send\",\"avg_tput_pct\":0.0,");
	assert_true(joined);
	/* Later polls of the same trigger do not sample again. */
	assert_int_equal(pt_agent_poll(&a, &e), 0);
	assert_null(strstr(strstr(log.buf, "sampling done") , "sampling every"));
	/* The trigger ends: the spool is cleaned. */
	snprintf(t.state, sizeof(t.state), "%s", PT_TRIGGER_DONE);
	assert_int_equal(pt_control_trigger_write(root, &t, &e), PT_OK);
	assert_int_equal(pt_agent_poll(&a, &e), 0);
	snprintf(p, sizeof(p), "%s/spool/T9", root);
	assert_int_equal(access(p, F_OK), -1);
	pt_agent_free(&a);
	pt_control_trigger_clear(&t);
	pt_sb_free(&log);
	x_free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nvml_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvml_absent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvml_init_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvml_missing_symbol, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvml_failing_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_linux_fixture, setup, teardown),
		cmocka_unit_test_setup_teardown(test_linux_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thinning, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_display_hw, setup, teardown),
		cmocka_unit_test_setup_teardown(test_agent, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
