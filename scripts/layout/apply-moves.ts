// Lays api/ out as its layers (scripts/layout/moves.json, docs/architecture.md), once, on the
// merged tree: the moves are left to the end because several branches edit files inside api/
// at the same time, and a move committed beside them would turn each of their edits into a
// conflict. Run from the repository, on a clean tree:
//
//   npx tsx scripts/layout/apply-moves.ts [--dry-run] [--allow-dirty]
//
// 1. Plans every file of api/ (tracked, and untracked but not ignored) by the longest entry of
//    moves.json that holds it, so files added to a moved folder since the list was written go
//    with their folder. Refuses when a file or folder directly under api/ is named by
//    neither a move nor `placed` (it has no layer yet), or when a destination already exists
//    (the moves were applied: the tool runs once).
// 2. Moves them (`git mv`; plain renames for untracked files).
// 3. Rewrites what points at a moved file, in every text file but the `untouched` ones:
//    relative specifiers in code ('../x.ts' anywhere in a string: imports, exports, import(),
//    new URL(…, import.meta.url)), repository paths in text ('api/rpc/json-rpc.ts', also as
//    path.join('api', 'rpc') and p('api', …) segments, and api-relative ones such as
//    'analytics/dry-run.ts'), relative links of Markdown files, and the `renames` (whole words:
//    one name for each concept); then the exact `edits` (regular expressions over paths, which
//    no rule above reads) and the `blocks` (the architecture test's layer table), and formats
//    the TypeScript it changed with Biome.
// 4. Checks that every relative specifier that resolved before resolves after, and lists what
//    still names an old folder, for a person to read.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const LIST = 'scripts/layout/moves.json';

interface Move {
  from: string;
  to: string;
}
interface Edit {
  file: string;
  from: string;
  to: string;
}
interface Block {
  file: string;
  from: string;
  until: string;
  with: string;
}
interface Rename {
  from: string;
  to: string;
  files?: string[];
}
interface MoveList {
  moves: Move[];
  renames: { keep: string[]; words: Rename[] };
  placed: { paths: string[] };
  untouched: { paths: string[] };
  edits: Edit[];
  blocks: Block[];
}

const CODE = /\.(ts|tsx|js|mjs|cjs)$/;
const TEXT = /\.(ts|tsx|js|mjs|cjs|json|md|sh|yml|yaml|toml|sql|graphql|html|css|txt)$|(^|\/)(Dockerfile|run|\.gitignore|\.dockerignore)$/;
const SKIPPED = new Set(['package-lock.json']);

const git = (...args: string[]): string => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
const read = (rel: string): string => readFileSync(path.join(ROOT, rel), 'utf8');
const under = (p: string, prefix: string): boolean => p === prefix || p.startsWith(`${prefix}/`);

/** Every file of the tree git would see: tracked, and untracked but not ignored. */
function treeFiles(): string[] {
  return git('ls-files', '-z', '--cached', '--others', '--exclude-standard')
    .split('\0')
    .filter((f) => f !== '' && existsSync(path.join(ROOT, f)));
}

/** Where a path (file or folder, of the old tree) goes: the longest move that holds it. */
function mapperOf(moves: readonly Move[]): (p: string) => string {
  const longestFirst = [...moves].sort((a, b) => b.from.length - a.from.length);
  return (p) => {
    const m = longestFirst.find((e) => under(p, e.from));
    return m === undefined ? p : m.to + p.slice(m.from.length);
  };
}

/** Paths directly under api/ that neither a move nor `placed` names: they have no layer yet. */
function unplacedOf(files: readonly string[], list: MoveList): string[] {
  const named = [...list.moves.map((m) => m.from), ...list.placed.paths];
  const tops = new Set(files.filter((f) => f.startsWith('api/')).map((f) => f.split('/').slice(0, 2).join('/')));
  return [...tops].filter((t) => !named.some((n) => under(t, n) || under(n, t))).sort();
}

interface Plan {
  list: MoveList;
  oldFiles: Set<string>;
  oldDirs: Set<string>;
  /** old path -> new path, for every file that moves. */
  moved: Map<string, string>;
  mapPath: (p: string) => string;
}

function planOf(list: MoveList): Plan {
  const files = treeFiles();
  const mapPath = mapperOf(list.moves);
  const oldFiles = new Set(files);
  const oldDirs = new Set(
    files.flatMap((f) =>
      f
        .split('/')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
    ),
  );
  const moved = new Map(files.filter((f) => mapPath(f) !== f).map((f) => [f, mapPath(f)] as const));
  return { list, oldFiles, oldDirs, moved, mapPath };
}

/** Why the tool must not run on this tree, if it must not. */
function refusals(plan: Plan, allowDirty: boolean): string[] {
  const out: string[] = [];
  const applied = plan.list.moves.filter((m) => existsSync(path.join(ROOT, m.to))).map((m) => m.to);
  if (applied.length > 0) out.push(`already applied (these destinations exist): ${applied.join(', ')}`);
  const unplaced = unplacedOf([...plan.oldFiles], plan.list);
  if (unplaced.length > 0) out.push(`no layer for: ${unplaced.join(', ')} (add each to "moves" or "placed" in ${LIST})`);
  if (!allowDirty && git('status', '--porcelain').trim() !== '') out.push('the tree has uncommitted changes (commit them, or pass --allow-dirty)');
  return out;
}

/** Moves the files: `git mv` per destination folder (one call each when the name changes too), renames for untracked ones. */
function move(plan: Plan): void {
  const tracked = new Set(git('ls-files', '-z').split('\0'));
  const byDir = new Map<string, string[]>();
  for (const [from, to] of plan.moved) {
    mkdirSync(path.join(ROOT, path.dirname(to)), { recursive: true });
    if (!tracked.has(from)) renameSync(path.join(ROOT, from), path.join(ROOT, to));
    else if (path.basename(from) !== path.basename(to)) git('mv', from, to);
    else byDir.set(path.dirname(to), [...(byDir.get(path.dirname(to)) ?? []), from]);
  }
  for (const [dir, froms] of byDir) git('mv', ...froms, `${dir}/`);
}

/** A path of the old tree, relative to the new place of the file that names it. */
function relativeFrom(newFile: string, target: string, trailingSlash: boolean): string {
  let rel = path.posix.relative(path.posix.dirname(newFile), target);
  if (!rel.startsWith('.')) rel = `./${rel}`;
  return trailingSlash && !rel.endsWith('/') ? `${rel}/` : rel;
}

interface Rewrite {
  text: string;
  count: number;
  dangling: string[];
}

/** Relative specifiers in code: any quoted './…' or '../…' that named a file or folder of the old tree. */
function rewriteRelative(plan: Plan, text: string, oldFile: string, newFile: string): Rewrite {
  let count = 0;
  const dangling: string[] = [];
  const out = text.replace(/(['"`])(\.\.?\/[^'"`\s$]*)\1/g, (whole, q: string, spec: string) => {
    if (!/[^./]/.test(spec)) return whole;
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(oldFile), spec));
    if (!plan.oldFiles.has(target) && !plan.oldDirs.has(target)) return whole;
    const next = relativeFrom(newFile, plan.mapPath(target), spec.endsWith('/'));
    if (!existsSync(path.join(ROOT, path.posix.join(path.posix.dirname(newFile), next)))) dangling.push(`${newFile}: ${spec} -> ${next}`);
    if (next === spec) return whole;
    count++;
    return `${q}${next}${q}`;
  });
  return { text: out, count, dangling };
}

/** Repository paths in text: 'api/…' by the moves; api-relative ones ('analytics/dry-run.ts') when they name a moved file. */
function rewritePathTokens(plan: Plan, text: string): Rewrite {
  let count = 0;
  const out = text.replace(/(?<![\w./@$-])[A-Za-z_][\w.-]*\/[\w./-]*\w/g, (token) => {
    let next = token;
    if (token.startsWith('api/')) next = plan.mapPath(token);
    else if (plan.moved.has(`api/${token}`)) next = plan.mapPath(`api/${token}`).slice('api/'.length);
    if (next !== token) count++;
    return next;
  });
  return { text: out, count, dangling: [] };
}

/** Paths built from segments: path.join('api', 'rpc'), p('api', 'app.ts'). */
function rewriteSegments(plan: Plan, text: string): Rewrite {
  let count = 0;
  const out = text.replace(/([(,]\s*)'api'((?:\s*,\s*'[\w.-]+')+)/g, (whole, lead: string, rest: string) => {
    const segments = [...rest.matchAll(/'([\w.-]+)'/g)].map((m) => m[1]!);
    const next = plan.mapPath(['api', ...segments].join('/'));
    if (next === ['api', ...segments].join('/')) return whole;
    count++;
    return `${lead}${next
      .split('/')
      .map((s) => `'${s}'`)
      .join(', ')}`;
  });
  return { text: out, count, dangling: [] };
}

/** Relative links of Markdown files: [text](../api/mcp/llms-txt.ts#anchor). */
function rewriteLinks(plan: Plan, text: string, oldFile: string, newFile: string): Rewrite {
  let count = 0;
  const out = text.replace(/\]\(([^)\s#:]+)(#[^)\s]*)?\)/g, (whole, link: string, anchor: string | undefined) => {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(oldFile), link));
    if (!plan.oldFiles.has(target) && !plan.oldDirs.has(target)) return whole;
    const next = path.posix.relative(path.posix.dirname(newFile), plan.mapPath(target));
    if (next === link) return whole;
    count++;
    return `](${next}${anchor ?? ''})`;
  });
  return { text: out, count, dangling: [] };
}

/** The renames of moves.json that apply to a file (named by its path before the moves), as whole words. */
function renameWords(list: MoveList, oldFile: string, text: string): Rewrite {
  let count = 0;
  let out = text;
  if (list.renames.keep.includes(oldFile)) return { text, count, dangling: [] };
  for (const w of list.renames.words) {
    if (w.files !== undefined && !w.files.includes(oldFile)) continue;
    const word = new RegExp(`(?<![\\w$-])${w.from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w$-])`, 'g');
    out = out.replace(word, () => {
      count++;
      return w.to;
    });
  }
  return { text: out, count, dangling: [] };
}

interface Report {
  rewritten: Map<string, number>;
  dangling: string[];
  handEdits: string[];
}

/** Every rule above, over one file (at its new place). */
function rewriteFile(plan: Plan, oldFile: string, newFile: string, report: Report): boolean {
  const before = read(newFile);
  let text = before;
  let count = 0;
  const steps: ((t: string) => Rewrite)[] = [
    ...(CODE.test(newFile) ? [(t: string) => rewriteRelative(plan, t, oldFile, newFile), (t: string) => rewriteSegments(plan, t)] : []),
    ...(newFile.endsWith('.md') ? [(t: string) => rewriteLinks(plan, t, oldFile, newFile)] : []),
    (t: string) => rewritePathTokens(plan, t),
    (t: string) => renameWords(plan.list, oldFile, t),
  ];
  for (const step of steps) {
    const r = step(text);
    text = r.text;
    count += r.count;
    report.dangling.push(...r.dangling);
  }
  if (text === before) return false;
  writeFileSync(path.join(ROOT, newFile), text);
  report.rewritten.set(newFile, count);
  return true;
}

/** The exact edits and the replaced blocks of moves.json; what cannot be found is left for a person. */
function applyEdits(list: MoveList, report: Report): string[] {
  const changed: string[] = [];
  for (const e of list.edits) {
    const text = existsSync(path.join(ROOT, e.file)) ? read(e.file) : '';
    if (!text.includes(e.from)) {
      report.handEdits.push(`${e.file}: not found, edit by hand: ${JSON.stringify(e.from)} -> ${JSON.stringify(e.to)}`);
      continue;
    }
    writeFileSync(path.join(ROOT, e.file), text.split(e.from).join(e.to));
    changed.push(e.file);
  }
  for (const b of list.blocks) {
    const text = existsSync(path.join(ROOT, b.file)) ? read(b.file) : '';
    const start = text.indexOf(b.from);
    const end = text.indexOf(b.until, start);
    if (start < 0 || end < 0) {
      report.handEdits.push(`${b.file}: block from ${JSON.stringify(b.from)} until ${JSON.stringify(b.until)} not found: put ${b.with} in by hand`);
      continue;
    }
    writeFileSync(path.join(ROOT, b.file), text.slice(0, start) + read(b.with) + text.slice(end));
    changed.push(b.file);
  }
  return changed;
}

/** Lines that still name a moved folder of api/ in a form no rule reads (a regular expression, a glob), for a person. */
function leftovers(plan: Plan, files: readonly string[]): string[] {
  const gone = [...new Set(plan.list.moves.map((m) => m.from.split('/')[1]!))].filter((n) => !existsSync(path.join(ROOT, 'api', n)));
  const re = new RegExp(`(?<![\\w./-])api(?:/|\\\\/|',\\s*')(?:${gone.map((n) => n.replace(/[.-]/g, '\\$&')).join('|')})(?![\\w-])`);
  const out: string[] = [];
  for (const f of files) {
    read(f)
      .split('\n')
      .forEach((line, i) => {
        if (re.test(line)) out.push(`${f}:${i + 1}: ${line.trim().slice(0, 160)}`);
      });
  }
  return out;
}

function main(): void {
  const started = Date.now();
  const dryRun = process.argv.includes('--dry-run');
  const list = JSON.parse(read(LIST)) as MoveList;
  const plan = planOf(list);
  const refused = refusals(plan, dryRun || process.argv.includes('--allow-dirty'));
  if (refused.length > 0) {
    for (const r of refused) console.error(`refused: ${r}`);
    process.exit(1);
  }
  for (const m of list.moves)
    if (![...plan.oldFiles].some((f) => under(f, m.from))) console.log(`note: nothing at ${m.from} (moved or removed since the list was written)`);
  console.log(`${plan.moved.size} files move:`);
  for (const [from, to] of plan.moved) console.log(`  ${from} -> ${to}`);
  if (dryRun) return;
  move(plan);

  const report: Report = { rewritten: new Map(), dangling: [], handEdits: [] };
  const untouched = (f: string): boolean => list.untouched.paths.some((u) => under(f, u));
  const texts = [...plan.oldFiles]
    .map((old) => ({ old, now: plan.moved.get(old) ?? old }))
    .filter(({ now }) => TEXT.test(now) && !SKIPPED.has(now) && !untouched(now));
  for (const { old, now } of texts) rewriteFile(plan, old, now, report);
  const edited = applyEdits(list, report);

  const changedTs = [...new Set([...report.rewritten.keys(), ...edited, ...plan.moved.values()])].filter((f) => f.endsWith('.ts'));
  if (changedTs.length > 0)
    execFileSync('npx', ['biome', 'format', '--write', '--files-ignore-unknown=true', '--no-errors-on-unmatched', ...changedTs], {
      cwd: ROOT,
      stdio: 'inherit',
    });

  console.log(`\n${report.rewritten.size} files rewritten (${[...report.rewritten.values()].reduce((a, b) => a + b, 0)} paths):`);
  for (const [f, n] of [...report.rewritten].sort()) console.log(`  ${f}: ${n}`);
  console.log(`\nexact edits and blocks applied in: ${edited.join(', ') || 'none'}`);
  for (const h of report.handEdits) console.log(`HAND EDIT: ${h}`);
  for (const d of report.dangling) console.log(`DANGLING: ${d}`);
  const left = leftovers(
    plan,
    texts.map((t) => t.now),
  );
  console.log(`\nlines still naming an old folder of api/ (read each; prose about the old layout may be right): ${left.length}`);
  for (const l of left) console.log(`  ${l}`);
  console.log(`\ndone in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (report.dangling.length > 0 || report.handEdits.length > 0) {
    console.log(`\nmoved and rewritten, but the ${report.handEdits.length} HAND EDIT and ${report.dangling.length} DANGLING lines above need a person.`);
    process.exitCode = 1;
  }
  console.log('next: npx tsc --noEmit && npx biome check && npx vitest run --project unit; then `git add -A` and commit the moves on their own.');
}

main();
