// The x402 plan in the dashboard's usage view, in headless Chromium against a real listening
// server (issue 39): after keyless calls paid on a LiteSVM chain, the operator types the
// operator token into the usage page and reads the paid calls, the revenue and each payer;
// a wrong token is refused with the service's words. No console errors (CSP included), no
// serious or critical axe-core violations, a screenshot under test/artifacts/.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleErrors, launchChromium, screenshot, seriousViolations } from '../support/browser.ts';
import { ADMIN_TOKEN } from '../support/admin-token.ts';
import { startX402App, type Call, type X402App } from '../support/x402-app.ts';

let t: X402App;
let base: string;
let browser: Browser;
let page: Page;
let errors: string[];

const RPC: Call = { method: 'POST', url: '/v1/rpc', payload: { jsonrpc: '2.0', id: 1, method: 'getProtocols', params: [] } };

beforeAll(async () => {
  t = await startX402App({ records: 200 });
  base = await t.ctx.app.listen({ port: 0, host: '127.0.0.1' });
  // Two paid calls of 1000 atomic units ($0.001) each.
  for (let i = 0; i < 2; i++) expect((await t.send(RPC, t.header(await t.signed(await t.send(RPC))))).statusCode).toBe(200);
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  // The wrong token's 401 is made on purpose.
  errors = consoleErrors(page, (p) => p === '/admin/x402/payers');
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.cleanup();
});

describe('x402 revenue in the usage view', () => {
  it('the operator reads paid calls, revenue and payers with the operator token', async () => {
    await page.goto(`${base}/dashboard`);
    await page.getByRole('link', { name: 'Create one' }).click();
    await page.getByLabel('Email').fill('operator@example.com');
    await page.getByLabel('Password').fill('a long enough passphrase');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await page.goto(`${base}/dashboard#/usage`);
    await page.getByRole('heading', { level: 1, name: 'Usage' }).waitFor();

    await page.getByLabel('Operator token').fill('not the token');
    await page.getByRole('button', { name: 'Show x402 revenue' }).click();
    await expect.poll(() => page.locator('#x402-error').textContent()).toBe('Invalid admin token');

    await page.getByLabel('Operator token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Show x402 revenue' }).click();
    await expect.poll(() => page.locator('#x402-calls').textContent(), { timeout: 15_000 }).toBe('2');
    expect(await page.locator('#x402-revenue').textContent()).toBe('0.002000');
    expect(await page.locator('#x402-error').textContent()).toBe('');
    const payer = page.locator('#x402-payers .payer');
    expect(await payer.getAttribute('title')).toBe(t.chain.payer.address);
    expect(await page.locator('#x402-payers tbody').textContent()).toContain('0.002000');
    // The token stays in the page: nothing of it in the document.
    expect(await page.content()).not.toContain(ADMIN_TOKEN);

    await screenshot(page, 'usage-x402');
    expect(await seriousViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
