'use strict';
// A TypeScript SDK client that gives up on a request after TIMEOUT_MS, as its 60 s default does on a real
// suite, and does not reset that timeout on progress; it gets a long run's result by polling get_test_run.
//
//   node ts_long_run.cjs SDK_DIR TIMEOUT_MS COMMAND [ARG...]
//
// Prints one JSON line: every answer's status and elapsed milliseconds, and the final structuredContent.
const path = require('path');

const [sdkDir, timeoutMs, command, ...commandArgs] = process.argv.slice(2);
const sdk = (p) => require(path.join(path.resolve(sdkDir), 'node_modules/@modelcontextprotocol/sdk/dist/cjs', p));
const { Client } = sdk('client/index.js');
const { StdioClientTransport } = sdk('client/stdio.js');

async function main() {
  const client = new Client({ name: 'ts-long-run', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command, args: commandArgs, env: process.env, stderr: 'inherit' }));
  const options = { timeout: Number(timeoutMs), onprogress: () => {} }; // resetTimeoutOnProgress stays false
  const started = Date.now();
  const answers = [];
  let result = await client.callTool({ name: 'execute_tests', arguments: {} }, undefined, options);
  answers.push({ status: result.structuredContent.status ?? 'finished', ms: Date.now() - started });
  const runId = result.structuredContent.run_id;
  while (result.structuredContent && result.structuredContent.status === 'running') {
    result = await client.callTool({ name: 'get_test_run', arguments: { run_id: runId } }, undefined, options);
    answers.push({ status: result.structuredContent.status ?? 'finished', ms: Date.now() - started });
  }
  process.stdout.write(JSON.stringify({ answers, final: result.structuredContent, is_error: Boolean(result.isError) }) + '\n');
  await client.close();
}

main().catch((e) => {
  process.stdout.write(JSON.stringify({ raised: `${e.constructor.name}: ${e.message}` }) + '\n');
  process.exit(1);
});
