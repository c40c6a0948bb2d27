// Signs an OCI manifest digest the way `cosign sign` does with the sigstore bundle format
// (a DSSE envelope over an in-toto statement whose subject is the manifest digest), with
// sigstore's own client (@sigstore/sign) against sigstore's own mock Fulcio and Rekor
// (@sigstore/mock), served on a loopback port for the life of this process. Nothing leaves
// the machine. Writes:
//   OUT/bundle.json        sigstore bundle v0.3: dsseEnvelope, Fulcio leaf certificate, one
//                          Rekor v1 "dsse" entry with inclusionPromise (SET) and inclusionProof
//   OUT/trusted_root.json  the mock Fulcio root, the mock Rekor key and the mock CT log key
//
// Usage:
//   node sign.mjs --digest sha256:<hex> --identity <SAN URI> --issuer <OIDC issuer URL>
//                 --out DIR [--expired] [--other-artifact sha256:<hex>] [--no-set] [--backdate]
//   --expired          Rekor integrates the entry 20 minutes after the certificate was issued,
//                      10 minutes after it expired (Fulcio certificates live 10 minutes)
//   --other-artifact X the bundle's statement names --digest, but its Rekor entry is the one
//                      logged for the same signer's statement naming X
//   --no-set           leave out the entry's inclusionPromise (SET): only the inclusion proof
//                      and checkpoint remain, which vouch for the body but not for the time
//   --backdate         after logging, rewrite integratedTime to one minute after the
//                      certificate's notBefore: a forgery (the SET, if kept, no longer verifies;
//                      the inclusion proof still does, since integratedTime is not in the leaf)
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { parseArgs } from 'node:util';
import mock from '@sigstore/mock';
import sign from '@sigstore/sign';
import bundleLib from '@sigstore/bundle';
import specs from '@sigstore/protobuf-specs';

const { initializeCA, initializeCTLog, initializeTLog, fulcioHandler, rekorHandler } = mock;
const { DSSEBundleBuilder, FulcioSigner, RekorWitness } = sign;
const { bundleToJSON, BUNDLE_V03_MEDIA_TYPE } = bundleLib;
const { TrustedRoot, HashAlgorithm, PublicKeyDetails } = specs;

// Names written into trusted_root.json and into Rekor's checkpoints. The services are really
// reached on 127.0.0.1; these hosts are never resolved.
const FULCIO_URL = 'https://fulcio.sigstore.test';
const REKOR_URL = 'https://rekor.sigstore.test';
const CTLOG_URL = 'https://ctfe.sigstore.test';
const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';
const COSIGN_SIGN_PREDICATE = 'https://sigstore.dev/cosign/sign/v1';
const EXPIRED_LOG_DELAY_MS = 20 * 60 * 1000;

function fail(message) {
  console.error(`sign.mjs: ${message}`);
  process.exit(1);
}

function usage(message) {
  console.error(`sign.mjs: ${message}`);
  console.error('usage: node sign.mjs --digest sha256:<hex> --identity <SAN URI> ' +
    '--issuer <OIDC issuer URL> --out DIR [--expired] [--other-artifact sha256:<hex>] [--no-set] [--backdate]');
  process.exit(2);
}

function parseCommandLine() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        digest: { type: 'string' },
        identity: { type: 'string' },
        issuer: { type: 'string' },
        out: { type: 'string' },
        expired: { type: 'boolean', default: false },
        'other-artifact': { type: 'string' },
        'no-set': { type: 'boolean', default: false },
        backdate: { type: 'boolean', default: false },
      },
      strict: true,
    }));
  } catch (e) {
    usage(e.message);
  }
  for (const name of ['digest', 'identity', 'issuer', 'out'])
    if (!values[name]) usage(`--${name} is required`);
  const digestRe = /^sha256:[0-9a-f]{64}$/;
  if (!digestRe.test(values.digest)) usage(`--digest must be sha256:<64 lowercase hex>, got '${values.digest}'`);
  const other = values['other-artifact'];
  if (other !== undefined && !digestRe.test(other))
    usage(`--other-artifact must be sha256:<64 lowercase hex>, got '${other}'`);
  if (other === values.digest) usage('--other-artifact must differ from --digest');
  // The mock Fulcio always issues a URI SAN (never an rfc822Name), so only URI identities
  // come out as they would from the real Fulcio.
  if (!URL.canParse(values.identity) || !/^[a-z][a-z0-9+.-]*:/i.test(values.identity))
    usage(`--identity must be a URI (the mock Fulcio only issues URI SANs), got '${values.identity}'`);
  if (!URL.canParse(values.issuer)) usage(`--issuer must be a URL, got '${values.issuer}'`);
  return { ...values, other };
}

// What `cosign sign` signs for an image (cmd/cosign/cli/sign/sign.go, signDigestBundle).
function statementFor(digest) {
  return JSON.stringify({
    _type: 'https://in-toto.io/Statement/v1',
    subject: [{ digest: { sha256: digest.slice('sha256:'.length) } }],
    predicateType: COSIGN_SIGN_PREDICATE,
    predicate: {},
  });
}

function pae(type, payload) {
  return Buffer.concat([
    Buffer.from(`DSSEv1 ${Buffer.byteLength(type)} ${type} ${payload.length} `), payload]);
}

// @sigstore/mock's Rekor logs the proposed entry as it is. The real Rekor turns a proposed
// "dsse" entry into its canonical form (rekor pkg/types/dsse/v0.0.1/entry.go: verify the
// envelope against the verifiers, then keep only envelopeHash, payloadHash and signatures).
// Do the same here, so that the logged body is the one a real Rekor would have logged.
function canonicalDSSEEntry(proposed) {
  const { envelope, verifiers } = proposed.spec?.proposedContent ?? {};
  if (typeof envelope !== 'string' || !Array.isArray(verifiers))
    throw new Error('dsse entry without proposedContent.envelope and verifiers');
  const env = JSON.parse(envelope);
  const payload = Buffer.from(env.payload, 'base64');
  const signatures = [];
  for (const s of env.signatures ?? []) {
    const verifier = verifiers.find((v) => {
      const cert = new crypto.X509Certificate(Buffer.from(v, 'base64'));
      return crypto.verify('sha256', pae(env.payloadType, payload), cert.publicKey,
                           Buffer.from(s.sig, 'base64'));
    });
    if (!verifier) throw new Error('a DSSE signature does not verify with any verifier');
    signatures.push({ signature: s.sig, verifier });
  }
  if (signatures.length === 0) throw new Error('the DSSE envelope has no signature');
  signatures.sort((a, b) => (a.signature < b.signature ? -1 : a.signature > b.signature ? 1 : 0));
  const sha256 = (b) => crypto.createHash('sha256').update(b).digest('hex');
  return {
    apiVersion: '0.0.1',
    kind: 'dsse',
    spec: {
      envelopeHash: { algorithm: 'sha256', value: sha256(envelope) },
      payloadHash: { algorithm: 'sha256', value: sha256(payload) },
      signatures,
    },
  };
}

// One loopback HTTP server for both services, on the paths @sigstore/sign calls.
async function serve(fulcio, rekor) {
  const routes = {
    [fulcio.path]: fulcio.fn,
    [rekor.path]: async (body) => {
      let entry;
      try {
        entry = JSON.parse(body);
        if (entry.kind === 'dsse') entry = canonicalDSSEEntry(entry);
      } catch (e) {
        return { statusCode: 400, response: `rekor: ${e.message}` };
      }
      return rekor.fn(JSON.stringify(entry));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const route = req.method === 'POST' ? routes[req.url] : undefined;
      if (!route) {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end(`no route for ${req.method} ${req.url}`);
        return;
      }
      const { statusCode, response, contentType } = await route(Buffer.concat(chunks).toString());
      res.writeHead(statusCode, { 'Content-Type': contentType || 'text/plain' }).end(response);
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return server;
}

// An unsigned JWT: the mock Fulcio reads the claims without checking a signature.
function identityToken(identity, issuer) {
  const part = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({
    iss: issuer, sub: identity, aud: 'sigstore', iat: now, exp: now + 600,
  })}.`;
}

// Keeps the first certificate Fulcio issued, so that every signature of this run carries the
// same certificate (FulcioSigner asks for a new one, for the same key, on each call).
class OneCertificateSigner {
  constructor(inner) { this.inner = inner; }
  async sign(data) {
    const s = await this.inner.sign(data);
    this.key ??= s.key;
    return { signature: s.signature, key: this.key };
  }
}

function trustedRoot({ ca, ctlog, rekorKey, start }) {
  const rekorDer = rekorKey.export({ format: 'der', type: 'spki' });
  const root = TrustedRoot.toJSON({
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    tlogs: [{
      baseUrl: REKOR_URL,
      hashAlgorithm: HashAlgorithm.SHA2_256,
      publicKey: {
        rawBytes: rekorDer,
        keyDetails: PublicKeyDetails.PKIX_ECDSA_P256_SHA_256,
        validFor: { start },
      },
      logId: { keyId: crypto.createHash('sha256').update(rekorDer).digest() },
    }],
    certificateAuthorities: [{
      subject: { organization: 'sigstore.mock', commonName: 'sigstore' },
      uri: FULCIO_URL,
      certChain: { certificates: [{ rawBytes: ca.rootCertificate }] },
      validFor: { start },
    }],
    ctlogs: [{
      baseUrl: CTLOG_URL,
      hashAlgorithm: HashAlgorithm.SHA2_256,
      publicKey: {
        rawBytes: ctlog.publicKey,
        keyDetails: PublicKeyDetails.PKIX_ECDSA_P256_SHA_256,
        validFor: { start },
      },
      logId: { keyId: Buffer.from(ctlog.logID) },
    }],
    timestampAuthorities: [],
  });
  // protobuf-specs writes "2026-01-01T00:00:00.000Z"; sigstore's own roots have no fraction.
  const second = start.toISOString().replace(/\.000Z$/, 'Z');
  for (const t of [...root.tlogs, ...root.ctlogs]) t.publicKey.validFor.start = second;
  for (const c of root.certificateAuthorities) c.validFor.start = second;
  return root;
}

async function main() {
  const args = parseCommandLine();
  // Never send the loopback requests through a proxy.
  process.env.NO_PROXY = process.env.no_proxy = '127.0.0.1';

  const newKey = () => crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const caKeys = newKey(), ctKeys = newKey(), rekorKeys = newKey();
  // Whole seconds: X.509 times and Rekor's integratedTime have no finer precision.
  const start = new Date(Math.floor(Date.now() / 1000) * 1000);
  const ctlog = await initializeCTLog(ctKeys);
  const ca = await initializeCA(caKeys, ctlog);
  // The mock CA's root is valid from now whatever clock the CA is given (only the leaf, valid
  // for 10 minutes, follows that clock), so --expired moves the log's clock forward rather
  // than the leaf back to before its root.
  const logClock = args.expired ? new Date(start.getTime() + EXPIRED_LOG_DELAY_MS) : undefined;
  const tlog = await initializeTLog(REKOR_URL, rekorKeys, logClock);

  const server = await serve(fulcioHandler(ca), rekorHandler(tlog));
  try {
    const base = `http://127.0.0.1:${server.address().port}`;
    const token = identityToken(args.identity, args.issuer);
    const builder = new DSSEBundleBuilder({
      signer: new OneCertificateSigner(new FulcioSigner({
        fulcioBaseURL: base,
        identityProvider: { getToken: async () => token },
      })),
      witnesses: [new RekorWitness({ rekorBaseURL: base, entryType: 'dsse' })],
    });
    const artifact = (digest) => ({ data: Buffer.from(statementFor(digest)), type: IN_TOTO_PAYLOAD_TYPE });

    const bundle = await builder.create(artifact(args.digest));
    if (args.other) {
      const decoy = await builder.create(artifact(args.other));
      bundle.verificationMaterial.tlogEntries = decoy.verificationMaterial.tlogEntries;
    }
    const [entry] = bundle.verificationMaterial.tlogEntries;
    if (args['no-set']) entry.inclusionPromise = undefined;
    if (args.backdate) {
      const cert = new crypto.X509Certificate(bundle.verificationMaterial.content.certificate.rawBytes);
      entry.integratedTime = String(Math.floor(Date.parse(cert.validFrom) / 1000) + 60);
    }
    const json = bundleToJSON(bundle);
    if (json.mediaType !== BUNDLE_V03_MEDIA_TYPE)
      fail(`@sigstore/sign made a bundle of media type ${json.mediaType}, expected ${BUNDLE_V03_MEDIA_TYPE}`);

    fs.mkdirSync(args.out, { recursive: true });
    const write = (name, obj) => fs.writeFileSync(path.join(args.out, name), JSON.stringify(obj, null, 2) + '\n');
    write('bundle.json', json);
    write('trusted_root.json', trustedRoot({ ca, ctlog, rekorKey: rekorKeys.publicKey, start }));
    const cse = [args.expired && 'expired', args.other && `other-artifact ${args.other}`,
      args['no-set'] && 'no SET', args.backdate && `integratedTime forged to ${entry.integratedTime}`]
      .filter(Boolean).join(', ') || 'valid';
    console.log(`sign.mjs: wrote ${path.join(args.out, 'bundle.json')} and trusted_root.json ` +
      `(${cse}; signs ${args.digest} as ${args.identity})`);
  } finally {
    server.close();
  }
}

main().catch((e) => fail(e.cause ? `${e.message}: ${e.cause.message ?? e.cause}` : e.message));
