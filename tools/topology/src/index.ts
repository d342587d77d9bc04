export * from './processes';
export * from './topology';
export * from './tcp-proxy';
