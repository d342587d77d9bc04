module.exports = { ...require('../../jest.preset.cjs'), displayName: 'ingest', rootDir: __dirname };
