module.exports = { ...require('../../jest.preset.cjs'), displayName: 'sdk-node', rootDir: __dirname };
