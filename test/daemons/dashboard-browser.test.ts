// The dashboard end to end in headless Chromium against a real listening server: sign up,
// sign in, create a key and read it once (a reload no longer shows it), call the API with
// it, see its usage move, see the live page update after records are ingested (over the
// GraphQL subscription at /graphql/stream), run SQL in the playground, see its export jobs
// with a working download link, revoke the key and see the API answer 403. On every page: no console errors (CSP
// violations included), no serious or critical axe-core violations, a screenshot under
// test/artifacts/. A key named <img src=x onerror=alert(1)> shows as text.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAN_QUERY_BUDGET } from '../../core/plans.ts';
import { consoleErrors, launchChromium, screenshot, seriousViolations } from '../support/browser.ts';
import { ingest } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

const EMAIL = 'dana@example.com';
const PASSWORD = 'a long enough passphrase';
const XSS_NAME = '<img src=x onerror=alert(1)>';

// Requests the test makes fail on purpose: a weak-password sign-up (400), a wrong password
// (401), the live stream made to answer 404 (the polling fallback), and the export list this
// branch does not have yet (404).
const EXPECTED_FAILURES = new Set(['/dashboard/api/signup', '/dashboard/api/signin', '/graphql/stream', '/v1/query/exports']);

let t: Awaited<ReturnType<typeof startApp>>;
let base: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
const dialogs: string[] = [];
let secret = '';

beforeAll(async () => {
  t = await startApp({ KEY_CACHE_TTL_MS: '300', USAGE_FLUSH_MS: '300000' });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  page = await context.newPage();
  errors = consoleErrors(page, (p) => EXPECTED_FAILURES.has(p));
  // alert() from an injected name would open a dialog: record it (and dismiss it).
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
});

afterAll(async () => {
  await browser?.close();
  await t?.cleanup();
});

/** Scan, screenshot and check the console: the end of every page's visit. */
async function checkPage(name: string): Promise<void> {
  await screenshot(page, name);
  const violations = await seriousViolations(page);
  expect(violations, `${name}: ${JSON.stringify(violations, null, 1)}`).toEqual([]);
  expect(errors, name).toEqual([]);
}

async function visit(hash: string, heading: string): Promise<void> {
  await page.goto(`${base}/dashboard#/${hash}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

const rpc = (key: string) =>
  fetch(`${base}/v1/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getProtocols', params: [] }),
  });

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const base58 = (n: number): string => Array.from(randomBytes(n), (b) => B58[b % 58]).join('');
const recentRecord = (i: number) => ({
  signature: base58(88),
  slot: 300_000_000 + i,
  block_time: Math.floor(Date.now() / 1000) - 30,
  program_id: 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4',
  protocol_name: 'jupiter_v6',
  instruction_type: 'route',
  fee: 5000 + i,
  compute_units: 100_000 + i,
  accounts_count: 0,
  success: i % 10 !== 0,
});

describe('dashboard in Chromium', () => {
  it('signs up (a weak password is refused with the rule), signs out and signs in (a wrong password is refused)', async () => {
    await page.goto(`${base}/dashboard`);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await checkPage('sign-in');

    await page.getByRole('link', { name: 'Create one' }).click();
    await page.getByRole('heading', { level: 1, name: 'Create an account' }).waitFor();
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => page.locator('#auth-error').textContent()).toContain('12 to 256 characters');
    await checkPage('sign-up-refused');

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    expect(await page.locator('nav .email').textContent()).toBe(EMAIL);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(await page.getByText('You are signed out.').count()).toBe(1);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill('not the passphrase');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.locator('#auth-error').textContent()).toBe('Email or password is wrong');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
  });

  it('creates keys: the secret is shown once with a warning and a copy button; a hostile name renders as text', async () => {
    await page.getByLabel('Name').fill(XSS_NAME);
    await page.getByLabel('Environment').fill('staging');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.locator('#new-secret').waitFor();
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await expect.poll(() => page.locator('#key-list tbody tr').count()).toBe(1);
    // The name is in the list as its characters, and nothing it spells was made an element.
    expect(await page.locator('#key-list .keyname').first().textContent()).toBe(XSS_NAME);
    expect(await page.locator('img').count()).toBe(0);

    await page.getByLabel('Name').fill('prod bot');
    await page.getByLabel('Environment').fill('production');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.locator('#new-secret');
    await shown.waitFor();
    secret = await shown.inputValue();
    expect(secret).toMatch(/^txa_[A-Za-z0-9_-]{43}$/);
    expect(await page.locator('#new-key-warning').textContent()).toContain('only time it is shown');
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await expect.poll(() => page.locator('#new-key [role=status]').textContent()).toBe('Copied.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await expect.poll(() => page.locator('#key-list tbody tr').count()).toBe(2);
    expect(await page.locator('#key-list tbody').textContent()).toContain('production');
    await checkPage('keys-new-secret');

    // A phone's width: one column, nothing cut off.
    await page.setViewportSize({ width: 375, height: 800 });
    await screenshot(page, 'keys-phone');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await expect.poll(() => page.locator('#key-list tbody tr').count()).toBe(2);
    expect(await page.locator('#new-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    await checkPage('keys');
  });

  it('the key works against the API, and the usage page shows its requests', async () => {
    for (let i = 0; i < 6; i++) expect((await rpc(secret)).status).toBe(200);
    await visit('usage', 'Usage');
    await page.getByLabel('Key', { exact: true }).selectOption({ label: 'prod bot (production, active)' });
    await expect.poll(async () => Number((await page.locator('#usage-requests').textContent())?.replace(/,/g, '')), { timeout: 15_000 }).toBe(6);
    expect(await page.locator('#usage-detail').textContent()).toContain('JSON-RPC6');
    expect(await page.locator('#usage-chart canvas').count()).toBeGreaterThan(0);
    expect(await page.locator('#usage-chart').textContent()).toContain('Plan limit (free)');
    // The cost of the answers: a total, a chart per key over time, per key and per method.
    expect(await page.locator('#usage-cost').textContent()).toMatch(/^\d[\d,]*$/);
    // ... with its scale: what a plan unit is, the average per request and what the plan allows per request.
    expect(await page.locator('#usage-cost-scale').textContent()).toMatch(
      new RegExp(
        `^1 unit ≈ one row the engine reads\\. About \\d[\\d,]* per request here; your plan \\(free\\) allows ${PLAN_QUERY_BUDGET.free.toLocaleString('en-US')} per request\\.$`,
      ),
    );
    expect(await page.locator('abbr[title^="One plan unit is about one row the engine reads"]').textContent()).toBe('Cost (plan units)');
    expect(await page.locator('#usage-cost-chart canvas').count()).toBeGreaterThan(0);
    expect(await page.locator('#usage-method-cost-chart canvas').count()).toBeGreaterThan(0);
    expect(await page.locator('#usage-cost-detail').textContent()).toContain('Cost by key');
    // 6 of the free plan's 100 spent in this one-minute window, or a fresh window when the
    // minute turned since the requests (a loaded machine can take that long).
    expect(['94', '100']).toContain(await page.locator('#usage-windows .remaining').first().textContent());
    await checkPage('usage');
  });

  it('the live page (over the GraphQL subscription) updates after records are ingested', async () => {
    await visit('live', 'Live');
    await page.getByLabel('Paste an API key').fill(secret);
    await page.getByRole('button', { name: 'Use this key' }).click();
    await expect.poll(() => page.locator('#live-mode').textContent()).toContain('GraphQL subscription');
    await expect.poll(() => page.locator('#live-top').textContent()).toContain('No transactions in the last 24 hours');
    await ingest(
      t.services,
      Array.from({ length: 40 }, (_, i) => recentRecord(i)),
    );
    await expect.poll(() => page.locator('#live-top').textContent(), { timeout: 10_000 }).toContain('jupiter_v6');
    expect(await page.locator('#live-top .count').first().textContent()).toBe('40');
    await expect.poll(() => page.locator('#live-freshness').textContent(), { timeout: 10_000 }).toContain('s ago');
    await expect.poll(() => page.locator('#live-chart canvas').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    await expect.poll(() => page.locator('#live-perf').textContent(), { timeout: 15_000 }).toMatch(/90 %/);
    await checkPage('live');

    // A server without the stream (404): the page polls JSON-RPC every 2 s instead.
    await page.route('**/graphql/stream', (route) =>
      route.fulfill({ status: 404, contentType: 'application/json', body: '{"error":"Not Found","message":"no route"}' }),
    );
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { level: 1, name: 'Usage' }).waitFor();
    await page.getByRole('link', { name: 'Live' }).click();
    await expect.poll(() => page.locator('#live-mode').textContent()).toContain('Polling');
    await ingest(
      t.services,
      Array.from({ length: 10 }, (_, i) => recentRecord(100 + i)),
    );
    await expect.poll(() => page.locator('#live-top .count').first().textContent(), { timeout: 10_000 }).toBe('50');
    await screenshot(page, 'live-polling');
    await page.unroute('**/graphql/stream');
    expect(errors).toEqual([]);
  });

  it('runs SQL in the playground with the key held in page memory, with a CSV download and examples', async () => {
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.getByRole('heading', { level: 1, name: 'Playground' }).waitFor();
    expect(await page.getByLabel('Key held in this page').inputValue()).toBe(secret);
    await page.getByLabel('SQL query').fill('SELECT protocol_name, count() AS n FROM transactions GROUP BY protocol_name ORDER BY n DESC');
    await page.getByRole('button', { name: 'Run query' }).click();
    await expect.poll(() => page.locator('#sql-status').textContent()).toMatch(/^1 row in/);
    expect(await page.locator('#sql-result tbody').textContent()).toBe('jupiter_v650');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    expect(readFileSync((await download.path())!, 'utf8')).toBe('protocol_name,n\r\njupiter_v6,50\r\n');
    expect(await page.locator('#examples').textContent()).toContain('$TXA_API_KEY');
    await page.getByLabel(/Put the key itself/).check();
    expect(await page.locator('#examples').textContent()).toContain(secret);
    expect(await page.getByRole('link', { name: 'Open GraphiQL' }).getAttribute('href')).toBe('/graphql');
    await page.getByLabel(/Put the key itself/).uncheck();
    await checkPage('playground');
  });

  it("the exports page lists the key's export jobs with progress and a working signed download link", async () => {
    const created = await fetch(`${base}/v1/query/exports`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': secret },
      body: JSON.stringify({ query: 'SELECT protocol_name, count() AS n FROM transactions GROUP BY protocol_name', format: 'CSV' }),
    });
    expect(created.status).toBe(202);
    const { id } = (await created.json()) as { id: string };
    await page.getByRole('link', { name: 'Exports' }).click();
    await page.getByRole('heading', { level: 1, name: 'Exports' }).waitFor();
    await expect.poll(() => page.locator('#exports').textContent(), { timeout: 30_000 }).toContain('COMPLETED');
    expect(await page.locator('#exports').textContent()).toContain(id.slice(0, 12));
    const href = await page.locator('#exports a').first().getAttribute('href');
    expect(href).toMatch(/^\/v1\/exports\/links\//);
    expect((await fetch(`${base}${href}`)).status).toBe(200);
    await checkPage('exports');
  });

  it('revokes the key after confirmation: the API answers 403 within a second', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await page.getByRole('button', { name: 'Revoke prod bot' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await screenshot(page, 'keys-revoke-dialog');
    expect(await seriousViolations(page)).toEqual([]);
    // Timed from the revocation's answer: the guarantee is about the server, not the click.
    const [answer] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/revoke')), dialog.getByRole('button', { name: 'Revoke key' }).click()]);
    expect(answer.status()).toBe(200);
    const revokedAt = Date.now();
    let status = 0;
    while (Date.now() - revokedAt < 1500) {
      status = (await rpc(secret)).status;
      if (status === 403) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(403);
    expect(Date.now() - revokedAt).toBeLessThan(1000);
    await expect.poll(() => page.locator('#key-list tbody').textContent()).toContain('revoked');
    await checkPage('keys-revoked');
    expect(dialogs).toEqual([]);
  });
});
