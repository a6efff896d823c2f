// rough.test.mjs - PerfDisplay without rough edges (issue 13), in headless
// chromium: no sideways scroll at 1280 px on the DLRM (planted anomalies),
// CPU demo and trace_filter reports; the Communication table fits at 1600 px;
// short kernel names that stay different; stacks read leaf first with their
// callers (never "3 callers"); no "(in [0,1])" over % values; µs-scale values
// in µs; the per-worker page lists that worker's heatmap deviations; the
// node's CPU/NIC/memory samples shown; no internal note about the "display"
// key; findings with a confidence level, weak ones styled apart.
// Run by tests/web/run.sh; screenshots in $PT_ARTIFACTS (rough-*.png).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { ROOT, BIN, DATA, PY, ART, launch, openPage, pageOf } from './harness.mjs';

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'pt-rough-'));
const PLANTED = path.join(TMP, 'planted');
const DEMO = path.join(TMP, 'demo');
const DEMOHW = path.join(TMP, 'demohw');
const TF = path.join(TMP, 'tf');
let browser;

function run(args) {
  return execFileSync(BIN, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}
function open(url, width) { return openPage(browser, url, { width, height: 900 }); }
async function showView(page, id) {
  await page.click(`#tabs button[data-tab="${id}"]`);
  await page.waitForSelector(`#view-${id}:not([hidden])`);
  return page.locator(`#view-${id}`);
}
// How far the document is wider than the window (0: no sideways scroll).
function overflowX(page) {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

before(async () => {
  fs.mkdirSync(ART, { recursive: true });
  execFileSync(PY, [path.join(ROOT, 'tests/tools/plant_anomalies.py'), path.join(DATA, 'dlrm'), path.join(TMP, 'pl')]);
  run(['analyze', path.join(TMP, 'pl'), '-o', PLANTED, '-q']);
  run(['diagnose', path.join(DATA, 'demo_cpu4'), '-o', DEMO, '-q']);
  run(['diagnose', path.join(DATA, 'demo_cpu4_hw'), '-o', DEMOHW, '-q']);
  run(['analyze', path.join(DATA, 'HolisticTraceAnalysis/tests/data/trace_filter'), '-o', TF, '-q']);
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  fs.rmSync(TMP, { recursive: true, force: true });
});

for (const [name, dir] of [['dlrm', () => PLANTED], ['demo', () => DEMO], ['trace_filter', () => TF]]) {
  test(`${name}: no horizontal scroll at 1280 px on any tab`, async () => {
    const { page, problems } = await open(pageOf(dir()), 1280);
    const tabs = await page.$$eval('#tabs button', (bs) => bs.map((b) => b.getAttribute('data-tab')));
    for (const id of tabs) {
      await showView(page, id);
      await page.waitForTimeout(50);
      assert.equal(await overflowX(page), 0, `${name}: tab ${id} scrolls sideways`);
    }
    await showView(page, 'overview');
    await page.screenshot({ path: path.join(ART, `rough-${name}-1280.png`), fullPage: true });
    assert.deepEqual(problems, []);
    await page.close();
  });
}

test('finding cards keep a long kernel name inside the card', async () => {
  const { page } = await open(pageOf(TF), 1280);
  const cards = page.locator('#view-overview .finding');
  assert.ok(await cards.count() >= 1);
  const over = await cards.evaluateAll((els) => els.map((e) => e.scrollWidth - e.clientWidth));
  assert.deepEqual(over, over.map(() => 0));
  await page.close();
});

test('Communication table fits at 1600 px with every column', async () => {
  const { page } = await open(pageOf(PLANTED), 1600);
  const v = await showView(page, 'communication');
  const wrap = v.locator('.tbl-scroll').first();
  const fit = await wrap.evaluate((e) => e.scrollWidth - e.clientWidth);
  assert.equal(fit, 0, 'no horizontal scrolling inside the table');
  const heads = await v.locator('table.tbl').first().locator('th').allTextContents();
  assert.ok(heads.some((t) => /median duration/.test(t)), heads.join(' | '));
  assert.ok(!heads.some((t) => /in \[0,1\]/.test(t)), 'no "(in [0,1])" in headers: ' + heads.join(' | '));
  await page.screenshot({ path: path.join(ART, 'rough-dlrm-communication-1600.png'), fullPage: true });
  await page.close();
});

test('top kernels: short names that differ, in µs', async () => {
  const { page } = await open(pageOf(PLANTED), 1400);
  const v = await showView(page, 'compute');
  const names = await v.locator('table.tbl').nth(1).locator('td .fn').allTextContents();
  assert.ok(names.length >= 5, names.join(' | '));
  assert.equal(new Set(names).size, names.length, 'all different: ' + names.join(' | '));
  assert.ok(names.some((n) => n.startsWith('vectorized_elementwise_kernel<…sqrt_kernel_cuda…>')), names.join(' | '));
  assert.ok(names.every((n) => n.length <= 80), names.join(' | '));
  assert.ok(!names.some((n) => n.startsWith('void ')), names.join(' | '));
  const text = await v.textContent();
  assert.match(text, /3\.00 µs/);
  assert.doesNotMatch(text, /0\.00[0-9] ms/);
  const heads = (await v.locator('th').allTextContents()).join(' | ');
  assert.doesNotMatch(heads, /in \[0,1\]/);
  await page.close();
});

test('stacks read leaf first with their callers, not a count', async () => {
  const { page } = await open(pageOf(DEMO), 1400);
  const v = await showView(page, 'python');
  const text = await v.textContent();
  assert.doesNotMatch(text, /callers?\b/);
  const names = await v.locator('table.tbl').first().locator('td .fn').allTextContents();
  const sleeps = names.filter((n) => n.startsWith('<built-in function sleep> ← train_gloo.py: '));
  assert.ok(sleeps.length >= 2, names.join(' | '));
  assert.equal(new Set(sleeps).size, sleeps.length, 'the two sleep stacks read differently');
  await page.close();
});

test('findings carry their confidence; weak ones look different', async () => {
  const { page } = await open(pageOf(DEMO), 1280);
  const levels = await page.$$eval('#view-overview .finding', (els) => els.map((e) => e.getAttribute('data-confidence')));
  assert.ok(levels.includes('strong') && levels.includes('weak'), levels.join(','));
  const weak = page.locator('#view-overview .finding.conf-weak').first();
  const strong = page.locator('#view-overview .finding.conf-strong').first();
  assert.match(await weak.textContent(), /aten::mm|weak/);
  const style = (l) => l.evaluate((e) => getComputedStyle(e).borderLeftStyle + ' ' + getComputedStyle(e).borderLeftColor);
  assert.notEqual(await style(weak), await style(strong));
  assert.match(await weak.locator('.confidence-note').textContent(), /^weak: loses/);
  await page.screenshot({ path: path.join(ART, 'rough-demo-findings.png'), fullPage: false });
  await page.close();
});

// Issue 20: weak findings in one collapsed group after the causes; a
// finding's merged evidence on its card; GPU charts only for a job with
// GPU kernels (the CPU demo has none, the DLRM set has).
test('possibly-noise findings grouped and collapsed; merged evidence; GPU charts only with GPU kernels', async () => {
  const RUNS = path.join(TMP, 'runs');
  run(['diagnose', path.join(DATA, 'demo_runs/c'), '-o', RUNS, '-q']);
  const { page, problems } = await open(pageOf(RUNS), 1280);
  const top = page.locator('#findings > .finding');
  assert.equal(await top.count(), 1);
  assert.equal(await page.locator('#tabs button[data-tab="overview"] .count').textContent(), '1');
  assert.match(await top.first().locator('.title').textContent(), /rank 1/);
  const grp = page.locator('#findings > details#possibly-noise');
  assert.equal(await grp.count(), 1);
  assert.equal(await grp.evaluate((e) => e.open), false);
  assert.ok(!(await grp.locator('.finding').first().isVisible()));
  assert.match(await grp.locator(':scope > summary').textContent(), /^Possibly noise: 3 findings/);
  await grp.locator(':scope > summary').click();
  assert.ok(await grp.locator('.finding').first().isVisible());
  const ev = top.first().locator('details.merged-evidence');
  assert.match(await ev.locator('summary').textContent(), /^Also seen: 5 findings of this cause \(same cause, its own collectives, symptom on a worker that waited for it\)/);
  assert.equal(await ev.locator('li').count(), 5);
  assert.equal(await page.locator('#view-overview h3', { hasText: 'GPU utilization per worker' }).count(), 0);
  assert.match(await page.locator('#view-overview .stats').textContent(), /no GPU kernel in the traces/);
  await page.screenshot({ path: path.join(ART, 'rough-demo-run-findings.png'), fullPage: false });
  assert.deepEqual(problems, []);
  await page.close();
  const gpu = await open(pageOf(PLANTED), 1280);
  assert.equal(await gpu.page.locator('#view-overview h3', { hasText: 'GPU utilization per worker' }).count(), 1);
  await gpu.page.close();
});

test('per-worker page lists that worker\'s heatmap deviations', async () => {
  const rep = JSON.parse(fs.readFileSync(path.join(PLANTED, 'PerfDisplay/report.json'), 'utf8'));
  const w6 = Object.keys(rep.workers).find((id) => rep.workers[id].rank === 6);
  const { page, problems } = await open(pageOf(PLANTED) + '#worker/' + encodeURIComponent(w6), 1280);
  await page.waitForSelector('#view-worker:not([hidden]) h1');
  const t = page.locator('#view-worker .worker-heat');
  assert.equal(await t.count(), 1);
  const rows = await t.locator('tbody tr').count();
  assert.ok(rows >= 1, 'at least one deviating function');
  assert.match(await t.locator('tbody tr').first().textContent(), /^aten::as_strided ← .*only here$/);
  assert.equal(await overflowX(page), 0);
  await page.screenshot({ path: path.join(ART, 'rough-dlrm-worker6.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('node CPU, NIC and memory samples from the agent are shown', async () => {
  const { page, problems } = await open(pageOf(DEMOHW), 1280);
  const v = await showView(page, 'hardware');
  await page.waitForTimeout(200);
  const text = await v.textContent();
  assert.match(text, /cpu/i);
  assert.match(text, /nic|eth0/i);
  assert.ok(await v.locator('canvas').count() >= 1, 'sample charts drawn');
  assert.equal(await overflowX(page), 0);
  await page.screenshot({ path: path.join(ART, 'rough-demo-hardware.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('no internal note about the "display" key; the version in the footer', async () => {
  const rep = JSON.parse(fs.readFileSync(path.join(DEMO, 'PerfDisplay/report.json'), 'utf8'));
  delete rep.display;
  const dir = path.join(TMP, 'nodisplay');
  fs.mkdirSync(path.join(dir, 'PerfDisplay'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'PerfDisplay/report.json'), JSON.stringify(rep));
  run(['display', dir, '--rebuild', '--no-serve']);
  const { page } = await open(pageOf(dir), 1280);
  const tabs = await page.$$eval('#tabs button', (bs) => bs.map((b) => b.getAttribute('data-tab')));
  for (const id of tabs) {
    const v = await showView(page, id);
    assert.doesNotMatch(await v.textContent(), /"display" key|display key/, 'tab ' + id);
  }
  const version = run(['--version']).trim().replace(/^perftracker /, '');
  assert.match(await page.textContent('footer'), new RegExp('PerfTracker ' + version.replace(/\./g, '\\.') + ' report'));
  await page.close();
});
