// The MCP Inspector's schema-portability lint, as rules a test can hold: what clients that read one `type` per node
// (Gemini-style function declarations) and refuse `{}` accept from a tool's inputSchema and outputSchema.
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);
const UNPORTABLE = ['$ref', '$defs', 'oneOf', 'allOf', 'not', 'prefixItems', 'patternProperties'];

/** Every problem found under `schema`, one line each (`at <path>: <rule>`); `[]` when it is portable. */
export function portabilityProblems(schema: unknown, path = '#'): string[] {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return [`at ${path}: a boolean or non-object schema`];
  const node = schema as Record<string, unknown>;
  if (Object.keys(node).length === 0) return [`at ${path}: an empty schema {}`];
  const problems: string[] = [];
  if (Array.isArray(node.type)) problems.push(`at ${path}: type is an array (${JSON.stringify(node.type)}); use anyOf`);
  else if (node.type !== undefined && !TYPES.has(node.type as string)) problems.push(`at ${path}: type ${JSON.stringify(node.type)} is not a JSON type`);
  else if (node.type === undefined && !Array.isArray(node.anyOf)) problems.push(`at ${path}: neither one type nor anyOf`);
  for (const key of UNPORTABLE) if (key in node) problems.push(`at ${path}: ${key}`);
  if (Array.isArray(node.anyOf)) node.anyOf.forEach((branch, i) => problems.push(...portabilityProblems(branch, `${path}/anyOf/${i}`)));
  if (node.properties !== undefined) {
    const properties = node.properties as Record<string, unknown>;
    if (Object.keys(properties).length === 0) problems.push(`at ${path}: empty properties`);
    for (const [name, sub] of Object.entries(properties)) problems.push(...portabilityProblems(sub, `${path}/properties/${name}`));
  }
  if (node.items !== undefined) problems.push(...portabilityProblems(node.items, `${path}/items`));
  if (node.additionalProperties !== undefined && node.additionalProperties !== false) problems.push(...portabilityProblems(node.additionalProperties, `${path}/additionalProperties`));
  if (node.propertyNames !== undefined) problems.push(...portabilityProblems(node.propertyNames, `${path}/propertyNames`));
  return problems;
}
