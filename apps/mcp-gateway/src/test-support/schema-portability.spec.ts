import { portabilityProblems } from './schema-portability';

describe('portabilityProblems (the rules the tools/list test holds)', () => {
  it.each([
    ['a typed object', { type: 'object', properties: { a: { type: 'string' }, b: { type: 'array', items: { type: 'integer' } } }, required: ['a'] }],
    ['a nullable field as anyOf', { type: 'object', properties: { a: { anyOf: [{ type: 'string' }, { type: 'null' }] } } }],
    ['an object root over anyOf branches', { type: 'object', anyOf: [{ type: 'object', properties: { ok: { type: 'boolean' } } }, { type: 'object' }] }],
    ['a closed object', { type: 'object', properties: { a: { type: 'number' } }, additionalProperties: false }],
  ])('accepts %s', (_name, schema) => {
    expect(portabilityProblems(schema)).toEqual([]);
  });

  it.each([
    ['a type array', { type: 'object', properties: { a: { type: ['string', 'null'] } } }, 'at #/properties/a: type is an array (["string","null"]); use anyOf'],
    ['an empty property schema', { type: 'object', properties: { a: {} } }, 'at #/properties/a: an empty schema {}'],
    ['an empty additionalProperties', { type: 'object', additionalProperties: {} }, 'at #/additionalProperties: an empty schema {}'],
    ['a boolean schema', { type: 'object', properties: { a: true } }, 'at #/properties/a: a boolean or non-object schema'],
    ['empty properties', { type: 'object', properties: {} }, 'at #: empty properties'],
    ['an untyped node', { type: 'object', properties: { a: { minLength: 1 } } }, 'at #/properties/a: neither one type nor anyOf'],
    ['a type array in an anyOf branch', { anyOf: [{ type: ['integer', 'null'] }] }, 'at #/anyOf/0: type is an array (["integer","null"]); use anyOf'],
    ['an untyped array item', { type: 'array', items: { description: 'x' } }, 'at #/items: neither one type nor anyOf'],
    ['a $ref', { type: 'object', properties: { a: { type: 'object', $ref: '#/$defs/a' } } }, 'at #/properties/a: $ref'],
    ['oneOf', { type: 'object', properties: { a: { type: 'string', oneOf: [{ type: 'string' }] } } }, 'at #/properties/a: oneOf'],
  ])('refuses %s', (_name, schema, problem) => {
    expect(portabilityProblems(schema)).toEqual([problem]);
  });
});
