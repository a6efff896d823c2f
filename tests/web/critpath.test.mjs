// critpath.test.mjs - PerfDisplay's "Critical path" view (report "Critical
// path", docs/display.md) in headless chromium via playwright-core: the tab
// appears only when the section has steps, the per-step chart stacks the
// seven kinds (one bar per step, slow steps marked), the slow step's
// functions and waits are in the table, several workers get rank:step bars,
// the worker each step waited for and the job's path, 1,000 workers x 10
// steps draw in reasonable time, and a missing or empty section, a step
// numbered -1, splits without "wait" and markup in names do no harm.
//
// Reports: `perftracker analyze` of the real HTA trace_diff control trace
// (tests/data/HolisticTraceAnalysis, one worker, 6 steps), of resnet50 with
// one function made 40 ms slower in step 7 (tests/tools/plant_slow_step.py,
// as single.test.mjs), and of the 8 DLRM workers; bench/gen_report.py's
// 1,000 workers with a made-up section.  The page is build/gen/page.html
// (made from web/ by `make`, or `make page` alone, like the binary's
// template) with the report embedded as src/report/page.c embeds it, so it
// shows the web/ sources of this tree.  Screenshots go to $PT_ARTIFACTS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { ROOT, BIN, DATA, PY, ART, launch, openPage, pageOf } from './harness.mjs';

const PAGE = path.join(ROOT, 'build/gen/page.html');

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'pt-critpath-page-'));
const CONTROL = path.join(DATA, 'HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz');
const RESNET = path.join(DATA, 'kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz');
const MARKUP = '<img src=x onerror="window.__ptXss=1"><b id="pt-injected">k</b>';
const KINDS = ['cpu', 'compute', 'communication', 'memory', 'launch', 'gap', 'wait'];
const SPAN = '## all2all_data:lengths_wait ##';
const NCCL = 'ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)';
const KERNEL = 'volta_sgemm_128x64_nn256_1_1|256_1_1';
let browser;

// report.json and the page with it embedded (as src/report/page.c does:
// '<', '>', '&' inside strings as \u escapes).
function writeReport(dir, rep) {
  const out = path.join(dir, 'PerfDisplay');
  fs.mkdirSync(out, { recursive: true });
  const json = JSON.stringify(rep);
  fs.writeFileSync(path.join(out, 'report.json'), json);
  const safe = json.replace(/[<>&]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  const html = fs.readFileSync(PAGE, 'utf8');
  const at = '<script type="application/json" id="pt-report">';
  const i = html.indexOf(at);
  assert.ok(i >= 0 && html.indexOf(at, i + 1) < 0, 'build/gen/page.html has one report block');
  fs.writeFileSync(path.join(out, 'index.html'), html.slice(0, i + at.length) + safe + html.slice(i + at.length));
}
// a duration as the page writes it (web/app.js ms(): three significant digits)
function msText(x) {
  const sig3 = (v) => { const a = Math.abs(v); return a >= 99.95 ? v.toFixed(0) : a >= 9.995 ? v.toFixed(1) : v.toFixed(2); };
  if (x === 0) return '0 ms';
  if (Math.abs(x) >= 1000) return sig3(x / 1000) + ' s';
  return Math.abs(x) >= 0.9995 ? sig3(x) + ' ms' : sig3(x * 1000) + ' µs';
}
function analyze(trace, dir) {
  execFileSync(BIN, ['analyze', trace, '-o', dir, '-q'], { stdio: ['ignore', 'pipe', 'pipe'] });
  return JSON.parse(fs.readFileSync(path.join(dir, 'PerfDisplay/report.json'), 'utf8'));
}
function split(ms, parts) {
  const s = {}, tot = parts.reduce((a, b) => a + b, 0);
  KINDS.forEach((k, i) => { s[k] = +(ms * (parts[i] || 0) / tot).toFixed(3); });
  return s;
}
function sumSplits(steps) {
  const s = {};
  KINDS.forEach((k) => { s[k] = +steps.reduce((a, st) => a + (st['split (ms)'][k] || 0), 0).toFixed(3); });
  return s;
}

// W workers x S steps, every 97th step slow, waits on other workers, and
// the job's path per step (bench/gen_report.py's worker ids).
function synthCritPath(ids, S) {
  const workers = {};
  let k = 0;
  ids.forEach((id) => {
    const steps = [];
    for (let n = 0; n < S; n++, k++) {
      const slow = k % 97 === 5;
      const ms = 80 + (k % 7) + (slow ? 40 : 0);
      steps.push({ number: 100 + n, ms, slow, 'split (ms)': split(ms, slow ? [10, 40, 20, 2, 5, 8, 35] : [10, 45, 20, 2, 5, 10, 8]),
        functions: [{ name: SPAN, kind: 'annotation', ms: slow ? 30.2 : 1.8, 'median (ms)': 1.8 }],
        waits: slow ? [{ span: SPAN, call: 'cudaStreamSynchronize', ms: 29.5, target: NCCL, 'target stream': 21 }] : [] });
    }
    workers[id] = { 'split (ms)': sumSplits(steps), steps };
  });
  const job = [];
  for (let n = 0; n < S; n++) job.push({ number: 100 + n, ms: 125, through: ids[(n * 37) % ids.length], 'split (ms)': split(125, [10, 40, 20, 2, 5, 8, 40]) });
  return { kinds: KINDS, workers, job };
}

function open(url, width = 1400) { return openPage(browser, url, { width }); }
async function showCritPath(page) {
  await page.click('#tabs [data-tab="critpath"]');
  await page.waitForSelector('#view-critpath:not([hidden]) #chart-cp-steps canvas');
  return page.locator('#view-critpath');
}
// the chart's option as ECharts holds it (series, categories, zoom window)
function chartOf(page, id) {
  return page.evaluate((sel) => {
    const o = echarts.getInstanceByDom(document.getElementById(sel)).getOption();   // eslint-disable-line no-undef
    return { series: o.series.map((s) => ({ name: s.name, n: s.data.length, marks: s.markPoint && s.markPoint.data ? s.markPoint.data.length : 0 })),
      cats: o.xAxis[0].data, zoom: (o.dataZoom || []).map((z) => [z.startValue, z.endValue]) };
  }, id);
}

const ONE = path.join(TMP, 'one');
const MANY = path.join(TMP, 'many');
const DLRM = path.join(TMP, 'dlrm');
const SLOW = path.join(TMP, 'slow');
let rep1, repDlrm, repSlow;

before(async () => {
  fs.mkdirSync(ART, { recursive: true });
  assert.ok(fs.existsSync(PAGE), 'build/gen/page.html (make)');
  rep1 = analyze(CONTROL, ONE);
  assert.ok(rep1['Critical path'], 'analyze writes the "Critical path" section');
  writeReport(ONE, rep1);
  repDlrm = analyze(path.join(DATA, 'dlrm'), DLRM);
  // resnet50 with Optimizer.step made 40 ms slower in step 7 (as single.test.mjs)
  const trace = path.join(TMP, 'resnet_slow.json');
  execFileSync(PY, [path.join(ROOT, 'tests/tools/plant_slow_step.py'), RESNET, trace, '7', 'Optimizer.step#SGD.step', '40']);
  repSlow = analyze(trace, SLOW);
  writeReport(SLOW, repSlow);
  writeReport(DLRM, repDlrm);
  const gen = path.join(TMP, 'gen.json');
  execFileSync(PY, [path.join(ROOT, 'bench/gen_report.py'), '--workers', '1000', '-o', gen]);
  const rep = JSON.parse(fs.readFileSync(gen, 'utf8'));
  rep['Critical path'] = synthCritPath(Object.keys(rep.workers), 10);
  writeReport(MANY, rep);
  browser = await launch();
});
after(async () => {
  if (browser) await browser.close();
  fs.rmSync(TMP, { recursive: true, force: true });
});

test('one worker: Critical path tab, 7 kinds stacked per step, the slow step with its functions and waits', async () => {
  const cp = rep1['Critical path'];
  const [id] = Object.keys(cp.workers);
  const steps = cp.workers[id].steps;
  const slow = steps.filter((s) => s.slow);
  const { page, problems } = await open(pageOf(ONE), 1280);
  assert.equal(await page.locator('#tabs [data-tab="critpath"]').count(), 1);
  if (slow.length) assert.equal((await page.locator('#tabs [data-tab="critpath"] .count').textContent()).trim(), String(slow.length));
  const v = await showCritPath(page);
  const c = await chartOf(page, 'chart-cp-steps');
  assert.deepEqual(c.series.map((s) => s.name), cp.kinds || KINDS);
  assert.equal(c.series.length, 7);
  c.series.forEach((s) => assert.equal(s.n, steps.length, `one bar per step in ${s.name}`));
  assert.deepEqual(c.cats, steps.map((s) => String(s.number)));
  assert.equal(c.series[6].marks, slow.length, 'slow steps marked');
  assert.equal(await v.locator('#chart-cp-workers').count(), 0, 'no per-worker chart for one worker');
  assert.equal(await v.locator('#chart-cp-job').count(), 0, 'no job path for one worker');
  assert.match(await v.locator('details.howto').textContent(), /longest chain of dependent work/);
  // the table: the slow steps (else all), each with its functions and waits
  const shown = slow.length ? slow : steps;
  const rows = v.locator('.cp-table tbody tr');
  assert.equal(await rows.count(), shown.length);
  for (const st of shown) {
    const row = rows.filter({ has: page.locator('td:nth-child(2)', { hasText: new RegExp('^' + st.number + '$') }) });
    assert.equal(await row.count(), 1, `row of step ${st.number}`);
    const titles = await row.locator('.fn').evaluateAll((els) => els.map((e) => e.getAttribute('title')));
    // the full name is the tooltip (a Python stack's frames one per line)
    for (const f of st.functions) assert.ok(titles.includes(f.name) || titles.includes(f.name.replace(/\|/g, '\n')), `step ${st.number}: ${f.name} in the table`);
    for (const w of st.waits) {
      assert.ok(titles.includes(w.span) && titles.includes(w.target), `step ${st.number}: wait in ${w.span} for ${w.target}`);
      assert.ok((await row.textContent()).includes('waits ' + msText(w.ms)), `step ${st.number}: waits ${msText(w.ms)}`);
    }
  }
  // no sideways scroll at 1280 px
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'fits 1280 px');
  await page.screenshot({ path: path.join(ART, 'critpath.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('planted slow step: step 7 marked, Optimizer.step first among its functions, against its median', async () => {
  const cp = repSlow['Critical path'];
  assert.ok(cp, 'the report has "Critical path"');
  const [id] = Object.keys(cp.workers);
  const steps = cp.workers[id].steps;
  const st7 = steps.find((s) => s.number === 7);
  assert.ok(st7 && st7.slow, 'the report marks step 7 slow');
  assert.equal(st7.functions[0].name, 'Optimizer.step#SGD.step', 'what grew most comes first');
  const { page, problems } = await open(pageOf(SLOW), 1280);
  assert.equal((await page.locator('#tabs [data-tab="critpath"] .count').textContent()).trim(), String(steps.filter((s) => s.slow).length));
  const v = await showCritPath(page);
  const c = await chartOf(page, 'chart-cp-steps');
  assert.equal(c.series.length, 7);
  assert.deepEqual(c.cats, steps.map((s) => String(s.number)));
  assert.equal(c.series[6].marks, steps.filter((s) => s.slow).length);
  const row = v.locator('.cp-table tbody tr').first();
  assert.equal((await row.locator('td').nth(1).textContent()).trim(), '7');
  const fn = row.locator('.cp-list').first().locator('div').first();
  assert.equal(await fn.locator('.fn').getAttribute('title'), 'Optimizer.step#SGD.step');
  assert.equal(await fn.locator('.cp-grew').count(), 1, 'its ms in red: it grew');
  assert.equal((await fn.textContent()).replace(/\s+/g, ' ').trim(),
    `Optimizer.step#SGD.step ${msText(st7.functions[0].ms)} vs median ${msText(st7.functions[0]['median (ms)'])} · ${st7.functions[0].kind}`);
  await page.screenshot({ path: path.join(ART, 'critpath-slow.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('1,000 workers x 10 steps: per-step chart opens on a window at the first slow step, per-worker chart, job path', async () => {
  const { page, problems } = await open(pageOf(MANY), 1280);
  assert.equal(await page.locator('#tabs [data-tab="critpath"]').count(), 1);
  const v = await showCritPath(page);
  const took = await page.evaluate(() => window.__ptTiming.views.critpath);
  // measured, not bounded (bench/bench_page.sh holds the page's targets)
  console.log(`1,000 workers x 10 steps: Critical path view drawn in ${Math.round(took)} ms`);
  const c = await chartOf(page, 'chart-cp-steps');
  assert.equal(c.series.length, 7);
  c.series.forEach((s) => assert.equal(s.n, 10000));
  assert.match(c.cats[0], /^0:100$/);
  assert.ok(c.zoom.length && c.zoom[0][1] - c.zoom[0][0] < 200, 'zoomed to a window of steps: ' + JSON.stringify(c.zoom));
  assert.ok(c.zoom[0][0] <= 5 && c.zoom[0][1] >= 5, 'the window holds the first slow step (0:105)');
  assert.match(await v.locator('.chart-card').first().textContent(), /Showing 120 of 10000 bars, from the first slow step/);
  const nslow = Math.floor((10000 - 5 - 1) / 97) + 1;
  assert.equal(c.series[6].marks, nslow);
  assert.equal((await page.locator('#tabs [data-tab="critpath"] .count').textContent()).trim(), String(nslow));
  const w = await chartOf(page, 'chart-cp-workers');
  assert.equal(w.series.length, 7);
  assert.equal(w.cats.length, 1000);
  const j = await chartOf(page, 'chart-cp-job');
  assert.equal(j.cats.length, 10);
  // slow steps table, 25 at a time; the job table names the worker by rank
  assert.match(await v.locator('.cp-table .tbl-count').textContent(), new RegExp(nslow + ' rows'));
  assert.match(await v.locator('.cp-table tbody tr').first().textContent(), /waits 29\.5 ms in ## all2all_data:lengths_wait ##/);
  const jobRows = v.locator('.tbl-wrap').last().locator('tbody tr');
  assert.equal(await jobRows.count(), 10);
  assert.match(await jobRows.first().locator('a.chip').textContent(), /^rank \d+$/);
  assert.match(await v.locator('.stats').textContent(), /Waiting for other workers/);
  await page.screenshot({ path: path.join(ART, 'critpath-1000.png'), fullPage: true });
  await v.locator('.chart-card').first().screenshot({ path: path.join(ART, 'critpath-1000-steps.png') });
  assert.deepEqual(problems, []);
  await page.close();
});

test('DLRM, 8 workers of one step: rank:step bars, the job path through its worker', async () => {
  const cp = repDlrm['Critical path'];
  assert.ok(cp, 'the report has "Critical path"');
  const ids = Object.keys(cp.workers);
  const rankOf = (id) => repDlrm.workers[id].rank;
  const { page, problems } = await open(pageOf(DLRM), 1280);
  const v = await showCritPath(page);
  const c = await chartOf(page, 'chart-cp-steps');
  assert.equal(c.series.length, 7);
  const cats = [];
  ids.map((id) => [rankOf(id), id]).sort((a, b) => a[0] - b[0])
    .forEach(([r, id]) => cp.workers[id].steps.forEach((st) => cats.push(r + ':' + (st.number === -1 ? 'window' : st.number))));
  assert.deepEqual(c.cats, cats);
  // per worker, summed over its steps: not drawn when it would repeat the steps chart
  if (ids.some((id) => cp.workers[id].steps.length > 1)) {
    const w = await chartOf(page, 'chart-cp-workers');
    assert.deepEqual(w.cats, ids.map(rankOf).sort((a, b) => a - b).map(String));
  } else {
    assert.equal(await v.locator('#chart-cp-workers').count(), 0, 'one step per worker: no per-worker chart');
  }
  assert.equal(await v.locator('.cp-table tbody tr').count(), cats.length);
  // a step whose path waited on another worker names it
  const waited = ids.flatMap((id) => cp.workers[id].steps.filter((st) => st['waited for']).map((st) => st['waited for']));
  const links = await v.locator('.cp-table tbody tr').evaluateAll((trs) => trs.flatMap((tr) => [...tr.querySelectorAll('div')]
    .filter((d) => /^waited for /.test(d.textContent)).map((d) => d.querySelector('a.chip').getAttribute('title'))));
  assert.deepEqual(links.sort(), waited.sort());
  if (Array.isArray(cp.job) && cp.job.length) {
    const j = await chartOf(page, 'chart-cp-job');
    assert.equal(j.cats.length, cp.job.length);
    const jobRows = v.locator('.tbl-wrap').last().locator('tbody tr');
    assert.equal(await jobRows.count(), cp.job.length);
    const first = [...cp.job].sort((a, b) => a.number - b.number)[0];
    assert.equal((await jobRows.first().locator('a.chip').textContent()).trim(), 'rank ' + rankOf(first.through));
    assert.equal(await jobRows.first().locator('a.chip').getAttribute('href'), '#worker/' + encodeURIComponent(first.through));
    if (first['what-if (ms)'] != null) assert.ok((await jobRows.first().textContent()).includes(msText(first['what-if (ms)'])), 'what-if shown');
  } else {
    assert.equal(await v.locator('#chart-cp-job').count(), 0);
  }
  assert.match(await v.locator('.stats').textContent(), /Waiting for other workers/);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'fits 1280 px');
  await page.screenshot({ path: path.join(ART, 'critpath-dlrm.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('no section, an empty one, or one without steps: no tab, #critpath shows the overview', async () => {
  const base = JSON.parse(JSON.stringify(rep1));
  const cases = { none: undefined, empty: {}, noworkers: { kinds: KINDS, workers: {} }, nosteps: { kinds: KINDS, workers: { x: { steps: [] } }, job: [] } };
  for (const [name, sec] of Object.entries(cases)) {
    const rep = JSON.parse(JSON.stringify(base));
    if (sec === undefined) delete rep['Critical path']; else rep['Critical path'] = sec;
    const dir = path.join(TMP, 'edge-' + name);
    writeReport(dir, rep);
    const { page, problems } = await open(pageOf(dir) + '#critpath');
    assert.equal(await page.locator('#tabs [data-tab="critpath"]').count(), 0, name);
    assert.equal(await page.locator('#view-overview:not([hidden])').count(), 1, name);
    assert.deepEqual(problems, [], name);
    await page.close();
  }
});

test('a trace without steps (step -1), no "wait" in the splits, no kinds list, markup in names: one bar named window', async () => {
  const rep = JSON.parse(JSON.stringify(rep1));
  const id = Object.keys(rep.workers)[0];
  const s = { cpu: 30.5, compute: 200.25, communication: 80, memory: 3, launch: 20, gap: 131.4 };
  rep['Critical path'] = { workers: { [id]: { steps: [{ number: -1, ms: 465.15, slow: false, 'split (ms)': s,
    functions: [{ name: KERNEL, kind: 'kernel', ms: 34.1, 'median (ms)': 34.1 }, { name: MARKUP, kind: 'cpu_op', ms: 2.5, 'median (ms)': 2.5 }],
    waits: [{ span: MARKUP, call: 'cudaStreamSynchronize', ms: 1.25, target: 'thread 42' }] }] } } };
  const dir = path.join(TMP, 'window');
  writeReport(dir, rep);
  const { page, problems } = await open(pageOf(dir));
  const v = await showCritPath(page);
  const c = await chartOf(page, 'chart-cp-steps');
  assert.deepEqual(c.series.map((x) => x.name), KINDS);
  assert.deepEqual(c.cats, ['window']);
  assert.equal(await v.locator('.cp-table tbody tr').count(), 1);
  assert.match(await v.locator('.cp-table tbody tr').textContent(), /window/);
  assert.match(await v.locator('.cp-table').textContent(), /none is marked slow/);
  // names are text, never markup
  assert.equal(await page.locator('#pt-injected').count(), 0);
  assert.equal(await page.evaluate(() => window.__ptXss), undefined);
  assert.match(await v.locator('.cp-table tbody tr').textContent(), /waits 1\.25 ms in <img src=x/);
  assert.match(await v.locator('.cp-table tbody tr').textContent(), /\(cudaStreamSynchronize\) for thread 42/);
  assert.deepEqual(problems, []);
  await page.close();
});
