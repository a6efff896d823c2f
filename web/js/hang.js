/*
 * hang.js - PerfDisplay: the Hang view: the verdict, the groups of workers
 * by where their training thread is (suspects first), each worker's state
 * and the remaining fields as a tree.
 */
(function (PT) {
  'use strict';
  var add = PT.add, h = PT.h, isNum = PT.isNum, keys = PT.keys, num = PT.num, obj = PT.obj,
    plural = PT.plural, howto = PT.howto, table = PT.table, workerLink = PT.workerLink;

  function jsonTree(v, depth) {
    if (Array.isArray(v)) {
      if (v.length && v.every(function (x) { return typeof x === 'string' && PT.M.byId[x]; }))
        return h('span', null, v.slice(0, 50).map(function (x) { return workerLink(x); }), v.length > 50 ? ' and ' + (v.length - 50) + ' more' : null);
      var ul = h('ul');
      v.slice(0, 500).forEach(function (x, i) { ul.appendChild(h('li', null, h('span', { class: 'k', text: '[' + i + '] ' }), jsonTree(x, depth + 1))); });
      if (v.length > 500) ul.appendChild(h('li', { class: 'muted', text: '… ' + (v.length - 500) + ' more' }));
      return ul;
    }
    if (v && typeof v === 'object') {
      var ul2 = h('ul');
      keys(v).forEach(function (k) { ul2.appendChild(h('li', null, h('span', { class: 'k', text: k + ': ' }), jsonTree(v[k], depth + 1))); });
      return ul2;
    }
    if (typeof v === 'string') return PT.M.byId[v] ? workerLink(v) : h('span', { class: 's', text: v.indexOf('|') > 0 ? v.split('|').join('\n  ↳ ') : v });
    return h('span', { class: 'n', text: String(v) });
  }

  /* The "Hang" section (docs/hang.md): the verdict, the groups of workers
     by where their training thread is, side by side with the suspects
     first, each worker's state and last step, then the remaining fields. */
  function viewHang(root) {
    var hg = PT.M.hang || {};
    add(root, h('h1', { text: 'Hang' }));
    add(root, howto('the hang section', [
      ['hung', 'true when a live worker made no step for the hang timeout (--hang-timeout of the trigger or of hang-check) while PerfTracker was watching.'],
      ['groups', 'Workers grouped by where their training thread is: its Python stack, outermost frame first, file and function names only. Suspects come first: a group smaller than the largest, a dead worker, a worker behind the others. The others usually wait for them in a collective.'],
      ['workers', 'Every worker: hung, running, dead (process gone), lost (no heartbeat) or exited; its last step and the seconds since; where its stack ends (file:line).']]));
    add(root, h('div', { class: 'banner ' + (hg[K.HUNG] ? 'bad' : 'ok') }, h('b', { text: hg[K.HUNG] ? 'The job is hung.' : 'The job is not hung.' }), hg[K.EXPLANATION] ? ' ' + String(hg[K.EXPLANATION]) : ''));
    var sus = (Array.isArray(hg[K.SUSPECT_WORKERS]) ? hg[K.SUSPECT_WORKERS] : Array.isArray(hg[K.SUSPECTS]) ? hg[K.SUSPECTS] : []).map(String);
    var susSet = {};
    sus.forEach(function (x) { susSet[x] = 1; });
    if (sus.length) add(root, h('p', { id: 'hang-suspects' }, h('b', { text: plural(sus.length, 'suspect') + ': ' }), sus.map(function (x) { return workerLink(x, 'bad'); })));
    var groups = (Array.isArray(hg[K.GROUPS]) ? hg[K.GROUPS].filter(obj) : []).map(function (g, i) {
      var ws = Array.isArray(g[K.WORKERS]) ? g[K.WORKERS].map(String) : [];
      var s = !!g[K.SUSPECT] || ws.some(function (x) { return susSet[x]; });
      return { g: g, ws: ws, s: s, i: i };
    });
    groups.sort(function (a, b) { return (b.s ? 1 : 0) - (a.s ? 1 : 0) || a.i - b.i; });
    if (groups.length) {
      add(root, h('h2', { text: 'Where the workers are' }));
      var row = h('div', { class: 'hang-groups', id: 'hang-groups', style: 'display:flex;gap:12px;align-items:flex-start;overflow-x:auto;padding-bottom:6px;margin-bottom:16px' });
      groups.forEach(function (o) {
        var g = o.g, n = isNum(g[K.COUNT]) ? g[K.COUNT] : o.ws.length;
        var frames = g[K.STACK] != null && String(g[K.STACK]) !== '' ? String(g[K.STACK]).split('|') : [];
        var fn = g[K.FUNCTION] != null ? String(g[K.FUNCTION]) : '';
        var steps = Array.isArray(g[K.STEPS_LC]) && g[K.STEPS_LC].length === 2 ? (g[K.STEPS_LC][0] === g[K.STEPS_LC][1] ? 'step ' + g[K.STEPS_LC][0] : 'steps ' + g[K.STEPS_LC][0] + '–' + g[K.STEPS_LC][1]) : '';
        add(row, h('div', { class: 'card hang-group' + (o.s ? ' suspect' : ''), 'data-suspect': o.s ? '1' : '0',
          style: 'flex:1 1 0;min-width:240px;max-width:560px;margin:0' + (o.s ? ';border-color:#ff8182;box-shadow:0 0 0 1px #ff8182' : '') },
          h('div', { style: 'display:flex;gap:8px;align-items:center;flex-wrap:wrap;margin-bottom:4px' },
            o.s ? h('span', { class: 'badge bad', text: 'suspect' }) : null, h('b', { text: plural(n, 'worker') }),
            steps ? h('span', { class: 'muted', text: steps }) : null),
          h('div', null, o.ws.slice(0, 12).map(function (x) { return workerLink(x, susSet[x] ? 'bad' : ''); }), o.ws.length > 12 ? ' and ' + (o.ws.length - 12) + ' more' : null),
          fn ? h('div', { class: 'hang-fn', style: 'margin-top:6px' }, 'in ', h('code', { text: fn })) : null,
          frames.length ? h('ol', { class: 'hang-stack', title: 'outermost frame first', style: 'font-family:monospace;font-size:12px;margin:8px 0 0;padding-left:24px;word-break:break-all' },
            frames.map(function (f, k) { return h('li', { text: f, style: (k === frames.length - 1 ? 'font-weight:600' : '') + (f === fn ? ';color:var(--bad)' : '') }); }))
            : h('div', { class: 'muted', text: '(no Python frame)' })));
      });
      add(root, row);
    }
    var wobj = obj(hg[K.WORKERS]);
    if (wobj) {
      var rows = keys(wobj).map(function (id) {
        var w = obj(wobj[id]) || {};
        return { id: id, rank: w[K.RANK], state: w[K.STATE] != null ? String(w[K.STATE]) : '', step: w[K.LAST_STEP], since: w[K.SECONDS_SINCE_LAST_STEP],
          fn: w[K.FUNCTION] != null ? String(w[K.FUNCTION]) : '', where: w[K.WHERE] != null ? String(w[K.WHERE]) : '', stacks: w[K.STACKS] != null ? String(w[K.STACKS]) : '', sus: susSet[id] ? 1 : 0 };
      });
      add(root, table({ title: 'Workers', rows: rows, sort: ['sus', -1], cls: 'hang-workers', rowClass: function (r) { return r.sus ? 'hl' : null; },
        cols: [{ key: 'id', label: 'worker', fmt: function (v, r) { return workerLink(v, r.sus ? 'bad' : ''); } },
          { key: 'sus', label: 'suspect', num: true, fmt: function (v) { return v ? 'yes' : ''; } },
          { key: 'rank', label: 'rank', num: true, fmt: String },
          { key: 'state', label: 'state' },
          { key: 'step', label: 'last step', num: true, fmt: String },
          { key: 'since', label: 's since last step', num: true, fmt: function (v) { return isNum(v) ? v.toFixed(1) : '–'; } },
          { key: 'fn', label: 'function' },
          { key: 'where', label: 'where', fmt: function (v) { return h('code', { text: v }); } },
          { key: 'stacks', label: 'stacks' }] }));
    }
    var rest = {};
    keys(hg).forEach(function (k) { if ([K.GROUPS, K.EXPLANATION, K.WORKERS, K.SUSPECT_WORKERS, K.SUSPECTS, K.HUNG].indexOf(k) < 0) rest[k] = hg[k]; });
    if (keys(rest).length) {
      add(root, h('h2', { text: 'Other fields' }));
      add(root, h('div', { class: 'card jtree' }, jsonTree(rest, 0)));
    }
  }

  PT.viewHang = viewHang;
}(PT));
