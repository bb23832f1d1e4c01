import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
const extra = process.argv.slice(2);
const t = new StdioClientTransport({ command: '/work/main/build/bin/code-sandbox', args: ['--stdio', '--no-history', '--no-monitor', '--engine', 'unix:///tmp/podgv/pod.sock', '--pool', '0', ...extra], env: { PATH: process.env.PATH }, stderr: 'pipe' });
let log = ''; t.stderr.on('data', (c) => { log += c; });
const c = new Client({ name: 'p', version: '1' });
await c.connect(t);
for (const code of ['import platform, os; print(platform.release(), os.getuid())', 'import time; time.sleep(30)']) {
  const r = await c.callTool({ name: 'execute_code', arguments: { language: 'python', code, timeout: 3 } });
  console.log(r.isError ? 'ERROR ' : '', JSON.stringify(r.structuredContent ?? r.content).slice(0, 600));
}
await c.close();
console.log(log.split('\n').filter(l => /warn|error/i.test(l)).slice(0, 6).join('\n'));
