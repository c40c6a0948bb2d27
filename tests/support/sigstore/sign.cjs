// Signs an OCI manifest with sigstore's own client (@sigstore/sign) against sigstore's own mock
// Fulcio and Rekor (@sigstore/mock, intercepted in-process; nothing leaves the machine), and
// writes what a verifier needs:
//   OUT/bundle.json        a sigstore bundle (v0.2 from this client): message signature over the manifest's bytes
//                          (their SHA-256 is the manifest digest), Fulcio certificate, Rekor entry
//                          with its signed entry timestamp and inclusion proof
//   OUT/trusted_root.json  the mock Fulcio root and the mock Rekor key, as trusted_root.json
// Usage: node sign.cjs MANIFEST_FILE OUT_DIR SUBJECT ISSUER
'use strict';
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { initializeCA, initializeCTLog, fulcioHandler, initializeTLog, rekorHandler } = require('@sigstore/mock');
const { mock } = require('@sigstore/mock/dist/mock');
const { FulcioSigner, RekorWitness, MessageSignatureBundleBuilder } = require('@sigstore/sign');
const { bundleToJSON } = require('@sigstore/bundle');

const FULCIO = 'https://fulcio.mock.test';
const REKOR = 'https://rekor.mock.test';

function b64url(obj) {
  return Buffer.from(JSON.stringify(obj)).toString('base64url');
}

async function main() {
  const [manifestFile, out, subject, issuer] = process.argv.slice(2);
  if (!manifestFile || !out || !subject || !issuer) {
    console.error('usage: node sign.cjs MANIFEST_FILE OUT_DIR SUBJECT ISSUER');
    process.exit(2);
  }
  const caKeys = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const logKeys = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const ca = await initializeCTLog(caKeys).then((ctlog) => initializeCA(caKeys, ctlog));
  mock(FULCIO, fulcioHandler(ca));
  const tlog = await initializeTLog(REKOR, logKeys);
  mock(REKOR, rekorHandler(tlog));

  // The mock Fulcio reads the token's claims without verifying it: an unsigned JWT.
  const token = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ iss: issuer, sub: subject, aud: 'sigstore' })}.`;
  const builder = new MessageSignatureBundleBuilder({
    signer: new FulcioSigner({ fulcioBaseURL: FULCIO, identityProvider: { getToken: async () => token } }),
    witnesses: [new RekorWitness({ rekorBaseURL: REKOR, entryType: 'hashedrekord' })],
  });
  const bundle = await builder.create({ data: fs.readFileSync(manifestFile) });

  const logDer = logKeys.publicKey.export({ format: 'der', type: 'spki' });
  const root = {
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    tlogs: [{
      baseUrl: REKOR,
      hashAlgorithm: 'SHA2_256',
      publicKey: { rawBytes: logDer.toString('base64'), keyDetails: 'PKIX_ECDSA_P256_SHA_256',
                   validFor: { start: '2000-01-01T00:00:00Z' } },
      logId: { keyId: crypto.createHash('sha256').update(logDer).digest('base64') },
    }],
    certificateAuthorities: [{
      subject: { organization: 'sigstore.mock', commonName: 'sigstore' },
      uri: FULCIO,
      certChain: { certificates: [{ rawBytes: ca.rootCertificate.toString('base64') }] },
      validFor: { start: '2000-01-01T00:00:00Z' },
    }],
    ctlogs: [],
    timestampAuthorities: [],
  };
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'bundle.json'), JSON.stringify(bundleToJSON(bundle)));
  fs.writeFileSync(path.join(out, 'trusted_root.json'), JSON.stringify(root));
}

main().catch((e) => {
  console.error(`sign.cjs: ${e.stack || e}`);
  process.exit(1);
});
