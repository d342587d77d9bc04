module.exports = { ...require('../../jest.preset.cjs'), displayName: 'mcp-gateway', rootDir: __dirname };
