export * from './schedule';
export * from './content';
export * from './render';
export * from './mailing';
