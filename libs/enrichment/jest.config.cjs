module.exports = { ...require('../../jest.preset.cjs'), displayName: 'enrichment', rootDir: __dirname };
