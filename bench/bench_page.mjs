// bench_page.mjs - render time of PerfDisplay pages in headless chromium
// (Debian's, driven by playwright-core).  For each page: N cold loads, each
// in a new browser context; reports the median and worst of
//   ready  - navigation start to the overview drawn (charts included), as
//            performance.now() at the page's ready mark;
//   paint  - navigation start to the first frame painted after ready;
//   views  - time to draw every other view (tabs) once, in JS;
//   each   - per view, the median of window.__ptTiming.views[id]: from the
//            tab's activation to the view drawn (the overview's while the
//            page boots), e.g. the Timeline view's against the Overview's.
// usage: node bench/bench_page.mjs [-n N] PAGE.html...   (prints JSON lines)
import path from 'node:path';
import { createRequire } from 'node:module';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const { chromium } = createRequire(path.join(ROOT, 'package.json'))('playwright-core');
const args = process.argv.slice(2);
let n = 5;
if (args[0] === '-n') { n = +args[1]; args.splice(0, 2); }
const browser = await chromium.launch({ executablePath: process.env.PT_CHROMIUM || '/usr/bin/chromium', headless: true });
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor((s.length - 1) / 2)]; };
for (const file of args) {
  const ready = [], paint = [], views = [], each = {};
  let errors = 0;
  for (let i = 0; i < n; i++) {
    const ctx = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await ctx.newPage();
    page.on('pageerror', () => errors++);
    page.on('console', (m) => { if (m.type() === 'error') errors++; });
    await page.goto('file://' + path.resolve(file));
    await page.waitForSelector('html[data-ready="1"]', { timeout: 60000 });
    const r = await page.evaluate(() => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(() =>
      res({ ready: window.__ptTiming.ready, paint: performance.now() })))));
    ready.push(r.ready);
    paint.push(r.paint);
    const tabs = await page.$$eval('#tabs button', (bs) => bs.map((b) => b.getAttribute('data-tab')));
    const t0 = await page.evaluate(() => performance.now());
    for (const id of tabs.slice(1)) {
      await page.click(`#tabs button[data-tab="${id}"]`);
      await page.waitForSelector(`#view-${id}:not([hidden])`);
    }
    const t1 = await page.evaluate(() => new Promise((res) => requestAnimationFrame(() => res(performance.now()))));
    views.push(t1 - t0);
    const per = await page.evaluate(() => window.__ptTiming.views);
    for (const k of Object.keys(per)) (each[k] = each[k] || []).push(per[k]);
    await ctx.close();
  }
  console.log(JSON.stringify({ page: file, runs: n, errors,
    ready_ms: { median: Math.round(med(ready)), max: Math.round(Math.max(...ready)) },
    paint_ms: { median: Math.round(med(paint)), max: Math.round(Math.max(...paint)) },
    views_ms: { median: Math.round(med(views)), max: Math.round(Math.max(...views)) },
    each_ms: Object.fromEntries(Object.keys(each).map((k) => [k, Math.round(med(each[k]))])) }));
}
await browser.close();
