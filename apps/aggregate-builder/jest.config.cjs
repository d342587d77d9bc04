module.exports = { ...require('../../jest.preset.cjs'), displayName: 'aggregate-builder', rootDir: __dirname };
