// Usage: requests per minute, hour or day for one key or the whole account, per interface
// (JSON-RPC, REST, SQL, GraphQL), rate-limit refusals, the plan's limit drawn on the chart,
// what is left of each key's current one-minute window, and the cost of the answers (in the
// plan's units) per key over time and per method. Refreshed every 5 s. For the operator, the
// x402 plan's revenue and calls per payer (pages/x402.js).
import { dash } from '../lib/api.js';
import { fmtInt, fmtTime, h, replace, table, uid } from '../lib/dom.js';
import { lineChart } from '../lib/chart.js';
import { x402Revenue } from './x402.js';

const IFACES = [['rpc', 'JSON-RPC'], ['rest', 'REST'], ['sql', 'SQL'], ['graphql', 'GraphQL'], ['mcp', 'MCP']];

export function renderUsage(main, ctx) {
  let alive = true;
  let chart = null;
  let costChart = null;
  let methodChart = null;
  let timer = null;
  let shapeKey = '';
  const keySel = h('select', { id: uid('uk') }, h('option', { value: 'all' }, 'All keys of the account'));
  const granSel = h('select', { id: uid('ug') },
    h('option', { value: 'minute' }, 'Per minute (last hour)'),
    h('option', { value: 'hour' }, 'Per hour (last 48 hours)'),
    h('option', { value: 'day' }, 'Per day (last 30 days)'));
  const summary = h('div', { id: 'usage-summary', class: 'stats' });
  const chartBox = h('div', { class: 'chart', id: 'usage-chart' });
  const costBox = h('div', { class: 'chart', id: 'usage-cost-chart' });
  const methodBox = h('div', { class: 'chart', id: 'usage-method-cost-chart' });
  const costDetail = h('div', { id: 'usage-cost-detail', class: 'two' });
  const windows = h('div', { id: 'usage-windows' });
  const detail = h('div', { id: 'usage-detail', class: 'two' });
  const error = h('p', { class: 'error', role: 'alert' });

  const controls = h('form', { class: 'card row', onsubmit: (e) => e.preventDefault() },
    h('div', { class: 'field' }, h('label', { for: keySel.id }, 'Key'), keySel),
    h('div', { class: 'field' }, h('label', { for: granSel.id }, 'Granularity'), granSel));
  keySel.addEventListener('change', () => refresh(true));
  granSel.addEventListener('change', () => refresh(true));

  const stat = (label, value, id, ...more) => h('div', { class: 'stat' }, h('p', { class: 'label' }, label), h('p', { class: 'value', id }, value), ...more);
  // What a plan unit is, where the cost is shown: a bare 128,458 for 7 requests says nothing.
  const UNIT = 'One plan unit is about one row the engine reads to answer (or the estimate charged before running, when that is more).';
  const costScale = (u) => {
    const plan = `plan (${u.plan}) allows ${fmtInt(u.costBudgetPerRequest)} per request.`;
    if (u.totals.requests === 0) return `1 unit ≈ one row the engine reads. Your ${plan}`;
    return `1 unit ≈ one row the engine reads. About ${fmtInt(Math.round(u.totals.cost / u.totals.requests))} per request here; your ${plan}`;
  };

  async function refresh(reshape = false) {
    try {
      const u = await dash('GET', `usage?key=${encodeURIComponent(keySel.value)}&granularity=${granSel.value}`);
      if (!alive) return;
      error.textContent = '';
      replace(summary,
        stat('Requests', fmtInt(u.totals.requests), 'usage-requests'),
        stat('Errors', fmtInt(u.totals.errors), 'usage-errors'),
        stat('Rate-limited (429)', fmtInt(u.totals.rateLimited), 'usage-ratelimited'),
        stat(h('abbr', { title: UNIT }, 'Cost (plan units)'), fmtInt(u.totals.cost), 'usage-cost', h('p', { class: 'hint', id: 'usage-cost-scale' }, costScale(u))),
        stat(`Plan ${u.plan}`, `${fmtInt(u.limitPerMinute)} / min per key`, 'usage-plan'));
      const xs = u.buckets.map((b) => b.t);
      const data = [xs, ...IFACES.map(([k]) => u.buckets.map((b) => b[k])), u.buckets.map((b) => b.rateLimited), u.buckets.map(() => u.limitPerBucket)];
      const shape = `${keySel.value}/${granSel.value}`;
      if (!chart || reshape || shape !== shapeKey) {
        chart?.destroy();
        chartBox.replaceChildren();
        shapeKey = shape;
        chart = lineChart(chartBox, {
          title: `Requests per ${u.granularity} by interface, with rate-limit refusals and the plan's limit of ${fmtInt(u.limitPerBucket)} per ${u.granularity} per key`,
          yLabel: `requests / ${u.granularity}`,
          limit: u.limitPerBucket,
          data,
          series: [...IFACES.map(([, label]) => ({ label })), { label: 'Rate-limited', stroke: '#b3261e' }, { label: `Plan limit (${u.plan})`, stroke: '#5b5f71', dash: [6, 4] }],
        });
      } else chart.update(data);
      // Cost per key over time: one line per key.
      const costData = [xs, ...u.keys.map((k) => k.costPerBucket)];
      if (!costChart || reshape || costChart.series !== u.keys.length) {
        costChart?.chart.destroy();
        costBox.replaceChildren();
        costChart = { series: u.keys.length, chart: lineChart(costBox, {
          title: `Cost per ${u.granularity} per key, in the plan's units (1 unit ≈ one row read, or the estimate charged; at most ${fmtInt(u.costBudgetPerRequest)} per request)`,
          yLabel: `cost / ${u.granularity}`,
          data: costData,
          series: u.keys.map((k) => ({ label: k.name })),
        }) };
      } else costChart.chart.update(costData);
      // Cost per method over time: the five costliest methods of the period.
      const top = u.costlyMethods.slice(0, 5);
      const methodData = [xs, ...top.map((m) => m.costPerBucket)];
      const methodShape = top.map((m) => m.label).join('|');
      if (!methodChart || reshape || methodChart.shape !== methodShape) {
        methodChart?.chart.destroy();
        methodBox.replaceChildren();
        methodChart = { shape: methodShape, chart: lineChart(methodBox, {
          title: `Cost per ${u.granularity} of the five costliest methods, in the plan's units`,
          yLabel: `cost / ${u.granularity}`,
          data: methodData,
          series: top.map((m) => ({ label: m.label })),
        }) };
      } else methodChart.chart.update(methodData);
      replace(costDetail,
        table('Cost by key', ['Key', 'Requests', 'Cost', 'Rows read'], u.keys.map((k) => [h('span', { class: 'keyname' }, k.name), fmtInt(k.requests), h('span', { class: 'cost' }, fmtInt(k.cost)), fmtInt(k.rowsRead)]), { empty: 'No keys yet.' }),
        table('Costliest methods', ['Interface and method', 'Requests', 'Cost', 'Rows read'], u.costlyMethods.map((m) => [m.label, fmtInt(m.requests), fmtInt(m.cost), fmtInt(m.rowsRead)]), { empty: 'Nothing cost anything in this period.' }));
      replace(windows, table('Current one-minute window', ['Key', 'Status', 'Limit / min', 'Remaining', 'Resets at'],
        u.windows.map((w) => [h('span', { class: 'keyname' }, w.name), w.status, fmtInt(w.limit), h('span', { class: 'remaining' }, fmtInt(w.remaining)), fmtTime(w.resetAt)]),
        { empty: 'No keys yet.' }));
      replace(detail,
        table('Requests by interface', ['Interface', 'Requests'], IFACES.map(([k, label]) => [label, fmtInt(u.totals.byInterface[k])])),
        table('Busiest methods', ['Interface and method', 'Requests'], u.methods.map((m) => [m.label, fmtInt(m.requests)]), { empty: 'No requests in this period.' }));
    } catch (err) {
      if (alive) error.textContent = err.message;
    }
  }

  async function loadKeys() {
    const { data } = await dash('GET', 'keys');
    for (const k of data) keySel.append(h('option', { value: k.id }, `${k.name} (${k.environment || 'no environment'}, ${k.status})`));
  }

  replace(main,
    h('h1', null, 'Usage'),
    h('p', { class: 'muted' }, 'Requests answered with your keys, counted per minute. Limits apply per key, in fixed one-minute windows. ',
      'Cost is in plan units: one unit is about one row the engine reads to answer, and your plan caps what one request may cost.'),
    controls, error, summary,
    h('section', { class: 'card', 'aria-labelledby': 'usage-chart-title' }, h('h2', { id: 'usage-chart-title' }, 'Requests over time'), chartBox),
    windows, detail,
    h('section', { class: 'card', 'aria-labelledby': 'usage-cost-title' }, h('h2', { id: 'usage-cost-title' }, 'Cost over time, per key'), costBox),
    h('section', { class: 'card', 'aria-labelledby': 'usage-method-cost-title' }, h('h2', { id: 'usage-method-cost-title' }, 'Cost over time, per method'), methodBox),
    costDetail,
    x402Revenue());
  loadKeys().catch(() => {}).finally(() => refresh(true));
  timer = setInterval(() => { if (document.visibilityState === 'visible') refresh(); }, 5000);
  return () => {
    alive = false;
    clearInterval(timer);
    chart?.destroy();
    costChart?.chart.destroy();
    methodChart?.chart.destroy();
  };
}
