/**
 * DKIM verification by an independent implementation: dkimpy (Debian's python3-dkim, installed
 * by .ci/run), which shares no code with our signer or with mailauth. The public key is handed
 * to it as the TXT record DNS would serve, so no resolver is involved.
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';

// Debian's interpreter: python3-dkim is installed for it (a python3 earlier in PATH may not have it).
const PYTHON = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

const SCRIPT = `
import sys, dkim
record = sys.argv[1].encode()
msg = sys.stdin.buffer.read()
ok = dkim.verify(msg, dnsfunc=lambda name, timeout=5: record)
print("pass" if ok else "fail")
`;

// Every DKIM-Signature of the message, by index, each key looked up by name in the JSON map argv[1].
const EACH_SCRIPT = `
import sys, json, dkim
records = json.loads(sys.argv[1])
msg = sys.stdin.buffer.read()
d = dkim.DKIM(msg)
count = sum(1 for h in d.headers if h[0].lower() == b"dkim-signature")
def dnsfunc(name, timeout=5):
    return records.get(name.decode().rstrip("."), "").encode() or None
print(" ".join("pass" if dkim.DKIM(msg).verify(idx=i, dnsfunc=dnsfunc) else "fail" for i in range(count)))
`;

/**
 * dkimpy's verdict on each DKIM-Signature of `message`, top to bottom, with `records` as DNS:
 * TXT values by name (`<selector>._domainkey.<domain>`, no trailing dot).
 */
export function dkimpyVerifyEach(message: Buffer, records: Record<string, string>): Promise<Array<'pass' | 'fail'>> {
  return new Promise((resolve, reject) => {
    const child = execFile(PYTHON, ['-c', EACH_SCRIPT, JSON.stringify(records)], (err, stdout, stderr) => {
      if (err) return reject(new Error(`dkimpy failed: ${stderr || err.message}`));
      resolve(stdout.trim().split(/\s+/).filter(Boolean) as Array<'pass' | 'fail'>);
    });
    child.stdin!.end(message);
  });
}

/** True when python3 can import dkim. */
export function dkimpyAvailable(): boolean {
  try {
    execFileSync(PYTHON, ['-c', 'import dkim'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** dkimpy's verdict on the first DKIM-Signature of `message`, with `txt` as the key record. */
export function dkimpyVerify(message: Buffer, txt: string): Promise<'pass' | 'fail'> {
  return new Promise((resolve, reject) => {
    const child = execFile(PYTHON, ['-c', SCRIPT, txt], (err, stdout, stderr) => {
      if (err) return reject(new Error(`dkimpy failed: ${stderr || err.message}`));
      resolve(stdout.trim() === 'pass' ? 'pass' : 'fail');
    });
    child.stdin!.end(message);
  });
}

const SIGN_SCRIPT = `
import os, sys, dkim
msg = sys.stdin.buffer.read()
sig = dkim.sign(msg, os.environ["DKIM_SELECTOR"].encode(), os.environ["DKIM_DOMAIN"].encode(),
                os.environ["DKIM_KEY"].encode(), canonicalize=(b"relaxed", b"relaxed"))
sys.stdout.buffer.write(sig + msg)
`;

/**
 * `message` signed by dkimpy (relaxed/relaxed, rsa-sha256, its default header list) with the
 * PKCS#1 PEM `privateKey` as `selector` of `domain`: the DKIM-Signature field dkimpy
 * wrote, prepended to the message.
 */
export function dkimpySign(message: Buffer, o: { domain: string; selector: string; privateKey: string }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, DKIM_DOMAIN: o.domain, DKIM_SELECTOR: o.selector, DKIM_KEY: o.privateKey };
    const child = execFile(PYTHON, ['-c', SIGN_SCRIPT], { env, encoding: 'buffer' }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`dkimpy failed to sign: ${stderr.toString() || err.message}`));
      resolve(stdout);
    });
    child.stdin!.end(message);
  });
}
