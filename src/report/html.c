/*
 * html.c - the plain index.html written next to report.json: the report is
 * embedded as JSON in a <script type="application/json"> block (with '<',
 * '>' and '&' escaped inside strings, so a kernel named "</script>" cannot
 * end the block) and rendered by a small script that only ever sets
 * textContent.  The full PerfDisplay page replaces this later.
 */
#include "report.h"

static const char page_head[] =
	"<!DOCTYPE html>\n"
	"<html lang=\"en\">\n"
	"<head>\n"
	"<meta charset=\"utf-8\">\n"
	"<title>PerfTracker report</title>\n"
	"<style>\n"
	"body{font-family:sans-serif;margin:1.5em;color:#222}\n"
	"table{border-collapse:collapse;margin:.3em 0}\n"
	"td,th{border:1px solid #bbb;padding:2px 6px;vertical-align:top;text-align:left}\n"
	"td.k{font-family:monospace;word-break:break-all;max-width:60em}\n"
	"li{margin:.3em 0}\n"
	"</style>\n"
	"</head>\n"
	"<body>\n"
	"<h1>PerfTracker report</h1>\n"
	"<h2>Findings</h2>\n"
	"<ol id=\"findings\"></ol>\n"
	"<div id=\"sections\"></div>\n"
	"<h2>Workers</h2>\n"
	"<div id=\"workers\"></div>\n"
	"<script type=\"application/json\" id=\"report\">";

static const char page_tail[] =
	"</script>\n"
	"<script>\n"
	"(function () {\n"
	"  'use strict';\n"
	"  var report = JSON.parse(document.getElementById('report').textContent);\n"
	"  function el(tag, text, cls) {\n"
	"    var e = document.createElement(tag);\n"
	"    if (text !== undefined) e.textContent = text;\n"
	"    if (cls) e.className = cls;\n"
	"    return e;\n"
	"  }\n"
	"  function scalar(v) {\n"
	"    return v === null ? 'null' : String(v);\n"
	"  }\n"
	"  function render(v) {\n"
	"    if (v === null || typeof v !== 'object') return el('span', scalar(v));\n"
	"    if (Array.isArray(v)) {\n"
	"      if (v.every(function (x) { return x === null || typeof x !== 'object'; }))\n"
	"        return el('span', v.length ? v.map(scalar).join(', ') : '(none)');\n"
	"      var d = el('div');\n"
	"      v.forEach(function (x) { d.appendChild(render(x)); });\n"
	"      return d;\n"
	"    }\n"
	"    var keys = Object.keys(v);\n"
	"    if (!keys.length) return el('span', '(none)');\n"
	"    var t = el('table');\n"
	"    keys.forEach(function (k) {\n"
	"      var tr = el('tr');\n"
	"      tr.appendChild(el('td', k, 'k'));\n"
	"      var td = el('td');\n"
	"      td.appendChild(render(v[k]));\n"
	"      tr.appendChild(td);\n"
	"      t.appendChild(tr);\n"
	"    });\n"
	"    return t;\n"
	"  }\n"
	"  var ol = document.getElementById('findings');\n"
	"  (report.findings || []).forEach(function (f) {\n"
	"    var li = el('li', f.explanation);\n"
	"    li.title = f.category + ' / ' + f.metric + ' / ' + f['function'];\n"
	"    ol.appendChild(li);\n"
	"  });\n"
	"  if (!ol.children.length)\n"
	"    ol.appendChild(el('li', 'No worker differs from the others beyond the thresholds.'));\n"
	"  var secs = document.getElementById('sections');\n"
	"  ['GPU Compute', 'GPU memory operations', 'Communication', 'CUDA Runtime',\n"
	"   'Python functions'].forEach(function (name) {\n"
	"    secs.appendChild(el('h2', name));\n"
	"    secs.appendChild(render(report[name]));\n"
	"  });\n"
	"  document.getElementById('workers').appendChild(render(report.workers));\n"
	"})();\n"
	"</script>\n"
	"</body>\n"
	"</html>\n";

void pt_report_html(const pt_report *r, pt_sb *out)
{
	pt_sb_add(out, page_head, sizeof(page_head) - 1);
	pt_report_json_html(pt_report_root_c(r), out);
	pt_sb_add(out, page_tail, sizeof(page_tail) - 1);
}
