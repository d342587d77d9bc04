// The import rules `npm test` checks (project import-rules, target lint): no import cycle anywhere in apps/, libs/ and
// tools/, and the event store's layers (libs/event-store/README.md, "Layers"): a file imports its own layer or those
// below it, never one above. Type-only imports count: a cycle of types is still a knot a reader has to untie.
const STORE = '^libs/event-store/src/';
// Bottom to top. Each entry: the folder (under src/) and the folders it may import besides its own and those below.
const LAYERS = ['primitives', 'tables', 'client', 'queries'];
// The engines sit above the queries, side by side: none imports another.
const ENGINES = ['engines/read', 'engines/write', 'engines/maintenance'];
// Specs exercise the whole store (they open it through test-support), whatever layer they sit in.
const NOT_A_TEST = '\\.spec\\.ts$';

const layerRule = (layer, allowed) => ({
  name: `event-store-layer-${layer.replace('/', '-')}`,
  comment: `libs/event-store/src/${layer} imports only ${allowed.join(', ')} (libs/event-store/README.md, "Layers")`,
  severity: 'error',
  from: { path: `${STORE}${layer}/`, pathNot: NOT_A_TEST },
  to: { path: STORE, pathNot: `${STORE}(${allowed.join('|')})/` },
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A module reaches itself through its imports: cut the cycle (move what both need one layer down, or pass a port).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...LAYERS.map((layer, i) => layerRule(layer, LAYERS.slice(0, i + 1))),
    ...ENGINES.map((engine) => layerRule(engine, [...LAYERS, engine])),
    {
      name: 'event-store-known-layer',
      comment: 'An event-store folder is a layer (or test-support): put the file in the layer it belongs to, or add the layer here',
      severity: 'error',
      from: { path: `${STORE}(?!(${[...LAYERS, ...ENGINES, 'test-support'].join('|')})/)[^/]+/` },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|\\.data|\\.nx|coverage|tmp|\\.scratch)/' },
    tsConfig: { fileName: 'tsconfig.base.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.mjs', '.cjs', '.js', '.json', '.sql'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
