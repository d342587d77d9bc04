export * from './mcp.routes';
export * from './tools';
export * from './app';
export * from './wiring';
