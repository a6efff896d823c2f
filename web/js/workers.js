/*
 * workers.js - PerfDisplay: the per-worker charts (GPU utilization, step
 * time, time by class), the Workers view and one worker's page (its
 * findings, its heatmap row, what the sections list for it).
 */
(function (PT) {
  'use strict';
  var CLASSES = PT.CLASSES, CLASS_COLOR = PT.CLASS_COLOR, add = PT.add, drawMedian = PT.drawMedian,
    fmtUnit = PT.fmtUnit, h = PT.h, isNum = PT.isNum, keys = PT.keys, ms = PT.ms, num = PT.num, obj = PT.obj,
    pct = PT.pct, signedPct = PT.signedPct, chart = PT.chart, empty = PT.empty, fnName = PT.fnName,
    legend = PT.legend, medianLine = PT.medianLine, pointIndex = PT.pointIndex, queue = PT.queue,
    table = PT.table, tipWorker = PT.tipWorker, workerLabel = PT.workerLabel, workerLink = PT.workerLink,
    xAxisFor = PT.xAxisFor, zoomFor = PT.zoomFor, findingCard = PT.findingCard, hasGpu = PT.hasGpu,
    commRows = PT.commRows;

  /* At scale, a note: the chart draws the workers the report keeps rows
     for (PT.M.drawn), its median line is every worker's. */
  function drawnNote(card) {
    var n = PT.M.drawn.length, all = PT.M.workers.length;
    if (n < all) card.appendChild(h('div', { class: 'note', text: 'Drawn: ' + n + ' of ' + all +
      ' workers, those the findings name and workers spread over the job (the report keeps rows for them); the median is all ' + all + '.' }));
  }

  function utilChart() {
    var ws = PT.M.drawn.filter(function (w) { return isNum(w.util); });
    var card = h('div', { class: 'chart-card' }, h('div', { class: 'hd' }, h('h3', { text: 'GPU utilization per worker' })),
      legend([['#4e79a7', 'worker'], ['#cf222e', 'abnormal (GPU Compute section)'], ['#57606a', 'median', ';height:2px']]));
    drawnNote(card);
    if (!ws.length) { card.appendChild(empty('No worker has a GPU utilization in this report.')); return card; }
    var el = h('div', { class: 'chart', id: 'chart-util' });
    card.appendChild(el);
    /* Many workers: an axis fitted to the data, so that a few percent of
       difference (what an outlier looks like) is visible. */
    var many = ws.length > 24;
    var umin = Math.min.apply(null, ws.map(function (w) { return w.util; }));
    var umax = Math.max.apply(null, ws.map(function (w) { return w.util; }));
    var lo = many ? Math.max(0, Math.floor((umin - 0.02) * 20) / 20) : 0;
    var hi = many ? Math.min(1, Math.ceil((umax + 0.02) * 20) / 20) : 1;
    queue(function () {
      var norm = [], bad = [];
      ws.forEach(function (w, i) { (w.id in PT.M.abnUtil ? bad : norm).push([i, w.util]); });
      var series = many
        ? [{ type: 'scatter', symbolSize: 4, progressive: 0, large: true, largeThreshold: 200, itemStyle: { color: '#4e79a7' }, data: norm, markLine: medianLine(PT.M.utilMedian) }]
        : [{ type: 'bar', barMaxWidth: 28, progressive: 0, markLine: medianLine(PT.M.utilMedian),
          data: ws.map(function (w) { return { value: w.util, itemStyle: { color: w.id in PT.M.abnUtil ? '#cf222e' : '#4e79a7' } }; }) }];
      if (many) series.push({ type: 'scatter', symbolSize: 9, progressive: 0, z: 5, itemStyle: { color: '#cf222e' }, data: bad });
      var c = chart(el, {
        grid: { left: 50, right: 16, top: 16, bottom: ws.length > 64 ? 56 : 40 },
        tooltip: { trigger: 'item', formatter: function (p) {
          var w = ws[pointIndex(p)];
          return w ? tipWorker(w, ['GPU utilization ' + pct(w.util), 'median ' + pct(PT.M.utilMedian)].concat(w.id in PT.M.abnUtil ? ['abnormal'] : [])) : '';
        } },
        xAxis: xAxisFor(ws, many),
        yAxis: { type: 'value', min: lo, max: hi, interval: many ? (hi - lo <= 0.3 ? 0.05 : 0.1) : 0.2,
          axisLabel: { formatter: function (v) { return (v * 100).toFixed(0) + '%'; } } },
        dataZoom: zoomFor(ws.length),
        series: series
      });
      if (c) c.on('click', function (p) { var w = ws[pointIndex(p)]; if (w) location.hash = '#worker/' + encodeURIComponent(w.id); });
    });
    return card;
  }

  function stepChart() {
    var ws = PT.M.drawn.filter(function (w) { return isNum(w.step); });
    var many = ws.length > 24;
    var card = h('div', { class: 'chart-card' }, h('div', { class: 'hd' }, h('h3', { text: PT.M.stepExact ? 'Step time per worker' : 'Mean step time per worker' })),
      legend([[many ? '#4e79a7' : '#9cc3e6', PT.M.stepExact ? 'median step' : 'window / steps'],
        PT.M.stepExact ? [many ? '#8c959f' : '#24292f', 'each step', ';border-radius:5px'] : null,
        PT.M.slowJudged ? ['#cf222e', 'slow outlier (step above the report\'s threshold' + (PT.M.stepLimit != null ? ', ' + ms(PT.M.stepLimit) : '') + ')'] : null,
        ['#57606a', 'median', ';height:2px']]));
    if (!PT.M.stepExact) card.appendChild(h('div', { class: 'note', text: 'This report has no per-step times: each bar is the worker\'s profiled window divided by its step count.' }));
    drawnNote(card);
    if (!ws.length) { card.appendChild(empty('No worker has step times in this report.')); return card; }
    var el = h('div', { class: 'chart', id: 'chart-step' });
    card.appendChild(el);
    queue(function () {
      var pts = [], norm = [], slow = [];
      ws.forEach(function (w, i) {
        if (PT.M.stepExact) (w.stepMs || []).forEach(function (st) { pts.push([i, st]); });
        (w.slowStep ? slow : norm).push([i, w.step]);
      });
      var series = many
        ? [{ type: 'scatter', symbolSize: 5, progressive: 0, z: 3, large: true, largeThreshold: 200, itemStyle: { color: '#4e79a7' }, data: norm, markLine: medianLine(PT.M.stepMedian) },
          { type: 'scatter', symbolSize: 9, progressive: 0, z: 5, itemStyle: { color: '#cf222e' }, data: slow }]
        : [{ type: 'bar', barMaxWidth: 24, progressive: 0, markLine: medianLine(PT.M.stepMedian),
          data: ws.map(function (w) { return { value: w.step, itemStyle: { color: w.slowStep ? '#cf222e' : '#9cc3e6' } }; }) }];
      if (pts.length) series.push({ type: 'scatter', symbolSize: many ? 2 : 4, progressive: 0, z: 2, silent: many, large: many, largeThreshold: 200,
        itemStyle: { color: many ? '#8c959f' : '#24292f' }, data: pts });
      var c = chart(el, {
        grid: { left: 60, right: 16, top: 16, bottom: ws.length > 64 ? 56 : 40 },
        tooltip: { trigger: 'item', formatter: function (p) {
          var w = ws[pointIndex(p)];
          if (!w) return '';
          var l = [(PT.M.stepExact ? 'median step ' : 'mean step ') + ms(w.step), 'median of workers ' + ms(PT.M.stepMedian)];
          if (w.stepMs && w.stepMs.length) l.push('steps: ' + w.stepMs.map(function (st) { return st.toFixed(2); }).join(', ') + ' ms');
          if (w.slowStep) l.push('slow outlier');
          return tipWorker(w, l);
        } },
        xAxis: xAxisFor(ws, many),
        yAxis: { type: 'value', name: 'ms', scale: many },
        dataZoom: zoomFor(ws.length),
        series: series
      });
      if (c) c.on('click', function (p) { var w = ws[pointIndex(p)]; if (w) location.hash = '#worker/' + encodeURIComponent(w.id); });
    });
    return card;
  }

  function classChart(only) {
    var ws = (only || PT.M.workers).filter(function (w) { return obj(w.classMs); });
    var card = h('div', { class: 'chart-card' });
    var mode = 'pct';
    var hd = h('div', { class: 'hd' }, h('h3', { text: only ? 'Time breakdown by class' : 'Time breakdown by class, per worker' }));
    card.appendChild(hd);
    if (ws.length) card.appendChild(legend(CLASSES.map(function (c2) { return [CLASS_COLOR[c2], c2]; })));
    if (!ws.length) {
      card.appendChild(empty('This report has no per-class breakdown of the time (re-run perftracker analyze or diagnose to get one).'));
      return card;
    }
    var el = h('div', { class: 'chart', id: only ? 'chart-class-one' : 'chart-class', style: only ? 'height:140px' : null });
    var b1 = h('button', { type: 'button', class: 'btn on', text: '% of window' });
    var b2 = h('button', { type: 'button', class: 'btn', text: 'ms' });
    hd.appendChild(h('div', { class: 'ctl' }, b1, b2));
    card.appendChild(el);
    var c = null;
    /* Many workers: stacked areas over the workers in rank order (one flat
       step per worker) instead of 6 x N bars, which took ~0.4 s to draw
       for 1,000 workers. */
    var many = !only && ws.length > 64;
    function opt() {
      return {
        grid: { left: only ? 16 : 60, right: 16, top: 10, bottom: only ? 24 : (ws.length > 64 ? 56 : 40), containLabel: !!only },
        tooltip: { trigger: 'axis', axisPointer: { type: many ? 'line' : 'shadow' }, formatter: function (ps) {
          var w = ws[many ? Math.round(ps[0].value[0]) : ps[0].dataIndex];
          if (!w) return '';
          var tot = CLASSES.reduce(function (s, k) { return s + (isNum(w.classMs[k]) ? w.classMs[k] : 0); }, 0);
          return tipWorker(w, CLASSES.map(function (k) { var v = w.classMs[k]; return k + ': ' + ms(v) + ' (' + pct(tot ? v / tot : NaN) + ')'; }));
        } },
        xAxis: only ? { type: 'value', max: mode === 'pct' ? 1 : null, axisLabel: { formatter: mode === 'pct' ? function (v) { return (v * 100) + '%'; } : '{value}' } }
          : xAxisFor(ws, many),
        yAxis: only ? { type: 'category', data: [''] }
          : { type: 'value', max: mode === 'pct' ? 1 : null, name: mode === 'pct' ? '' : 'ms',
            axisLabel: { formatter: mode === 'pct' ? function (v) { return (v * 100).toFixed(0) + '%'; } : '{value}' } },
        dataZoom: only ? [] : zoomFor(ws.length),
        series: CLASSES.map(function (k) {
          var data = ws.map(function (w, i) {
            var tot = CLASSES.reduce(function (s, kk) { return s + (isNum(w.classMs[kk]) ? w.classMs[kk] : 0); }, 0);
            var v = isNum(w.classMs[k]) ? w.classMs[k] : 0;
            v = mode === 'pct' ? (tot ? v / tot : 0) : v;
            return many ? [i, v] : v;
          });
          if (many) return { name: k, type: 'line', stack: 'all', step: 'middle', symbol: 'none', progressive: 0,
            lineStyle: { width: 0 }, areaStyle: { color: CLASS_COLOR[k], opacity: 1 }, itemStyle: { color: CLASS_COLOR[k] }, data: data };
          return { name: k, type: 'bar', stack: 'all', barMaxWidth: 28, progressive: 0, itemStyle: { color: CLASS_COLOR[k] }, data: data };
        })
      };
    }
    function set(m2) { mode = m2; b1.classList.toggle('on', m2 === 'pct'); b2.classList.toggle('on', m2 === 'ms'); if (c) c.setOption(opt(), true); }
    b1.addEventListener('click', function () { set('pct'); });
    b2.addEventListener('click', function () { set('ms'); });
    queue(function () {
      c = chart(el, opt());
      if (c && !only && !many) c.on('click', function (p) { var w = ws[p.dataIndex]; if (w) location.hash = '#worker/' + encodeURIComponent(w.id); });
    });
    return card;
  }

  function workerCols() {
    return [
      { key: 'id', label: 'worker', fmt: function (v) { return workerLink(v); } },
      { key: 'rank', label: 'rank', num: true, fmt: function (v) { return v == null ? '–' : String(v); } },
      { key: 'host', label: 'host' },
      { key: 'steps', label: 'steps', num: true, fmt: function (v) { return v == null ? '–' : String(v); } },
      { key: 'window', label: 'window', num: true, fmt: ms },
      { key: 'step', label: PT.M.stepExact ? 'median step' : 'mean step', num: true, fmt: function (v, r) { return h('span', { style: r.slowStep ? 'color:#cf222e;font-weight:600' : null, text: ms(v) }); } },
      { key: 'util', label: 'GPU util', num: true, fmt: function (v, r) { return h('span', { style: r.id in PT.M.abnUtil ? 'color:#cf222e;font-weight:600' : null, text: pct(v, 1) }); } },
      { key: 'nflags', label: 'findings', num: true, get: function (r) { return r.flags.length; }, fmt: function (v) { return v ? h('span', { class: 'badge bad', text: String(v) }) : ''; } },
      { key: 'error', label: 'error', fmt: function (v) { return v ? h('span', { class: 'badge bad', title: v, text: 'unreadable' }) : ''; } }
    ];
  }

  function viewWorkers(root) {
    add(root, h('h1', { text: 'Workers' }));
    add(root, h('p', { class: 'note', text: 'Click a worker (in a chart or the table) for everything the report says about it.' }));
    add(root, h('div', { class: 'grid2' }, hasGpu() ? utilChart() : null, stepChart()));
    add(root, classChart());
    add(root, table({ title: 'All workers', rows: PT.M.workers, sort: ['rank', 1], cols: workerCols(), placeholder: 'Filter by worker, host…',
      rowClass: function (r) { return r.flags.length || r.slowStep ? 'hl' : null; } }));
  }

  var ONLY_HERE = 1e9;   // deviation of a function only this worker runs (sorts first)
  function heatFmt(v) { return fmtUnit(v, PT.M.heat.unit); }
  function viewWorker(root, id) {
    var w = PT.M.byId[id];
    add(root, h('p', null, h('a', { href: '#workers', text: '← all workers' })));
    if (!w) { add(root, h('div', { class: 'fatal', text: 'No worker named "' + id + '" in this report.' })); return; }
    add(root, h('h1', null, 'Worker ', h('span', { class: 'mono', text: w.id })));
    var dl = h('dl', { class: 'kv card' });
    [['rank', w.rank], ['host', w.host], ['pid', w.pid], ['trace', w.file],
      ['steps', w.steps != null ? w.steps + (w.stepNumbers ? ' (ProfilerStep ' + w.stepNumbers.join(', ') + ')' : '') : null], ['window', ms(w.window)],
      [PT.M.stepExact ? 'median step' : 'mean step', ms(w.step) + (w.slowStep ? '  (slow outlier)' : '')],
      ['GPU utilization', pct(w.util, 1) + (w.id in PT.M.abnUtil ? '  (abnormal)' : '')],
      ['GPU compute utilization', (function () { var r = obj((obj(PT.M.rep[K.WORKERS]) || {})[w.id]) || {}; return isNum(r[K.GPU_COMPUTE_UTILIZATION_LC]) ? pct(r[K.GPU_COMPUTE_UTILIZATION_LC], 1) : null; })()],
      ['step times', w.stepMs ? w.stepMs.map(function (s) { return ms(s); }).join(', ') : null], ['error', w.error]]
      .forEach(function (p) { if (p[1] != null && p[1] !== '') add(dl, [h('dt', { text: p[0] }), h('dd', { text: String(p[1]) })]); });
    add(root, dl);
    if (w.flags.length) {
      add(root, h('h2', { text: 'Findings that name this worker' }));
      w.flags.forEach(function (f, i) { add(root, findingCard(f, i)); });
    }
    add(root, classChart([w]));
    /* This worker's row of the heatmap: where it is furthest from the median. */
    var H = PT.M.heat, hr = H.rows.indexOf(id), hrows = [];
    if (hr >= 0) (H.vals[hr] || []).forEach(function (v, j) {
      if (!isNum(v)) return;
      /* with the report's per-function values a worker without the function
         spends 0 in it; a median of 0: only this worker runs it */
      var med = H.exact ? drawMedian(H.vals.map(function (r) { return isNum(r[j]) ? r[j] : 0; })) : H.med[j];
      if (!isNum(med)) return;
      var d = med > 0 ? v / med - 1 : v > 0 ? ONLY_HERE : 0;
      if (Math.abs(d) >= 0.2) hrows.push({ fn: H.funcs[j].key, cls: H.funcs[j].cls, v: v, med: med, dev: d });
    });
    add(root, h('h2', { text: 'Heatmap: where this worker differs from the median' }));
    add(root, table({ title: 'Functions at least 20% from the median (' + H.metric + ')', rows: hrows, page: 15, sort: ['dev', -1], cls: 'worker-heat',
      empty: hr >= 0 ? 'Every function is within 20% of the median of all workers.' : 'The heatmap has no row for this worker.',
      cols: [{ key: 'fn', label: 'function', fmt: function (v) { return fnName(v); } }, { key: 'cls', label: 'class' },
        { key: 'v', label: 'this worker', num: true, fmt: function (v) { return heatFmt(v); } },
        { key: 'med', label: 'median', num: true, fmt: function (v) { return heatFmt(v); } },
        { key: 'dev', label: 'deviation', num: true, fmt: function (v) { return v >= ONLY_HERE ? 'only here' : signedPct(v); } }] }));
    /* Everything the sections list about this worker. */
    var rows = [];
    var rep = PT.M.rep;
    var gc = obj(rep[K.GPU_COMPUTE]) || {};
    if (id in (obj(gc[K.WORKERS_WITH_ABNORMAL_GPU_UTILIZATION]) || {})) rows.push({ sec: K.GPU_COMPUTE, fn: 'GPU utilization', metric: 'abnormal GPU utilization', v: gc[K.WORKERS_WITH_ABNORMAL_GPU_UTILIZATION][id], unit: 'share' });
    var det = obj(obj(gc[K.DETAILED_REPORT]) && gc[K.DETAILED_REPORT][id]) || {};
    keys(det).forEach(function (k) { var r = obj(det[k]) || {}; rows.push({ sec: K.GPU_COMPUTE, fn: k, metric: K.MEDIAN_COST_PER_EXECUTION_MS + ' (others ' + ms(r[K.MEDIAN_OF_OTHER_WORKERS_MS]) + ', slower by ' + (r[K.SLOWER_BY] != null ? r[K.SLOWER_BY] : '?') + ')', v: r[K.MEDIAN_COST_PER_EXECUTION_MS], unit: 'ms' }); });
    [[K.GPU_MEMORY_OPERATIONS], [K.CUDA_RUNTIME]].forEach(function (p) {
      var sec = obj(rep[p[0]]) || {};
      keys(sec).forEach(function (op) { var ab = obj(obj(sec[op]) && sec[op][K.ABNORMAL_WORKERS]) || {}; if (id in ab) rows.push({ sec: p[0], fn: op, metric: 'bottleneck ratio (abnormal)', v: ab[id], unit: 'share' }); });
    });
    commRows().forEach(function (r) { if (r.worker === id && r.abnormal) rows.push({ sec: K.COMMUNICATION, fn: r.group + ' · ' + r.kernel, metric: 'different from other workers', v: r.diff, unit: '' }); });
    var py = obj(rep[K.PYTHON_FUNCTIONS]) || {};
    keys(py).forEach(function (st) { var ws = obj(py[st]) || {}; if (id in ws) rows.push({ sec: K.PYTHON_FUNCTIONS, fn: st, metric: 'bottleneck ratio', v: ws[id], unit: 'share' }); });
    add(root, h('h2', { text: 'What the sections list for this worker' }));
    add(root, table({ title: 'Entries naming ' + workerLabel(w), rows: rows, sort: ['sec', 1], empty: 'No section lists this worker as abnormal.', cols: [
      { key: 'sec', label: 'section' },
      { key: 'fn', label: 'function', fmt: function (v) { return fnName(v); } },
      { key: 'metric', label: 'metric' },
      { key: 'v', label: 'value', num: true, fmt: function (v, r) { return fmtUnit(v, r.unit); } }] }));
  }

  PT.utilChart = utilChart;
  PT.stepChart = stepChart;
  PT.viewWorkers = viewWorkers;
  PT.heatFmt = heatFmt;
  PT.viewWorker = viewWorker;
}(PT));
