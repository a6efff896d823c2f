# PerfDisplay (src/display): the page template compiled into the library and
# the HTTP server's library (linked into the CLI only: CLI_LIBS).  Included by the Makefile (mk/*.mk, alphabetical,
# so names shared with mk/web.mk are defined here).
#
# web/index.html + web/style.css + build/gen/keys.js + web/js/*.js (joined
# in WEB_JS's order after keys.js into build/gen/app.js) + web/app.py + the
# charting library from npm --(build/gen/pt-inline, from web/inline.c)-->
# build/gen/page_template.h, #included by src/report/page.c (found through
# -I$(B)/gen on the include path).

CLI_LIBS += -lmicrohttpd

# The version comes from src/perftracker.h (PT_VERSION), as everywhere.
PT_VERSION := $(shell sed -n 's/^\#define PT_VERSION "\(.*\)"/\1/p' src/perftracker.h)
GEN := $(B)/gen
PAGE_TEMPLATE := $(GEN)/page_template.h
WEB_STAMP := node_modules/.package-lock.json
WEB_LIB := node_modules/echarts/dist/echarts.min.js
# The page's modules, in load order, after the report keys table
# (build/gen/keys.js: K, KEY_UNIT), each registering into the namespace PT
# that core.js creates; main.js, last, boots the page.
WEB_JS := $(addprefix web/js/,core.js widgets.js model.js findings.js \
	communication.js p2p.js compute.js python.js workers.js heatmap.js overview.js \
	steps.js critpath.js timeline.js hang.js hardware.js compare.js main.js)
WEB_SRC := web/index.html web/style.css $(GEN)/app.js web/app.py

# build/gen/keys.js: the report keys table (src/report/keys.def) for the
# page, made by web/keys.c; the first script of the page, before the modules
# (build/gen/app.js is them all joined: one script, what pt-inline inlines).
$(GEN)/pt-keys: web/keys.c src/report/keys.def src/report/unit.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Isrc -o $@ $<

$(GEN)/keys.js: $(GEN)/pt-keys
	$(GEN)/pt-keys $@.tmp
	mv $@.tmp $@

$(GEN)/app.js: $(GEN)/keys.js $(WEB_JS)
	cat $^ > $@.tmp
	mv $@.tmp $@

$(GEN)/pt-inline: web/inline.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -o $@ $<

# build/gen/page.html is the same page with no report embedded (it fetches
# report.json when served); the tests and the benchmark use it.
$(PAGE_TEMPLATE): $(GEN)/pt-inline $(WEB_SRC) $(WEB_STAMP) src/perftracker.h
	$(GEN)/pt-inline $@.tmp web/index.html web/style.css $(WEB_LIB) $(GEN)/app.js web/app.py \
		$(PT_VERSION) $(GEN)/page.html
	mv $@.tmp $@

# page.c includes the generated header; every tree's page.o waits for it.
$(B)/obj/src/report/page.o $(BT)/obj/src/report/page.o $(BF)/obj/src/report/page.o: $(PAGE_TEMPLATE)

.PHONY: page
page: $(PAGE_TEMPLATE)
