// hardware.test.mjs - the Hardware view of PerfDisplay (display.hw,
// docs/hardware.md "Timelines") in headless chromium via playwright-core:
// the tab appears only with timelines, the worker the findings name is
// shown first, one chart per unit, the window shaded and its steps marked
// on the same ms axis as the step times, markup in names and notes shown as
// text, #hardware?q=<worker> and the selector switch workers.  Reports are
// bench/gen_report.py's with a display.hw added here; pages are written by
// `perftracker display --rebuild`.  Screenshots go to $PT_ARTIFACTS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { ROOT, BIN, PY, ART, launch, openPage, pageOf } from './harness.mjs';

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'pt-hw-page-'));
const MARKUP = '<img src=x onerror="window.__ptXss=1">';
let browser;

function writeReport(dir, rep) {
  fs.mkdirSync(path.join(dir, 'PerfDisplay'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'PerfDisplay/report.json'), JSON.stringify(rep));
  execFileSync(BIN, ['display', dir, '--rebuild', '--no-serve'], { stdio: ['ignore', 'pipe', 'pipe'] });
}
function genReport(workers) {
  const out = path.join(TMP, 'gen.json');
  execFileSync(PY, [path.join(ROOT, 'bench/gen_report.py'), '--workers', String(workers), '-o', out]);
  return JSON.parse(fs.readFileSync(out, 'utf8'));
}
function series(name, device, label, unit, max, f, n = 60) {
  const t = [], v = [];
  for (let i = 0; i < n; i++) { t.push(-250 + i * 10); v.push(f(i)); }
  return { name, device, label, unit, max, t_ms: t, v };
}

function open(url) { return openPage(browser, url); }

const WITH = path.join(TMP, 'with');
const WITHOUT = path.join(TMP, 'without');
let ids, named;

before(async () => {
  fs.mkdirSync(ART, { recursive: true });
  const rep = genReport(8);
  ids = Object.keys(rep.workers).sort((a, b) => rep.workers[a].rank - rep.workers[b].rank);
  named = rep.findings.find((f) => Array.isArray(f.workers) && f.workers.length).workers[0];
  const full = (id) => ({
    host: rep.workers[id].host, rank: rep.workers[id].rank, t0_us: 1.7e15, window_ms: rep.workers[id]['window (ms)'],
    source: 'nvml+proc', note: 'infiniband: no device in ' + MARKUP,
    series: [
      series('gpu_util', 3, '', '%', 100, (i) => (i % 10 < 7 ? 95 : 20)),
      series('cpu_util', -1, '', '%', 100, () => 30),
      series('nvlink_tx', 3, '', 'B/s', 3e11, (i) => (i % 10 < 7 ? 2e9 : 1.2e11)),
      series('nic_rx', -1, MARKUP, 'B/s', 0, () => 1e8),
      series('sm_clock', 3, '', 'MHz', 0, () => 1410),
      series('power', 3, '', 'W', 0, () => 300),
      series('temperature', 3, '', 'C', 0, () => 70),
      series('mem_available', -1, '', 'B', 0, () => 2 ** 36),
      series('throttle', 3, '', '', 0, (i) => (i > 40 ? 4 : 0)),
    ],
  });
  const small = (id) => ({ host: rep.workers[id].host, rank: rep.workers[id].rank, t0_us: 1.7e15, window_ms: 100,
    source: 'proc', note: '', series: [series('cpu_util', -1, '', '%', 100, () => 12), series('nic_tx', -1, 'eth0', 'B/s', 0, () => 5e6)] });
  rep.display.hw = { version: 1, workers_with_samples: 8, workers: {} };
  rep.display.hw.workers[ids[0]] = small(ids[0]);
  rep.display.hw.workers[named] = full(named);
  rep.display.hw.workers[ids[1] === named ? ids[2] : ids[1]] = small(ids[1] === named ? ids[2] : ids[1]);
  writeReport(WITH, rep);
  delete rep.display.hw;
  writeReport(WITHOUT, rep);
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  fs.rmSync(TMP, { recursive: true, force: true });
});

test('no display.hw: no Hardware tab', async () => {
  const { page, problems } = await open(pageOf(WITHOUT));
  assert.deepEqual(problems, []);
  assert.equal(await page.locator('#tabs button[data-tab="hardware"]').count(), 0);
  await page.close();
});

test('Hardware view: the named worker first, one chart per unit, window and steps on the ms axis', async () => {
  const { page, problems } = await open(pageOf(WITH));
  assert.equal(await page.textContent('#tabs button[data-tab="hardware"] .count'), '3');
  await page.click('#tabs button[data-tab="hardware"]');
  await page.waitForSelector('#view-hardware:not([hidden]) canvas');
  const v = page.locator('#view-hardware');
  assert.equal(await v.locator('select').inputValue(), named);
  // %, B/s, MHz, W, C, B and the throttle mask: seven charts, in that order
  assert.deepEqual(await v.locator('.chart-card').evaluateAll((els) => els.map((e) => e.getAttribute('data-unit'))),
    ['%', 'B/s', 'MHz', 'W', 'C', 'B', '']);
  assert.equal(await v.locator('.chart-card canvas').count(), 7);
  // Aligned with the window: shaded [0, window] and the step ends (but the
  // last) as lines, from display.workers[].step_ms.
  const got = await page.evaluate((id) => {
    /* global echarts */
    const o = echarts.getInstanceByDom(document.querySelector('#view-hardware #chart-hw-1')).getOption();
    return { area: o.series[0].markArea.data[0].map((p) => p.xAxis), lines: o.series[0].markLine.data.map((p) => p.xAxis),
      names: o.series.map((s) => s.name), y0: o.series[0].data[0][1] };
  }, named);
  const rep = JSON.parse(fs.readFileSync(path.join(WITH, 'PerfDisplay/report.json'), 'utf8'));
  const steps = rep.display.workers[named].step_ms;
  assert.deepEqual(got.area, [0, rep.display.hw.workers[named].window_ms]);
  assert.equal(got.lines.length, steps.length - 1);
  assert.ok(Math.abs(got.lines[0] - steps[0]) < 1e-9);
  assert.ok(Math.abs(got.lines[1] - steps[0] - steps[1]) < 1e-9);
  assert.deepEqual(got.names, ['nvlink_tx gpu3', 'nic_rx ' + MARKUP]);
  assert.equal(got.y0, 2);  // 2e9 B/s in GB/s
  // Markup in the note and a series label stays text.
  assert.match(await v.locator('.banner').textContent(), /Not sampled: infiniband: no device in <img src=x/);
  assert.equal(await v.locator('img').count(), 0);
  assert.equal(await page.evaluate(() => window.__ptXss), undefined);
  await page.screenshot({ path: path.join(ART, 'perfdisplay-hardware.png'), fullPage: true });
  // Another worker through the selector: two units only.
  await v.locator('select').selectOption(ids[0]);
  await page.waitForFunction(() => document.querySelectorAll('#view-hardware .chart-card').length === 2);
  assert.equal(await v.locator('.chart-card canvas').count(), 2);
  assert.deepEqual(problems, []);
  await page.close();
});

test('#hardware?q=<worker> opens that worker', async () => {
  const { page, problems } = await open(pageOf(WITH) + '#hardware?q=' + encodeURIComponent(ids[0]));
  await page.waitForSelector('#view-hardware:not([hidden]) canvas');
  assert.equal(await page.locator('#view-hardware select').inputValue(), ids[0]);
  assert.match(await page.locator('#view-hardware .note').last().textContent(), /source proc/);
  assert.deepEqual(problems, []);
  await page.close();
});
