module.exports = { ...require('../../jest.preset.cjs'), displayName: 'alerts', rootDir: __dirname };
