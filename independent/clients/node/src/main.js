'use strict';
const fs = require('fs');
const { FAULTS } = require('./faults');
const { Session } = require('./session');
const { Unreachable } = require('./transport');

function usage(msg) {
  if (msg) process.stderr.write(`${msg}\n`);
  process.stderr.write('usage: run CONFIG.json [--fault NAME] | run --list-faults\n');
  process.exit(2);
}

async function main(argv) {
  if (argv.includes('--list-faults')) {
    if (argv.length !== 1) usage('--list-faults takes no other argument');
    for (const f of FAULTS) process.stdout.write(`${f.name}\t${f.kind}\t${f.sentence}\t${f.what}\n`);
    return 0;
  }
  let config = null, fault = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--fault') {
      if (fault !== null || i + 1 >= argv.length) usage('--fault needs exactly one NAME');
      fault = argv[++i];
    } else if (a.startsWith('--fault=')) {
      if (fault !== null) usage('only one --fault');
      fault = a.slice('--fault='.length);
    } else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else if (config === null) config = a;
    else usage('only one CONFIG');
  }
  if (config === null) usage('missing CONFIG');
  if (fault !== null && !FAULTS.some((f) => f.name === fault)) usage(`unknown fault: ${fault}`);
  let cfg;
  try { cfg = JSON.parse(fs.readFileSync(config, 'utf8')); } catch (e) { usage(`cannot read configuration ${config}: ${e.message}`); }
  if (!cfg || typeof cfg !== 'object' || !cfg.base_url) usage('configuration has no base_url');
  const s = new Session(cfg, fault);
  try {
    await s.run();
  } catch (e) {
    s.closeAll();
    if (e instanceof Unreachable) { process.stderr.write(`server unreachable: ${e.message}\n`); return 3; }
    throw e;
  }
  process.stdout.write(`session complete: ${s.calls} calls${fault ? ` (fault ${fault})` : ''}\n`);
  return 0;
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code; setTimeout(() => process.exit(code), 300).unref(); },
  (err) => { process.stderr.write(`internal error: ${err && err.stack || err}\n`); process.exit(1); });
