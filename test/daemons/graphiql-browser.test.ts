// GraphiQL in a real browser (Debian's chromium through playwright-core): the page loads
// from this origin only under its CSP with no console error or CSP violation, asks for a
// key, and runs a query with it.
import { mkdirSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKey } from '../support/api-key.ts';
import { ingestDemo } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;
let url: string;
let key: string;
let browser: Browser;

beforeAll(async () => {
  t = await startApp();
  await ingestDemo(t.services, 500);
  key = (await createKey(t.app, 'enterprise')).key;
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.cleanup();
});

it('loads GraphiQL without a key or console errors, asks for a key, and runs a query with it', async () => {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${r.status()} ${r.request().method()} ${r.url()} ${JSON.stringify(r.request().headers())}`);
  });
  const outside: string[] = [];
  page.on('request', (r) => {
    if (!r.url().startsWith(url) && !r.url().startsWith('data:')) outside.push(r.url());
  });
  await page.goto(`${url}/graphql`);
  // Without a key the page asks for one and sends nothing.
  await page.waitForFunction(() => document.querySelector('#graphiql')?.textContent?.includes('Enter your API key'));
  await page.fill('#key', key);
  await page.press('#key', 'Enter');
  await page.waitForSelector('.graphiql-container', { timeout: 30_000 });
  // GraphiQL's editor: replace the default query and run it.
  await page.click('.graphiql-query-editor .CodeMirror');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('{ protocols }');
  await page.click('.graphiql-execute-button');
  try {
    await page.waitForFunction(() => document.querySelector('.graphiql-response')?.textContent?.includes('jupiter_v6'), undefined, { timeout: 30_000 });
  } finally {
    mkdirSync('test/artifacts', { recursive: true });
    await page.screenshot({ path: 'test/artifacts/graphiql.png' });
  }
  expect(await page.textContent('#status')).toMatch(/HTTP 200, \d+ requests left this minute/);
  expect(problems).toEqual([]);
  expect(outside).toEqual([]);
}, 90_000);
