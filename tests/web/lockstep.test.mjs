// lockstep.test.mjs - the PerfDisplay overview's lockstep card in a real
// browser (chromium headless via playwright-core, like page.test.mjs): on
// the real DLRM report the card lists every worker's "waited for others"
// against "others waited for it", marks rank 7 as the straggler, and the
// step-time card no longer calls the longest waiter (rank 1) "slowest".
// Run by tests/web/run.sh.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { BIN, DATA, ART, launch, openPage, pageOf } from './harness.mjs';

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'pt-lockstep-'));
const DLRM = path.join(TMP, 'dlrm');
const NOLOCK = path.join(TMP, 'nolock');
let browser;

function run(args) {
  return execFileSync(BIN, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}
function open(url) { return openPage(browser, url); }

before(async () => {
  fs.mkdirSync(ART, { recursive: true });
  run(['analyze', path.join(DATA, 'dlrm'), '-o', DLRM, '-q']);
  // the same report without the lockstep section (an older report)
  const rep = JSON.parse(fs.readFileSync(path.join(DLRM, 'PerfDisplay/report.json'), 'utf8'));
  delete rep.Lockstep;
  rep.findings = [];
  fs.mkdirSync(path.join(NOLOCK, 'PerfDisplay'), { recursive: true });
  fs.writeFileSync(path.join(NOLOCK, 'PerfDisplay/report.json'), JSON.stringify(rep, null, 1));
  run(['display', NOLOCK, '--rebuild', '--no-serve']);
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  fs.rmSync(TMP, { recursive: true, force: true });
});

test('DLRM overview: who waited for whom, rank 7 marked as the straggler', async () => {
  const { page, problems } = await open(pageOf(DLRM));
  assert.deepEqual(problems, []);
  const card = page.locator('#view-overview #lockstep');
  assert.equal(await card.count(), 1);
  assert.equal(await card.locator('tbody tr').count(), 8);
  // rows by blame: rank 7 first, marked, with the 35.56 ms its peers waited
  const first = card.locator('tbody tr').first();
  assert.equal(await first.getAttribute('data-worker'), 'worker7_step_12.1694128201553.pt.trace.json');
  assert.match(await first.textContent(), /rank 7/);
  assert.match(await first.textContent(), /straggler/);
  assert.match(await first.textContent(), /35\.56 ms|35\.6 ms/);
  assert.equal(await card.locator('.lock-straggler').count(), 1);
  // rank 1, the main victim, waited most and is not marked
  const r1 = card.locator('tr[data-worker="worker1_step_12.1694128201556.pt.trace.json"]');
  assert.match(await r1.textContent(), /11\.1 ms/);
  assert.doesNotMatch(await r1.textContent(), /straggler/);
  assert.match(await card.textContent(), /predates the profiled window/);
  // the step card names who the others waited for, never the "slowest"
  const stats = await page.textContent('#view-overview .stats');
  assert.doesNotMatch(stats, /slowest/i);
  assert.match(stats, /others waited for: rank 7/);
  await card.screenshot({ path: path.join(ART, 'perfdisplay-lockstep.png') });
  await page.close();
});

test('a report without the Lockstep section: no card, the longest step is not called slowest', async () => {
  const { page, problems } = await open(pageOf(NOLOCK));
  assert.deepEqual(problems, []);
  assert.equal(await page.locator('#lockstep').count(), 0);
  const stats = await page.textContent('#view-overview .stats');
  assert.doesNotMatch(stats, /slowest/i);
  assert.match(stats, /longest: rank 1/);
  await page.close();
});
