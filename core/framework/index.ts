export * from './fields.js';
export * from './path.js';
export * from './request.js';
export * from './backend.js';
export * from './help.js';
export * from './refused-fields.js';
export { compileFields } from './schema.js';
export { JsonText } from './json-text.js';
export { ExactNumber, exactBody, parseExact, stringifyExact } from './exact-json.js';
