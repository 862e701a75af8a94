/**
 * Renders config/postrider.example.jsonc from the schema, so the example file documents exactly
 * the keys the loader accepts (`postrider config example > config/postrider.example.jsonc`;
 * a unit test fails when the committed file drifts).
 */
import { configKeys, type ConfigKey } from './keys.js';

interface Tree {
  [name: string]: Tree | ConfigKey;
}

const HEADER = [
  '// postrider configuration (JSON with comments). Every key is optional: the value shown is the',
  '// embedded default. Each key can also be set by the environment variable named in its comment,',
  '// which wins over this file. Use with: postrider serve --config /etc/postrider/postrider.jsonc',
];

export function renderExampleConfig(): string {
  const tree: Tree = {};
  for (const key of configKeys()) {
    const parts = key.path.split('.');
    let node = tree;
    for (const p of parts.slice(0, -1)) node = (node[p] ??= {}) as Tree;
    node[parts[parts.length - 1]] = key;
  }
  const lines = [...HEADER, '{'];
  emit(tree, '  ', lines);
  lines.push('}');
  return lines.join('\n') + '\n';
}

/** The default, or for a default that depends on the machine, a neutral example value. */
function shownValue(key: ConfigKey): unknown {
  return key.schema.defaultFrom ? key.schema.examples?.[0] : key.schema.default;
}

function emit(node: Tree, indent: string, lines: string[]): void {
  const entries = Object.entries(node);
  entries.forEach(([name, value], i) => {
    const comma = i < entries.length - 1 ? ',' : '';
    if (isKey(value)) {
      lines.push(`${indent}// ${value.doc} (${value.env})`);
      lines.push(`${indent}${JSON.stringify(name)}: ${JSON.stringify(shownValue(value))}${comma}`);
    } else {
      lines.push(`${indent}${JSON.stringify(name)}: {`);
      emit(value, indent + '  ', lines);
      lines.push(`${indent}}${comma}`);
    }
  });
}

function isKey(value: Tree | ConfigKey): value is ConfigKey {
  return typeof value.path === 'string';
}
