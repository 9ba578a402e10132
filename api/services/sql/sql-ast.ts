// The engine's `EXPLAIN AST` dump, read back into a tree. Each line is one node:
//   <one space per level><Kind>[ <detail>][ (alias <a>)][ (children <n>)]
// e.g. "      TableIdentifier transactions (alias t)" or "    Function quantile (children 2)".
// Identifiers are printed raw, so a quoted identifier holding a newline could forge lines;
// the guard rejects control characters in quoted identifiers before asking for the dump.

export interface AstNode {
  kind: string;
  /** The rest of the line after the kind, without alias and children count (a name, a literal …). */
  detail: string;
  alias: string | undefined;
  /** The "(children N)" the dump printed for this node (0 when it printed none). */
  declaredChildren: number;
  children: AstNode[];
  parent: AstNode | undefined;
}

const LINE = /^( *)(\S+)(.*)$/;

export function parseAstDump(text: string): AstNode[] {
  const roots: AstNode[] = [];
  const stack: { indent: number; node: AstNode }[] = [];
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    const m = LINE.exec(raw);
    if (!m) continue;
    const indent = m[1]!.length;
    let rest = m[3]!.trim();
    const children = / \(children (\d+)\)$/.exec(` ${rest}`);
    if (children) rest = ` ${rest}`.slice(0, children.index).trim();
    const declaredChildren = children ? Number(children[1]) : 0;
    let alias: string | undefined;
    const a = / \(alias (.*)\)$/.exec(` ${rest}`);
    if (a) {
      alias = a[1];
      rest = ` ${rest}`.slice(0, a.index).trim();
    }
    while (stack.length > 0 && stack.at(-1)!.indent >= indent) stack.pop();
    const parent = stack.at(-1)?.node;
    const node: AstNode = { kind: m[2]!, detail: rest, alias, declaredChildren, children: [], parent };
    if (parent) parent.children.push(node);
    else roots.push(node);
    stack.push({ indent, node });
  }
  return roots;
}

/** Every node below and including `node`, parents before children (iterative: trees may be deep). */
export function* walk(node: AstNode): Generator<AstNode> {
  const stack: AstNode[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    yield n;
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
}
