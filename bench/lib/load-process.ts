/**
 * A load generator in its own process, for benchmarks whose server takes more than one core: the
 * client's own CPU then shows apart from the server's (its process's time, from /proc), and it
 * never competes with the measuring process's event loop. Runs autocannon once and prints its
 * result, with the CPU time this process spent (µs), as one JSON line on stdout.
 *
 *   node load-process.js '<options as JSON>'
 */
import autocannon from 'autocannon';

const options = JSON.parse(process.argv[2]!) as autocannon.Options;
const result = await autocannon(options);
const usage = process.cpuUsage();
process.stdout.write(`${JSON.stringify({ total: result.requests.total, duration: result.duration, non2xx: result.non2xx, errors: result.errors, cpuUs: usage.user + usage.system })}\n`);
