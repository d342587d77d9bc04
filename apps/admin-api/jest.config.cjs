module.exports = { ...require('../../jest.preset.cjs'), displayName: 'admin-api', rootDir: __dirname };
