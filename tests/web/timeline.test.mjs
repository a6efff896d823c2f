// timeline.test.mjs - the PerfDisplay Timeline view (report.json's
// "timeline" key, docs/display.md) in headless chromium: the real DLRM
// report with a synthetic timeline of 8, 64 and 1,000 ranks
// (tests/tools/gen_timeline_report.py: rank 7 arrives late at every
// collective, the others wait): the tab, the canvas drawn, the step select,
// a finding that highlights its ranks, the hover tooltip, the
// timeline.json.gz link, lanes grouped at 1,000 ranks, and no tab without
// the key.  Screenshots at 1280 px to $PT_ARTIFACTS; the draw time at 1,000
// ranks is printed and only loosely asserted (bench/bench_page.sh measures
// it).  Run by tests/web/run.sh.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { BIN, DATA, ART, ROOT, PY, launch, openPage, pageOf } from './harness.mjs';

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'pt-timeline-'));
const DLRM = path.join(TMP, 'dlrm');
const DEMO = path.join(TMP, 'demo');
const dirOf = (n) => path.join(TMP, 't' + n);
let browser;

function run(args) {
  return execFileSync(BIN, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

before(async () => {
  fs.mkdirSync(ART, { recursive: true });
  run(['analyze', path.join(DATA, 'dlrm'), '-o', DLRM, '-q']);
  run(['diagnose', path.join(DATA, 'demo_runs/a'), '-o', DEMO, '-q']);
  for (const n of [8, 64, 1000]) {
    fs.mkdirSync(path.join(dirOf(n), 'PerfDisplay'), { recursive: true });
    execFileSync(PY, [path.join(ROOT, 'tests/tools/gen_timeline_report.py'), path.join(DLRM, 'PerfDisplay/report.json'),
      '-n', String(n), ...(n === 64 ? ['--unaligned', '40'] : []), '-o', path.join(dirOf(n), 'PerfDisplay/report.json')]);
    run(['display', dirOf(n), '--rebuild', '--no-serve']);
  }
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  fs.rmSync(TMP, { recursive: true, force: true });
});

// Open the page at width 1280 and activate the Timeline tab; returns the
// page, the problems and the ms the view took (window.__ptTiming.views).
async function openTimeline(n) {
  const o = await openPage(browser, pageOf(typeof n === 'string' ? n : dirOf(n)), { width: 1280, height: 900 });
  await o.page.click('#tabs button[data-tab="timeline"]');
  await o.page.waitForSelector('#view-timeline:not([hidden]) #tl-canvas[data-lanes]');
  o.took = await o.page.evaluate(() => window.__ptTiming.views.timeline);
  return o;
}
// Canvas pixels: how many are not white, and the x of the first pixel of
// colour rgb on row y (CSS px), -1 when none.
function pixels(page, y, rgb) {
  return page.evaluate(([y2, c]) => {
    // read a copy (readbacks of the page's own canvas draw a console warning)
    const src = document.getElementById('tl-canvas'), r = window.devicePixelRatio || 1;
    const cv = document.createElement('canvas');
    cv.width = src.width; cv.height = src.height;
    const cx = cv.getContext('2d', { willReadFrequently: true });
    cx.drawImage(src, 0, 0);
    const d = cx.getImageData(0, 0, cv.width, cv.height).data;
    let ink = 0, first = -1;
    for (let i = 0; i < d.length; i += 4) if (d[i] < 250 || d[i + 1] < 250 || d[i + 2] < 250) ink++;
    if (c) {
      const row = Math.round(y2 * r);
      for (let x = 0; x < cv.width; x++) {
        const i = (row * cv.width + x) * 4;
        if (Math.abs(d[i] - c[0]) < 8 && Math.abs(d[i + 1] - c[1]) < 8 && Math.abs(d[i + 2] - c[2]) < 8) { first = x / r; break; }
      }
    }
    return { ink, total: d.length / 4, first };
  }, [y, rgb]);
}

test('8 ranks: the tab, the canvas drawn, the default slow step, the step select, hover, the download link', async () => {
  const { page, problems, took } = await openTimeline(8);
  assert.match(await page.textContent('#tabs button[data-tab="timeline"]'), /Timeline/);
  const cv = page.locator('#tl-canvas');
  assert.equal(await cv.getAttribute('data-lanes'), '8');
  assert.equal(await cv.getAttribute('data-step'), '11');          // the first slow step
  assert.equal(await page.locator('#view-timeline canvas').count(), 1);
  const px = await pixels(page);
  assert.ok(px.ink > px.total * 0.1, `canvas drawn: ${px.ink} of ${px.total} pixels not white`);
  assert.match(await page.textContent('#tl-sum'), /step 11: .*last to arrive: rank 7 at 5 of 5/);
  assert.equal(typeof took, 'number', 'the view\'s drawing time is recorded');
  // another step
  await page.selectOption('#tl-step', { index: 2 });          // steps 10-15
  assert.equal(await cv.getAttribute('data-step'), '12');
  assert.match(await page.textContent('#tl-sum'), /^step 12: /);
  // hover rank 7's late arrival (red) on its collective row: the tooltip names it
  const y = 24 + 7 * 36 + 3 + 2 * 10 + 5;
  const red = await pixels(page, y, [0xcf, 0x22, 0x2e]);
  assert.ok(red.first > 0, 'a red late arrival on rank 7\'s lane');
  const box = await cv.boundingBox();
  await page.mouse.move(box.x + red.first + 2, box.y + y);
  await page.waitForSelector('#tl-tip:not([hidden])');
  const tip = await page.textContent('#tl-tip');
  assert.match(tip, /rank 7 .*straggler/);
  assert.match(tip, /arrived last at .*AllReduce|arrived last at .*all_to_all/);
  assert.match(tip, /\+\d.* → \+\d/);
  // the file beside index.html, never requested
  const a = page.locator('#tl-download');
  assert.equal(await a.getAttribute('href'), 'timeline.json.gz');
  assert.notEqual(await a.getAttribute('download'), null);
  assert.match(await page.textContent('#view-timeline .tl-file'), /Open it in https:\/\/ui\.perfetto\.dev \(Open trace file\) or chrome:\/\/tracing\./);
  await page.mouse.move(0, 0);
  await page.screenshot({ path: path.join(ART, 'timeline-8.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('8 ranks: a finding highlights its ranks and shows its first step', async () => {
  const { page, problems } = await openTimeline(8);
  await page.selectOption('#tl-step', { index: 0 });
  const f = page.locator('#tl-findings .tl-find');
  assert.equal(await f.count(), 1);
  assert.match(await f.textContent(), /rank 7/);
  assert.match(await f.textContent(), /Lockstep/);
  assert.match(await f.textContent(), /moderate/);
  assert.match(await f.textContent(), /the worker the others waited for/);
  await f.click();
  assert.match(await f.getAttribute('class'), /\bon\b/);
  const cv = page.locator('#tl-canvas');
  assert.equal(await cv.getAttribute('data-step'), '11');
  assert.match(await page.$eval('#tl-step', (s) => s.options[s.selectedIndex].text), /^step 11 /);
  assert.equal(await cv.getAttribute('data-highlight'), 'rank 7');
  // rank 7's lane is highlighted (yellow) at its label's left edge
  const hl = await pixels(page, 24 + 7 * 36 + 2, [0xff, 0xf3, 0xb0]);
  assert.ok(hl.first >= 0 && hl.first < 10, 'rank 7\'s lane is highlighted');
  const no = await pixels(page, 24 + 0 * 36 + 2, [0xff, 0xf3, 0xb0]);
  assert.equal(no.first, -1, 'rank 0\'s lane is not');
  // a second click clears it
  await f.click();
  assert.equal(await cv.getAttribute('data-highlight'), '');
  await f.click();
  await page.screenshot({ path: path.join(ART, 'timeline-8-finding.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('64 ranks: a lane per rank, the unaligned rank marked', async () => {
  const { page, problems } = await openTimeline(64);
  assert.equal(await page.getAttribute('#tl-canvas', 'data-lanes'), '64');
  assert.match(await page.textContent('#tl-about'), /64 ranks .* 1 not aligned/);
  const px = await pixels(page);
  assert.ok(px.ink > px.total * 0.1);
  await page.screenshot({ path: path.join(ART, 'timeline-64.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('1,000 ranks: lanes grouped, the straggler on its own lane, drawn', async (t) => {
  const { page, problems, took } = await openTimeline(1000);
  const lanes = +(await page.getAttribute('#tl-canvas', 'data-lanes'));
  assert.ok(lanes >= 40 && lanes <= 80, `${lanes} lanes`);
  assert.match(await page.textContent('#tl-about'), /1000 ranks · 3 steps kept \(steps 10, 11, 14 of 6/);
  const px = await pixels(page);
  assert.ok(px.ink > px.total * 0.1);
  const draw = await page.evaluate(() => window.__ptTiming.timeline.draw);
  t.diagnostic(`1,000 ranks: Timeline view ${Math.round(took)} ms from the tab's activation to drawn (canvas ${Math.round(draw)} ms), ${lanes} lanes`);
  await page.screenshot({ path: path.join(ART, 'timeline-1000.png'), fullPage: true });
  // hovering a lane of grouped ranks past its items: the ranks, who waited most
  await page.locator('#tl-canvas').hover({ position: { x: (await page.locator('#tl-canvas').boundingBox()).width - 12, y: 24 + 2 * 16 + 13 } });
  assert.match(await page.textContent('#tl-tip'), /^ranks 8–23 \(16\) · waited most in this step: .* \(rank \d+\)/);
  // the finding: rank 7 highlighted in its own lane
  await page.click('#tl-findings .tl-find');
  assert.equal(await page.getAttribute('#tl-canvas', 'data-highlight'), 'rank 7');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a malformed timeline: drawn without errors, names as text', async () => {
  const dir = path.join(TMP, 'bad');
  const rep = JSON.parse(fs.readFileSync(path.join(DLRM, 'PerfDisplay/report.json'), 'utf8'));
  rep.timeline = { version: 1, names: ['<img src=x onerror=alert(1)>', null, 5], channels: 'x', instances: 'bad',
    steps: [{ step: 10, start_us: 0, end_us: 100, slow: ['x', 0] }, { step: 'y' }, null],
    workers: [null, { worker: '<b>x</b>', label: '<i>l</i>', spans: 'abc', coll: [1, 2], straggler: true, aligned: false },
      { rank: 3, steps: [10, 0, 100], spans: [0, 50, 0, 10, 20, 99], gpu: [5, 'z'], coll: [0, 10, 20, 7, 30, 40], wait: [0, 10, 15], late: [3, 1, 2] }],
    findings: [[99, [0], [10]], 'x', [0, 'a', null], [0, [1, 2, 'q'], ['s']]] };
  fs.mkdirSync(path.join(dir, 'PerfDisplay'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'PerfDisplay/report.json'), JSON.stringify(rep));
  run(['display', dir, '--rebuild', '--no-serve']);
  const { page, problems } = await openPage(browser, pageOf(dir));
  page.on('dialog', (d) => { problems.push('dialog: ' + d.message()); d.dismiss(); });
  await page.click('#tabs button[data-tab="timeline"]');
  await page.waitForSelector('#tl-canvas[data-lanes="3"]');
  for (const f of await page.$$('#tl-findings .tl-find')) await f.click();
  const box = await page.locator('#tl-canvas').boundingBox();
  for (let y = 30; y < box.height; y += 7) await page.mouse.move(box.x + box.width / 2, box.y + y);
  assert.equal(await page.locator('#view-timeline img').count(), 0);
  assert.equal(await page.$$eval('#view-timeline b', (bs) => bs.filter((x) => x.textContent === 'x').length), 0);
  assert.match(await page.textContent('#tl-findings'), /<b>x<\/b>/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a report without the timeline key: no Timeline tab', async () => {
  const old = path.join(TMP, 'old');
  const rep = JSON.parse(fs.readFileSync(path.join(DLRM, 'PerfDisplay/report.json'), 'utf8'));
  delete rep.timeline;
  fs.mkdirSync(path.join(old, 'PerfDisplay'), { recursive: true });
  fs.writeFileSync(path.join(old, 'PerfDisplay/report.json'), JSON.stringify(rep, null, 4) + '\n');
  run(['display', old, '--rebuild', '--no-serve']);
  const { page, problems } = await openPage(browser, pageOf(old));
  assert.equal(await page.locator('#tabs button[data-tab="timeline"]').count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

// The real reports, as analyze and diagnose write them (src/report/timeline.c).
test('real DLRM report: rank 7 last at 5 of 8, its late arrivals drawn, the straggler finding highlights it', async () => {
  const { page, problems } = await openTimeline(DLRM);
  assert.equal(await page.getAttribute('#tl-canvas', 'data-lanes'), '8');
  assert.equal(await page.getAttribute('#tl-canvas', 'data-step'), '10');
  assert.match(await page.textContent('#tl-sum'), /^step 10: .*last to arrive: rank 7 at 5 of 8/);
  // rank 7's lane, its collective row: red where it came late
  const red = await pixels(page, 24 + 7 * 36 + 3 + 2 * 10 + 5, [0xcf, 0x22, 0x2e]);
  assert.ok(red.first > 0, 'a red late arrival on rank 7\'s lane');
  await page.click('#tl-findings .tl-find');
  assert.equal(await page.getAttribute('#tl-canvas', 'data-highlight'), 'rank 7');
  await page.screenshot({ path: path.join(ART, 'timeline-dlrm.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('real demo report: rank 2 the one the others waited for', async () => {
  const { page, problems } = await openTimeline(DEMO);
  assert.equal(await page.getAttribute('#tl-canvas', 'data-lanes'), '4');
  assert.match(await page.textContent('#tl-sum'), /last to arrive: rank 2 at \d+ of \d+/);
  assert.match(await page.textContent('#tl-findings'), /rank 2/);
  await page.screenshot({ path: path.join(ART, 'timeline-demo.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});
