// The dashboard's files, read without a server: page JavaScript within its budget (100 KB
// gzip, uPlot included), nothing from another origin, no inline script or style for the CSP
// to allow, no HTML parsing of data in page code, and every module import a file that is served.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY, loadAssets, PUBLIC_DIR } from '../../api/doors/dashboard/dashboard.ts';

const assets = loadAssets();
const js = [...assets].filter(([name]) => name.endsWith('.js'));
const PAGE_JS_BUDGET_GZIP = 100 * 1024;

describe('dashboard assets', () => {
  it('page JavaScript is under 100 KB gzip, uPlot included', () => {
    const total = js.reduce((sum, [, a]) => sum + gzipSync(a.body, { level: 9 }).length, 0);
    expect(js.map(([n]) => n)).toContain('vendor/uPlot.iife.min.js');
    expect(total).toBeLessThan(PAGE_JS_BUDGET_GZIP);
  });

  it('loads nothing from another origin and has no inline script or style', () => {
    const html = readFileSync(path.join(PUBLIC_DIR, 'index.html'), 'utf8');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/i);
    for (const [name, a] of assets) {
      if (name.startsWith('vendor/')) continue;
      // An XML namespace name is an identifier, never fetched.
      const text = a.body.toString('utf8').replaceAll('xmlns="http://www.w3.org/2000/svg"', '');
      expect(text, name).not.toMatch(/https?:\/\/(?!localhost)[a-z0-9.-]+\.[a-z]{2,}\//i);
    }
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
  });

  it('page code never parses data as HTML', () => {
    for (const [name, a] of js) {
      if (name.startsWith('vendor/')) continue;
      expect(a.body.toString('utf8'), name).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function\(/);
    }
  });

  it('every module import is a file the dashboard serves', () => {
    for (const [name, a] of js) {
      if (name.startsWith('vendor/')) continue;
      for (const m of a.body.toString('utf8').matchAll(/^import [^;]*?from '(\.[^']+)'/gm)) {
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(name), m[1]!));
        expect(assets.has(target), `${name} imports ${m[1]}`).toBe(true);
      }
    }
  });
});
