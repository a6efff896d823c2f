// harness.mjs - what the browser tests (tests/web/*.test.mjs) share: the
// paths tests/web/run.sh passes in the environment (with the defaults of a
// checkout), Debian's chromium driven by playwright-core, a report's page,
// and a page opened and watched: console errors and warnings, uncaught page
// errors and any request that would leave the machine (the page is one
// offline file) are collected in `problems`, which each test asserts empty.
import path from 'node:path';
import { createRequire } from 'node:module';

export const ROOT = process.env.PT_ROOT || path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
export const BIN = process.env.PT_BIN || path.join(ROOT, 'build-test/perftracker');
export const DATA = process.env.PT_DATA || path.join(ROOT, 'tests/data');
export const PY = process.env.PYTHON || '/usr/bin/python3';
const CHROMIUM = process.env.PT_CHROMIUM || '/usr/bin/chromium';
export const ART = process.env.PT_ARTIFACTS || path.join(ROOT, 'build-test/artifacts');
const { chromium } = createRequire(path.join(ROOT, 'package.json'))('playwright-core');

// A headless chromium; the caller closes it.
export function launch() { return chromium.launch({ executablePath: CHROMIUM, headless: true }); }

// The page `perftracker analyze/display -o dir` wrote.
export function pageOf(dir) { return 'file://' + path.join(dir, 'PerfDisplay', 'index.html'); }

// Open url in a new page of browser and wait for the page's data-ready mark.
// opts: width, height (viewport, 1400 x 1000), timeout (ms, 30 s), allow
// (the URLs that may be requested; file:, data: and blob:).  Returns
// { page, problems, wall } with wall the ms from navigation to ready.
export async function openPage(browser, url, opts = {}) {
  const allow = opts.allow || /^(file:|data:|blob:)/;
  const page = await browser.newPage({ viewport: { width: opts.width || 1400, height: opts.height || 1000 } });
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  page.on('request', (r) => { if (!allow.test(r.url())) problems.push('network request: ' + r.url()); });
  const t0 = Date.now();
  await page.goto(url);
  await page.waitForSelector('html[data-ready]', { timeout: opts.timeout || 30000 });
  return { page, problems, wall: Date.now() - t0 };
}
