// Commit messages as the guide asks: a subject of at most 72 characters that `git log
// --oneline` shows whole, and a body saying why. Checked from the commit where the habit
// began (the tree formatted once, c4b6d2d); earlier history is as it was. A clone without
// that commit (shallow) has nothing to check here.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const HABIT_START = 'c4b6d2d';
const SUBJECT_MAX_CHARS = 72;
const git = (...args: string[]): string => execFileSync('git', args, { cwd: new URL('../..', import.meta.url), encoding: 'utf8' });

const known = (rev: string): boolean => {
  try {
    git('cat-file', '-e', `${rev}^{commit}`);
    return true;
  } catch {
    return false;
  }
};

describe('commit messages', () => {
  it.runIf(known(HABIT_START))(`have a subject of at most ${SUBJECT_MAX_CHARS} characters and a body, since ${HABIT_START}`, () => {
    const commits = git('log', '--no-merges', '--format=%h%x1f%s%x1f%b%x1e', `${HABIT_START}..HEAD`)
      .split('\x1e')
      .map((c) => c.trim())
      .filter((c) => c !== '')
      .map((c) => c.split('\x1f') as [string, string, string]);
    const offences = commits.filter(([, subject, body]) => subject.length > SUBJECT_MAX_CHARS || body.trim() === '').map(([h, s]) => `${h} ${s}`);
    expect(offences).toEqual([]);
  });
});
