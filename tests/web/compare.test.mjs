// compare.test.mjs - the compare view of PerfDisplay in a real browser
// (headless chromium through playwright-core, run by tests/web/run.sh).
//
// The reports are real: `perftracker compare` of the DLRM set against a copy
// made by tests/tools/plant_compare.py (a new 2 ms kernel on every rank, and
// rank 5's GPU kernels 1.3x slower), and the same with the new kernel named
// with HTML markup.  The page must open on the compare view alone (summary
// sentence, both sides' step times, the waterfall, the findings), show every
// name as text, say so when the runs have nothing in common (BERT against
// DLRM), and an ordinary diagnosis report must not get the view.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { ROOT, BIN, DATA, PY, ART, launch, openPage, pageOf } from './harness.mjs';

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'pt-compare-'));
const MARKUP = '<img src=x onerror="window.__ptXss=1"><marquee id="pt-injected">k</marquee>';
let browser;

function plant(dst, args) {
  execFileSync(PY, [path.join(ROOT, 'tests/tools/plant_compare.py'), path.join(DATA, 'dlrm'), dst, ...args], { stdio: 'ignore' });
}
function compare(a, b, out) {
  execFileSync(BIN, ['compare', a, b, '-q', '-o', out], { stdio: ['ignore', 'pipe', 'pipe'] });
}

before(async () => {
  fs.mkdirSync(ART, { recursive: true });
  plant(path.join(TMP, 'both'), ['--new', 'planted_kernel', '--new-ms', '2']);
  // rank 5 of "both" also gets slower kernels
  execFileSync(PY, [path.join(ROOT, 'tests/tools/plant_compare.py'), path.join(TMP, 'both'), path.join(TMP, 'both2'),
    '--scale-kernels', '1.3', '--rank', '5'], { stdio: 'ignore' });
  compare(path.join(DATA, 'dlrm'), path.join(TMP, 'both2'), path.join(TMP, 'out'));
  plant(path.join(TMP, 'evil'), ['--new', MARKUP, '--new-ms', '2']);
  compare(path.join(DATA, 'dlrm'), path.join(TMP, 'evil'), path.join(TMP, 'outevil'));
  execFileSync(BIN, ['analyze', path.join(DATA, 'dlrm'), '-q', '-o', path.join(TMP, 'diag')], { stdio: 'ignore' });
  compare(path.join(DATA, 'TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz'),
    path.join(DATA, 'dlrm'), path.join(TMP, 'unrelated'));
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  fs.rmSync(TMP, { recursive: true, force: true });
});

function open(dir) { return openPage(browser, pageOf(dir)); }

test('compare report: the compare view alone, summary, step times, waterfall, findings', async () => {
  const rep = JSON.parse(fs.readFileSync(path.join(TMP, 'out', 'PerfDisplay', 'report.json'), 'utf8'));
  const c = rep.Compare;
  // what the page is given: the new kernel on every rank, rank 5's compute
  assert.equal(c.findings[0].name, 'planted_kernel');
  assert.equal(c.findings[0].change, 'appeared');
  assert.ok(c.findings.some((f) => f.class === 'compute' && f.scope === 'class' && JSON.stringify(f.ranks) === '[5]'));
  // rank 5's copy of the new kernel is 1.3x longer too: 0.6 ms beyond the job's 2 ms
  assert.ok(c.findings.some((f) => f.name === 'planted_kernel' && JSON.stringify(f.ranks) === '[5]' && Math.abs(f.delta_ms - 0.6) < 0.01));
  const { page, problems } = await open(path.join(TMP, 'out'));
  const tabs = await page.$$eval('#tabs button', (bs) => bs.map((b) => b.getAttribute('data-tab')));
  assert.deepEqual(tabs, ['compare']);
  assert.equal(await page.getAttribute('#tabs button[data-tab="compare"]', 'aria-selected'), 'true');
  const v = page.locator('#view-compare');
  assert.equal(await v.locator('#compare-summary').textContent(), c.summary);
  assert.match(c.summary, /^NEW is 1\.\d\dx slower per step: .* the new `planted_kernel`/);
  // both charts drawn
  for (const id of ['#chart-cmp-steps', '#chart-cmp-waterfall']) {
    assert.equal(await v.locator(id + ' canvas').count(), 1, id + ' has a canvas');
    const box = await v.locator(id).boundingBox();
    assert.ok(box && box.width > 300 && box.height > 200, id + ' has a size');
  }
  // the waterfall's bars: BASELINE, one per whole-job change, the rest, NEW
  const cats = await page.evaluate(() => {
    const el = document.querySelector('#chart-cmp-waterfall');
    const inst = window.echarts && window.echarts.getInstanceByDom(el);
    return inst ? inst.getOption().xAxis[0].data : null;
  });
  if (cats) assert.deepEqual(cats, ['BASELINE', ...c.waterfall.map((b) => b.label), 'NEW']);
  // findings table: the new kernel first, rank 5's compute listed
  const rows = await v.locator('.tbl-wrap').first().locator('tbody tr').allTextContents();
  assert.equal(rows.length, c.findings.length);
  assert.match(rows[0], /planted_kernel/);
  assert.match(rows.join('\n'), /rank 5/);
  await page.screenshot({ path: path.join(ART, 'perfdisplay-compare.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('compare report: names with markup stay text', async () => {
  const { page, problems } = await open(path.join(TMP, 'outevil'));
  const rows = await page.locator('#view-compare .tbl-wrap').first().locator('tbody tr').allTextContents();
  // shown as text (a kernel's name in the table and the sentences loses what
  // reads as template arguments, from its second '<', as everywhere in the
  // report; the full name is the cell's title)
  const shown = MARKUP.slice(0, MARKUP.indexOf('<', 1));
  assert.ok(rows[0].includes(shown), 'the markup name is shown as text: ' + rows[0]);
  assert.ok((await page.locator('#compare-summary').textContent()).includes(shown));
  assert.equal(await page.locator('#view-compare .tbl-wrap tbody tr td span[title]').first().getAttribute('title'), MARKUP);
  assert.equal(await page.locator('#pt-injected').count(), 0, 'no markup injected');
  assert.equal(await page.evaluate(() => window.__ptXss), undefined);
  assert.deepEqual(problems, []);
  await page.close();
});

test('diagnosis report: no compare view', async () => {
  const { page, problems } = await open(path.join(TMP, 'diag'));
  const tabs = await page.$$eval('#tabs button', (bs) => bs.map((b) => b.getAttribute('data-tab')));
  assert.ok(tabs.includes('overview') && !tabs.includes('compare'), tabs.join(','));
  assert.deepEqual(problems, []);
  await page.close();
});

test('compare report of unrelated runs: says so, lists nothing, draws both charts', async () => {
  const { page, problems } = await open(path.join(TMP, 'unrelated'));
  assert.match(await page.locator('#compare-summary').textContent(), /^BASELINE and NEW have little in common/);
  assert.match(await page.locator('#view-compare').textContent(), /too little in common to compare function by function/);
  for (const id of ['#chart-cmp-steps', '#chart-cmp-waterfall']) assert.equal(await page.locator(id + ' canvas').count(), 1, id);
  await page.screenshot({ path: path.join(ART, 'perfdisplay-compare-unrelated.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});
