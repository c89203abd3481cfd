// A kura write policy in JavaScript: notes under `archive/` are frozen
// (no create, overwrite, append or replace), and nothing may be written
// outside `.md` files. Everything else is allowed here; the host's baseline
// (`.system/` reserved, `daily/` append-only) holds whatever this says.
//
// A denial is thrown as the `denial` record: { code, message }.
//
// Build (from this folder):
//   componentize-js policy.js --wit ../../../wit -n write-policy -d http fetch-event -o policy.wasm

import { log } from 'kura:plugins/log@0.1.0';

export function check(request) {
  if (request.path.startsWith('archive/')) {
    log('info', `refused ${request.kind} of ${request.path} (archive is frozen)`);
    throw { code: 'forbidden', message: 'archive/ is frozen: notes there are never changed' };
  }
  if (!request.path.endsWith('.md')) {
    throw { code: 'invalid-path', message: 'only .md notes may be written' };
  }
}
