module.exports = { ...require('../../jest.preset.cjs'), displayName: 'event-store', rootDir: __dirname };
