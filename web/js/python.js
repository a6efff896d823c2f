/*
 * python.js - PerfDisplay: the Python functions view: the stacks merged
 * into a call tree (median over the workers or one worker), the stacks and
 * the per-worker table.
 */
(function (PT) {
  'use strict';
  var add = PT.add, collator = PT.collator, drawMedian = PT.drawMedian, h = PT.h, isNum = PT.isNum,
    keys = PT.keys, num = PT.num, obj = PT.obj, pct = PT.pct, empty = PT.empty, fnName = PT.fnName,
    howto = PT.howto, table = PT.table, workerLink = PT.workerLink;

  function viewPython(root) {
    add(root, h('h1', { text: 'Python functions' }));
    add(root, howto('Python functions', [
      ['stack "a|b|c"', 'A Python call stack, outermost frame first, frames joined with "|". Its time is what the deepest frame owns, excluding time that overlaps with GPU computation, communication, memory operations and CUDA runtime calls.'],
      ['worker: ratio', 'For each stack, every worker on which it takes more than 1% of the end-to-end time, with that share.']]));
    var py = obj(PT.M.rep[K.PYTHON_FUNCTIONS]);
    if (!py) { add(root, empty('This report has no Python functions section.')); return; }
    var stacks = keys(py).map(function (st) {
      var ws = obj(py[st]) || {};
      var vs = keys(ws).map(function (k) { return ws[k]; }).filter(isNum);
      var fr = st.split('|');
      return { stack: st, leaf: fr[fr.length - 1], depth: fr.length, n: vs.length, max: vs.length ? Math.max.apply(null, vs) : NaN, med: drawMedian(vs), ws: ws };
    });
    add(root, h('h2', { text: 'Call tree' }));
    add(root, h('p', { class: 'note', text: 'Stacks merged into a tree. "self" is the stack\'s own share (median over the workers that list it, or the chosen worker\'s); "total" adds its callees. Click ▸ to expand.' }));
    add(root, pyTree(stacks));
    add(root, table({ title: 'Stacks', rows: stacks, sort: ['max', -1], placeholder: 'Filter by frame…',
      cols: [{ key: 'leaf', label: 'deepest frame', fmt: function (v) { return fnName(v); } },
        { key: 'stack', label: 'stack', fmt: function (v) { return fnName(v); } },
        { key: 'depth', label: 'depth', num: true, fmt: String },
        { key: 'n', label: 'workers > 1%', num: true, fmt: String },
        { key: 'med', label: 'median ratio', num: true, fmt: function (v) { return pct(v); } },
        { key: 'max', label: 'max ratio', num: true, fmt: function (v) { return pct(v); } }] }));
    var flat = [];
    stacks.forEach(function (s) { keys(s.ws).forEach(function (w) { flat.push({ leaf: s.leaf, stack: s.stack, worker: w, ratio: s.ws[w] }); }); });
    add(root, table({ title: 'Per worker', rows: flat, page: 25, sort: ['ratio', -1], placeholder: 'Filter by worker or frame…',
      cols: [{ key: 'worker', label: 'worker', fmt: function (v) { return workerLink(v); } },
        { key: 'leaf', label: 'deepest frame', fmt: function (v) { return fnName(v); } },
        { key: 'stack', label: 'stack', fmt: function (v) { return fnName(v); } },
        { key: 'ratio', label: 'bottleneck ratio', num: true, fmt: function (v) { return pct(v); } }] }));
  }

  function pyTree(stacks) {
    var rootN = { name: '', kids: {}, order: [], self: 0, total: 0, ws: null, n: 0 };
    var wsel = '';
    stacks.forEach(function (s) {
      var node = rootN;
      s.stack.split('|').forEach(function (f) {
        if (!node.kids[f]) { node.kids[f] = { name: f, kids: {}, order: [], self: 0, total: 0, ws: null, n: 0 }; node.order.push(f); }
        node = node.kids[f];
      });
      node.ws = s.ws;
    });
    function compute(node) {
      var v = 0;
      if (node.ws) {
        if (wsel) v = isNum(node.ws[wsel]) ? node.ws[wsel] : 0;
        else v = drawMedian(keys(node.ws).map(function (k) { return node.ws[k]; }));
        node.n = keys(node.ws).length;
      }
      node.self = isNum(v) ? v : 0;
      node.total = node.self;
      node.order.forEach(function (k) { node.total += compute(node.kids[k]); });
      return node.total;
    }
    var box = h('div', { class: 'tree', id: 'py-tree', role: 'tree' });
    var sel = h('select', { 'aria-label': 'worker for the call tree' }, h('option', { value: '', text: 'median over listed workers' }));
    var wl = [];
    stacks.forEach(function (s) { keys(s.ws).forEach(function (w) { if (wl.indexOf(w) < 0) wl.push(w); }); });
    wl.sort(function (a, b) { var x = PT.M.byId[a], y = PT.M.byId[b]; return (x ? x.index : 1e9) - (y ? y.index : 1e9) || collator.compare(a, b); });
    wl.forEach(function (w) { sel.appendChild(h('option', { value: w, text: w })); });
    var expandAll = h('button', { type: 'button', class: 'btn', text: 'Expand all' });
    var collapse = h('button', { type: 'button', class: 'btn', text: 'Collapse' });
    var body = h('div');
    var scale = 1;
    var openSet = new Set();
    function row(node, depth, path) {
      var kids = node.order.map(function (k) { return node.kids[k]; }).sort(function (a, b) { return b.total - a.total; });
      var open = openSet.has(path);
      var tog = h('span', { class: 'tog', text: kids.length ? (open ? '▾' : '▸') : '' });
      var r = h('div', { class: 'tree-row', role: 'treeitem', 'aria-expanded': kids.length ? String(open) : null, 'aria-level': depth + 1 },
        h('div', { class: 'name', title: node.name, style: 'padding-left:' + (depth * 14) + 'px' }, tog, node.name),
        h('div', { class: 'num', text: node.ws ? pct(node.self) : '' }),
        h('div', { class: 'num', text: pct(node.total) }),
        h('div', { class: 'num', text: node.ws ? String(node.n) : '' }),
        h('div', { class: 'bar' }, h('span', { style: 'width:' + Math.max(0, Math.min(100, node.total / scale * 100)).toFixed(1) + '%' })));
      var frag = [r];
      if (kids.length) {
        tog.addEventListener('click', function () { if (open) openSet.delete(path); else openSet.add(path); render(); });
        if (open) kids.forEach(function (k) { frag = frag.concat(row(k, depth + 1, path + '|' + k.name)); });
      }
      return frag;
    }
    function render() {
      compute(rootN);
      scale = 0;
      rootN.order.forEach(function (k) { scale = Math.max(scale, rootN.kids[k].total); });
      scale = scale || 1;
      body.textContent = '';
      var tops = rootN.order.map(function (k) { return rootN.kids[k]; }).sort(function (a, b) { return b.total - a.total; });
      tops.forEach(function (n) { add(body, row(n, 0, n.name)); });
      if (!tops.length) body.appendChild(empty('No Python stack above the threshold.'));
    }
    function walk(node, path, fn) { node.order.forEach(function (k) { var p = path ? path + '|' + k : k; fn(p, node.kids[k]); walk(node.kids[k], p, fn); }); }
    expandAll.addEventListener('click', function () { walk(rootN, '', function (p, n) { if (n.order.length) openSet.add(p); }); render(); });
    collapse.addEventListener('click', function () { openSet.clear(); render(); });
    sel.addEventListener('change', function () { wsel = sel.value; render(); });
    /* open the heaviest path by default so the tree shows something useful */
    compute(rootN);
    var node = rootN, path = '';
    while (node.order.length) {
      var best = node.order.map(function (k) { return node.kids[k]; }).sort(function (a, b) { return b.total - a.total; })[0];
      path = path ? path + '|' + best.name : best.name;
      if (best.order.length) openSet.add(path);
      node = best;
    }
    add(box, [h('div', { class: 'tbl-bar' }, h('span', { class: 'tbl-title', text: 'Python call tree' }), sel, expandAll, collapse),
      h('div', { class: 'tree-row head' }, h('div', { text: 'frame' }), h('div', { class: 'num', text: 'self' }), h('div', { class: 'num', text: 'total' }), h('div', { class: 'num', text: 'workers' }), h('div')), body]);
    render();
    return box;
  }

  PT.viewPython = viewPython;
}(PT));
