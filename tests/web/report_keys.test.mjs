// report_keys.test.mjs - the page shows what the report decided (issue 30,
// docs CONTRACT): a finding's link from its "view", its numbers formatted by
// the units of its "metrics", its workers named by its "labels", the slow
// workers from "display"."workers"[id]."slow" and "step threshold (ms)", the
// short function names from "display"."short".  The real DLRM report with
// these keys added by hand, and the same report without them (an older
// report): no view link guessed from the category, full names, no worker
// marked slow.  Run by tests/web/run.sh.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { BIN, DATA, launch, openPage, pageOf } from './harness.mjs';

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'pt-keys-'));
const DLRM = path.join(TMP, 'dlrm');
const WITH = path.join(TMP, 'with');
const OLD = path.join(TMP, 'old');
const W7 = 'worker7_step_12.1694128201553.pt.trace.json';
const W0 = 'worker0_step_12.1694128201545.pt.trace.json';
const W2 = 'worker2_step_12.1694128201554.pt.trace.json';
const KERNEL = 'void linearize_index_kernel<long>(at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTraits, int>, ' +
  'at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTraits, int>, ' +
  'at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTraits, int>)1_1_1|1024_1_1';
let browser;

function run(args) {
  return execFileSync(BIN, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}
function write(dir, rep) {
  fs.mkdirSync(path.join(dir, 'PerfDisplay'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'PerfDisplay/report.json'), JSON.stringify(rep, null, 1));
  run(['display', dir, '--rebuild', '--no-serve']);
}
// a second finding in the GPU Compute category, on rank 2, its ratio a share
function computeFinding() {
  return { rank: 2, category: 'GPU Compute', workers: [W2], function: KERNEL, metric: 'bottleneck ratio (in [0,1])',
    value: 0.25, others: 0.1, 'impact (ms)': 1.5, explanation: 'linearize_index_kernel takes longer on rank 2' };
}

before(async () => {
  run(['analyze', path.join(DATA, 'dlrm'), '-o', DLRM, '-q']);
  const rep = JSON.parse(fs.readFileSync(path.join(DLRM, 'PerfDisplay/report.json'), 'utf8'));
  assert.equal(rep.findings[0].workers[0], W7);
  // the older report: as analyze writes it today, one more finding
  const old = structuredClone(rep);
  old.findings.push(computeFinding());
  for (const k of ['view', 'labels', 'metrics']) old.findings.forEach((f) => delete f[k]);
  delete old.display.short;
  delete old.display['step threshold (ms)'];
  Object.values(old.display.workers).forEach((w) => delete w.slow);
  write(OLD, old);
  // with the keys: the straggler finding links to Communication (not to
  // what its category would suggest), rank 0 (neither the longest nor the
  // shortest step) is the one slow worker, one kernel has a short name
  const f0 = rep.findings[0];
  f0.view = 'communication';
  f0.labels = ['rank 7'];
  f0.metrics = [{ name: f0.metric, value: f0.value, unit: 'ms' }, { name: 'late arrivals', value: 3, unit: 'count' }];
  const f1 = computeFinding();
  f1.labels = ['rank 2'];
  f1.metrics = [{ name: f1.metric, value: f1.value, unit: 'share' }];
  rep.findings.push(f1);
  rep.display['step threshold (ms)'] = 14.25;
  Object.keys(rep.display.workers).forEach((id) => { rep.display.workers[id].slow = id === W0; });
  rep.display.short = { [KERNEL]: 'linearize_from_the_report' };
  write(WITH, rep);
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  fs.rmSync(TMP, { recursive: true, force: true });
});

// the worker table's step cell of each worker: is it marked (#cf222e)?
async function stepMarks(page) {
  await page.goto(page.url().replace(/#.*$/, '') + '#workers');
  await page.waitForSelector('#view-workers:not([hidden]) table');
  return page.evaluate(() => {
    const tbl = document.querySelector('#view-workers table');
    const at = [...tbl.querySelectorAll('thead th')].findIndex((th) => th.getAttribute('data-key') === 'step');
    const out = {};
    tbl.querySelectorAll('tbody tr').forEach((tr) => {
      const id = tr.children[0].querySelector('a.chip').getAttribute('title');
      out[id] = getComputedStyle(tr.children[at].querySelector('span')).color === 'rgb(207, 34, 46)';
    });
    return out;
  });
}

test('a finding links to the view the report gives it, names its workers by its labels, formats its metrics by their units', async () => {
  const { page, problems } = await openPage(browser, pageOf(WITH));
  const cards = page.locator('#findings .finding');
  assert.equal(await cards.count(), 2);
  const c0 = cards.nth(0);
  assert.equal(await c0.getAttribute('data-view'), 'communication');
  const link = c0.locator('a', { hasText: 'see ' });
  assert.equal(await link.getAttribute('href'), '#communication?q=' + encodeURIComponent(W7));
  assert.equal((await link.textContent()).trim(), 'see Communication →');
  assert.match(await c0.locator('.title').textContent(), /^Worker rank 7/);
  const chip = c0.locator('a.chip.bad');
  assert.equal((await chip.textContent()).trim(), 'rank 7');
  assert.equal(await chip.getAttribute('title'), W7);
  assert.equal(await c0.locator('.evidence').textContent(), 'others_waited_ms: 5.08 ms vs 0 ms on the other workers · late arrivals 3');
  // no "view": no link, whatever the category says; a share in %
  const c1 = cards.nth(1);
  assert.equal(await c1.getAttribute('data-view'), null);
  assert.equal(await c1.locator('a', { hasText: 'see ' }).count(), 0);
  assert.equal(await c1.locator('.evidence').textContent(), 'bottleneck ratio: 25.0% vs 10.0% on the other workers (2.50×)');
  assert.equal((await c1.locator('a.chip.bad').textContent()).trim(), 'rank 2');
  // the short name from the report, the whole key on hover
  const fn = c1.locator('.title .fn');
  assert.equal(await fn.textContent(), 'linearize_from_the_report');
  assert.equal(await fn.getAttribute('title'), KERNEL);
  assert.deepEqual(problems, []);
  await page.close();
});

test('slow workers and the step threshold come from the report', async () => {
  const { page, problems } = await openPage(browser, pageOf(WITH));
  const stats = await page.locator('#view-overview .stats').textContent();
  assert.match(stats, /Slow-step outliers1limit 14\.3 ms/);
  const marks = await stepMarks(page);
  assert.equal(Object.keys(marks).length, 8);
  assert.deepEqual(Object.keys(marks).filter((id) => marks[id]), [W0]);
  assert.deepEqual(problems, []);
  await page.close();
});

test('short function names come from the report, the full key where it has none', async () => {
  const { page, problems } = await openPage(browser, pageOf(WITH) + '#compute');
  const v = page.locator('#view-compute');
  await page.waitForSelector('#view-compute:not([hidden]) table');
  const names = await v.locator('.tbl .fn').evaluateAll((els) => els.map((e) => [e.textContent, e.title]));
  assert.ok(names.some(([t, k]) => t === 'linearize_from_the_report' && k === KERNEL), 'the short name given');
  const others = names.filter(([, k]) => k !== KERNEL);
  assert.ok(others.length > 0);
  others.forEach(([t, k]) => assert.equal(t, k, 'no short name in the report: the key itself'));
  assert.deepEqual(problems, []);
  await page.close();
});

test('an older report (no view, labels, metrics, short, slow): no link guessed, full names, no worker marked slow', async () => {
  const { page, problems } = await openPage(browser, pageOf(OLD));
  const cards = page.locator('#findings .finding');
  assert.equal(await cards.count(), 2);
  for (let i = 0; i < 2; i++) assert.equal(await cards.nth(i).locator('a', { hasText: 'see ' }).count(), 0);
  // ids on the chips; a section key's unit from the keys table
  assert.equal((await cards.nth(1).locator('a.chip.bad').textContent()).trim(), W2);
  assert.match(await cards.nth(1).locator('.evidence').textContent(), /^bottleneck ratio: 25\.0% vs 10\.0%/);
  assert.equal(await cards.nth(1).locator('.title .fn').textContent(), KERNEL);
  assert.match(await page.locator('#view-overview .stats').textContent(), /Slow-step outliers–this report does not mark slow workers/);
  const marks = await stepMarks(page);
  assert.deepEqual(Object.keys(marks).filter((id) => marks[id]), []);
  assert.deepEqual(problems, []);
  await page.close();
});
