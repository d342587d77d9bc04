module.exports = { ...require('../../jest.preset.cjs'), displayName: 'retention-worker', rootDir: __dirname };
