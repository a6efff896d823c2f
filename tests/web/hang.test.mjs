// hang.test.mjs - the "Hang" section of PerfDisplay in a real browser
// (headless chromium through playwright-core, run by tests/web/run.sh).
//
// The report is the real one: a control directory is set up by hand (four
// workers whose pids are live `sleep` processes, one finished process for a
// dead worker, heartbeats, and stack dumps in the watchdog's format), then
// `perftracker hang-check -o DIR` writes it through the report writer.  The
// page must show the groups side by side with the suspects first, whatever
// their order in report.json, and every name as text.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { BIN, ART, launch, openPage, pageOf } from './harness.mjs';

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'pt-hang-'));
const CONTROL = path.join(TMP, 'control');
const OUT = path.join(TMP, 'out');
const MARKUP = '<img src=x onerror="window.__ptXss=1"><marquee id="pt-injected">k</marquee>';
const sleepers = [];
let browser;
let ids = [];

function dump(id, rank, pid, frames, reason) {
  // faulthandler lists the innermost frame first
  const lines = frames.slice().reverse().map(([file, line, fn]) => `  File "${file}", line ${line} in ${fn}`);
  return ['format: perftracker-stacks 1', `worker: ${id}`, 'host: nodeA', `rank: ${rank}`, `pid: ${pid}`,
    'training_thread: 0x0000000000000001', `reason: ${reason}`, 'request: ',
    `time: ${(Date.now() / 1000 - 1).toFixed(3)}`, 'step: 10', `step_time: ${(Date.now() / 1000 - 40).toFixed(3)}`, '',
    'Thread 0x0000000000000001 (most recent call first):', ...lines, ''].join('\n');
}

before(async () => {
  fs.mkdirSync(ART, { recursive: true });
  for (const sub of ['workers', 'heartbeats', 'stacks']) fs.mkdirSync(path.join(CONTROL, sub), { recursive: true });
  const now = Date.now() / 1000;
  const done = spawnSync('true').pid; // a process that is gone: the dead worker
  const pids = [];
  for (let r = 0; r < 3; r++) {
    const p = spawn('sleep', ['300'], { stdio: 'ignore' });
    sleepers.push(p);
    pids.push(p.pid);
  }
  pids.push(done);
  const torch = '/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py';
  const stacks = [
    [['/job/train.py', 99, '<module>'], ['/job/train.py', 83, 'main'], [torch, 1536, 'all_reduce']],
    [['/job/train.py', 99, '<module>'], ['/job/train.py', 80, 'main'], ['/job/train.py', 57, 'stuck_here'], ['/job/' + MARKUP + '.py', 3, MARKUP]],
    [['/job/train.py', 99, '<module>'], ['/job/train.py', 84, 'main'], [torch, 1540, 'all_reduce']],
  ];
  for (let r = 0; r < 4; r++) {
    const id = `nodeA_${r}_${pids[r]}`;
    ids.push(id);
    fs.writeFileSync(path.join(CONTROL, 'workers', id + '.json'), JSON.stringify({
      format: 'perftracker-worker', version: 1, id, host: 'nodeA', node: os.hostname(), rank: r, local_rank: r,
      world_size: 4, local_world_size: 4, pid: pids[r], started: now - 120 }));
    fs.writeFileSync(path.join(CONTROL, 'heartbeats', id + '.json'), JSON.stringify({
      format: 'perftracker-heartbeat', step: 10, step_time: now - 40, time: now - 1, rate: 5, state: 'idle', trigger: '' }));
    if (r < 3) fs.writeFileSync(path.join(CONTROL, 'stacks', id + '.txt'), dump(id, r, pids[r], stacks[r], 'stalled'));
  }
  // Nobody answers the request (no watchdog runs): the automatic dumps
  // written "1 s ago" are used.
  execFileSync(BIN, ['hang-check', '--control-dir', CONTROL, '--hang-timeout', '5', '--stack-wait', '0.3', '-o', OUT],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  browser = await launch();
});

after(async () => {
  for (const p of sleepers) p.kill();
  if (browser) await browser.close();
  fs.rmSync(TMP, { recursive: true, force: true });
});

function openHang(dir) { return openPage(browser, pageOf(dir)); }

async function cards(page) {
  await page.click('#tabs button[data-tab="hang"]');
  await page.waitForSelector('#view-hang:not([hidden]) .hang-group');
  const v = page.locator('#view-hang');
  const n = await v.locator('.hang-group').count();
  const out = [];
  for (let i = 0; i < n; i++) {
    const c = v.locator('.hang-group').nth(i);
    out.push({ suspect: await c.getAttribute('data-suspect'), text: await c.textContent(), box: await c.boundingBox() });
  }
  return { v, out };
}

test('hang report: groups side by side, suspects first, workers and their states', async () => {
  const rep = JSON.parse(fs.readFileSync(path.join(OUT, 'PerfDisplay', 'report.json'), 'utf8'));
  const h = rep.Hang;
  // what the page is given: dead worker 3 and stuck worker 1 are the suspects
  assert.deepEqual(h.suspect_workers, [ids[3] + '.json', ids[1] + '.json']);
  assert.equal(h.groups.length, 2);
  const { page, problems } = await openHang(OUT);
  assert.equal(await page.locator('#hang-banner').count(), 1, 'hang banner on the overview');
  const { v, out } = await cards(page);
  assert.equal(out.length, 2);
  assert.equal(out[0].suspect, '1');
  assert.equal(out[1].suspect, '0');
  assert.match(out[0].text, /suspect/);
  assert.match(out[0].text, new RegExp(ids[1]));
  assert.match(out[1].text, /2 workers/);
  assert.match(out[1].text, /torch\/distributed\/distributed_c10d\.py: all_reduce/);
  // side by side: same row, suspect on the left
  assert.ok(Math.abs(out[0].box.y - out[1].box.y) < 2, `same top (${out[0].box.y}, ${out[1].box.y})`);
  assert.ok(out[0].box.x + out[0].box.width <= out[1].box.x + 1, 'suspect card left of the other');
  // the stack, outermost first, ends with the markup frame shown as text
  const frames = await v.locator('.hang-group').first().locator('.hang-stack li').allTextContents();
  assert.equal(frames[0], '/job/train.py: <module>');
  assert.equal(frames[frames.length - 1], '/job/' + MARKUP + '.py: ' + MARKUP);
  assert.equal(await page.locator('#pt-injected').count(), 0, 'no markup injected');
  assert.equal(await page.evaluate(() => window.__ptXss), undefined);
  // workers table: suspects first, the dead one says so
  const rows = await v.locator('.hang-workers tbody tr').allTextContents();
  assert.equal(rows.length, 4);
  assert.match(rows[0] + rows[1], /dead/);
  assert.match(rows[0] + rows[1], new RegExp(ids[1]));
  assert.match(rows[2] + rows[3], /hung/);
  assert.match(await v.locator('#hang-suspects').textContent(), /2 suspects/);
  await page.screenshot({ path: path.join(ART, 'perfdisplay-hang.png'), fullPage: true });
  // every other view copes with a report whose sections are empty
  const tabs = await page.$$eval('#tabs button', (bs) => bs.map((b) => b.getAttribute('data-tab')));
  assert.ok(tabs.includes('hang'));
  for (const id of tabs) {
    await page.click(`#tabs button[data-tab="${id}"]`);
    await page.waitForSelector(`#view-${id}:not([hidden])`);
    assert.equal(await page.locator(`#view-${id} .fatal`).count(), 0, id + ': no error box');
  }
  await page.close();
});

test('hang report: suspects first even when report.json lists them last', async () => {
  const dir = path.join(TMP, 'reordered');
  fs.mkdirSync(path.join(dir, 'PerfDisplay'), { recursive: true });
  const rep = JSON.parse(fs.readFileSync(path.join(OUT, 'PerfDisplay', 'report.json'), 'utf8'));
  rep.Hang.groups.reverse();
  rep.Hang.groups.forEach((g) => { delete g.suspect; });
  fs.writeFileSync(path.join(dir, 'PerfDisplay', 'report.json'), JSON.stringify(rep, null, 1));
  execFileSync(BIN, ['display', dir, '--rebuild', '--no-serve'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const { page, problems } = await openHang(dir);
  const { out } = await cards(page);
  assert.equal(out[0].suspect, '1', 'the group holding a suspect worker comes first');
  assert.match(out[0].text, new RegExp(ids[1]));
  assert.deepEqual(problems, []);
  await page.close();
});
