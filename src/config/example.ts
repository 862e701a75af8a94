/**
 * Renders config/postrider.example.jsonc from the schema, so the example file documents exactly
 * the keys the loader accepts (`postrider config example > config/postrider.example.jsonc`;
 * a unit test fails when the committed file drifts).
 */
import { SCHEMA, envName, type KeyDef } from './schema.js';

interface Tree {
  [name: string]: Tree | KeyDef;
}

const HEADER = [
  '// postrider configuration (JSON with comments). Every key is optional: the value shown is the',
  '// embedded default. Each key can also be set by the environment variable named in its comment,',
  '// which wins over this file. Use with: postrider serve --config /etc/postrider/postrider.jsonc',
];

/** Defaults that depend on the machine are shown with a neutral placeholder. */
const SHOWN_DEFAULTS: Record<string, unknown> = { hostname: 'mail.example.com' };

export function renderExampleConfig(): string {
  const tree: Tree = {};
  for (const def of SCHEMA) {
    const parts = def.path.split('.');
    let node = tree;
    for (const p of parts.slice(0, -1)) node = (node[p] ??= {}) as Tree;
    node[parts[parts.length - 1]] = def;
  }
  const lines = [...HEADER, '{'];
  emit(tree, '  ', lines);
  lines.push('}');
  return lines.join('\n') + '\n';
}

function emit(node: Tree, indent: string, lines: string[]): void {
  const entries = Object.entries(node);
  entries.forEach(([name, value], i) => {
    const comma = i < entries.length - 1 ? ',' : '';
    if (typeof (value as KeyDef).path === 'string') {
      const def = value as KeyDef;
      const shown = def.path in SHOWN_DEFAULTS ? SHOWN_DEFAULTS[def.path] : def.default();
      lines.push(`${indent}// ${def.doc} (${envName(def.path)})`);
      lines.push(`${indent}${JSON.stringify(name)}: ${JSON.stringify(shown)}${comma}`);
    } else {
      lines.push(`${indent}${JSON.stringify(name)}: {`);
      emit(value as Tree, indent + '  ', lines);
      lines.push(`${indent}}${comma}`);
    }
  });
}
