// jest transform: a .sql file becomes a module exporting its text (as esbuild's text loader does for the build).
module.exports = { process: (src) => ({ code: `module.exports = { __esModule: true, default: ${JSON.stringify(src)} };` }) };
