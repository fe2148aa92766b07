import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporaryDirectory } from './serve';

/** Whether the openssl command is there to make test certificates; tests that need one skip without it. */
export const hasOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

export interface TestCertificate {
  key: string;
  cert: string;
  /** The certificate's PEM file, for NODE_EXTRA_CA_CERTS. */
  certFile: string;
}

/**
 * A self-signed certificate for `names` (DNS names or IP addresses), made for one test run; `expired`
 * makes one that was valid for a day in 2020.
 */
export function makeCertificate(names: string[], options: { expired?: boolean } = {}): TestCertificate {
  const dir = temporaryDirectory('petinv-tls-');
  const san = names.map((name) => (/^[\d.]+$/.test(name) ? `IP:${name}` : `DNS:${name}`)).join(',');
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  const subject = ['-subj', `/CN=${names[0]}`, '-addext', `subjectAltName=${san}`];
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile];
  if (!options.expired) {
    execFileSync('openssl', ['req', '-x509', ...newKey, '-out', certFile, '-days', '2', ...subject], {
      stdio: 'ignore',
    });
  } else {
    // openssl 3.0's req has no -not_after; its ca command takes explicit dates.
    const ca = join(dir, 'ca');
    mkdirSync(ca);
    writeFileSync(join(ca, 'index.txt'), '');
    writeFileSync(join(ca, 'serial'), '01\n');
    writeFileSync(
      join(ca, 'ca.cnf'),
      `[ca]\ndefault_ca = d\n[d]\ndatabase = ${ca}/index.txt\nnew_certs_dir = ${ca}\nserial = ${ca}/serial\ndefault_md = sha256\npolicy = p\ncopy_extensions = copy\n[p]\ncommonName = supplied\n`,
    );
    const csr = join(ca, 'req.csr');
    execFileSync('openssl', ['req', '-new', ...newKey, '-out', csr, ...subject], { stdio: 'ignore' });
    execFileSync(
      'openssl',
      [
        'ca',
        '-batch',
        '-config',
        join(ca, 'ca.cnf'),
        '-selfsign',
        '-keyfile',
        keyFile,
        '-in',
        csr,
        '-out',
        certFile,
        '-startdate',
        '20200101000000Z',
        '-enddate',
        '20200102000000Z',
      ],
      { stdio: 'ignore' },
    );
  }
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}
