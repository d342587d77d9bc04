module.exports = { ...require('../../jest.preset.cjs'), displayName: 'classifier', rootDir: __dirname };
