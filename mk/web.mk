# PerfDisplay web dependencies from npm, pinned in package-lock.json: the
# charting library inlined into the page (echarts) and the browser driver of
# the page tests (playwright-core, used with Debian's chromium).  `npm ci`
# installs exactly the locked versions; the stamp is the file npm writes.

NPM ?= npm

$(WEB_STAMP): package.json package-lock.json
	$(NPM) ci --no-audit --no-fund --loglevel=error
	@touch $@

.PHONY: web-deps
web-deps: $(WEB_STAMP)
