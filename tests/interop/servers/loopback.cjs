// Preload for third-party Node servers that call `listen(PORT)` with no host
// (server-everything does), which would bind every interface:
//
//   PORT=0 node -r tests/interop/servers/loopback.cjs .../server-everything/dist/index.js streamableHttp
//
// 1. Any listen() without a host gets host 127.0.0.1.
// 2. Once a server is bound, print `listening on http://127.0.0.1:PORT<path>` on stdout,
//    where <path> is $INTEROP_ANNOUNCE_PATH (default "/mcp").
//
// With PORT=0 the kernel picks a free port and this line tells the harness which one:
// no port guessing, no race with other processes, no polling.
// 3. With INTEROP_EXIT_ON_STDIN_EOF=1 (set by the Rust harness) the process exits
//    when its stdin closes, so a dead test process leaves no server behind.
'use strict';
const net = require('node:net');

if (process.env.INTEROP_EXIT_ON_STDIN_EOF === '1') {
  process.stdin.on('end', () => process.exit(0)).on('error', () => process.exit(0)).resume();
}

const announcePath = process.env.INTEROP_ANNOUNCE_PATH ?? '/mcp';
const listen = net.Server.prototype.listen;

net.Server.prototype.listen = function loopbackListen(...args) {
  const first = args[0];
  if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
    // listen({ port, host?, ... }, cb?)
    if (first.path === undefined && first.host === undefined) args[0] = { ...first, host: '127.0.0.1' };
  } else if (typeof first === 'number' || (typeof first === 'string' && first.trim() !== '' && !Number.isNaN(Number(first)))) {
    // listen(port, cb?) / listen(port, backlog, cb?) -> listen(port, '127.0.0.1', ...)
    if (typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  } else if (first === undefined || typeof first === 'function') {
    // listen() / listen(cb): an ephemeral port on every interface by default.
    args.unshift(0, '127.0.0.1');
  }
  this.once('listening', () => {
    const address = this.address();
    if (address && typeof address === 'object') {
      process.stdout.write(`listening on http://127.0.0.1:${address.port}${announcePath}\n`);
    }
  });
  return listen.apply(this, args);
};
