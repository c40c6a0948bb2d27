// Reference check of what sign.mjs writes, with sigstore's own verifier (@sigstore/verify):
// the certificate chains to the trusted root at the log's time, the SCT, the Rekor entry (SET,
// inclusion proof and checkpoint, body bound to the signature and payload), the DSSE signature,
// the identity (SAN, exact) and the OIDC issuer; then, since @sigstore/verify leaves the
// artifact to its caller for DSSE, that the in-toto statement names the manifest digest.
//
// Usage:
//   node verify.mjs --dir DIR --digest sha256:<hex> --identity <SAN> --issuer <OIDC issuer URL>
//   (DIR holds bundle.json and trusted_root.json.) Exit 0: verified; 1: refused; 2: usage.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import bundleLib from '@sigstore/bundle';
import specs from '@sigstore/protobuf-specs';
import verify from '@sigstore/verify';

const { bundleFromJSON } = bundleLib;
const { TrustedRoot } = specs;
const { Verifier, toSignedEntity, toTrustMaterial } = verify;
const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';

function usage(message) {
  console.error(`verify.mjs: ${message}`);
  console.error('usage: node verify.mjs --dir DIR --digest sha256:<hex> --identity <SAN> --issuer <URL>');
  process.exit(2);
}

function refuse(message) {
  console.log(`verify.mjs: refused: ${message}`);
  process.exit(1);
}

let args;
try {
  ({ values: args } = parseArgs({
    options: {
      dir: { type: 'string' }, digest: { type: 'string' },
      identity: { type: 'string' }, issuer: { type: 'string' },
    },
    strict: true,
  }));
} catch (e) {
  usage(e.message);
}
for (const name of ['dir', 'digest', 'identity', 'issuer'])
  if (!args[name]) usage(`--${name} is required`);
if (!/^sha256:[0-9a-f]{64}$/.test(args.digest)) usage(`--digest must be sha256:<64 lowercase hex>`);

function readJSON(name) {
  const file = path.join(args.dir, name);
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    console.error(`verify.mjs: cannot read ${file}: ${e.message}`);
    process.exit(2);
  }
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
let bundle, trust;
try {
  bundle = bundleFromJSON(readJSON('bundle.json'));
  trust = toTrustMaterial(TrustedRoot.fromJSON(readJSON('trusted_root.json')));
} catch (e) {
  refuse(`malformed input: ${e.message}`);
}

try {
  const signer = new Verifier(trust).verify(toSignedEntity(bundle), {
    subjectAlternativeName: `^${escape(args.identity)}$`,
    extensions: { issuer: args.issuer },
  });
  if (bundle.content.$case !== 'dsseEnvelope') refuse('the bundle is not a DSSE envelope');
  const env = bundle.content.dsseEnvelope;
  if (env.payloadType !== IN_TOTO_PAYLOAD_TYPE) refuse(`payloadType is ${env.payloadType}`);
  const statement = JSON.parse(env.payload.toString('utf8'));
  const hex = args.digest.slice('sha256:'.length);
  if (!(statement.subject ?? []).some((s) => s?.digest?.sha256 === hex))
    refuse(`the statement does not name ${args.digest}`);
  console.log(`verify.mjs: verified: ${args.digest} signed by ${signer.identity.subjectAlternativeName} ` +
    `(issuer ${signer.identity.extensions.issuer}), logged at ` +
    new Date(Number(bundle.verificationMaterial.tlogEntries[0].integratedTime) * 1000).toISOString());
} catch (e) {
  refuse(`${e.code ? `${e.code}: ` : ''}${e.message}${e.cause ? ` (${e.cause.message ?? e.cause})` : ''}`);
}
