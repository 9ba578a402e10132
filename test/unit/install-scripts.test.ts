// `npm install` on npm 11.16+ lists every dependency whose install script package.json's
// `allowScripts` does not approve (npm 12 will skip them): a newcomer read those lines as a
// failed install (issue 38). Every package of the lockfile that has an install script is
// approved by name, and every approval names such a package (none left over).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const json = (file: string): any => JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'));

describe('install scripts', () => {
  it('are each approved in package.json allowScripts, and every approval is of one', () => {
    const lock = json('package-lock.json') as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = Object.entries(lock.packages)
      .filter(([, p]) => p.hasInstallScript === true)
      .map(([where]) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length))
      .sort();
    // Today chdb (an empty script) and esbuild (checks its platform's binary).
    expect(withScripts.length).toBeGreaterThan(0);
    const allow = (json('package.json') as { allowScripts?: Record<string, boolean> }).allowScripts ?? {};
    expect(Object.keys(allow).sort()).toEqual(withScripts);
    expect(Object.values(allow).every((v) => v === true)).toBe(true);
  });
});
