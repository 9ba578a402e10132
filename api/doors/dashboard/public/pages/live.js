// Live protocol activity. With the GraphQL subscription (/graphql/stream, graphql-sse's
// distinct-connections mode) one stream per page pushes each changed hourly bucket; where the
// server has no stream (404) the page polls JSON-RPC getTopProtocols + getProtocolActivity
// every 2 s instead. Top protocols, success rates and fee / compute-unit percentiles are
// read every 10 s; the data's freshness comes from the answers' headers when the server
// sends them, else from the dashboard's freshness call.
import { dash, messageOf, service } from '../lib/api.js';
import { fmtInt, fmtNum, h, replace, table, uid } from '../lib/dom.js';
import { lineChart } from '../lib/chart.js';
import { currentKey, keyPicker } from '../lib/keyring.js';

const POLL_MS = 2000;
const SLOW_MS = 10_000;
const DAY = 86_400;

const SUBSCRIPTION = `subscription Live($protocols: [String!]) {
  protocolActivity(protocols: $protocols, bucket: HOUR) { protocolName timestamp count successCount failedCount totalFees totalComputeUnits }
}`;

export function renderLive(main) {
  let alive = true;
  let key = currentKey();
  let selected = null;
  let timers = [];
  let stream = null; // AbortController of the SSE fetch
  let chart = null;
  const buckets = new Map(); // timestamp -> bucket (selected protocol, hourly)

  const modeLine = h('p', { id: 'live-mode', class: 'notice', role: 'status' }, 'Choose a key to start.');
  const freshness = h('p', { id: 'live-freshness', class: 'muted' });
  const topBox = h('div', { id: 'live-top' });
  const protoSel = h('select', { id: uid('lp') });
  const perfBox = h('div', { id: 'live-perf', class: 'stats' });
  const chartBox = h('div', { class: 'chart', id: 'live-chart' });
  const updated = h('p', { class: 'hint', id: 'live-updated' });
  const error = h('p', { class: 'error', role: 'alert' });
  protoSel.addEventListener('change', () => { selected = protoSel.value; restart(); });

  const picker = keyPicker((k) => { key = k; restart(); });

  const range = () => {
    const now = Math.floor(Date.now() / 1000);
    return { gte: now - DAY, lte: now };
  };

  function stop() {
    for (const t of timers) clearInterval(t);
    timers = [];
    stream?.abort();
    stream = null;
  }

  /** Unix seconds from a header or extension value: seconds, or an ISO 8601 time. */
  const seconds = (v) => (v === null || v === undefined || v === '' ? null : Number.isFinite(Number(v)) ? Number(v) : Date.parse(v) / 1000);

  function showFreshness(headers) {
    const block = seconds(headers?.get('x-data-newest-block-time'));
    if (block === null || Number.isNaN(block)) return false;
    setFreshness(block, seconds(headers.get('x-data-ingested-at')));
    return true;
  }
  function setFreshness(newestBlockTime, ingestedAt) {
    if (newestBlockTime === null || newestBlockTime === undefined) {
      freshness.textContent = 'No data stored yet.';
      return;
    }
    const age = Math.max(0, Math.round(Date.now() / 1000 - newestBlockTime));
    freshness.textContent = `Newest record: block time ${new Date(newestBlockTime * 1000).toISOString().replace('.000Z', 'Z')} (${fmtInt(age)} s ago)` +
      (ingestedAt ? `, ingested ${new Date(ingestedAt * 1000).toISOString().replace(/\.\d+Z/, 'Z')}` : '') + '.';
  }

  async function readTop() {
    const r = await service(key.secret, 'POST', '/v1/rpc', [
      { jsonrpc: '2.0', id: 1, method: 'getTopProtocols', params: [{ limit: 10, blockTime: range() }] },
      ...(selected ? [{ jsonrpc: '2.0', id: 2, method: 'getProtocolActivity', params: [{ protocolName: selected, blockTime: range(), interval: 'hour' }] }] : []),
    ]);
    if (r.status !== 200) throw new Error(messageOf(r));
    const byId = new Map(r.data.map((a) => [a.id, a]));
    const top = byId.get(1);
    if (top.error) throw new Error(top.error.data || top.error.message);
    drawTop(top.result);
    const act = byId.get(2);
    if (act?.result) {
      buckets.clear();
      for (const b of act.result) buckets.set(b.timestamp, b);
      drawChart();
    }
    if (!showFreshness(r.headers)) {
      const f = await dash('GET', 'freshness');
      setFreshness(f.newestBlockTime, f.newestIngestedAt);
    }
    updated.textContent = `Updated ${new Date().toLocaleTimeString('en-GB')}.`;
  }

  function drawTop(list) {
    if (!selected && list.length > 0) {
      selected = list[0].protocolName;
      restartSoon();
    }
    const names = list.map((p) => p.protocolName);
    if (selected && !names.includes(selected)) names.unshift(selected);
    if ([...protoSel.options].map((o) => o.value).join() !== names.join()) {
      replace(protoSel, names.map((n) => h('option', { value: n, selected: n === selected }, n)));
    }
    replace(topBox, table('Top protocols, last 24 hours', ['Protocol', 'Transactions', 'Success rate', 'Fees (lamports)'],
      list.map((p) => [p.protocolName, h('span', { class: 'count' }, fmtInt(p.transactionCount)), `${fmtNum(p.successRate, 2)} %`, fmtInt(p.totalFees)]),
      { empty: 'No transactions in the last 24 hours.' }));
  }

  function drawChart() {
    const rows = [...buckets.values()].sort((a, b) => a.timestamp - b.timestamp);
    const data = [rows.map((b) => b.timestamp), rows.map((b) => b.count), rows.map((b) => b.failedCount)];
    if (!chart) {
      chart = lineChart(chartBox, {
        title: `Hourly transactions and failures of ${selected} over the last 24 hours`,
        yLabel: 'transactions / hour',
        data,
        series: [{ label: 'Transactions' }, { label: 'Failed', stroke: '#b3261e' }],
      });
    } else chart.update(data);
  }

  async function readPerformance() {
    if (!selected) return;
    const today = new Date().toISOString().slice(0, 10);
    const [perf, fees] = await Promise.all([
      service(key.secret, 'POST', '/v1/rpc', { jsonrpc: '2.0', id: 1, method: 'getProtocolPerformance', params: [{ protocolName: selected, blockTime: range() }] }),
      service(key.secret, 'GET', `/api/v1/analytics/fees?protocol_name=${encodeURIComponent(selected)}&date_from=${today}&date_to=${today}`),
    ]);
    const p = perf.data?.result;
    const f = fees.status === 200 ? fees.data.data : null;
    const stat = (label, value) => h('div', { class: 'stat' }, h('p', { class: 'label' }, label), h('p', { class: 'value' }, value));
    replace(perfBox,
      stat('Success rate (24 h)', p ? `${fmtNum(p.successRate, 2)} %` : '–'),
      stat('Compute units p50 / p95 / p99', p ? `${fmtInt(p.p50ComputeUnits)} / ${fmtInt(p.p95ComputeUnits)} / ${fmtInt(p.p99ComputeUnits)}` : '–'),
      stat('Fee p50 / p95 / p99 (today, lamports)', f ? `${fmtInt(f.p50Fee)} / ${fmtInt(f.p95Fee)} / ${fmtInt(f.p99Fee)}` : '–'),
      stat('Average fee (24 h, lamports)', p ? fmtInt(p.averageFee) : '–'));
  }

  const guarded = (fn) => async () => {
    if (!alive || !key || document.visibilityState !== 'visible') return;
    try {
      await fn();
      error.textContent = '';
    } catch (err) {
      if (alive && err.name !== 'AbortError') error.textContent = err.message;
    }
  };

  /** Open the subscription; resolves false when the server has no stream (404). */
  async function openStream(my) {
    const controller = new AbortController();
    stream = controller;
    const res = await fetch('/graphql/stream', {
      method: 'POST',
      signal: controller.signal,
      headers: { accept: 'text/event-stream', 'content-type': 'application/json', 'x-api-key': key.secret },
      body: JSON.stringify({ query: SUBSCRIPTION, variables: { protocols: selected ? [selected] : null } }),
    });
    if (res.status === 404) return false;
    if (my !== generation) {
      controller.abort();
      return false;
    }
    if (!res.ok || !res.body) throw new Error(`live stream refused: HTTP ${res.status}`);
    showFreshness(res.headers);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    (async () => {
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done || !alive) break;
        buf += value;
        let end;
        while ((end = buf.indexOf('\n\n')) !== -1) {
          const raw = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const event = /^event: ?(.*)$/m.exec(raw)?.[1];
          const data = raw.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
          if (event === 'next' && data) onEvent(JSON.parse(data));
          if (event === 'complete') return;
        }
      }
    })().catch((err) => { if (alive && err.name !== 'AbortError') error.textContent = `live stream ended: ${err.message}`; });
    return true;
  }

  function onEvent(msg) {
    const b = msg?.data?.protocolActivity;
    if (!b) return;
    if (!selected) selected = b.protocolName;
    if (b.protocolName === selected) {
      buckets.set(b.timestamp, b);
      drawChart();
    }
    const f = msg.extensions?.freshness;
    if (f?.newestBlockTime) setFreshness(seconds(f.newestBlockTime), seconds(f.ingestedAt));
    updated.textContent = `Updated ${new Date().toLocaleTimeString('en-GB')} (stream).`;
    // Records arrived: the top-protocols table follows within a second, not at its next 10 s read.
    if (topSoon === null) topSoon = setTimeout(() => { topSoon = null; guarded(readTop)(); }, 1000);
  }
  let topSoon = null;

  let pending = null;
  function restartSoon() {
    clearTimeout(pending);
    pending = setTimeout(restart, 0);
  }

  let generation = 0;
  async function restart() {
    const my = ++generation;
    stop();
    chart?.destroy();
    chart = null;
    chartBox.replaceChildren();
    buckets.clear();
    if (!alive || !key) return;
    const poll = guarded(readTop);
    const slow = guarded(readPerformance);
    await poll();
    if (my !== generation) return;
    let streaming = false;
    try {
      // Without a chosen protocol yet (nothing stored), the stream covers every protocol.
      streaming = await openStream(my);
    } catch (err) {
      if (err.name !== 'AbortError') error.textContent = err.message;
    }
    // A newer start (another key or protocol) took over meanwhile.
    if (!alive || my !== generation) return;
    modeLine.textContent = streaming
      ? 'Live: updates arrive over the GraphQL subscription (one stream); top protocols refresh every 10 s.'
      : 'Polling: this server has no live stream, so the page asks JSON-RPC every 2 s (2 requests of your key\'s limit each time).';
    timers.push(setInterval(poll, streaming ? SLOW_MS : POLL_MS));
    timers.push(setInterval(slow, SLOW_MS));
    slow();
  }

  replace(main,
    h('h1', null, 'Live'),
    h('p', { class: 'muted' }, 'Protocol activity as records arrive, read with your API key.'),
    picker, modeLine, error, freshness,
    h('section', { class: 'card', 'aria-labelledby': 'live-activity-title' },
      h('h2', { id: 'live-activity-title' }, 'Hourly activity'),
      h('div', { class: 'field' }, h('label', { for: protoSel.id }, 'Protocol'), protoSel),
      chartBox, updated),
    perfBox, topBox);
  if (key) restart();
  return () => {
    alive = false;
    stop();
    clearTimeout(pending);
    clearTimeout(topSoon);
    picker.dispose();
    chart?.destroy();
  };
}
