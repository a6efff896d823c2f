// single.test.mjs - PerfDisplay's views of one worker's time (issue 10) in
// headless chromium via playwright-core: the "Time breakdown" and "Steps"
// tabs appear for a report that has them (and not for one without), the
// per-step view draws its chart and marks the planted slow step with the
// function it names, the breakdown table names the data loader, GPU
// Compute shows GPU busy and GPU compute utilization side by side.  The
// report is `perftracker analyze` of the real resnet50 trace
// (tests/data/kineto) with one function made slower in step 7
// (tests/tools/plant_slow_step.py).  Screenshots go to $PT_ARTIFACTS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { ROOT, BIN, DATA, PY, ART, launch, openPage, pageOf } from './harness.mjs';

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'pt-single-page-'));
const RESNET = path.join(DATA, 'kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz');
let browser;

function open(url) { return openPage(browser, url); }

const SLOW = path.join(TMP, 'slow');
const DLRM = path.join(TMP, 'dlrm');

before(async () => {
  fs.mkdirSync(ART, { recursive: true });
  const trace = path.join(TMP, 'resnet_slow.json');
  execFileSync(PY, [path.join(ROOT, 'tests/tools/plant_slow_step.py'), RESNET, trace, '7', 'Optimizer.step#SGD.step', '40']);
  execFileSync(BIN, ['analyze', trace, '-o', SLOW, '-q'], { stdio: ['ignore', 'pipe', 'pipe'] });
  execFileSync(BIN, ['analyze', path.join(DATA, 'dlrm/worker0_step_12.1694128201545.pt.trace.json'), '-o', DLRM, '-q'], { stdio: ['ignore', 'pipe', 'pipe'] });
  browser = await launch();
});
after(async () => {
  if (browser) await browser.close();
  fs.rmSync(TMP, { recursive: true, force: true });
});

test('single worker: Time breakdown and Steps tabs, slow step 7 marked with its function', async () => {
  const { page, problems } = await open(pageOf(SLOW));
  assert.equal(await page.locator('#tabs [data-tab="breakdown"]').count(), 1);
  assert.equal(await page.locator('#tabs [data-tab="steps"]').count(), 1);
  // the Steps tab counts the slow steps
  assert.equal((await page.locator('#tabs [data-tab="steps"] .count').textContent()).trim(), '1');
  await page.click('#tabs [data-tab="steps"]');
  await page.waitForSelector('#view-steps #chart-steps canvas');
  const rows = page.locator('#view-steps tbody tr');
  assert.equal(await rows.count(), 6);
  // sorted by extra time: step 7 first, marked slow, naming the function
  const first = rows.nth(0);
  assert.equal((await first.locator('td').nth(1).textContent()).trim(), '7');
  assert.equal(await first.locator('.badge.bad').count(), 1);
  assert.match(await first.textContent(), /Optimizer\.step#SGD\.step/);
  await page.screenshot({ path: path.join(ART, 'single-steps.png'), fullPage: true });
  await page.click('#tabs [data-tab="breakdown"]');
  await page.waitForSelector('#view-breakdown #chart-tb-split canvas');
  await page.waitForSelector('#view-breakdown #chart-tb-idle canvas');
  const tb = await page.locator('#view-breakdown tbody tr').first().textContent();
  assert.match(tb, /data loader/);
  assert.match(tb, /DataLoader/);
  await page.screenshot({ path: path.join(ART, 'single-breakdown.png'), fullPage: true });
  await page.click('#tabs [data-tab="compute"]');
  await page.waitForSelector('#view-compute #compute-util');
  assert.match(await page.locator('#view-compute').textContent(), /GPU compute utilization/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('one-step worker: Time breakdown but no Steps tab', async () => {
  const { page, problems } = await open(pageOf(DLRM));
  assert.equal(await page.locator('#tabs [data-tab="breakdown"]').count(), 1);
  assert.equal(await page.locator('#tabs [data-tab="steps"]').count(), 0);
  await page.click('#tabs [data-tab="breakdown"]');
  await page.waitForSelector('#view-breakdown #chart-tb-split canvas');
  assert.equal(await page.locator('#view-breakdown tbody tr').count(), 1);
  assert.deepEqual(problems, []);
  await page.close();
});
