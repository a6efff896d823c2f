# Hardware sampler tests: a fake NVML library (tests/fakenvml/fake_nvml.c)
# that test_sampler loads with dlopen instead of the real libnvidia-ml.so.1,
# in two builds: complete, and without nvmlDeviceGetFieldValues (a driver
# without NVLink counters).  Included from the Makefile.

FAKE_NVML := $(BT)/libnvidia-ml.so.1
FAKE_NVML_NOFIELDS := $(BT)/fakenvml-nofields/libnvidia-ml.so.1

$(FAKE_NVML): tests/fakenvml/fake_nvml.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -Wall -Wextra -O1 -g -fPIC -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ $<

$(FAKE_NVML_NOFIELDS): tests/fakenvml/fake_nvml.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -Wall -Wextra -O1 -g -fPIC -shared -Wl,-soname,libnvidia-ml.so.1 \
		-DFAKE_NVML_NO_FIELDS -o $@ $<

$(BT)/tests/test_sampler $(BT)/tests/test_agent_nsys: $(FAKE_NVML) $(FAKE_NVML_NOFIELDS)

.PHONY: fake-nvml
fake-nvml: $(FAKE_NVML) $(FAKE_NVML_NOFIELDS)
