module.exports = { ...require('../../jest.preset.cjs'), displayName: 'sdk-browser', rootDir: __dirname };
