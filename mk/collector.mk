# Online collection: the `c4d_perftracker` name of the binary (the
# reference's trigger command, same behaviour as `perftracker`), its
# install, and the collector test targets.  Included from the Makefile.

.PHONY: collector-install test-collector
all: $(B)/c4d_perftracker

$(B)/c4d_perftracker: $(B)/perftracker
	ln -sf perftracker $@

collector-install: $(B)/perftracker
	install -d $(DESTDIR)$(PREFIX)/bin
	ln -sf perftracker $(DESTDIR)$(PREFIX)/bin/c4d_perftracker
install: collector-install

# Only the collector's tests (Python + the control-directory and hang unit
# tests).
test-collector: $(B)/perftracker $(PY_EXT) $(BT)/tests/test_control $(BT)/tests/test_hang
	$(BT)/tests/test_control
	$(BT)/tests/test_hang
	PT_BIN_OPT=$(CURDIR)/$(B)/perftracker $(PYTHON) -m unittest -v tests/py/test_collector.py \
		tests/py/test_end_to_end.py tests/py/test_hang.py
