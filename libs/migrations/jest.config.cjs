module.exports = { ...require('../../jest.preset.cjs'), displayName: 'migrations', rootDir: __dirname };
