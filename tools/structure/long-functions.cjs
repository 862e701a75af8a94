/**
 * Fails when a function in src/ (or dashboard/src/, .tsx included) is longer than the limit
 * (default 60 lines, STYLE: a function that long does several steps, and each step deserves a
 * name). Run by `npm run check:structure`.
 * Uses this folder's typescript 5 parser (typescript 7, the project's compiler, has no JS API).
 */
const ts = require('typescript');
const fs = require('node:fs');
const path = require('node:path');

const root = process.argv[2] ?? 'src';
const limit = Number(process.argv[3] ?? 60);

function sources(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) sources(p, out);
    else if ((p.endsWith('.ts') || p.endsWith('.tsx')) && !p.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

function nameOf(node, src) {
  if (node.name) return node.name.getText(src);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent))) return parent.name.getText(src);
  return '(anonymous)';
}

const long = [];
for (const file of sources(root)) {
  const src = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (node, owner) => {
    let name = owner;
    if (ts.isFunctionLike(node) && node.body) {
      const start = src.getLineAndCharacterOfPosition(node.getStart(src)).line + 1;
      const end = src.getLineAndCharacterOfPosition(node.end).line + 1;
      const cls = node.parent && ts.isClassLike(node.parent) && node.parent.name ? `${node.parent.name.getText(src)}.` : '';
      name = (owner ? `${owner} > ` : '') + cls + nameOf(node, src);
      if (end - start + 1 > limit) long.push(`${end - start + 1} lines  ${path.relative(process.cwd(), file)}:${start}  ${name}`);
    }
    ts.forEachChild(node, (child) => visit(child, name));
  };
  visit(src, '');
}

if (long.length > 0) {
  console.error(`functions over ${limit} lines (split them along their steps):\n  ${long.join('\n  ')}`);
  process.exit(1);
}
console.log(`no function over ${limit} lines`);
