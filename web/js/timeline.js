/*
 * timeline.js - PerfDisplay: the Timeline view: one step of every rank on
 * one canvas (spans, GPU compute, collectives, waits and late arrivals),
 * the findings that highlight their ranks, hover details.
 */
(function (PT) {
  'use strict';
  var add = PT.add, h = PT.h, isNum = PT.isNum, keys = PT.keys, ms = PT.ms, obj = PT.obj, plural = PT.plural,
    t0 = PT.t0, timing = PT.timing, empty = PT.empty, howto = PT.howto, legend = PT.legend, queue = PT.queue,
    shortName = PT.shortName;

  /* Timeline view (docs/display.md "The timeline"): one step of every rank,
     drawn on one <canvas> so that 1,000 ranks stay fast.  Per rank a lane of
     three rows: the main thread's top-level spans, GPU compute, and the
     collectives (arrival to end), with the waits for the last arriver
     (orange) and a straggler's late arrivals (red) on the collective row; a
     shaded band per collective instance from its first arrival to its end,
     a red line at its last arrival.  Past TL_MAX_LANES ranks, runs of ranks
     share a lane (the union of their items); stragglers, ranks placed but
     not aligned and the highlighted finding's ranks keep lanes of their own. */
  var TL_MAX_LANES = 64;
  var TL_COLOR = { gpu: '#59a14f', coll: '#8e7cc3', wait: '#f28e2b', late: '#cf222e',
    band: 'rgba(142,124,195,0.10)', last: 'rgba(207,34,46,0.45)', hl: '#fff3b0', stripe: '#f6f8fa', grid: '#eaeef2' };
  /* span colours, light enough for a dark name on them; by first appearance */
  var TL_SPAN = ['#a0cbe8', '#d4b8e0', '#e8d59e', '#9fd6cf', '#c9c3bf', '#f4c2c2', '#c5d0f0', '#d9e6a5'];
  var TL_LABEL_W = 204, TL_AXIS_H = 24;
  var tlCache;
  function tlArr(x) { return Array.isArray(x) ? x : []; }
  function tlData() {
    if (tlCache !== undefined) return tlCache;
    tlCache = null;
    var T = obj(PT.M.rep[K.TIMELINE]);
    if (!T || !Array.isArray(T[K.WORKERS]) || !T[K.WORKERS].length) return null;
    var ws = T[K.WORKERS].map(function (w0, i) {
      var w = obj(w0) || {};
      return { i: i, id: String(w[K.WORKER] != null ? w[K.WORKER] : 'worker ' + i), label: String(w[K.LABEL] || w[K.WORKER] || 'worker ' + i),
        rank: isNum(w[K.RANK]) ? w[K.RANK] : null, aligned: w[K.ALIGNED] !== false, straggler: w[K.STRAGGLER] === true,
        steps: tlArr(w[K.STEPS_LC]), spans: tlArr(w[K.SPANS]), gpu: tlArr(w[K.GPU]), coll: tlArr(w[K.COLL]), late: tlArr(w[K.LATE]), wait: tlArr(w[K.WAIT]) };
    });
    var steps = tlArr(T[K.STEPS_LC]).filter(function (s) { return obj(s) && isNum(s[K.START_US]) && isNum(s[K.END_US]) && s[K.END_US] > s[K.START_US]; })
      .map(function (s) { return { step: isNum(s[K.STEP]) ? s[K.STEP] : null, start: s[K.START_US], end: s[K.END_US], slow: tlArr(s[K.SLOW]).filter(isNum) }; });
    if (!steps.length) {          // no step kept: the whole window as one
      var lo = Infinity, hi = -Infinity;
      ws.forEach(function (w) {
        for (var j = 0; j + 1 < w.gpu.length; j += 2) { lo = Math.min(lo, w.gpu[j]); hi = Math.max(hi, w.gpu[j + 1]); }
        for (j = 0; j + 2 < w.spans.length; j += 3) { lo = Math.min(lo, w.spans[j]); hi = Math.max(hi, w.spans[j] + w.spans[j + 1]); }
        for (j = 0; j + 2 < w.coll.length; j += 3) { lo = Math.min(lo, w.coll[j + 1]); hi = Math.max(hi, w.coll[j + 2]); }
      });
      if (!(hi > lo)) { lo = 0; hi = 1; }
      steps = [{ step: null, start: lo, end: hi, slow: [] }];
    }
    var spanColor = Object.create(null), nsc = 0;
    ws.forEach(function (w) { for (var j = 2; j < w.spans.length; j += 3) if (!(w.spans[j] in spanColor)) spanColor[w.spans[j]] = TL_SPAN[nsc++ % TL_SPAN.length]; });
    tlCache = { T: T, workers: ws, steps: steps, spanColor: spanColor, spanColors: TL_SPAN.slice(0, Math.min(nsc, TL_SPAN.length)), names: tlArr(T[K.NAMES]), channels: tlArr(T[K.CHANNELS]), inst: tlArr(T[K.INSTANCES]),
      findings: tlArr(T[K.FINDINGS]).filter(function (e) { return Array.isArray(e) && isNum(e[0]) && obj((PT.M.rep[K.FINDINGS] || [])[e[0]]); }) };
    return tlCache;
  }
  function tlStepLabel(s) { return s.step == null ? 'the window' : 'step ' + s.step; }
  function tlWho(D, i) { var w = D.workers[i]; return w ? (w.rank != null ? 'rank ' + w.rank : w.id) : 'worker ' + i; }
  /* The items of step s, per worker: [x0, x1, what] in µs on the job clock
     (a worker placed but not aligned is moved so that its step starts with
     the job's), the instances' first and last arrivals and ends, the waits. */
  function tlStep(D, s) {
    var per = [], inst = Object.create(null), wait = 0, maxWait = 0, maxWho = -1, last = Object.create(null);
    D.workers.forEach(function (w) {
      var ws = s.start, we = s.end, off = 0, j, x0, x1;
      for (j = 0; j + 2 < w.steps.length; j += 3) if (w.steps[j] === s.step) { ws = w.steps[j + 1]; we = w.steps[j + 2]; break; }
      if (!w.aligned) off = s.start - ws;
      var o = { spans: [], gpu: [], coll: [], late: [], wait: [], off: off, waitUs: 0 };
      var inStep = function (a, b) { return isNum(a) && isNum(b) && a < we && b > ws; };
      for (j = 0; j + 2 < w.spans.length; j += 3) {
        x0 = w.spans[j]; x1 = x0 + w.spans[j + 1];
        if (inStep(x0, x1 + 1)) o.spans.push([x0 + off, x1 + off, w.spans[j + 2]]);
      }
      for (j = 0; j + 1 < w.gpu.length; j += 2) if (inStep(w.gpu[j], w.gpu[j + 1])) o.gpu.push([w.gpu[j] + off, w.gpu[j + 1] + off]);
      for (j = 0; j + 2 < w.coll.length; j += 3) {
        if (!inStep(w.coll[j + 1], w.coll[j + 2] + 1)) continue;
        var k = w.coll[j], a = w.coll[j + 1] + off, e = w.coll[j + 2] + off;
        o.coll.push([a, e, k]);
        var I = inst[k] || (inst[k] = { k: k, first: a, last: a, end: e, n: 0 });
        I.first = Math.min(I.first, a); I.last = Math.max(I.last, a); I.end = Math.max(I.end, e); I.n++;
      }
      for (j = 0; j + 2 < w.late.length; j += 3) if (inStep(w.late[j + 1], w.late[j + 2] + 1)) {
        o.late.push([w.late[j + 1] + off, w.late[j + 2] + off, w.late[j]]);
        last[w.i] = (last[w.i] || 0) + 1;
      }
      for (j = 0; j + 2 < w.wait.length; j += 3) if (inStep(w.wait[j + 1], w.wait[j + 2] + 1)) {
        o.wait.push([w.wait[j + 1] + off, w.wait[j + 2] + off, w.wait[j]]);
        o.waitUs += w.wait[j + 2] - w.wait[j + 1];
      }
      wait += o.waitUs;
      if (o.waitUs > maxWait) { maxWait = o.waitUs; maxWho = w.i; }
      per.push(o);
    });
    return { s: s, per: per, inst: Object.keys(inst).map(function (k) { return inst[k]; }), wait: wait, maxWait: maxWait, maxWho: maxWho, last: last };
  }
  function tlDefaultStep(D) {
    var i, best = -1, bw = 0;
    for (i = 0; i < D.steps.length; i++) if (D.steps[i].slow.length) return i;
    for (i = 0; i < D.steps.length; i++) {
      var w = 0;
      D.workers.forEach(function (x) { for (var j = 0; j + 2 < x.wait.length; j += 3) if (x.wait[j + 1] >= D.steps[i].start && x.wait[j + 1] < D.steps[i].end) w += x.wait[j + 2] - x.wait[j + 1]; });
      if (w > bw) { bw = w; best = i; }
    }
    return best >= 0 ? best : 0;
  }
  /* Lanes: one per rank up to TL_MAX_LANES, else runs of ranks per lane
     and a lane of its own for each straggler, unaligned or highlighted rank. */
  function tlLanes(D, hl) {
    var ws = D.workers, lanes = [];
    if (ws.length <= TL_MAX_LANES) return ws.map(function (w) { return { ws: [w.i], one: w }; });
    var own = function (w) { return w.straggler || !w.aligned || !!hl[w.i]; };
    var nown = ws.filter(own).length;
    var size = Math.ceil((ws.length - nown) / Math.max(8, TL_MAX_LANES - nown));
    var cur = null;
    ws.forEach(function (w) {
      if (own(w)) { cur = null; lanes.push({ ws: [w.i], one: w }); return; }
      if (!cur || cur.ws.length >= size) { cur = { ws: [] }; lanes.push(cur); }
      cur.ws.push(w.i);
    });
    lanes.forEach(function (l) { if (!l.one && l.ws.length === 1) l.one = ws[l.ws[0]]; });
    return lanes;
  }
  function tlLaneLabel(D, l) {
    if (l.one) return l.one.label;
    var a = D.workers[l.ws[0]], b = D.workers[l.ws[l.ws.length - 1]];
    return (a.rank != null && b.rank != null ? 'ranks ' + a.rank + '–' + b.rank : tlWho(D, a.i) + '…') + ' (' + l.ws.length + ')';
  }
  function tlTick(span) {      // a round step for about 8 ticks over span µs
    var raw = span / 8, p = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10)), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  }
  function tlMs(us) { return ms(us / 1000); }

  /* The findings shown on the timeline, a card each: a click highlights
     its ranks and shows its first step (tlPick). */
  function tlFindingCards(V, root) {
    var D = V.D;
    if (!D.findings.length) return;
    var fl = h('div', { class: 'tl-findings', id: 'tl-findings' });
    D.findings.forEach(function (e, k) {
      var f = PT.M.rep[K.FINDINGS][e[0]], cf = obj(f[K.CONFIDENCE]), lvl = cf && typeof cf[K.LEVEL] === 'string' ? cf[K.LEVEL] : '';
      var who = tlArr(e[1]).filter(isNum).map(function (i) { return tlWho(D, i); });
      var fsteps = tlArr(e[2]).filter(isNum);
      var card = h('div', { class: 'tl-find', role: 'button', tabindex: '0', 'data-finding': String(e[0]),
        title: 'Highlight its ranks and show its first step',
        onclick: function () { tlPick(V, k); }, onkeydown: function (ev) { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); tlPick(V, k); } } },
        h('div', { class: 'meta' },
          h('b', { text: '#' + (isNum(f[K.RANK]) ? f[K.RANK] : e[0] + 1) + ' ' + (who.length ? who.slice(0, 4).join(', ') + (who.length > 4 ? ' and ' + (who.length - 4) + ' more' : '') : 'all ranks') }),
          f[K.CATEGORY] ? h('span', { class: 'badge', text: String(f[K.CATEGORY]) }) : null,
          lvl ? h('span', { class: 'badge conf ' + lvl, text: lvl }) : null,
          fsteps.length ? h('span', { class: 'muted', text: (fsteps.length === 1 ? 'step ' : 'steps ') + fsteps.join(', ') }) : null),
        f[K.EXPLANATION] ? h('div', { class: 'tl-expl', text: String(f[K.EXPLANATION]) }) : null,
        cf && cf[K.EVIDENCE] ? h('div', { class: 'confidence-note', text: String(cf[K.EVIDENCE]) }) : null);
      V.fcards.push(card);
      fl.appendChild(card);
    });
    add(root, h('h2', { text: 'Findings on the timeline' }));
    add(root, fl);
  }

  /* A click on a finding: highlight its ranks, show its first step; a
     second click clears it. */
  function tlPick(V, k) {
    var D = V.D, st = V.st;
    var e = D.findings[k];
    st.hl = Object.create(null);
    if (st.find === k) st.find = -1;          // a second click clears it
    else {
      st.find = k;
      tlArr(e[1]).forEach(function (i) { if (isNum(i)) st.hl[i] = true; });
      var s0 = tlArr(e[2]).filter(isNum)[0];
      D.steps.forEach(function (s, i) { if (s.step === s0) st.step = i; });
      V.sel.value = String(st.step);
    }
    V.fcards.forEach(function (c, i) { c.classList.toggle('on', i === st.find); });
    tlDraw(V);
  }

  /* The line above the canvas: the step, its collectives, who arrived
     last, the waits. */
  function tlSummary(V) {
    var D = V.D, S = V.S, sum = V.sum;
    var s = S.s, n = S.inst.length, lastBy = keys(S.last).sort(function (a, b) { return S.last[b] - S.last[a]; });
    sum.textContent = '';
    add(sum, [h('b', { text: tlStepLabel(s) + ': ' + tlMs(s.end - s.start) }),
      ' · ' + plural(n, 'collective instance'),
      lastBy.length ? ' · last to arrive: ' + lastBy.slice(0, 3).map(function (i) { return tlWho(D, +i) + ' at ' + S.last[i] + ' of ' + n; }).join(', ') : '',
      S.wait > 0 ? ' · waiting in all ' + tlMs(S.wait) + ', most ' + tlMs(S.maxWait) + ' (' + tlWho(D, S.maxWho) + ')' : ' · no waits']);
  }

  /* Draw the chosen step of every lane on the canvas (V.S: the step's
     items, V.G: the geometry the hover reads). */
  function tlDraw(V) {
    var D = V.D, st = V.st, canvas = V.canvas, wrap = V.wrap;
    var t = performance.now();
    var S = V.S = tlStep(D, D.steps[st.step]);
    tlSummary(V);
    var lanes = tlLanes(D, st.hl), nl = lanes.length;
    var rowH = nl <= 16 ? 36 : nl <= 40 ? 22 : 16, gap = rowH >= 30 ? 6 : 3, sub = (rowH - gap) / 3;
    var W = Math.max(600, wrap.clientWidth || 1200), H = TL_AXIS_H + nl * rowH + 8;
    var dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
    canvas.style.width = W + 'px'; canvas.style.height = H + 'px';
    var c = canvas.getContext('2d');
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    c.fillStyle = '#fff'; c.fillRect(0, 0, W, H);
    var s = S.s, pad = (s.end - s.start) * 0.01, t0 = s.start - pad, t1 = s.end + pad;
    var x0 = TL_LABEL_W, x1 = W - 10, k = (x1 - x0) / (t1 - t0);
    var X = function (us) { return x0 + (us - t0) * k; };
    var anyHl = st.find >= 0, y, i, j, li;
    V.G = { lanes: lanes, rowH: rowH, gap: gap, sub: sub, X: X, t0: t0, k: k, x0: x0, x1: x1, W: W, H: H };
    /* lane stripes, the highlighted lanes */
    for (li = 0; li < nl; li++) {
      y = TL_AXIS_H + li * rowH;
      var hlLane = lanes[li].ws.some(function (wi) { return st.hl[wi]; });
      if (hlLane || li % 2) { c.fillStyle = hlLane ? TL_COLOR.hl : TL_COLOR.stripe; c.fillRect(0, y, W, rowH); }
    }
    /* time grid and axis (ms from the step's start) */
    var tick = tlTick(t1 - t0);
    c.font = '11px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif';
    c.textBaseline = 'middle'; c.textAlign = 'center';
    for (var tt = Math.ceil((t0 - s.start) / tick) * tick; s.start + tt <= t1; tt += tick) {
      var gx = Math.round(X(s.start + tt)) + 0.5;
      c.fillStyle = TL_COLOR.grid; c.fillRect(gx - 0.5, TL_AXIS_H - 4, 1, H - TL_AXIS_H);
      c.fillStyle = '#59636e'; c.fillText(tlMs(tt), gx, TL_AXIS_H / 2 - 1);
    }
    /* collective instances: band from first arrival to end, line at the last arrival */
    S.inst.forEach(function (I) {
      c.fillStyle = TL_COLOR.band; c.fillRect(X(I.first), TL_AXIS_H, Math.max(1, X(I.end) - X(I.first)), nl * rowH);
      c.fillStyle = TL_COLOR.last; c.fillRect(Math.round(X(I.last)), TL_AXIS_H, 1, nl * rowH);
    });
    /* one path per colour and lane: far fewer fills than a fillRect per item */
    var L, yl, bar = function (a, b, yy, hh) { var xa = X(a), xb = X(b); if (xb < x0 || xa > x1) return; if (xa < x0) xa = x0; if (xb > x1) xb = x1; c.rect(xa, yy, Math.max(1, xb - xa), hh); };
    var fill = function (color, kind, dy, hh, only) {
      c.beginPath();
      for (var j2 = 0; j2 < L.ws.length; j2++) {
        var list = S.per[L.ws[j2]][kind];
        for (var i2 = 0; i2 < list.length; i2++) if (!only || D.spanColor[list[i2][2]] === only) bar(list[i2][0], list[i2][1], yl + dy, hh);
      }
      c.fillStyle = color; c.fill();
    };
    for (li = 0; li < nl; li++) {
      L = lanes[li]; yl = TL_AXIS_H + li * rowH + gap / 2;
      var dim = anyHl && !L.ws.some(function (wi) { return st.hl[wi]; });
      fill('#ffd8d3', 'late', -gap / 2, rowH);
      c.globalAlpha = dim ? 0.45 : 1;
      D.spanColors.forEach(function (col) { fill(col, 'spans', 0, sub - 1, col); });
      fill(TL_COLOR.gpu, 'gpu', sub, sub - 1);
      fill(TL_COLOR.coll, 'coll', 2 * sub, sub - 1);
      c.globalAlpha = 1;
      fill(TL_COLOR.wait, 'wait', 2 * sub, sub - 1);
      fill(TL_COLOR.late, 'late', 2 * sub - (rowH >= 30 ? 2 : 0), sub - 1 + (rowH >= 30 ? 4 : 0));
      for (j = 0; j < L.ws.length; j++) {
        var p = S.per[L.ws[j]];
        if (st.hl[L.ws[j]] && p.late.length) {
          c.strokeStyle = '#82071e'; c.lineWidth = 1.5;
          for (i = 0; i < p.late.length; i++) c.strokeRect(X(p.late[i][0]), yl - 1, Math.max(2, X(p.late[i][1]) - X(p.late[i][0])), rowH - gap + 2);
        }
      }
      /* span names where they fit (one rank per lane, tall rows) */
      if (L.one && rowH >= 30) {
        c.fillStyle = '#1f2328'; c.textAlign = 'left'; c.font = '10px system-ui, sans-serif';
        var o2 = S.per[L.one.i];
        for (i = 0; i < o2.spans.length; i++) {
          var sx = Math.max(x0, X(o2.spans[i][0])), sw = Math.min(x1, X(o2.spans[i][1])) - sx, nm = D.names[o2.spans[i][2]];
          if (sw > 40 && nm != null) {
            c.save(); c.beginPath(); c.rect(sx, yl, sw, sub); c.clip();
            c.fillText(String(nm).replace(/^#+ *| *#+$/g, ''), sx + 3, yl + sub / 2); c.restore();
          }
        }
      }
    }
    /* labels: the rank, ▲ straggler, not aligned */
    c.fillStyle = '#fff'; c.fillRect(0, 0, TL_LABEL_W - 4, TL_AXIS_H);
    c.textAlign = 'left';
    for (li = 0; li < nl; li++) {
      var L2 = lanes[li], ym = TL_AXIS_H + li * rowH + rowH / 2, lab = tlLaneLabel(D, L2), w1 = L2.one;
      var hl2 = L2.ws.some(function (wi) { return st.hl[wi]; });
      c.font = (hl2 || (w1 && w1.straggler) ? '600 ' : '') + (rowH >= 20 ? '12px' : '10.5px') + ' system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif';
      var tag = w1 && w1.straggler ? ' ▲ straggler' : w1 && !w1.aligned ? ' · not aligned' : '';
      var room = TL_LABEL_W - 12;
      while (c.measureText(lab + tag).width > room && lab.length > 6) lab = lab.slice(0, -2) + '…';
      c.fillStyle = w1 && w1.straggler ? '#cf222e' : '#1f2328';
      c.fillText(lab, 6, ym);
      if (tag) {
        c.fillStyle = w1.straggler ? '#cf222e' : '#9a6700';
        c.fillText(tag, 6 + c.measureText(lab).width, ym);
      }
    }
    c.fillStyle = TL_COLOR.grid; c.fillRect(TL_LABEL_W - 4, TL_AXIS_H, 1, nl * rowH);
    canvas.setAttribute('data-lanes', String(nl));
    canvas.setAttribute('data-step', String(s.step));
    canvas.setAttribute('data-highlight', keys(st.hl).map(function (i) { return tlWho(D, +i); }).join(','));
    timing.timeline = { draw: performance.now() - t, lanes: nl, ranks: D.workers.length, step: s.step };
  }


  /* hover: the rank, the item and its times */
  function tlItemAt(V, px, py) {
    var G = V.G, S = V.S;
    if (!G || px < G.x0 || px > G.x1) return null;
    var li = Math.floor((py - TL_AXIS_H) / G.rowH);
    if (li < 0 || li >= G.lanes.length) return null;
    var row = Math.floor((py - TL_AXIS_H - li * G.rowH - G.gap / 2) / G.sub);
    if (row < 0) row = 0;
    if (row > 2) row = 2;
    var us = G.t0 + (px - G.x0) / G.k, tol = 2 / G.k, L = G.lanes[li], best = null;
    var prio = { late: 3, wait: 2, coll: 1, span: 1, gpu: 1 };
    var look = function (list, kind, wi) {
      for (var i = 0; i < list.length; i++) {
        var it = list[i];
        if (us < it[0] - tol || us > it[1] + tol) continue;
        if (!best || prio[kind] > prio[best.kind] || (kind === best.kind && it[1] - it[0] > best.it[1] - best.it[0])) best = { it: it, kind: kind, wi: wi };
      }
    };
    L.ws.forEach(function (wi) {
      var o = S.per[wi];
      if (row === 0) look(o.spans, 'span', wi);
      else if (row === 1) look(o.gpu, 'gpu', wi);
      else { look(o.late, 'late', wi); look(o.wait, 'wait', wi); look(o.coll, 'coll', wi); }
    });
    if (best) { best.lane = L; best.us = us; }
    return best || { lane: L, us: us };
  }
  function tlInstName(D, k) {
    var q = 4 * k, nm = D.names[D.inst[q]], ch = D.channels[D.inst[q + 1]];
    return (nm != null ? shortName(String(nm)) : 'collective #' + k) + (ch != null ? ' on ' + String(ch) : '');
  }
  /* The tooltip of the item under the mouse. */
  function tlHover(V, ev) {
    var D = V.D, S = V.S, canvas = V.canvas, tip = V.tip;
    var r = canvas.getBoundingClientRect(), px = ev.clientX - r.left, py = ev.clientY - r.top, b = tlItemAt(V, px, py);
    if (!b) { tip.hidden = true; return; }
    var s0 = S.s.start, lines = [], it = b.it, w = b.wi != null ? D.workers[b.wi] : null;
    var rel = function (us) { return '+' + tlMs(us - s0); };
    if (!it) {
      var mw = -1;
      b.lane.ws.forEach(function (wi) { if (mw < 0 || S.per[wi].waitUs > S.per[mw].waitUs) mw = wi; });
      lines.push(tlLaneLabel(D, b.lane) + (b.lane.ws.length > 1 && S.per[mw].waitUs > 0 ? ' · waited most in this step: ' + tlMs(S.per[mw].waitUs) + ' (' + tlWho(D, mw) + ')' : ''));
      lines.push(rel(b.us));
    } else {
      lines.push(w.label + (w.straggler ? ' · straggler' : '') + (w.aligned ? '' : ' · not aligned (placed at the step start)'));
      if (b.kind === 'span') lines.push('span ' + (D.names[it[2]] != null ? String(D.names[it[2]]) : '#' + it[2]));
      else if (b.kind === 'gpu') lines.push('GPU compute');
      else if (b.kind === 'coll') lines.push(tlInstName(D, it[2]) + ': arrived ' + rel(it[0]) + ', ended ' + rel(it[1]));
      else if (b.kind === 'wait') {
        var lw = D.inst[4 * it[2] + 2];
        lines.push('waited at ' + tlInstName(D, it[2]) + (isNum(lw) && lw >= 0 ? ' for ' + tlWho(D, lw) : ' for the last arriver'));
      } else lines.push('arrived last at ' + tlInstName(D, it[2]) + ', later than the median member');
      lines.push(rel(it[0]) + ' → ' + rel(it[1]) + ' (' + tlMs(it[1] - it[0]) + ')');
    }
    tip.textContent = '';
    lines.forEach(function (l, i) { tip.appendChild(h('div', { class: i ? null : 'tl-tip-h', text: l })); });
    tip.hidden = false;
    var tw = tip.offsetWidth;
    tip.style.left = Math.min(px + 14, r.width - tw - 4) + 'px';
    tip.style.top = (py + 16) + 'px';
  }

  function viewTimeline(root) {
    var D = tlData();
    add(root, h('h1', { text: 'Timeline: one step across the ranks' }));
    if (!D) { add(root, empty('This report has no timeline.')); return; }
    var st = { step: tlDefaultStep(D), hl: Object.create(null), find: -1 };
    var V = { D: D, st: st, S: null, G: null, fcards: [] };
    var how = howto('the timeline', [
      ['lanes', 'One lane per rank (the label names it; ▲ straggler: the Lockstep section named it the worker the others waited for; "not aligned": its clock could not be matched, its step is placed at the job\'s step start). Each lane has three rows: the main thread\'s top-level spans (CPU), GPU compute, and the collectives from its arrival to their end.'],
      ['colours', 'Orange: waiting at a collective for the last arriver. Red: a late arrival, from the median member\'s arrival to its own. Shaded band: one collective instance, from its first arrival to its end; the red line inside it is its last arrival.'],
      ['many ranks', 'Past ' + TL_MAX_LANES + ' ranks, runs of neighbouring ranks share a lane that draws the union of their items (hover names the rank); stragglers, ranks not aligned and the ranks of the highlighted finding keep a lane of their own.'],
      ['findings', 'Click a finding to highlight its ranks and jump to its first step: the straggler\'s late arrivals and the others\' waits stand out.']]);
    how.removeAttribute('open');
    add(root, how);
    var nal = D.workers.filter(function (w) { return !w.aligned; }).length;
    add(root, h('p', { class: 'note', id: 'tl-about' },
      plural(D.workers.length, 'rank') + ' · ' + plural(D.steps.length, 'step') + ' kept' + (D.T[K.KEPT] ? ' (' + String(D.T[K.KEPT]) + ')' : '') +
      (nal ? ' · ' + nal + ' not aligned' : '') + (D.T[K.CLOCK] ? ' · times: ' + String(D.T[K.CLOCK]) : '')));
    tlFindingCards(V, root);

    /* the step, the legend, the canvas */
    var sel = h('select', { id: 'tl-step', 'aria-label': 'Step' });
    D.steps.forEach(function (s, i) {
      var tag = s.slow.length ? ' · slow: ' + s.slow.slice(0, 3).map(function (x) { return tlWho(D, x); }).join(', ') + (s.slow.length > 3 ? '…' : '') : '';
      sel.appendChild(h('option', { value: String(i), text: tlStepLabel(s) + ' · ' + tlMs(s.end - s.start) + tag }));
    });
    sel.value = String(st.step);
    sel.addEventListener('change', function () { st.step = +sel.value; tlDraw(V); });
    var sum = h('div', { class: 'tl-sum', id: 'tl-sum' });
    var canvas = h('canvas', { id: 'tl-canvas', class: 'tl-canvas' });
    var tip = h('div', { class: 'tl-tip', id: 'tl-tip', hidden: true });
    var wrap = h('div', { class: 'tl-wrap' }, canvas, tip);
    var ctl = h('div', { class: 'ctl' }, h('label', { for: 'tl-step', text: 'Step ' }), sel);
    add(root, h('div', { class: 'chart-card tl-card' },
      h('div', { class: 'hd' }, h('h3', { text: 'Every rank in one step' }), ctl),
      legend([[TL_SPAN[0], 'CPU: the main thread\'s top-level spans (a colour per name)'], [TL_COLOR.gpu, 'GPU compute'], [TL_COLOR.coll, 'collective: arrival to end'],
        [TL_COLOR.wait, 'waiting for the last arriver'], [TL_COLOR.late, 'late arrival (from the median member\'s)'],
        ['rgba(142,124,195,0.35)', 'collective instance, first arrival to end; line: last arrival']]),
      sum, wrap));
    add(root, h('p', { class: 'note tl-file' },
      h('a', { href: 'timeline.json.gz', download: 'timeline.json.gz', id: 'tl-download', class: 'btn' }, 'Download timeline.json.gz'), ' ',
      'Open it in https://ui.perfetto.dev (Open trace file) or chrome://tracing.'));
    V.sel = sel; V.sum = sum; V.canvas = canvas; V.tip = tip; V.wrap = wrap;
    canvas.addEventListener('mousemove', function (ev) { tlHover(V, ev); });
    canvas.addEventListener('mouseleave', function () { tip.hidden = true; });
    window.addEventListener('resize', function () { if (canvas.offsetParent && V.G && Math.abs((wrap.clientWidth || 0) - V.G.W) > 2) tlDraw(V); });
    queue(function () { tlDraw(V); });
  }

  PT.tlData = tlData;
  PT.viewTimeline = viewTimeline;
}(PT));
