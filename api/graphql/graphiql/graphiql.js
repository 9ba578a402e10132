// The GraphQL explorer: sends the query with the key typed into the page as x-api-key and
// shows the answer. No framework and no third-party code: the page's Content-Security-Policy
// allows only this file. The key stays in sessionStorage (this tab), never in the URL.
'use strict';

const $ = (id) => document.getElementById(id);

const SDL_QUERY = `query { __schema { types { name kind description fields { name args { name type { ...T } } type { ...T } }
  inputFields { name type { ...T } } enumValues { name } } } }
fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }`;

function typeName(t) {
  if (t.kind === 'NON_NULL') return `${typeName(t.ofType)}!`;
  if (t.kind === 'LIST') return `[${typeName(t.ofType)}]`;
  return t.name;
}

/** A readable outline of the schema from introspection (types, fields, arguments, enum values). */
function outline(schema) {
  return schema.types.filter((t) => !t.name.startsWith('__')).map((t) => {
    const body = (t.fields || t.inputFields || []).map((f) => {
      const args = f.args && f.args.length ? `(${f.args.map((a) => `${a.name}: ${typeName(a.type)}`).join(', ')})` : '';
      return `  ${f.name}${args}: ${typeName(f.type)}`;
    }).concat((t.enumValues || []).map((v) => `  ${v.name}`));
    return body.length ? `${t.kind.toLowerCase()} ${t.name} {\n${body.join('\n')}\n}` : `${t.kind.toLowerCase()} ${t.name}`;
  }).join('\n\n');
}

async function send(query, variables) {
  const key = $('key').value.trim();
  sessionStorage.setItem('x-api-key', key);
  const headers = { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' };
  if (key !== '') headers['x-api-key'] = key;
  const res = await fetch('/graphql', { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  const remaining = res.headers.get('x-ratelimit-remaining');
  $('status').textContent = `HTTP ${res.status}${remaining === null ? '' : `, ${remaining} requests left this minute`}`;
  return res.json();
}

async function run() {
  let variables;
  try {
    variables = JSON.parse($('variables').value || '{}');
  } catch {
    $('result').textContent = 'Variables are not valid JSON.';
    return;
  }
  try {
    $('result').textContent = JSON.stringify(await send($('query').value, variables), null, 2);
  } catch (err) {
    $('result').textContent = String(err);
  }
}

async function schema() {
  try {
    const answer = await send(SDL_QUERY, {});
    $('result').textContent = answer.data ? outline(answer.data.__schema) : JSON.stringify(answer, null, 2);
  } catch (err) {
    $('result').textContent = String(err);
  }
}

document.addEventListener('DOMContentLoaded', () => {
  $('key').value = sessionStorage.getItem('x-api-key') || '';
  $('run').addEventListener('click', run);
  $('schema').addEventListener('click', schema);
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) run();
  });
});
