// What the SQL guard (sql-guard.ts) reads off the client's text itself, before the engine sees
// it: steps 1 and 2 of its order of checks. The input's shape (a non-empty string within
// SQL_MAX_LENGTH, no control characters) and its surface (sql-lexer.ts: no semicolon outside
// strings and comments, nothing left open, quoted identifiers the parse-tree dump prints as
// read, a first word of SELECT, WITH or "(").
import { AppError, Errors } from '../../../core/errors.ts';
import { SQL_MAX_LENGTH, SQL_QUOTED_WORD_MAX_CHARS } from '../../../core/limits/sql.ts';
import { isKeyword, lex, LexError, type Token } from './sql-lexer.ts';

/** The 400 of a query the guard refuses, naming what it found. */
export const invalid = (message: string, cause?: unknown): AppError => new AppError(Errors.invalidQuery, message, { cause });

/** First words of statements other than SELECT, named in the rejection message. */
const STATEMENT_WORDS = new Set([
  'INSERT',
  'UPDATE',
  'DELETE',
  'DROP',
  'CREATE',
  'ALTER',
  'TRUNCATE',
  'REPLACE',
  'GRANT',
  'REVOKE',
  'KILL',
  'OPTIMIZE',
  'RENAME',
  'ATTACH',
  'DETACH',
  'SYSTEM',
  'SET',
  'USE',
  'SHOW',
  'DESCRIBE',
  'DESC',
  'EXPLAIN',
  'EXCHANGE',
  'UNDROP',
  'BACKUP',
  'RESTORE',
  'CHECK',
  'WATCH',
  'MOVE',
  'EXISTS',
  'BEGIN',
  'COMMIT',
  'ROLLBACK',
  'UPSERT',
  'MERGE',
]);

/** The trimmed text of a query whose shape and surface may go on to the engine, and its first token. */
export function surfaceOf(input: unknown): { text: string; first: Token } {
  if (typeof input !== 'string' || input.trim() === '') throw invalid('the query must be a non-empty string');
  if (input.length > SQL_MAX_LENGTH) {
    throw invalid(`the query is ${input.length} characters long; the maximum is ${SQL_MAX_LENGTH} characters`);
  }
  const text = input.trim();
  // NUL and other control characters have no place in SQL text, and a C string boundary
  // inside the engine could make it see less than the guard saw.
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)) {
    throw invalid('the query contains control characters (only tab, newline and carriage return are allowed)');
  }

  // 2. Surface checks.
  let lexed: ReturnType<typeof lex>;
  try {
    lexed = lex(text);
  } catch (err) {
    if (err instanceof LexError) throw invalid(`${err.message}`);
    throw err;
  }
  if (lexed.semicolons.length > 0) {
    throw invalid('only one statement is allowed: remove the semicolon (";") outside strings and comments');
  }
  for (const t of lexed.tokens) {
    // Identifiers are printed raw in the parse-tree dump: a control character could forge
    // lines there, and "(alias …)"-like text could be read as the dump's own annotations.
    // The engine decodes backslash escapes inside quoted identifiers (`a\n…` is a newline
    // there), so no backslash is accepted either: what the guard reads is what is printed.
    if (t.type === 'quoted' && (t.escaped === true || /[\u0000-\u001f\u007f()\\]/.test(t.text))) {
      throw invalid('quoted identifiers may not contain control characters, parentheses or backslashes');
    }
  }
  const first = lexed.tokens[0];
  if (!first) throw invalid('the query must be a non-empty string');
  if (!(isKeyword(first, 'SELECT') || isKeyword(first, 'WITH') || (first.type === 'punct' && first.text === '('))) {
    const word = first.type === 'word' ? first.text.toUpperCase() : undefined;
    if (word !== undefined && STATEMENT_WORDS.has(word)) {
      throw invalid(`${word} statements are not allowed: only read-only SELECT queries (SELECT, WITH …) are accepted`);
    }
    throw invalid(
      `the query must start with SELECT or WITH (found "${first.text.slice(0, SQL_QUOTED_WORD_MAX_CHARS)}"): only read-only SELECT queries are accepted`,
    );
  }
  return { text, first };
}
