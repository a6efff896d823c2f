/*
 * critpath.js - PerfDisplay: the Critical path view: per worker and step
 * the path split by kind, the functions on it and where the main thread
 * waited; with several workers the job's path per step.
 */
(function (PT) {
  'use strict';
  var add = PT.add, collator = PT.collator, drawMedian = PT.drawMedian, esc = PT.esc, h = PT.h,
    isNum = PT.isNum, keys = PT.keys, ms = PT.ms, num = PT.num, obj = PT.obj, pct = PT.pct,
    plural = PT.plural, chart = PT.chart, empty = PT.empty, fnName = PT.fnName, howto = PT.howto,
    legend = PT.legend, queue = PT.queue, stat = PT.stat, table = PT.table, workerLabel = PT.workerLabel,
    workerLink = PT.workerLink, zoomFor = PT.zoomFor;

  /* ---- Critical path (report "Critical path", docs/display.md) ---------
     Per worker and profiled step, the longest chain of dependent work from
     the step's start to its end, split by kind (the kinds sum to the step's
     ms); the functions with most time on it and where the main thread
     blocked; with several workers the job-wide path per step. */
  var CP_KINDS = ['cpu', 'compute', 'communication', 'memory', 'launch', 'gap', 'wait'];
  var CP_COLOR = { cpu: '#b07aa1', compute: '#4e79a7', communication: '#f28e2b', memory: '#59a14f',
    launch: '#edc948', gap: '#bab0ac', wait: '#e15759' };
  var CP_MORE = ['#76b7b2', '#9c755f', '#ff9da7', '#17becf'];
  var CP_WINDOW = 120;   // bars shown at once when there are more (the slider shows the rest)
  function cpColor(C, k) { return CP_COLOR[k] || CP_MORE[Math.max(0, C.kinds.indexOf(k)) % CP_MORE.length]; }
  function cpStep(n) { return n === -1 ? 'window' : n == null ? '?' : String(n); }
  function cpWorkerName(id) { var w = PT.M.byId[id]; return w && w.rank != null ? String(w.rank) : id; }
  function cpSplitOf(o, kinds) {
    var s = {};
    o = obj(o) || {};
    kinds.forEach(function (k) { s[k] = isNum(o[k]) ? o[k] : 0; });
    return s;
  }
  function cpTotal(s, kinds) { return kinds.reduce(function (t, k) { return t + s[k]; }, 0); }
  function cpData() {
    if (PT.M.cp === undefined) PT.M.cp = buildCp();
    return PT.M.cp;
  }
  function buildCp() {
    var s = obj(PT.M.rep[K.CRITICAL_PATH]);
    if (!s) return null;
    var kinds = Array.isArray(s[K.KINDS]) && s[K.KINDS].length ? s[K.KINDS].map(String) : CP_KINDS.slice();
    CP_KINDS.forEach(function (k) { if (kinds.indexOf(k) < 0) kinds.push(k); });
    kinds = kinds.filter(function (k, i) { return kinds.indexOf(k) === i; });
    var ws = obj(s[K.WORKERS]) || {};
    var order = function (id) { var w = PT.M.byId[id]; return w ? w.index : 1e9; };
    var ids = keys(ws).sort(function (a, b) { return order(a) - order(b) || collator.compare(a, b); });
    var several = ids.length > 1;
    var rows = [], workers = [];
    ids.forEach(function (id) {
      var w = obj(ws[id]) || {};
      var steps = (Array.isArray(w[K.STEPS_LC]) ? w[K.STEPS_LC] : []).filter(obj);
      var mine = steps.map(function (st) {
        var split = cpSplitOf(st[K.SPLIT_MS], kinds);
        var n = isNum(st[K.NUMBER]) ? st[K.NUMBER] : null;
        return { worker: id, number: n, label: (several ? cpWorkerName(id) + ':' : '') + cpStep(n),
          ms: isNum(st[K.MS]) ? st[K.MS] : cpTotal(split, kinds), slow: st[K.SLOW] === true, split: split,
          waitedFor: st[K.WAITED_FOR] != null ? String(st[K.WAITED_FOR]) : '',
          functions: (Array.isArray(st[K.FUNCTIONS]) ? st[K.FUNCTIONS] : []).filter(obj),
          waits: (Array.isArray(st[K.WAITS]) ? st[K.WAITS] : []).filter(obj) };
      });
      mine.forEach(function (r) { r.nsteps = mine.length; });
      /* what grew: each kind against its median over the worker's steps */
      if (mine.length > 1) {
        var med = {};
        kinds.forEach(function (k) { med[k] = drawMedian(mine.map(function (r) { return r.split[k]; })); });
        mine.forEach(function (r) {
          var best = null;
          kinds.forEach(function (k) { var d = r.split[k] - med[k]; if (d > 0 && (!best || d > best[1])) best = [k, d]; });
          r.grew = best;
        });
      }
      var sum = obj(w[K.SPLIT_MS]) ? cpSplitOf(w[K.SPLIT_MS], kinds) : null;
      if (!sum) {
        sum = cpSplitOf(null, kinds);
        mine.forEach(function (r) { kinds.forEach(function (k) { sum[k] += r.split[k]; }); });
      }
      workers.push({ id: id, label: cpWorkerName(id), split: sum, ms: cpTotal(sum, kinds), steps: mine.length,
        slowN: mine.filter(function (r) { return r.slow; }).length });
      Array.prototype.push.apply(rows, mine);
    });
    var job = (Array.isArray(s[K.JOB]) ? s[K.JOB] : []).filter(obj).map(function (j) {
      var split = cpSplitOf(j[K.SPLIT_MS], kinds);
      var n = isNum(j[K.NUMBER]) ? j[K.NUMBER] : null;
      return { number: n, label: cpStep(n), ms: isNum(j[K.MS]) ? j[K.MS] : cpTotal(split, kinds), split: split,
        through: j[K.THROUGH] != null ? String(j[K.THROUGH]) : '', whatIf: isNum(j[K.WHAT_IF_MS]) ? j[K.WHAT_IF_MS] : null };
    });
    if (!rows.length && !job.length) return null;
    var tot = cpSplitOf(null, kinds);
    workers.forEach(function (w) { kinds.forEach(function (k) { tot[k] += w.split[k]; }); });
    return { kinds: kinds, rows: rows, workers: workers, job: job, several: several, total: tot,
      slow: rows.filter(function (r) { return r.slow; }) };
  }
  function cpLines(C, split, total) {
    return C.kinds.filter(function (k) { return split[k] > 0; }).map(function (k) {
      return '<span style="display:inline-block;width:9px;height:9px;border-radius:2px;margin-right:5px;background:' + cpColor(C, k) + '"></span>' +
        esc(k + ': ' + ms(split[k]) + ' (' + pct(total > 0 ? split[k] / total : NaN, 0) + ')');
    });
  }
  /* A stacked bar per item (items: {label, split, ms, slow}); with more
     than CP_WINDOW items the chart opens on a window of them around the
     first slow one, the slider moves it (only the window is drawn). */
  function cpChart(C, id, title, items, xname, o) {
    o = o || {};
    var card = h('div', { class: 'chart-card' }, h('div', { class: 'hd' }, h('h3', { text: title })),
      legend(C.kinds.map(function (k) { return [cpColor(C, k), k]; }).concat(o.legend || [])));
    if (!items.length) { card.appendChild(empty(o.empty || 'Nothing to show.')); return card; }
    var n = items.length;
    if (n > CP_WINDOW) card.appendChild(h('div', { class: 'note', text: 'Showing ' + CP_WINDOW + ' of ' + n + ' bars' +
      (items.some(function (it) { return it.slow; }) ? ', from the first slow step' : '') + ': drag or resize the slider for the others.' }));
    var el = h('div', { class: 'chart', id: id });
    card.appendChild(el);
    queue(function () {
      var slowAt = Object.create(null), marks = [], first = -1;
      items.forEach(function (it, i) {
        if (!it.slow) return;
        slowAt[it.label] = 1;
        marks.push({ coord: [i, it.ms], value: '' });
        if (first < 0) first = i;
      });
      var dz = zoomFor(n);
      if (n > CP_WINDOW) {
        var a = Math.max(0, Math.min(first < 0 ? 0 : first - 10, n - CP_WINDOW));
        /* no data shadow in the slider: it would plot the first kind only, over every bar */
        dz.forEach(function (z) { z.startValue = a; z.endValue = a + CP_WINDOW - 1; if (z.type === 'slider') z.showDataShadow = false; });
      }
      var last = C.kinds.length - 1;
      var c = chart(el, {
        grid: { left: 60, right: 16, top: 24, bottom: n > 64 ? 56 : 40 },
        tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, confine: true, formatter: function (ps) {
          var it = items[ps && ps[0] ? ps[0].dataIndex : -1];
          if (!it) return '';
          return ['<b>' + esc(o.head ? o.head(it) : it.label) + '</b>', esc('path ' + ms(it.ms) + (it.slow ? ' · slow step' : ''))]
            .concat(o.tip ? o.tip(it).map(esc) : []).concat(cpLines(C, it.split, it.ms)).join('<br>');
        } },
        xAxis: { type: 'category', data: items.map(function (it) { return it.label; }), name: xname, nameLocation: 'middle', nameGap: 24,
          axisLabel: { formatter: function (v) { var t = String(v).replace(/[{}]/g, ''); return slowAt[v] ? '{s|' + t + '}' : t; },
            rich: { s: { color: '#cf222e', fontWeight: 'bold' } } } },
        yAxis: { type: 'value', name: 'ms' },
        dataZoom: dz,
        series: C.kinds.map(function (k, j) {
          return { type: 'bar', stack: 'path', name: k, barMaxWidth: 32, progressive: 0, itemStyle: { color: cpColor(C, k) },
            data: items.map(function (it) { return it.split[k]; }),
            markPoint: j === last && marks.length ? { silent: true, symbol: 'triangle', symbolRotate: 180, symbolSize: 9,
              symbolOffset: [0, -8], itemStyle: { color: '#cf222e' }, label: { show: false }, data: marks } : undefined };
        })
      });
      if (c && o.click) c.on('click', function (p) { var it = items[p.dataIndex]; if (it) o.click(it); });
    });
    return card;
  }
  function cpMini(C, r) {
    var bar = h('span', { class: 'cp-mini', title: C.kinds.filter(function (k) { return r.split[k] > 0; })
      .map(function (k) { return k + ' ' + ms(r.split[k]) + ' (' + pct(r.ms > 0 ? r.split[k] / r.ms : NaN, 0) + ')'; }).join('\n') });
    C.kinds.forEach(function (k) {
      if (r.split[k] > 0 && r.ms > 0) bar.appendChild(h('span', { style: 'width:' + (100 * r.split[k] / r.ms).toFixed(2) + '%;background:' + cpColor(C, k) }));
    });
    return bar;
  }
  function cpTop(C, split) {
    var b = null;
    C.kinds.forEach(function (k) { if (split[k] > 0 && (b == null || split[k] > split[b])) b = k; });
    return b;
  }
  function cpFunction(f, alone) {   // alone: the worker's only step (its median is itself)
    var v = f[K.MS], m = alone ? null : f[K.MEDIAN_MS];
    var grew = isNum(v) && isNum(m) && v - m >= 0.05 && v > 1.5 * m;
    return h('div', null, fnName(String(f[K.NAME] != null ? f[K.NAME] : '?')), ' ',
      h('span', { class: grew ? 'cp-grew' : null, text: ms(v) }),
      isNum(m) ? h('span', { class: 'muted', text: ' vs median ' + ms(m) }) : null,
      f[K.KIND] ? h('span', { class: 'muted', text: ' · ' + String(f[K.KIND]) }) : null);
  }
  function cpWait(wt) {
    var ts = wt[K.TARGET_STREAM], bs = wt[K.BEHIND_STREAM];
    var call = wt[K.CALL] != null && wt[K.CALL] !== wt[K.SPAN] ? String(wt[K.CALL]) : '';
    return h('div', null, h('b', { text: 'waits ' + ms(wt[K.MS]) }),
      wt[K.SPAN] != null ? [' in ', fnName(String(wt[K.SPAN]))] : null,
      call ? h('span', { class: 'cp-call' }, ' (', fnName(call), ')') : null,
      wt[K.TARGET] != null ? [' for ', fnName(String(wt[K.TARGET]))] : null,
      isNum(ts) ? ' on stream ' + ts : null,
      wt[K.BEHIND] != null ? [', queued behind ', fnName(String(wt[K.BEHIND])), isNum(bs) ? ' on stream ' + bs : null] : null);
  }
  function viewCritPath(root) {
    var C = cpData();
    add(root, h('h1', { text: 'Critical path: what each step waited on' }));
    if (!C) { add(root, empty('This report has no critical path.')); return; }
    add(root, howto('the critical path', [
      ['critical path', 'The longest chain of dependent work from a step\'s start to its end: CPU ops, kernel launches, kernels on a stream, synchronisations, waits of one stream for another. Work off the path overlaps it: making it faster does not shorten the step; shortening the path does. The kinds below add up to the step time.'],
      ['cpu · compute · communication · memory', 'The path inside CPU-bound host work, GPU compute kernels, communication (NCCL kernels, CPU collectives), and memcpy/memset.'],
      ['launch', 'Kernel launches and other CUDA runtime calls on the path (launch overhead, a synchronisation call itself).'],
      ['gap', 'Time between one kernel and the next on the GPU with nothing on the path to explain it: the GPU waiting for the host.'],
      ['wait', 'Waiting for another worker (only in multi-worker jobs): the path leaves this worker there.'],
      ['slow step', 'A step the report marks slow: red step label and ▼ above its bar. The table lists the slow steps (every step when none is slow).'],
      ['grew most · functions · waits', 'Per step: the kind whose time on the path exceeds its median over the worker\'s steps by the most; the functions with the most time on the path (on this step vs their median over the steps, red when it grew); and where the main thread blocked: the span, the call, what it waited for and what that was queued behind on its stream.'],
      ['job path', 'With several workers: the path of the whole job per step, the worker it runs through (the one the others waited for) and, when the report has it, the what-if: the step without that worker\'s late arrivals at the collectives on the path.']]));
    var tot = C.total, all = cpTotal(tot, C.kinds), top = cpTop(C, tot);
    add(root, h('div', { class: 'stats' },
      stat('Profiled steps', String(C.rows.length), C.several ? plural(C.workers.length, 'worker') : null),
      stat('Slow steps', String(C.slow.length), C.slow.length ? 'marked red in the chart' : 'none marked slow'),
      stat('Largest part of the path', top ? top : '–', top ? pct(all > 0 ? tot[top] / all : NaN, 0) + ' of ' + ms(all) + ' (all steps)' : null),
      stat('GPU gaps on the path', pct(all > 0 ? tot.gap / all : NaN, 0), ms(tot.gap)),
      C.several ? stat('Waiting for other workers', pct(all > 0 ? tot.wait / all : NaN, 0), ms(tot.wait)) : null));
    add(root, cpChart(C, 'chart-cp-steps', C.several ? 'Critical path of each step of each worker (rank:step)' : 'Critical path of each step', C.rows,
      C.several ? 'rank:step' : 'step', {
        legend: [['#cf222e', 'slow step ▼']],
        empty: 'No worker has steps on the critical path.',
        head: function (r) { return (C.several ? workerLabel(PT.M.byId[r.worker] || { id: r.worker, rank: null }) + ' · ' : '') + (r.number === -1 ? 'whole window' : 'step ' + cpStep(r.number)); },
        tip: function (r) {
          return (r.grew ? ['grew most: ' + r.grew[0] + ' +' + ms(r.grew[1]) + ' over the median step'] : [])
            .concat(r.waitedFor ? ['waited for ' + workerLabel(PT.M.byId[r.waitedFor] || { id: r.waitedFor, rank: null })] : []);
        },
        click: C.several ? function (r) { location.hash = '#worker/' + encodeURIComponent(r.worker); } : null }));
    /* per worker, summed: with one step per worker it would repeat the chart above */
    if (C.workers.length > 1 && C.workers.some(function (w) { return w.steps > 1; })) {
      add(root, cpChart(C, 'chart-cp-workers', 'Critical path per worker, summed over its steps', C.workers, 'rank', {
        head: function (w) { return w.id; },
        tip: function (w) { return [plural(w.steps, 'step') + (w.slowN ? ', ' + w.slowN + ' slow' : '')]; },
        click: function (w) { location.hash = '#worker/' + encodeURIComponent(w.id); } }));
    }
    var slow = C.slow.length > 0;
    add(root, h('h2', { text: slow ? 'Slow steps: what grew on the path' : 'Steps: what is on the path' }));
    add(root, table({ title: slow ? 'Slow steps' : 'Steps (none is marked slow)', rows: slow ? C.slow : C.rows, page: 25, cls: 'cp-table',
      sort: ['ms', -1], placeholder: 'Filter by worker, function, wait…', empty: 'No step.',
      rowClass: function (r) { return r.slow ? 'hl' : null; }, cols: [
        { key: 'worker', label: 'worker', fmt: function (v, r) { return workerLink(v, r.slow ? 'bad' : null, C.several); } },
        { key: 'number', label: 'step', num: true, fmt: function (v) { return cpStep(v); } },
        { key: 'ms', label: 'path', num: true, fmt: ms },
        { key: 'split', label: 'by kind', title: 'the path split by kind; grew: the kind whose time on the path exceeds its median over the worker\'s steps by the most',
          get: function (r) { return cpTop(C, r.split) || ''; },
          fmt: function (v, r) {
            return h('div', null, cpMini(C, r), h('div', { class: 'muted cp-small', text: v ? 'largest: ' + v + ' ' + pct(r.ms > 0 ? r.split[v] / r.ms : NaN, 0) : '' }),
              r.grew ? h('div', { class: 'cp-small' + (r.slow ? ' cp-grew' : ''), text: 'grew: ' + r.grew[0] + ' +' + ms(r.grew[1]) }) : null,
              r.waitedFor ? h('div', { class: 'cp-small' }, 'waited for ', workerLink(r.waitedFor, null, true)) : null);
          } },
        { key: 'fn', label: 'functions on the path (this step vs median)', get: function (r) { return r.functions.map(function (f) { return String(f[K.NAME]); }).join(' '); },
          fmt: function (v, r) { return r.functions.length ? h('div', { class: 'cp-list' }, r.functions.map(function (f) { return cpFunction(f, r.nsteps < 2); })) : '–'; } },
        { key: 'waits', label: 'where the main thread waited', get: function (r) {
          return r.waits.map(function (wt) { return [wt[K.SPAN], wt[K.CALL], wt[K.TARGET], wt[K.BEHIND]].filter(function (x) { return x != null; }).join(' '); }).join(' '); },
          fmt: function (v, r) { return r.waits.length ? h('div', { class: 'cp-list' }, r.waits.map(cpWait)) : '–'; } }] }));
    if (C.job.length) {
      add(root, h('h2', { text: 'The job\'s path' }));
      add(root, cpChart(C, 'chart-cp-job', 'Critical path of the job, per step', C.job, 'step', {
        head: function (j) { return j.number === -1 ? 'whole window' : 'step ' + cpStep(j.number); },
        tip: function (j) {
          return (j.through ? ['runs through ' + workerLabel(PT.M.byId[j.through] || { id: j.through, rank: null })] : [])
            .concat(j.whatIf != null ? ['what-if: ' + ms(j.whatIf) + ' without its late arrivals'] : []);
        } }));
      add(root, table({ title: 'Job path per step', rows: C.job, sort: ['number', 1], cols: [
        { key: 'number', label: 'step', num: true, fmt: function (v) { return cpStep(v); } },
        { key: 'ms', label: 'path', num: true, fmt: ms },
        { key: 'through', label: 'runs through', fmt: function (v) { return v ? workerLink(v, null, true) : '–'; } }]
        .concat(C.job.some(function (j) { return j.whatIf != null; }) ? [{ key: 'whatIf', label: 'what-if', num: true, fmt: ms,
          title: 'the step without the time the worker it runs through arrived late (beyond the median member) at the collectives on the path' }] : [])
        .concat(C.kinds.map(function (k) {
          return { key: 'k:' + k, label: k, num: true, get: function (j) { return j.split[k]; }, fmt: ms };
        })) }));
    }
  }

  PT.cpData = cpData;
  PT.viewCritPath = viewCritPath;
}(PT));
