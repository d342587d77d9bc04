module.exports = { ...require('../../jest.preset.cjs'), displayName: 'schema', rootDir: __dirname };
