/*
 * compare.js - PerfDisplay: the Compare view of `perftracker compare`:
 * both runs' step times, the waterfall from BASELINE's step to NEW's, the
 * findings and the classes.  A compare report shows this view alone.
 */
(function (PT) {
  'use strict';
  var add = PT.add, esc = PT.esc, h = PT.h, isNum = PT.isNum, ms = PT.ms, num = PT.num, obj = PT.obj,
    pct = PT.pct, plural = PT.plural, chart = PT.chart, empty = PT.empty, howto = PT.howto,
    legend = PT.legend, queue = PT.queue, stat = PT.stat, table = PT.table;

  /* ------------------------------------------------------------ compare */
  /* The "Compare" section (`perftracker compare`, docs/compare.md): the
     summary sentence, both sides' step times, a waterfall from BASELINE's
     step to NEW's through the functions that changed, the class table and
     the ranked findings.  A compare report has no other section, so the
     page shows this view alone. */
  var CHANGE_COLOR = { slower: '#cf222e', appeared: '#cf222e', faster: '#1a7f37', disappeared: '#1a7f37', other: '#8c959f' };
  function signedMs(x) { return isNum(x) ? (x >= 0 ? '+' : '') + ms(x) : '–'; }
  function compareSide(c, key, label) {
    var s = obj(c[key]) || {}, st = obj(s[K.STEP_MS]) || {};
    return stat(label + ' step time (median)', ms(st[K.MEDIAN]),
      'p10 ' + ms(st[K.P10]) + ' · p90 ' + ms(st[K.P90]) + ' · noise ' + ms(s[K.NOISE_MS]) + ' · ' +
      plural(isNum(s[K.STEPS_LC]) ? s[K.STEPS_LC] : 0, 'step') + ' on ' + plural(isNum(s[K.WORKERS]) ? s[K.WORKERS] : 0, 'worker') +
      (s[K.FAILED] ? ' · ' + s[K.FAILED] + ' unreadable' : ''));
  }
  function compareStepChart(c) {
    var card = h('div', { class: 'chart-card' }, h('div', { class: 'hd' }, h('h3', { text: 'Step time per worker, both runs' })),
      legend([['#8c959f', 'BASELINE'], ['#4e79a7', 'NEW'], ['#24292f', 'each step', ';border-radius:5px']]));
    var ws = (Array.isArray(c[K.WORKERS]) ? c[K.WORKERS] : []).filter(obj);
    if (!ws.length) { card.appendChild(empty('No step times in this comparison.')); return card; }
    var el = h('div', { class: 'chart', id: 'chart-cmp-steps' });
    card.appendChild(el);
    /* one category per rank (or per worker when ranks are unknown) */
    var cats = [], idx = Object.create(null);
    function catOf(w) { return w[K.RANK] != null ? 'rank ' + w[K.RANK] : w[K.SIDE] + ': ' + w[K.ID]; }
    ws.forEach(function (w) { var k = catOf(w); if (!(k in idx)) { idx[k] = cats.length; cats.push(k); } });
    queue(function () {
      var series = ['baseline', 'new'].map(function (side) {
        var data = cats.map(function () { return null; });
        ws.forEach(function (w) { if (w[K.SIDE] === side) data[idx[catOf(w)]] = isNum(w[K.STEP_MS]) ? w[K.STEP_MS] : null; });
        return { name: side === 'new' ? 'NEW' : 'BASELINE', type: 'bar', barMaxWidth: 22, progressive: 0,
          itemStyle: { color: side === 'new' ? '#4e79a7' : '#8c959f' }, data: data };
      });
      var pts = [];
      ws.forEach(function (w) { (Array.isArray(w[K.STEPS_LC]) ? w[K.STEPS_LC] : []).forEach(function (v) { if (isNum(v)) pts.push([idx[catOf(w)], v, w[K.SIDE]]); }); });
      series.push({ name: 'steps', type: 'scatter', symbolSize: 4, progressive: 0, z: 3, itemStyle: { color: '#24292f' }, data: pts });
      chart(el, {
        grid: { left: 60, right: 16, top: 16, bottom: cats.length > 6 ? 70 : 40 },
        tooltip: { trigger: 'item', formatter: function (p) {
          if (p.seriesName === 'steps') return esc((p.value[2] === 'new' ? 'NEW' : 'BASELINE') + ' · ' + cats[p.value[0]] + ': ' + ms(p.value[1]));
          return esc(p.seriesName + ' · ' + cats[p.dataIndex] + ': median step ' + ms(p.value));
        } },
        xAxis: { type: 'category', data: cats, axisLabel: { interval: cats.length <= 24 ? 0 : 'auto', rotate: cats.length > 6 ? 30 : 0, width: 110, overflow: 'truncate' } },
        yAxis: { type: 'value', name: 'ms' },
        series: series
      });
    });
    return card;
  }
  function compareWaterfall(c) {
    var card = h('div', { class: 'chart-card' }, h('div', { class: 'hd' }, h('h3', { text: 'Where the difference goes (ms per step)' })),
      legend([['#8c959f', 'step time'], ['#cf222e', 'slower / new'], ['#1a7f37', 'faster / gone']]));
    var bars = (Array.isArray(c[K.WATERFALL]) ? c[K.WATERFALL] : []).filter(function (b) { return obj(b) && isNum(b[K.DELTA_MS]); });
    var sb = obj(obj(c[K.BASELINE]) && c[K.BASELINE][K.STEP_MS]) || {}, sn = obj(obj(c[K.NEW]) && c[K.NEW][K.STEP_MS]) || {};
    if (!isNum(sb[K.MEDIAN]) || !isNum(sn[K.MEDIAN])) { card.appendChild(empty('No step times in this comparison.')); return card; }
    var el = h('div', { class: 'chart', id: 'chart-cmp-waterfall', style: 'height:380px' });
    card.appendChild(el);
    queue(function () {
      var cats = ['BASELINE'], base = [0], val = [{ value: sb[K.MEDIAN], itemStyle: { color: '#8c959f' } }], at = sb[K.MEDIAN];
      bars.forEach(function (b) {
        var lo = Math.min(at, at + b[K.DELTA_MS]);
        cats.push(String(b[K.LABEL] || ''));
        base.push(lo);
        val.push({ value: Math.abs(b[K.DELTA_MS]), delta: b[K.DELTA_MS], itemStyle: { color: CHANGE_COLOR[b[K.CHANGE]] || (b[K.DELTA_MS] >= 0 ? '#cf222e' : '#1a7f37') } });
        at += b[K.DELTA_MS];
      });
      cats.push('NEW');
      base.push(0);
      val.push({ value: sn[K.MEDIAN], itemStyle: { color: '#4e79a7' } });
      /* a window around the steps so that a 1% difference is visible */
      var lo = Math.min.apply(null, base.slice(1, -1).concat([sb[K.MEDIAN], sn[K.MEDIAN]]));
      var hi = Math.max(sb[K.MEDIAN], sn[K.MEDIAN], at);
      var pad = Math.max((hi - lo) * 0.5, 0.02 * hi);
      var ymin = Math.max(0, lo - pad);
      var tick = Math.pow(10, Math.floor(Math.log10(Math.max(hi - ymin, 1e-3))));
      ymin = Math.floor(ymin / tick) * tick;
      chart(el, {
        grid: { left: 60, right: 16, top: 16, bottom: 110 },
        tooltip: { trigger: 'item', formatter: function (p) {
          var d = val[p.dataIndex];
          if (p.seriesName !== 'delta') return '';
          return esc(cats[p.dataIndex] + ': ' + (d.delta != null ? signedMs(d.delta) + ' per step' : ms(d.value) + ' per step'));
        } },
        xAxis: { type: 'category', data: cats, axisLabel: { interval: 0, rotate: 30, width: 160, overflow: 'truncate' } },
        yAxis: { type: 'value', name: 'ms', min: ymin },
        series: [
          { name: 'base', type: 'bar', stack: 'w', silent: true, itemStyle: { color: 'transparent' }, data: base.map(function (b, i) { return i === 0 || i === base.length - 1 ? ymin : b; }) },
          { name: 'delta', type: 'bar', stack: 'w', barMaxWidth: 40, progressive: 0,
            data: val.map(function (v, i) { return i === 0 || i === val.length - 1 ? { value: v.value - ymin, itemStyle: v.itemStyle } : v; }) }
        ]
      });
    });
    return card;
  }
  function viewCompare(root) {
    var c = obj(PT.M.rep[K.COMPARE]);
    add(root, h('h1', { text: 'NEW run compared with BASELINE' }));
    if (!c) { add(root, empty('This report has no Compare section.')); return; }
    var f = (Array.isArray(c[K.FINDINGS]) ? c[K.FINDINGS] : []).filter(obj);
    add(root, h('div', { class: 'banner ' + (c[K.UNRELATED] ? 'warn' : f.length ? 'warn' : 'ok'), id: 'compare-summary' }, String(c[K.SUMMARY] || '')));
    add(root, h('div', { class: 'stats' },
      compareSide(c, K.BASELINE, 'BASELINE'), compareSide(c, K.NEW, 'NEW'),
      stat('NEW / BASELINE', isNum(c[K.RATIO]) ? c[K.RATIO].toFixed(2) + 'x' : '–', signedMs(c[K.DELTA_MS]) + ' per step'),
      stat('Findings', String(f.length), 'changes above ' + ms(c[K.THRESHOLD_MS]) + ' per step · workers ' +
        (c[K.PAIRING] === 'rank' ? 'paired by rank' : 'compared as populations'))));
    add(root, h('div', { class: 'note' }, 'BASELINE: ' + String((obj(c[K.BASELINE]) || {})[K.PATH] || '') + ' · NEW: ' + String((obj(c[K.NEW]) || {})[K.PATH] || '')));
    add(root, howto('the comparison', [
      ['ms per step', 'The time a function owns per profiled step (class priority rule: compute > communication > memory > runtime > Python), so the changes add up to the change of the step time.'],
      ['noise', 'Each run\'s own step-to-step spread; a change below it (or below 0.5% of BASELINE\'s step) is not a finding.'],
      ['ranks', 'With ranks on both sides, workers are paired by rank and a change on a few ranks is listed with them; otherwise the two runs\' medians are compared.']]));
    add(root, h('div', { class: 'grid2' }, compareStepChart(c), compareWaterfall(c)));
    add(root, h('h2', { text: 'Findings' }));
    add(root, f.length ? table({ title: 'Compare findings', rows: f, sort: [K.RANK, 1], cols: [
      { key: K.RANK, label: '#', num: true, fmt: function (v) { return String(v); } },
      { key: K.CHANGE, label: 'change' },
      { key: K.NAME, label: 'function', title: 'kernels by name, Python/CPU functions by stack (last frame shown), collectives by group', fmt: function (v, r) { return h('span', { title: String(r[K.FUNCTION] || v), text: String(v) }); } },
      { key: K.CLASS, label: 'class' },
      { key: 'who', label: 'workers', get: function (r) { return Array.isArray(r[K.RANKS]) ? r[K.RANKS].map(function (x) { return 'rank ' + x; }).join(', ') : 'all'; } },
      { key: K.BASELINE_MS, label: 'BASELINE ms/step', num: true, fmt: function (v) { return ms(v); } },
      { key: K.NEW_MS, label: 'NEW ms/step', num: true, fmt: function (v) { return ms(v); } },
      { key: K.DELTA_MS, label: 'change', num: true, fmt: function (v) { return signedMs(v); } },
      { key: K.SHARE, label: 'share of difference', num: true, fmt: function (v) { return isNum(v) ? pct(v, 0) : '–'; } },
      { key: K.EXPLANATION, label: 'what changed' }] })
      : empty(c[K.UNRELATED] ? 'The runs have too little in common to compare function by function.' : 'No function changed beyond the noise.'));
    add(root, h('h2', { text: 'By class (ms per step)' }));
    add(root, table({ title: 'Compare classes', rows: (Array.isArray(c[K.CLASSES]) ? c[K.CLASSES] : []).filter(obj), cols: [
      { key: K.CLASS, label: 'class' },
      { key: K.BASELINE_MS, label: 'BASELINE', num: true, fmt: function (v) { return ms(v); } },
      { key: K.NEW_MS, label: 'NEW', num: true, fmt: function (v) { return ms(v); } },
      { key: K.DELTA_MS, label: 'change', num: true, fmt: function (v) { return signedMs(v); } },
      { key: K.SHARE, label: 'share of difference', num: true, fmt: function (v) { return isNum(v) ? pct(v, 0) : '–'; } }] }));
  }
  function compareViews() {
    return [{ id: 'compare', label: 'Compare', fn: viewCompare, count: function () { return (obj(PT.M.rep[K.COMPARE])[K.FINDINGS] || []).length; } }];
  }

  PT.compareViews = compareViews;
}(PT));
