/*
 * findings.js - PerfDisplay: one finding as a card (who, the function,
 * the evidence, the explanation, the confidence, the link to its view) and
 * the merged evidence of the same cause; used by the overview, a worker's
 * page.
 */
(function (PT) {
  'use strict';
  var SECTION = PT.SECTION, h = PT.h, isNum = PT.isNum, lbl = PT.lbl, ms = PT.ms, num = PT.num, obj = PT.obj,
    pct = PT.pct, plural = PT.plural, fnName = PT.fnName, workerLink = PT.workerLink;

  function findingTarget(f) {
    var c = String(f.category || '').toLowerCase();
    if (c.indexOf('hang') >= 0) return 'hang';
    if (c.indexOf('memory') >= 0) return 'memory';
    if (c.indexOf('commun') >= 0 || c.indexOf('nccl') >= 0) return 'communication';
    if (c.indexOf('runtime') >= 0) return 'runtime';
    if (c.indexOf('python') >= 0) return 'python';
    if (c.indexOf('compute') >= 0 || c.indexOf('gpu') >= 0 || c.indexOf('kernel') >= 0) return 'compute';
    if (c.indexOf('step') >= 0 || c.indexOf('worker') >= 0 || c.indexOf('slow') >= 0) return 'workers';
    return null;
  }
  function fmtMetric(metric, v) {
    var m = String(metric || '');
    if (!isNum(v)) return v == null ? '–' : String(v);
    if (/\(ms\)|\bms\b/.test(m)) return ms(v);
    if (/in \[0,1\]|\bratio\b|utili[sz]ation/i.test(m)) return pct(v);
    return num(v);
  }
  function whoText(ids) {
    if (!ids.length) return 'All workers';
    if (ids.length === 1) {
      var w = PT.M.byId[ids[0]];
      return w && w.rank != null ? 'Worker rank ' + w.rank + (w.host ? ' on ' + w.host : '') : 'Worker ' + ids[0];
    }
    return ids.length + ' workers';
  }

  /* "impact (ms)" is per profiled window; the sentences say per step */
  function impactPerStep(f, ids) {
    var w = ids.length === 1 ? PT.M.byId[ids[0]] : null, n = w && w.steps > 0 ? w.steps : 0;
    return n ? ms(f['impact (ms)'] / n) + ' per step' : ms(f['impact (ms)']);
  }
  function findingCard(f, i) {
    var ids = (Array.isArray(f.workers) ? f.workers : []).map(String);
    var fn = f['function'] != null ? String(f['function']) : '';
    var ratio = isNum(f.value) && isNum(f.others) && f.others > 0 ? f.value / f.others : NaN;
    var ev = [];
    if (f.metric != null || isNum(f.value)) {
      ev.push((f.metric ? lbl(f.metric) + ': ' : '') + fmtMetric(f.metric, f.value));
      if (f.others != null) ev.push(' vs ' + fmtMetric(f.metric, f.others) + ' on the other workers' + (isNum(ratio) ? ' (' + ratio.toFixed(ratio < 10 ? 2 : 0) + '×)' : ''));
    }
    var tgt = findingTarget(f);
    var chips = h('div', { class: 'meta' });
    ids.slice(0, 12).forEach(function (id) { chips.appendChild(workerLink(id, 'bad')); });
    if (ids.length > 12) chips.appendChild(h('span', { class: 'muted', text: 'and ' + (ids.length - 12) + ' more' }));
    var cf = obj(f.confidence), lvl = cf && typeof cf.level === 'string' ? cf.level : '';
    return h('div', { class: 'finding' + (lvl ? ' conf-' + lvl : ''), 'data-rank': f.rank, 'data-confidence': lvl || null },
      h('div', { class: 'rank', text: '#' + (isNum(f.rank) ? f.rank : i + 1) }),
      h('div', { class: 'title' }, whoText(ids), fn ? [': ', fnName(fn)] : null),
      ev.length ? h('div', { class: 'evidence', text: ev.join('') }) : null,
      f.explanation ? h('div', { class: 'expl', text: String(f.explanation) }) : null,
      cf && cf.evidence ? h('div', { class: 'confidence-note', text: (lvl ? lvl + ': ' : '') + String(cf.evidence) }) : null,
      h('div', { class: 'meta' },
        lvl ? h('span', { class: 'badge conf ' + lvl, title: 'how strong this finding is: time lost, how far from the other workers, every call or only some slower', text: lvl }) : null,
        f.category ? h('span', { class: 'badge', text: String(f.category) }) : null,
        isNum(f['impact (ms)']) ? h('span', { class: 'badge bad', title: 'time lost, ' + ms(f['impact (ms)']) + ' over the profiled window', text: 'impact ≈ ' + impactPerStep(f, ids) }) : null,
        tgt ? h('a', { href: '#' + tgt + (ids.length === 1 ? '?q=' + encodeURIComponent(ids[0]) : ''), text: 'see ' + (SECTION[tgt] || tgt) + ' →' }) : null),
      ids.length ? chips : null,
      evidenceList(f));
  }

  /* The other sections' findings of the same cause, the frames inside it,
   * a straggler's own collectives and its victims' symptoms, merged into
   * this finding (docs/diagnose.md "One finding per cause"). */
  function evidenceList(f) {
    var ev = (Array.isArray(f.evidence) ? f.evidence : []).filter(obj);
    if (!ev.length) return null;
    return h('details', { class: 'merged-evidence' },
      h('summary', { text: 'Also seen: ' + plural(ev.length, 'finding') + ' of this cause (' +
        ev.map(function (e) { return String(e.kind || ''); }).filter(function (k, i, a) { return a.indexOf(k) === i; }).join(', ') + ')' }),
      h('ul', null, ev.map(function (e) {
        var w = e.worker ? String(e.worker) : '';
        return h('li', null, h('span', { class: 'badge', text: String(e.kind || '') }), ' ',
          w ? workerLink(w) : null, w ? ' ' : null,
          h('span', { text: (e.category ? String(e.category) + ': ' : '') + String(e.explanation || e['function'] || '') }));
      })));
  }

  function isWeak(f) {
    var cf = obj(f.confidence);
    return !!(cf && cf.level === 'weak');
  }

  /* Does the job run GPU kernels?  Without any, GPU charts are empty. */
  function hasGpu() {
    return PT.M.workers.some(function (w) { return isNum(w.util) && w.util > 0; });
  }

  PT.findingCard = findingCard;
  PT.isWeak = isWeak;
  PT.hasGpu = hasGpu;
}(PT));
