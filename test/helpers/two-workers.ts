/**
 * Required by `npm run test:workers` (.mocharc.workers.json): the suites it lists start their test
 * server as `keywarden server -workers=2` (test/helpers/workers-server.ts), unless
 * KEYWARDEN_TEST_WORKERS asks for another number.
 */
process.env['KEYWARDEN_TEST_WORKERS'] ??= '2';
