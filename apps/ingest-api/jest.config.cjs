module.exports = { ...require('../../jest.preset.cjs'), displayName: 'ingest-api', rootDir: __dirname };
