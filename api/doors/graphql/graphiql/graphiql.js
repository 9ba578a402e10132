// Starts GraphiQL (the npm package's own build, served from node_modules: no CDN) with a
// fetcher that sends the key typed into the bar as x-api-key. The key stays in
// sessionStorage (this tab), never in the URL. No inline script: the page's CSP allows
// only this origin's files.
'use strict';

const DEFAULT_QUERY = `# Every operation of the service; Ctrl+Enter runs the query.
query Example {
  protocols
  protocolStats(filters: { dateRange: { start: "2025-01-01", end: "2025-01-31" } }) {
    protocolName totalTransactions averageFee uniquePrograms
  }
}
`;

document.addEventListener('DOMContentLoaded', () => {
  const keyInput = document.getElementById('key');
  const status = document.getElementById('status');
  keyInput.value = sessionStorage.getItem('x-api-key') || '';

  async function fetcher(params) {
    const key = keyInput.value.trim();
    sessionStorage.setItem('x-api-key', key);
    const headers = { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' };
    if (key !== '') headers['x-api-key'] = key;
    // GraphiQL can send the name of an operation the text no longer has (right after an
    // edit); the server rightly refuses that, so a name the text lacks is not sent.
    const named = typeof params.operationName === 'string'
      && new RegExp(`\\b(query|mutation|subscription)\\s+${params.operationName}\\b`).test(params.query);
    const body = named ? params : { ...params, operationName: undefined };
    const res = await fetch('/graphql', { method: 'POST', headers, body: JSON.stringify(body) });
    const remaining = res.headers.get('x-ratelimit-remaining');
    status.textContent = `HTTP ${res.status}${remaining === null ? '' : `, ${remaining} requests left this minute`}`;
    return res.json();
  }

  // GraphiQL reads the schema (introspection) as it starts, and that needs the key: it is
  // started once a key is there, and started again when the key changes.
  const root = document.getElementById('graphiql');
  let view;
  let startedWith;
  function start() {
    const key = keyInput.value.trim();
    if (key === startedWith) return;
    startedWith = key;
    sessionStorage.setItem('x-api-key', key);
    if (view !== undefined) view.unmount();
    view = undefined;
    root.textContent = '';
    if (key === '') {
      root.textContent = 'Enter your API key above (create one in the dashboard) to explore the schema and run queries.';
      return;
    }
    view = window.ReactDOM.createRoot(root);
    view.render(window.React.createElement(window.GraphiQL, { fetcher, defaultQuery: DEFAULT_QUERY, shouldPersistHeaders: false }));
  }
  keyInput.addEventListener('change', start);
  keyInput.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') start();
  });
  start();
});
