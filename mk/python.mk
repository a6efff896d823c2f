# Python collector: the C extension perftracker._collector, built in place
# under python/ for $(PYTHON) (the interpreter that has torch), so that
# PYTHONPATH=<repo>/python makes `perftracker` and the compatibility path
# `c4d_perftracker_collector` importable.  Included from the Makefile.

# Asked of $(PYTHON), or of Debian's python3 while the venv is not made yet
# (the same interpreter: the venv is made from it).
PY_CFG        := $(firstword $(wildcard $(PYTHON)) /usr/bin/python3)
PY_EXT_SUFFIX := $(shell $(PY_CFG) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX") or ".so")' 2>/dev/null)
PY_INCLUDE    := $(shell $(PY_CFG) -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
# Under PREFIX like everything `make install` writes: PREFIX/lib/pythonX.Y/site-packages
# (the posix_prefix scheme, not Debian's /usr/local/lib/.../dist-packages).
PY_SITE       ?= $(shell $(PY_CFG) -c 'import sys, sysconfig; print(sysconfig.get_path("platlib", "posix_prefix", {"base": sys.argv[1], "platbase": sys.argv[1]}))' '$(PREFIX)' 2>/dev/null)
PY_EXT        := python/perftracker/_collector$(PY_EXT_SUFFIX)
PY_EXT_CFLAGS ?=
# The extension links the control-directory protocol and the JSON and
# string helpers it needs from source (compiled -fPIC here), not the whole
# library: the training process loads nothing else.
# (python/ext_sources.txt: the one list, read by the pip build backend too)
PY_EXT_SRC    := python/perftracker/_collector.c $(shell cat python/ext_sources.txt)
PY_EXT_HDR    := src/control/control.h src/control/nodechan.h src/util/json.h src/util/strbuf.h src/util/error.h \
		 src/util/xalloc.h src/util/utf8.h src/util/file.h src/util/jsonnum.h src/util/jsontok.h src/util/spawn.h \
		 src/util/clock.h src/util/hash.h \
		 src/model/stacks.h src/model/frpickle.h \
		 python/perftracker/collector_internal.h

.PHONY: python python-install
all: $(PY_EXT)
python: $(PY_EXT)

$(PY_EXT): $(PY_EXT_SRC) $(PY_EXT_HDR)
	$(CC) $(BASE_CFLAGS) $(PY_EXT_CFLAGS) -O2 -fPIC -shared -I$(PY_INCLUDE) -o $@ $(PY_EXT_SRC) -lpthread

# Install the packages for $(PYTHON) under PREFIX: DESTDIR-aware, PY_SITE
# overridable; says where they went.  A virtual environment or conda gets
# the collector with `pip install ./python` instead (README).
python-install: $(PY_EXT)
	install -d $(DESTDIR)$(PY_SITE)/perftracker $(DESTDIR)$(PY_SITE)/c4d_perftracker_collector
	install -m 644 python/perftracker/__init__.py python/perftracker/_window.py \
		$(DESTDIR)$(PY_SITE)/perftracker/
	install -m 755 $(PY_EXT) $(DESTDIR)$(PY_SITE)/perftracker/
	install -m 644 python/c4d_perftracker_collector/__init__.py \
		python/c4d_perftracker_collector/PerfTracker.py \
		$(DESTDIR)$(PY_SITE)/c4d_perftracker_collector/
	@echo "perftracker: Python packages installed in $(DESTDIR)$(PY_SITE)"
	@echo "perftracker:   (for $(PYTHON); add that folder to PYTHONPATH, or run"
	@echo "perftracker:    'pip install ./python' in the environment that trains)"
install: python-install

clean: clean-python
.PHONY: clean-python
clean-python:
	rm -f python/perftracker/_collector*.so
