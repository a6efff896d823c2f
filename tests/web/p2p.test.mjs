// p2p.test.mjs - PerfDisplay's point-to-point matrix (web/js/p2p.js) in a
// real browser (chromium headless via playwright-core): on the real 4-rank
// gloo run with a slow link into rank 2 planted (tests/data/p2p_gloo4_slow2)
// the Communication view draws a 4 x 4 matrix of the report's 12 pairs with
// the report's bandwidths, the three pairs into rank 2 in red and no other;
// on the run without the plant none is red; on a report without "p2p" (DLRM)
// there is no matrix.  Run by tests/web/run.sh.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { BIN, DATA, ART, launch, openPage, pageOf } from './harness.mjs';

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'pt-p2p-'));
const SLOW = path.join(TMP, 'slow');
const REAL = path.join(TMP, 'real');
const DLRM = path.join(TMP, 'dlrm');
let browser;

function run(args) {
  return execFileSync(BIN, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

async function commView(dir) {
  const { page, problems } = await openPage(browser, pageOf(dir));
  await page.click('#tabs button[data-tab="communication"]');
  await page.waitForSelector('#view-communication:not([hidden])');
  return { page, problems, v: page.locator('#view-communication') };
}

before(async () => {
  fs.mkdirSync(ART, { recursive: true });
  run(['analyze', path.join(DATA, 'p2p_gloo4_slow2'), '-o', SLOW, '-q']);
  run(['analyze', path.join(DATA, 'p2p_gloo4'), '-o', REAL, '-q']);
  run(['analyze', path.join(DATA, 'dlrm'), '-o', DLRM, '-q']);
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  fs.rmSync(TMP, { recursive: true, force: true });
});

test('planted slow link into rank 2: the matrix marks the pairs into rank 2', async () => {
  const rep = JSON.parse(fs.readFileSync(path.join(SLOW, 'PerfDisplay/report.json'), 'utf8'));
  const { page, problems, v } = await commView(SLOW);
  assert.deepEqual(problems, []);
  const card = v.locator('#p2p');
  assert.equal(await card.count(), 1);
  assert.equal(await card.locator('tbody tr').count(), 4);
  assert.equal(await card.locator('td.p2p-cell').count(), 12);
  const slow = await card.locator('td.p2p-slow').evaluateAll((els) => els.map((e) => e.dataset.src + '>' + e.dataset.dst).sort());
  assert.deepEqual(slow, ['0>2', '1>2', '3>2']);
  // each cell shows the report's bandwidth, to 3 digits
  for (const r of Object.values(rep.p2p)) {
    const td = card.locator(`td[data-src="${r.source}"][data-dst="${r.destination}"]`);
    assert.equal((await td.textContent()).trim(), r['bandwidth (GB/s)'].toPrecision(3));
  }
  assert.match(await card.textContent(), /3 of 12 pairs are slow/);
  const tip = await card.locator('td[data-src="1"][data-dst="2"]').getAttribute('title');
  assert.match(tip, /rank 1 → rank 2: 6 transfers, 25\.2 MB/);
  await page.screenshot({ path: path.join(ART, 'p2p-slow.png'), fullPage: true });
  await page.close();
});

test('real run: the matrix, no pair slow', async () => {
  const { page, problems, v } = await commView(REAL);
  assert.deepEqual(problems, []);
  assert.equal(await v.locator('#p2p td.p2p-cell').count(), 12);
  assert.equal(await v.locator('#p2p td.p2p-slow').count(), 0);
  assert.match(await v.locator('#p2p').textContent(), /No destination, source or pair is markedly slower/);
  await page.close();
});

test('DLRM (NCCL all-to-all, no peers recorded): no matrix', async () => {
  const { page, problems, v } = await commView(DLRM);
  assert.deepEqual(problems, []);
  assert.equal(await v.locator('#p2p').count(), 0);
  await page.close();
});
