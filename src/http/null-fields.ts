/**
 * `null` for an optional field of a request body means the field is absent. Several SDK
 * serialisers write unset properties as null (.NET System.Text.Json and Newtonsoft by default,
 * Java Jackson without NON_NULL, many generated OpenAPI clients); refusing those nulls would fail
 * every request such a client makes.
 *
 * The body schemas stay as they are: before a body is validated, the properties its schema
 * declares (`properties`, at any depth, array items included) that are not `required` and whose
 * own schema does not admit null lose a null value. A required field given as null is still
 * refused by the schema, and a field whose schema admits null (a PATCH field where null clears
 * the value, such as a channel's ipPool) keeps its null. Free-form values (template data,
 * metadata and header maps) are not schema properties and are left alone.
 *
 * The OpenAPI document states the same fields as nullable (nullableOptionals, applied by
 * contract.ts), from the same decision (strippable).
 */

type Schema = Record<string, unknown>;

function isSchema(s: unknown): s is Schema {
  return s !== null && typeof s === 'object' && !Array.isArray(s);
}

/** Whether a property's schema accepts null itself (then null is a value, not an absence). */
function admitsNull(s: unknown): boolean {
  if (!isSchema(s)) return s !== false;
  if (s.nullable === true) return true;
  if (Array.isArray(s.type)) return s.type.includes('null');
  if (s.type !== undefined) return s.type === 'null';
  if (Array.isArray(s.enum)) return s.enum.includes(null);
  return !('const' in s) || s.const === null;
}

/** The names of `schema`'s properties whose null means absent. */
export function strippable(schema: Schema): string[] {
  const props = isSchema(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.keys(props).filter((k) => !required.has(k) && !admitsNull(props[k]));
}

/** Where nulls are dropped in a value of one schema: its own properties, deeper ones, array items. */
interface Plan {
  strip: string[];
  children: Array<[string, Plan]>;
  items?: Plan;
}

function planOf(schema: unknown): Plan | undefined {
  if (!isSchema(schema)) return undefined;
  const strip = strippable(schema);
  const children: Array<[string, Plan]> = [];
  if (isSchema(schema.properties)) {
    for (const [k, s] of Object.entries(schema.properties)) {
      const child = planOf(s);
      if (child) children.push([k, child]);
    }
  }
  const items = planOf(schema.items);
  if (strip.length === 0 && children.length === 0 && !items) return undefined;
  return { strip, children, items };
}

function apply(plan: Plan, data: unknown): void {
  if (Array.isArray(data)) {
    if (plan.items) for (const x of data) apply(plan.items, x);
    return;
  }
  if (data === null || typeof data !== 'object') return;
  const o = data as Record<string, unknown>;
  for (const k of plan.strip) if (Object.hasOwn(o, k) && o[k] === null) delete o[k];
  for (const [k, child] of plan.children) if (Object.hasOwn(o, k)) apply(child, o[k]);
}

/**
 * The function that drops, in place, the nulls of optional fields from a body of `schema`;
 * undefined when the schema has no such field. The walk follows the schema, so its depth is the
 * schema's, whatever the body holds.
 */
export function nullStripper(schema: unknown): ((data: unknown) => void) | undefined {
  const plan = planOf(schema);
  return plan && ((data) => apply(plan, data));
}

/** A property schema that also admits null: its type (and enumeration) with null added. */
function withNull(s: Schema): Schema {
  const out: Schema = { ...s };
  if (typeof s.type === 'string') out.type = [s.type, 'null'];
  else if (Array.isArray(s.type)) out.type = [...s.type, 'null'];
  if (Array.isArray(s.enum)) out.enum = [...s.enum, null];
  if ('const' in s) {
    delete out.const;
    out.enum = [s.const, null];
  }
  return out;
}

/**
 * A copy of a request body schema as the OpenAPI document states it: every field whose null
 * nullStripper drops is nullable, at every depth.
 */
export function nullableOptionals(schema: unknown): unknown {
  if (!isSchema(schema)) return schema;
  const out: Schema = { ...schema };
  if (isSchema(schema.properties)) {
    const strip = new Set(strippable(schema));
    const props: Schema = {};
    for (const [k, s] of Object.entries(schema.properties)) {
      const inner = nullableOptionals(s);
      props[k] = strip.has(k) && isSchema(inner) ? withNull(inner) : inner;
    }
    out.properties = props;
  }
  if (isSchema(schema.items)) out.items = nullableOptionals(schema.items);
  return out;
}
