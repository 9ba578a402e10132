// A minimal XML reader for the deployment's ClickHouse configs (test/engine/cluster-deploy.test.ts):
// checks well-formedness (every tag closed in order, one root, attributes quoted, no stray
// "<" or "&") and returns the element tree. Not a general XML parser: no DTDs, CDATA or
// namespaces, which those files do not use; anything else it meets is an error.

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const TOKEN = /<!--[\s\S]*?-->|<\?xml[^?]*\?>|<\/([A-Za-z_][\w.-]*)\s*>|<([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.-]*="[^"<]*")*)\s*(\/?)>|([^<]+)/y;
const ATTR = /([A-Za-z_][\w.-]*)="([^"<]*)"/g;

export function parseXml(source: string): XmlElement {
  const root: XmlElement = { name: '#document', attrs: {}, children: [], text: '' };
  const stack: XmlElement[] = [root];
  TOKEN.lastIndex = 0;
  let seenDecl = false;
  while (TOKEN.lastIndex < source.length) {
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(source);
    if (m === null) throw new Error(`not well-formed at offset ${at}: ${JSON.stringify(source.slice(at, at + 40))}`);
    const [token, closing, opening, attrText, selfClosing, text] = m;
    const top = stack.at(-1)!;
    if (token.startsWith('<?xml')) {
      if (at !== 0 || seenDecl) throw new Error('the XML declaration must come first, once');
      seenDecl = true;
    } else if (token.startsWith('<!--')) {
      if (token.slice(4, -3).includes('--')) throw new Error(`"--" inside a comment at offset ${at}`);
    } else if (closing !== undefined) {
      if (top === root || top.name !== closing) throw new Error(`</${closing}> at offset ${at} closes <${top.name}>`);
      stack.pop();
    } else if (opening !== undefined) {
      if (top === root && root.children.length > 0) throw new Error(`a second root element <${opening}> at offset ${at}`);
      const attrs: Record<string, string> = {};
      for (const a of (attrText ?? '').matchAll(ATTR)) {
        if (a[1]! in attrs) throw new Error(`attribute ${a[1]} twice on <${opening}>`);
        attrs[a[1]!] = a[2]!;
      }
      const el: XmlElement = { name: opening, attrs, children: [], text: '' };
      top.children.push(el);
      if (selfClosing !== '/') stack.push(el);
    } else if (text !== undefined) {
      if (/&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.test(text)) throw new Error(`a bare "&" at offset ${at}`);
      if (top === root) {
        if (text.trim() !== '') throw new Error(`text outside the root element at offset ${at}`);
      } else top.text += text;
    }
  }
  if (stack.length !== 1) throw new Error(`<${stack.at(-1)!.name}> is never closed`);
  if (root.children.length !== 1) throw new Error('no root element');
  return root.children[0]!;
}

/** Children at a path of element names (every match at each step). */
export function select(el: XmlElement, ...names: string[]): XmlElement[] {
  let level = [el];
  for (const n of names) level = level.flatMap((e) => e.children.filter((c) => c.name === n));
  return level;
}

/** The trimmed text of the single element at a path; throws when there is not exactly one. */
export function textAt(el: XmlElement, ...names: string[]): string {
  const found = select(el, ...names);
  if (found.length !== 1) throw new Error(`expected one <${names.join('/')}>, found ${found.length}`);
  return found[0]!.text.trim();
}
