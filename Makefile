# PerfTracker build.  `make` builds the optimised tree in build/, `make test`
# a separate ASan+UBSan tree in build-test/ and runs every test, `make demo`
# runs the main job.  Sources are found by folder (one folder per stage), so
# adding a file needs no edit here.
#
# Two archives per tree: libperftracker (util, model, trace, analysis,
# diagnose, report: the library users link, .a and .so) and libptcli (control,
# agent, display: the online side, linked only into the CLI, the unit tests
# and the benchmarks), so that the library pulls in no HTTP server
# (libmicrohttpd, gnutls).  The page builder (src/report/page.c) is report
# code: the report writer writes index.html with it; display/ only serves.

CC      ?= cc
# The interpreter of the project's jobs, tests and benchmarks: .venv/ (made by
# scripts/venv.sh, a current torch 2 from PyPI); PYTHON=... for another.
PYTHON  ?= $(CURDIR)/.venv/bin/python
PREFIX  ?= /usr/local
FUZZ_SECONDS ?= 30

B  := build
BT := build-test
BF := build-fuzz

LIB_DIRS := util model trace analysis diagnose compare hang report
LIB_SRC  := $(foreach d,$(LIB_DIRS),$(wildcard src/$(d)/*.c))
PTCLI_DIRS := control agent display watch
PTCLI_SRC  := $(filter-out $(LIB_SRC),$(foreach d,$(PTCLI_DIRS),$(wildcard src/$(d)/*.c)))
CLI_SRC  := $(wildcard src/cli/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
BENCH_SRC := $(wildcard bench/*.c)

# -I$(B)/gen: headers generated at build time (the page template).
BASE_CFLAGS := -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wshadow -g -pthread \
	-D_GNU_SOURCE -Isrc -I$(B)/gen -DPT_BUILD
# What the library needs; CLI_LIBS what libptcli adds (mk/display.mk).
LIBS := -lz -lsqlite3 -lm -lpthread -ldl
CLI_LIBS :=

# -fvisibility=hidden: libperftracker.so exports only what the public headers
# declare between PT_API_BEGIN and PT_API_END (src/util/api.h).
OPT_CFLAGS  := $(BASE_CFLAGS) -O2 -fPIC -fvisibility=hidden
TEST_CFLAGS := $(BASE_CFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined -DPT_TEST
TEST_LDFLAGS := -fsanitize=address,undefined
# Fuzz objects: instrumented for libFuzzer but without its main(), which only
# the fuzz targets link (-fsanitize=fuzzer).
FUZZ_CFLAGS := -std=gnu11 -g -O1 -D_GNU_SOURCE -Isrc -I$(B)/gen -fsanitize=fuzzer-no-link,address,undefined

LIB_OBJ      := $(LIB_SRC:%.c=$(B)/obj/%.o)
PTCLI_OBJ    := $(PTCLI_SRC:%.c=$(B)/obj/%.o)
CLI_OBJ      := $(CLI_SRC:%.c=$(B)/obj/%.o)
LIB_OBJ_T    := $(LIB_SRC:%.c=$(BT)/obj/%.o)
PTCLI_OBJ_T  := $(PTCLI_SRC:%.c=$(BT)/obj/%.o)
CLI_OBJ_T    := $(CLI_SRC:%.c=$(BT)/obj/%.o)
FUZZ_OBJ     := $(LIB_SRC:%.c=$(BF)/obj/%.o) $(PTCLI_SRC:%.c=$(BF)/obj/%.o)
UNIT_BIN     := $(UNIT_SRC:tests/unit/%.c=$(BT)/tests/%)
FUZZ_BIN     := $(FUZZ_SRC:tests/fuzz/%.c=$(BF)/%)
BENCH_BIN    := $(BENCH_SRC:bench/%.c=$(B)/bench/%)

.PHONY: all deps venv test unit fuzz bench demo install clean
all: $(B)/perftracker $(B)/libperftracker.a $(B)/libperftracker.so $(B)/perftracker.pc

deps:
	@sh scripts/deps.sh

# .venv/ with torch 2 (scripts/venv.sh; nothing to do when it is complete).
# After deps (it needs python3-venv); the targets that use it re-run make,
# so that the extension is built for the venv's interpreter.
venv: deps
	@sh scripts/venv.sh

# A stamp per tree holds its flags, so changing them rebuilds the objects.
.PHONY: FORCE
$(B)/cflags.stamp: FORCE
	@mkdir -p $(B); echo '$(OPT_CFLAGS)' | cmp -s - $@ || echo '$(OPT_CFLAGS)' > $@
$(BT)/cflags.stamp: FORCE
	@mkdir -p $(BT); echo '$(TEST_CFLAGS)' | cmp -s - $@ || echo '$(TEST_CFLAGS)' > $@
$(BF)/cflags.stamp: FORCE
	@mkdir -p $(BF); echo '$(FUZZ_CFLAGS)' | cmp -s - $@ || echo '$(FUZZ_CFLAGS)' > $@

# ---- optimised tree -------------------------------------------------------
$(B)/obj/%.o: %.c $(B)/cflags.stamp
	@mkdir -p $(dir $@)
	$(CC) $(OPT_CFLAGS) -MMD -MP -c $< -o $@

$(B)/libperftracker.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(B)/libptcli.a: $(PTCLI_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# -z defs: a library source that calls into control, agent or display (or
# anything else not linked here) fails this link instead of the user's.
$(B)/libperftracker.so: $(LIB_OBJ)
	$(CC) -shared -Wl,-z,defs -o $@ $^ $(LIBS)

$(B)/perftracker: $(CLI_OBJ) $(B)/libptcli.a $(B)/libperftracker.a
	$(CC) -o $@ $(CLI_OBJ) $(B)/libptcli.a $(B)/libperftracker.a $(CLI_LIBS) $(LIBS)

$(B)/perftracker.pc: scripts/perftracker.pc.in src/perftracker.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(PT_VERSION)|g' $< > $@

$(B)/bench/%: bench/%.c $(B)/libptcli.a $(B)/libperftracker.a
	@mkdir -p $(dir $@)
	$(CC) $(OPT_CFLAGS) -o $@ $< $(B)/libptcli.a $(B)/libperftracker.a $(CLI_LIBS) $(LIBS)

# ---- sanitizer tree (tests) -------------------------------------------------
$(BT)/obj/%.o: %.c $(BT)/cflags.stamp
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -MMD -MP -c $< -o $@

$(BT)/libperftracker.a: $(LIB_OBJ_T)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BT)/libptcli.a: $(PTCLI_OBJ_T)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BT)/perftracker: $(CLI_OBJ_T) $(BT)/libptcli.a $(BT)/libperftracker.a
	$(CC) $(TEST_LDFLAGS) -o $@ $(CLI_OBJ_T) $(BT)/libptcli.a $(BT)/libperftracker.a $(CLI_LIBS) $(LIBS)

# Unit tests may call internal functions and the online side: both archives
# (static linking ignores visibility; only the members a test needs come in).
$(BT)/tests/%: tests/unit/%.c $(BT)/libptcli.a $(BT)/libperftracker.a
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(TEST_LDFLAGS) -MMD -MP -o $@ $< $(BT)/libptcli.a $(BT)/libperftracker.a \
		-lcmocka $(CLI_LIBS) $(LIBS)

# ---- fuzzers (clang libFuzzer) ----------------------------------------------
# Every source but the CLI compiled once into one archive; each target links
# it (was: every library source recompiled per fuzzer).
$(BF)/obj/%.o: %.c $(BF)/cflags.stamp
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(BF)/libpt_fuzz.a: $(FUZZ_OBJ)
	rm -f $@ && ar rcs $@ $^

# (the target's dependency file goes under obj/: build-fuzz/fuzz_* are only
# the fuzzers, which tests/run runs)
$(BF)/%: tests/fuzz/%.c $(BF)/libpt_fuzz.a
	@mkdir -p $(BF)/obj/tests/fuzz
	clang $(filter-out -fsanitize=%,$(FUZZ_CFLAGS)) -fsanitize=fuzzer,address,undefined \
		-MMD -MP -MF $(BF)/obj/tests/fuzz/$*.d -o $@ $< $(BF)/libpt_fuzz.a $(CLI_LIBS) $(LIBS)

unit: $(UNIT_BIN) $(BT)/perftracker
fuzz: $(FUZZ_BIN)

test: deps venv
	$(MAKE) all unit fuzz
	FUZZ_SECONDS=$(FUZZ_SECONDS) PYTHON=$(PYTHON) bash tests/run

bench: all $(BENCH_BIN)
	sh bench/run.sh

demo: deps venv
	$(MAKE) all
	PYTHON=$(PYTHON) sh scripts/demo.sh

# Public headers only: perftracker.h, the marker header and every header that
# marks its declarations PT_API_BEGIN ... PT_API_END (src/util/api.h).  They
# keep their src/ layout under include/perftracker/ (perftracker.h includes
# them by relative path); pkg-config adds that folder to -I.
PUB_HDR := src/perftracker.h src/util/api.h $(shell grep -l '^PT_API_BEGIN' src/*/*.h)
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(B)/perftracker $(DESTDIR)$(PREFIX)/bin/perftracker
	install -m 644 $(B)/libperftracker.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(B)/libperftracker.so $(DESTDIR)$(PREFIX)/lib/
	for h in $(PUB_HDR); do \
		install -D -m 644 $$h $(DESTDIR)$(PREFIX)/include/perftracker/$${h#src/} || exit 1; \
	done
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(PT_VERSION)|g' scripts/perftracker.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/perftracker.pc

clean:
	rm -rf $(B) $(BT) $(BF)

# Per-component rules (collector, web page, display server) live in mk/.
-include $(wildcard mk/*.mk)

-include $(shell find $(B) $(BT) $(BF) -name '*.d' 2>/dev/null)
