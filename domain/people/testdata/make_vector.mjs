// Makes the NEP-413 test vector petal's sign-in tests check against, with
// @near-js/signers (an implementation independent of petal's Go code).
// Run: npm install @near-js/signers@2.5.1 @near-js/crypto @near-js/utils && node make_vector.mjs > nep413_vector.json
import { KeyPair } from "@near-js/crypto";
import { KeyPairSigner } from "@near-js/signers";
import { baseEncode } from "@near-js/utils";
import { ed25519 } from "@noble/curves/ed25519";

const seed = Uint8Array.from({ length: 32 }, (_, i) => i + 1); // a fixed, public test key
const pub = ed25519.getPublicKey(seed);
const secret = new Uint8Array(64);
secret.set(seed);
secret.set(pub, 32);
const keyPair = KeyPair.fromString("ed25519:" + baseEncode(secret));
const signer = new KeyPairSigner(keyPair);

const nonce = Uint8Array.from({ length: 32 }, (_, i) => (i * 7 + 3) & 0xff);
const recipient = "petal.example";
const message = "Sign in to Petal at petal.example.";
const implicit = Buffer.from(pub).toString("hex");

const out = { generator: "@near-js/signers KeyPairSigner.signNep413Message", seed_hex: Buffer.from(seed).toString("hex"), vectors: [] };
for (const accountId of ["alice.testnet", implicit]) {
  const signed = await signer.signNep413Message(message, accountId, recipient, nonce);
  out.vectors.push({
    account_id: signed.accountId,
    public_key: signed.publicKey.toString(),
    message,
    recipient,
    nonce_base64: Buffer.from(nonce).toString("base64"),
    signature_base64: Buffer.from(signed.signature).toString("base64"),
    signature_base58: baseEncode(signed.signature),
  });
}
console.log(JSON.stringify(out, null, 2));
