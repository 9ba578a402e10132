// The kind of each join (INNER, LEFT, PASTE, a comma …; ANY, SEMI, ASOF …), which the
// parse-tree dump does not print, read from the engine's canonical text for join-cost.ts.
import { isKeyword, type Token } from './sql-lexer.ts';

export interface JoinKind {
  kind: 'INNER' | 'LEFT' | 'RIGHT' | 'FULL' | 'CROSS' | 'PASTE' | 'COMMA';
  strictness: 'ALL' | 'ANY' | 'SEMI' | 'ANTI' | 'ASOF';
}

const MODIFIERS = new Set(['GLOBAL', 'LOCAL', 'ANY', 'ALL', 'ASOF', 'SEMI', 'ANTI', 'LEFT', 'RIGHT', 'FULL', 'INNER', 'OUTER', 'CROSS', 'PASTE']);
const CLAUSES = new Set([
  'WITH',
  'SELECT',
  'FROM',
  'PREWHERE',
  'WHERE',
  'GROUP',
  'HAVING',
  'WINDOW',
  'QUALIFY',
  'ORDER',
  'LIMIT',
  'OFFSET',
  'SETTINGS',
  'UNION',
  'EXCEPT',
  'INTERSECT',
  'INTERPOLATE',
]);

/**
 * The kind of each join, in the order of the text. The parse-tree dump does not print a
 * join's kind (PASTE, ANY, LEFT …), the engine's canonical text does: its join operators
 * (`… JOIN`, and commas between the tables of a FROM) come in the order the tree's join
 * elements are walked. Kinds only ever lower a price, so they are used only when text and
 * tree agree join by join; otherwise every join is priced as the costliest kind.
 */
export function joinKinds(tokens: readonly Token[]): JoinKind[] {
  const out: JoinKind[] = [];
  const clause: string[] = [];
  const inArrayJoin: boolean[] = [];
  tokens.forEach((t, k) => {
    const d = t.depth;
    const word = t.type === 'word' ? t.text.toUpperCase() : undefined;
    if (word !== undefined && CLAUSES.has(word)) {
      clause[d] = word;
      inArrayJoin[d] = false;
      return;
    }
    if (word === 'JOIN') {
      if (isKeyword(tokens[k - 1], 'ARRAY')) {
        inArrayJoin[d] = true;
        return;
      }
      inArrayJoin[d] = false;
      const words = new Set<string>();
      for (let j = k - 1; j >= 0 && tokens[j]!.type === 'word' && MODIFIERS.has(tokens[j]!.text.toUpperCase()); j--) words.add(tokens[j]!.text.toUpperCase());
      const kind = (['LEFT', 'RIGHT', 'FULL', 'CROSS', 'PASTE'] as const).find((w) => words.has(w)) ?? 'INNER';
      const strictness = (['ANY', 'SEMI', 'ANTI', 'ASOF'] as const).find((w) => words.has(w)) ?? 'ALL';
      out.push({ kind, strictness });
      return;
    }
    if (t.type === 'punct' && t.text === ',' && clause[d] === 'FROM' && inArrayJoin[d] !== true) out.push({ kind: 'COMMA', strictness: 'ALL' });
  });
  return out;
}
