/**
 * The page's only script: the rollout-tree viewer. It reads the embedded JSON (ViewerData from
 * tree-data.ts / page.ts), fills the run/step/prompt selects and renders the chosen tree as nested
 * <details>, building DOM nodes with textContent (never innerHTML) so tree text cannot inject markup.
 * When done it sets data-report-ready="1" on <body>; any error sets data-report-error, so a headless
 * browser's dumped DOM shows whether the script ran cleanly.
 */
export const VIEWER_SCRIPT = String.raw`
(function () {
  'use strict';
  var status = document.getElementById('viewer-status');
  window.addEventListener('error', function (e) {
    document.body.setAttribute('data-report-error', String(e.message));
    if (status) status.textContent = 'Tree viewer error: ' + e.message;
  });
  var data = JSON.parse(document.getElementById('viewer-data').textContent);
  var selRun = document.getElementById('sel-run');
  var selStep = document.getElementById('sel-step');
  var selPrompt = document.getElementById('sel-prompt');
  var out = document.getElementById('tree-out');

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function fmt(x) { return x === undefined || x === null ? '–' : (Math.round(x * 100) / 100).toFixed(2); }
  function option(sel, value, label) { var o = el('option', null, label); o.value = String(value); sel.appendChild(o); }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }
  function badge(cls, text, title) { var b = el('span', 'badge ' + cls, text); if (title) b.title = title; return b; }

  function nodeBadges(n) {
    var span = el('span', 'badges');
    if (n.predicted !== undefined) span.appendChild(badge('v', 'Ṽ ' + fmt(n.predicted), 'Ṽ = ' + fmt(n.predicted) + ': the predictor’s success probability for this prefix when the step allocated its budget.'));
    if (n.rho !== undefined) {
      var why = 'ρ = r·q + (1−r)(1−q) with q = Ṽ = ' + fmt(n.predicted) + ' and r = ' + n.r + ' (the observed outcome of the trajectory this prefix lies on): ρ = ' + fmt(n.rho) + ' is the chance a new continuation repeats that outcome. Low ρ = likely to flip = worth expanding.';
      span.appendChild(badge('rho', 'ρ ' + fmt(n.rho), why));
    }
    if (n.expanded) {
      span.appendChild(badge('k', 'K=' + n.expanded, 'Expanded with K = ' + n.expanded + ' continuations. V_pref(K) = 1 − ρ^K = ' + fmt(n.vPref) + ': chance that at least one of them gets the other outcome, a contrastive pair. The solver gives K to the prefixes with the largest marginal gains ρ^(k−1)(1−ρ).'));
    }
    if (n.reward !== undefined) span.appendChild(badge(n.reward === 1 ? 'r1' : 'r0', 'r=' + n.reward, 'terminal reward' + (n.score !== undefined ? ' (score ' + fmt(n.score) + ')' : '') + '; ended by ' + n.end));
    else if (n.end) span.appendChild(badge('rx', n.end, 'trajectory ended without a reward (' + n.end + ')'));
    if (n.origin === 'continuation') span.appendChild(badge('cont', 'cont', 'created by a continuation from a prefix'));
    return span;
  }

  function renderNode(tree, id) {
    var n = tree.nodes[id];
    var d = el('details', 'tree-node origin-' + n.origin + (n.reward === 1 ? ' leaf-ok' : n.reward === 0 ? ' leaf-fail' : ''));
    d.open = true;
    var s = el('summary');
    s.appendChild(el('span', 'depth', 't=' + n.depth));
    if (n.action) s.appendChild(el('span', 'act', n.action.type + (n.action.input ? ': ' + n.action.input.slice(0, 90) : '')));
    s.appendChild(nodeBadges(n));
    d.appendChild(s);
    var body = el('div', 'turn-body');
    if (n.text) body.appendChild(field('text', n.text));
    else if (n.thought) body.appendChild(field('thought', n.thought));
    if (n.action && n.action.input.length > 90) body.appendChild(field('action', n.action.type + ': ' + n.action.input));
    if (n.observation) body.appendChild(field('observation', n.observation));
    if (n.error) body.appendChild(field('error', n.error));
    if (body.firstChild) d.appendChild(body);
    for (var i = 0; i < n.children.length; i++) d.appendChild(renderNode(tree, n.children[i]));
    return d;
  }
  function field(name, text) {
    var p = el('div', 'field');
    p.appendChild(el('span', 'fname', name));
    p.appendChild(el('pre', null, text));
    return p;
  }

  function expandedCount(t) {
    var k = 0;
    for (var id in t.nodes) if (t.nodes[id].expanded) k++;
    return k;
  }
  function currentRun() { return data.runs[Number(selRun.value)]; }
  function currentStep() { return currentRun().steps[Number(selStep.value)]; }
  function fillSteps() {
    clear(selStep);
    var steps = currentRun().steps;
    steps.forEach(function (s, i) { option(selStep, i, 'step ' + s.step + ' (' + s.trees.length + ' prompts)'); });
    // Start at the last step: its predictor has learned, so its allocation is the interesting one.
    selStep.value = String(steps.length - 1);
    fillPrompts();
  }
  function fillPrompts() {
    clear(selPrompt);
    var st = currentStep();
    (st ? st.trees : []).forEach(function (t, i) {
      option(selPrompt, i, t.promptId + ' · ' + t.successes + '/' + t.leaves + (t.mixed ? ' mixed' : '') + (expandedCount(t) ? ' · ' + expandedCount(t) + ' expanded' : ''));
    });
    // Start at a prompt whose prefixes were expanded, else a mixed one, else the first.
    var trees = st ? st.trees : [];
    var pick = trees.findIndex(function (t) { return expandedCount(t) > 0; });
    if (pick < 0) pick = trees.findIndex(function (t) { return t.mixed; });
    selPrompt.value = String(Math.max(0, pick));
    render();
  }
  function render() {
    clear(out);
    var st = currentStep();
    var tree = st && st.trees[Number(selPrompt.value)];
    if (!tree) { out.appendChild(el('p', 'note', 'No tree stored for this step.')); return; }
    var head = el('div', 'tree-head');
    head.appendChild(el('div', 'prompt', tree.prompt));
    var facts = 'm = ' + tree.m + ' bare rollouts · ' + tree.successes + '/' + tree.leaves + ' rewarded leaves succeeded · ' + (tree.mixed ? 'mixed (gives contrast)' : 'not mixed (no contrast)');
    var line = el('div', 'facts', facts);
    if (tree.v !== undefined) line.appendChild(badge('v', 'v = Ṽ(prompt) ' + fmt(tree.v), 'V_root(v, m) = 1 − v^m − (1 − v)^m = ' + fmt(tree.vRoot) + ': chance that m independent rollouts are mixed; the root solver chose m to maximise the sum of these.'));
    head.appendChild(line);
    out.appendChild(head);
    out.appendChild(renderNode(tree, tree.promptId));
  }

  data.runs.forEach(function (r, i) { option(selRun, i, r.label); });
  selRun.addEventListener('change', fillSteps);
  selStep.addEventListener('change', fillPrompts);
  selPrompt.addEventListener('change', render);
  // Start at a run whose prefixes were expanded (a tree strategy), where the viewer has most to show.
  var firstRun = data.runs.findIndex(function (r) { return r.steps.some(function (s) { return s.trees.some(function (t) { return expandedCount(t) > 0; }); }); });
  selRun.value = String(Math.max(0, firstRun));
  if (data.runs.length > 0) fillSteps();
  else out.appendChild(el('p', 'note', 'No trees were stored in these runs.'));
  var count = data.runs.reduce(function (a, r) { return a + r.steps.reduce(function (b, s) { return b + s.trees.length; }, 0); }, 0);
  if (status) status.textContent = 'Tree viewer ready: ' + count + ' trees embedded.';
  document.body.setAttribute('data-report-ready', '1');
})();
`;

export const PAGE_CSS = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #222; margin: 0; background: #fafafa; }
main { max-width: 1180px; margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 22px; margin: 8px 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 0 0 4px; }
.meta, .note, .caption { color: #555; } .caption { font-size: 12.5px; max-width: 860px; }
.notes li { color: #8a5a00; }
table { border-collapse: collapse; margin: 8px 0; background: #fff; } th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: right; }
th { background: #f0f0f0; } td:first-child, th:first-child { text-align: left; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
figure.chart { flex: 0 1 560px; box-sizing: border-box; margin: 0; background: #fff; border: 1px solid #e3e3e3; border-radius: 4px; padding: 10px; }
figure.chart svg { max-width: 100%; height: auto; display: block; }
#chart-calibration, #chart-budget-per-step { flex-basis: 100%; }
figure.chart.missing { min-width: 300px; color: #8a5a00; }
.controls { display: flex; gap: 12px; flex-wrap: wrap; align-items: center; margin: 8px 0; }
select { font: inherit; padding: 2px 4px; max-width: 420px; }
#tree-out { background: #fff; border: 1px solid #e3e3e3; border-radius: 4px; padding: 10px; overflow-x: auto; }
.tree-head .prompt { font-weight: 600; margin-bottom: 4px; white-space: pre-wrap; } .tree-head .facts { color: #444; margin-bottom: 8px; }
details.tree-node { margin-left: 14px; border-left: 2px solid #d0d7e2; padding-left: 6px; }
details.tree-node.origin-continuation { border-left-color: #f5a65b; }
details.tree-node.origin-root { margin-left: 0; border-left: none; padding-left: 0; }
details.tree-node > summary { cursor: pointer; padding: 1px 0; }
.depth { color: #888; font-size: 12px; margin-right: 6px; } .act { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
.badge { display: inline-block; font-size: 11.5px; border-radius: 3px; padding: 0 5px; margin-left: 5px; cursor: help; border: 1px solid transparent; }
.badge.v { background: #eef3fb; border-color: #b9cbe8; } .badge.rho { background: #f6f0fb; border-color: #d3bfe6; }
.badge.k { background: #fff1e0; border-color: #f5a65b; font-weight: 600; } .badge.cont { background: #fff7ee; color: #b35900; }
.badge.r1 { background: #2e9d4f; color: #fff; } .badge.r0 { background: #d0453b; color: #fff; } .badge.rx { background: #999; color: #fff; }
.turn-body { margin: 2px 0 4px 14px; } .field { display: flex; gap: 6px; } .fname { color: #888; font-size: 11.5px; min-width: 76px; }
.field pre { margin: 0; white-space: pre-wrap; word-break: break-word; font-size: 12px; color: #333; max-height: 9em; overflow: auto; }
.legend { font-size: 12.5px; color: #444; background: #fff; border: 1px solid #e3e3e3; padding: 6px 10px; border-radius: 4px; max-width: 900px; }
`;
