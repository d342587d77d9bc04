module.exports = { ...require('../../jest.preset.cjs'), displayName: 'read-api', rootDir: __dirname };
