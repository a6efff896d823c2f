/*
 * widgets.js - PerfDisplay: what every view draws with: worker links,
 * function names, the sortable table, stat boxes, chart creation (ECharts,
 * resized with the window) and the queue of charts drawn once their view
 * is in the document.
 */
(function (PT) {
  'use strict';
  var add = PT.add, collator = PT.collator, esc = PT.esc, h = PT.h, isNum = PT.isNum, num = PT.num,
    plural = PT.plural, timing = PT.timing;

  /* A function key's short name from the report's map ("display"."short",
     made by src/report/names.c); the key itself when the report has none. */
  function shortName(k) {
    var m = PT.M && PT.M.short, v = m && Object.prototype.hasOwnProperty.call(m, k) ? m[k] : null;
    return typeof v === 'string' && v ? v : String(k);
  }
  function workerLabel(w) { return w && w.rank != null ? 'rank ' + w.rank : (w ? w.id : ''); }
  /* A link to a worker's page; byRank: named "rank N" when its rank is known
     (narrow table columns); label: the name the report gave it (a finding's
     "labels"); the id in the tooltip. */
  function workerLink(id, cls, byRank, label) {
    var w = byRank ? PT.M.byId[id] : null;
    return h('a', { class: 'chip' + (cls ? ' ' + cls : ''), href: '#worker/' + encodeURIComponent(id), title: id,
      text: label ? String(label) : w && w.rank != null ? 'rank ' + w.rank : id });
  }
  /* Is name a Python stack ("a|b|c"), not a kernel with its launch shape
     ("name|1_1_1|32_1_1")? */
  function isStack(name) {
    var i = name.lastIndexOf('|');
    return i > 0 && !/^\d+_\d+_\d+$/.test(name.slice(i + 1));
  }
  /* A function name, short (shortName) on one line; click shows it whole,
     a Python stack one frame a line. */

  function fnName(name) {
    name = String(name);
    var stack = isStack(name);
    var fr = stack ? name.split('|') : null;
    var short = shortName(name);
    var s = h('span', { class: 'fn', title: stack ? fr.join('\n') : name, text: short });
    s.addEventListener('click', function () {
      var open = s.classList.toggle('open');
      s.textContent = open && stack ? fr.join('\n') : open ? name : short;
    });
    return s;
  }
  function howto(title, items) {
    var dl = h('dl');
    items.forEach(function (it) { add(dl, [h('dt', { text: it[0] }), h('dd', { text: it[1] })]); });
    return h('details', { class: 'howto', open: true }, h('summary', { text: 'How to read ' + title }), dl);
  }
  function stat(k, v, d) { return h('div', { class: 'stat' }, h('div', { class: 'k', text: k }), h('div', { class: 'v', text: v }), d ? h('div', { class: 'd', text: d }) : null); }
  function empty(text) { return h('div', { class: 'empty', text: text }); }

  /* A sortable, filterable table.  cols: {key, label, num, fmt(v,row)->string|Node,
     get(row)->sort value, title}.  Rows are drawn a page at a time so that
     tables with tens of thousands of rows stay cheap. */
  function table(opt) {
    var cols = opt.cols, all = opt.rows, page = opt.page || 100;
    var sortKey = opt.sort ? opt.sort[0] : null, sortDir = opt.sort ? opt.sort[1] : 1;
    var shown = page, view = all.slice(), q = '';
    var colBy = {};
    cols.forEach(function (c) { colBy[c.key] = c; });
    var hay = all.map(function (r) {
      return cols.map(function (c) { var v = c.get ? c.get(r) : r[c.key]; return typeof v === 'string' ? v : ''; })
        .join('\u0001').toLowerCase();
    });
    var tbody = h('tbody');
    var count = h('span', { class: 'tbl-count' });
    var more = h('div', { class: 'tbl-more' });
    var ths = [];
    var thead = h('tr');
    cols.forEach(function (c) {
      var arrow = h('span', { class: 'arrow', 'aria-hidden': 'true' });
      var th = h('th', { class: c.num ? 'num' : null, scope: 'col', title: c.title || null, 'data-key': c.key },
        h('button', { type: 'button', onclick: function () { sortBy(c.key); } }, c.label, arrow));
      th._arrow = arrow;
      ths.push(th);
      thead.appendChild(th);
    });
    var input = h('input', { type: 'search', placeholder: opt.placeholder || 'Filter…', 'aria-label': 'Filter ' + (opt.title || 'table') });
    var timer = 0;
    input.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(function () { setFilter(input.value); }, 120);
    });
    var wrap = h('div', { class: 'tbl-wrap' + (opt.cls ? ' ' + opt.cls : '') },
      h('div', { class: 'tbl-bar' }, opt.title ? h('span', { class: 'tbl-title', text: opt.title }) : null, input, count),
      h('div', { class: 'tbl-scroll' }, h('table', { class: 'tbl' }, h('thead', null, thead), tbody)), more);
    function val(r, k) { var c = colBy[k]; return c.get ? c.get(r) : r[k]; }
    function apply() {
      var idx = [];
      var i;
      for (i = 0; i < all.length; i++) if (!q || hay[i].indexOf(q) >= 0) idx.push(i);
      if (sortKey) {
        var c = colBy[sortKey];
        idx.sort(function (a, b) {
          var x = val(all[a], sortKey), y = val(all[b], sortKey), r;
          var nx = x == null || (typeof x === 'number' && !isFinite(x)), ny = y == null || (typeof y === 'number' && !isFinite(y));
          if (nx || ny) return nx === ny ? a - b : nx ? 1 : -1;   // missing values last either way
          if (c.num) r = x - y; else r = collator.compare(String(x), String(y));
          return r ? r * sortDir : a - b;
        });
      }
      view = idx.map(function (i2) { return all[i2]; });
      shown = page;
      ths.forEach(function (th) {
        var k = th.getAttribute('data-key');
        th.setAttribute('aria-sort', k === sortKey ? (sortDir > 0 ? 'ascending' : 'descending') : 'none');
        th._arrow.textContent = k === sortKey ? (sortDir > 0 ? '▲' : '▼') : '';
      });
      draw();
    }
    function draw() {
      tbody.textContent = '';
      more.textContent = '';
      var n = Math.min(shown, view.length), i;
      var frag = document.createDocumentFragment();
      for (i = 0; i < n; i++) {
        var r = view[i];
        var tr = h('tr', opt.rowClass ? { class: opt.rowClass(r) } : null);
        for (var j = 0; j < cols.length; j++) {
          var c = cols[j];
          var v = c.get ? c.get(r) : r[c.key];
          var out = c.fmt ? c.fmt(v, r) : (c.num ? num(v) : v);
          tr.appendChild(h('td', { class: c.num ? 'num' : null }, out));
        }
        frag.appendChild(tr);
      }
      tbody.appendChild(frag);
      if (!view.length) tbody.appendChild(h('tr', null, h('td', { colspan: cols.length, class: 'empty', text: all.length ? 'No row matches the filter.' : (opt.empty || 'Nothing to show.') })));
      count.textContent = (view.length === all.length ? plural(all.length, 'row') : view.length + ' of ' + all.length + ' rows') +
        (n < view.length ? ' (showing ' + n + ')' : '');
      if (n < view.length) {
        add(more, [h('button', { type: 'button', onclick: function () { shown += page * 5; draw(); }, text: 'Show ' + Math.min(page * 5, view.length - n) + ' more' }), ' ',
          h('button', { type: 'button', onclick: function () { shown = view.length; draw(); }, text: 'Show all ' + view.length })]);
      }
    }
    function sortBy(k) {
      if (sortKey === k) sortDir = -sortDir;
      else { sortKey = k; sortDir = colBy[k].num ? -1 : 1; }
      apply();
    }
    function setFilter(s) { q = String(s || '').trim().toLowerCase(); if (input.value !== s) input.value = s; apply(); }
    wrap._setFilter = setFilter;
    apply();
    return wrap;
  }

  /* ------------------------------------------------------------- charts */
  function chart(el, option) {
    if (typeof echarts === 'undefined') { el.appendChild(empty('Charts unavailable: the charting library is not in this page.')); return null; }
    var t = performance.now();
    var c = echarts.init(el, null, { renderer: 'canvas' });
    option.animation = false;
    c.setOption(option);
    PT.charts.push(c);
    timing.charts.push([el.id, Math.round(performance.now() - t)]);
    return c;
  }
  window.addEventListener('resize', function () { PT.charts.forEach(function (c) { if (c.getDom().offsetParent) c.resize(); }); });

  function tipWorker(w, lines) {
    var s = '<b>' + esc(w.id) + '</b>';
    if (w.rank != null || w.host) s += '<br>' + esc((w.rank != null ? 'rank ' + w.rank : '') + (w.host ? ' · ' + w.host : ''));
    return s + lines.map(function (l) { return '<br>' + esc(l); }).join('');
  }
  function zoomFor(n) {
    return n > 64 ? [{ type: 'inside', xAxisIndex: 0 }, { type: 'slider', xAxisIndex: 0, height: 16, bottom: 4 }] : [];
  }
  function medianLine(v) {
    return isNum(v) ? { silent: true, symbol: 'none', lineStyle: { color: '#57606a', type: 'dashed' },
      label: { formatter: 'median', position: 'insideEndTop' }, data: [{ yAxis: v }] } : undefined;
  }
  function axisNames(ws) { return ws.map(function (w) { return w.rank != null ? String(w.rank) : w.id; }); }
  function goWorker(p) { if (p && p.dataIndex != null && PT.M.workers[p.dataIndex]) location.hash = '#worker/' + encodeURIComponent(PT.M.workers[p.dataIndex].id); }

  /* Per-worker charts.  Few workers: bars on a category axis.  Many: points
     on a value axis (x = position in rank order) drawn from plain [x, y]
     arrays, outliers as a separate red series: per-item styles and 1,000
     category labels made the 1,000-worker overview ~3x slower to draw. */
  function xAxisFor(ws, many) {
    if (!many) return { type: 'category', data: axisNames(ws), name: 'rank', nameLocation: 'middle', nameGap: 24 };
    return { type: 'value', min: 0, max: ws.length - 1, minInterval: 1, name: 'rank', nameLocation: 'middle', nameGap: 24,
      splitLine: { show: false },
      axisLabel: { formatter: function (v) { var w = ws[v]; return Math.round(v) === v && w ? (w.rank != null ? String(w.rank) : String(v)) : ''; } } };
  }
  function pointIndex(p) { return Array.isArray(p.value) ? p.value[0] : p.dataIndex; }
  function legend(items) {
    return h('div', { class: 'legend' }, items.filter(Boolean).map(function (it) { return h('span', null, h('i', { style: 'background:' + it[0] + (it[2] || '') }), it[1]); }));
  }

  /* Charts are drawn after their container is in the document (ECharts
     needs a size); each view queues its charts and runs them once shown. */
  var pending = [];
  function queue(fn) { pending.push(fn); }
  function flush() { var p = pending; pending = []; p.forEach(function (fn) { fn(); }); }

  PT.shortName = shortName;
  PT.workerLabel = workerLabel;
  PT.workerLink = workerLink;
  PT.fnName = fnName;
  PT.howto = howto;
  PT.stat = stat;
  PT.empty = empty;
  PT.table = table;
  PT.chart = chart;
  PT.tipWorker = tipWorker;
  PT.zoomFor = zoomFor;
  PT.medianLine = medianLine;
  PT.xAxisFor = xAxisFor;
  PT.pointIndex = pointIndex;
  PT.legend = legend;
  PT.queue = queue;
  PT.flush = flush;
}(PT));
